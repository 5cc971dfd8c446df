"""Model and system registries, ``model_summary`` and the paper's equation numbers in ``doc``."""

from __future__ import annotations

import types

import cvxpy as cp
import pyomo.environ as pyo
import pytest

from clusteropt.instances import WorkerPlacementInstance, random_worker_placement
from clusteropt.models import (
    MODELS,
    CvxpyModel,
    ModelSpec,
    build_worker_placement,
    build_worker_placement_cvxpy,
    get_model,
    model_summary,
    models_for,
    register_model,
)
from clusteropt.models import registry as registry_module
from clusteropt.systems import SYSTEMS, SystemSpec, register_system, run_demo

N_JOBS, N_SERVERS = 5, 3


@pytest.fixture(scope="module")
def inst() -> WorkerPlacementInstance:
    return random_worker_placement(N_JOBS, N_SERVERS, seed=4)


# -- registry -----------------------------------------------------------------------------------


def test_worker_placement_models_registered():
    pyomo_spec = get_model("worker-placement")
    cvxpy_spec = get_model("worker-placement-cvxpy")
    assert pyomo_spec.backend == "pyomo" and cvxpy_spec.backend == "cvxpy"
    assert pyomo_spec.kind == cvxpy_spec.kind == WorkerPlacementInstance.kind
    assert pyomo_spec.builder is build_worker_placement
    assert cvxpy_spec.builder is build_worker_placement_cvxpy
    assert {"worker-placement", "worker-placement-cvxpy"} <= {m.name for m in models_for("worker-placement")}
    assert models_for("no-such-kind") == []
    for spec in MODELS.values():
        assert spec.backend in ("pyomo", "cvxpy", "exact")
        assert spec.description


def test_get_model_unknown_lists_registered():
    with pytest.raises(ValueError) as info:
        get_model("worker-placment")
    msg = str(info.value)
    assert msg.startswith("unknown model 'worker-placment'".replace("placement", "placment"))
    assert "registered: " in msg
    for name in MODELS:
        assert name in msg
    listed = msg.split("registered: ", 1)[1].split(", ")
    assert listed == sorted(MODELS)


def test_register_twice_refused_but_idempotent(monkeypatch):
    monkeypatch.setattr(registry_module, "MODELS", dict(registry_module.MODELS))
    spec = ModelSpec("test-dup", "worker-placement", build_worker_placement, "pyomo", "test")
    assert register_model(spec) is spec
    assert register_model(spec) is spec  # the same spec again is fine
    other = ModelSpec("test-dup", "worker-placement", build_worker_placement, "pyomo", "other")
    with pytest.raises(ValueError, match="'test-dup' is registered twice"):
        register_model(other)


def test_build_with_wrong_kind_names_both_kinds(inst):
    spec = ModelSpec("test-other", "coflow", lambda i, relax=False: None, "pyomo", "test")
    with pytest.raises(ValueError) as info:
        spec.build(inst)
    msg = str(info.value)
    assert "model 'test-other' takes instances of kind 'coflow'" in msg
    assert "got 'worker-placement'" in msg
    assert "worker-placement-cvxpy" in msg  # suggests the models that do take this kind


def test_build_with_object_of_unknown_kind():
    spec = get_model("worker-placement")
    with pytest.raises(ValueError, match=r"got 'no-such-kind'; models for that kind: none"):
        spec.build(types.SimpleNamespace(kind="no-such-kind"))
    with pytest.raises(ValueError, match=r"got 'coflow'; models for that kind: .*coflow-lp"):
        spec.build(types.SimpleNamespace(kind="coflow"))
    with pytest.raises(ValueError, match=r"got 'dict'"):
        spec.build({"capacity": [[1]]})


def test_build_dispatches_relax(inst):
    spec = get_model("worker-placement")
    assert spec.build(inst).y[0, 0].domain is pyo.NonNegativeIntegers
    assert spec.build(inst, relax=True).y[0, 0].domain is pyo.NonNegativeReals
    cvx = get_model("worker-placement-cvxpy")
    assert cvx.build(inst).variables["y"].attributes["integer"]
    assert not cvx.build(inst, relax=True).variables["y"].attributes["integer"]


# -- model_summary --------------------------------------------------------------------------------


def rows_by_name(rows):
    names = [r["component"] for r in rows]
    assert len(names) == len(set(names))
    return {r["component"]: r for r in rows}


@pytest.mark.parametrize("relax", [False, True])
def test_summary_pyomo_sizes(inst, relax):
    rows = rows_by_name(model_summary(build_worker_placement(inst, relax=relax)))
    n_i, n_s, n_r = inst.n_jobs, inst.n_servers, len(inst.resources)
    expected = {
        "C": ("parameter", n_s * n_r),
        "l": ("parameter", n_i * n_r),
        "N": ("parameter", n_i),
        "u": ("parameter", n_i),
        "y": ("variable", n_i * n_s),
        "workers_limit": ("constraint", n_i),
        "capacity": ("constraint", n_s * n_r),
        "utility": ("objective", 1),
    }
    assert {k: (r["type"], r["size"]) for k, r in rows.items()} == expected
    for r in rows.values():
        assert set(r) == {"component", "type", "size", "doc"}


def test_summary_pyomo_totals_match_the_model(inst):
    m = build_worker_placement(inst)
    rows = model_summary(m)
    n_vars = sum(r["size"] for r in rows if r["type"] == "variable")
    n_cons = sum(r["size"] for r in rows if r["type"] == "constraint")
    assert n_vars == len(list(m.component_data_objects(pyo.Var))) == N_JOBS * N_SERVERS
    assert n_cons == len(list(m.component_data_objects(pyo.Constraint))) == N_JOBS + N_SERVERS * 3


def test_summary_cvxpy_sizes(inst):
    cm = build_worker_placement_cvxpy(inst)
    assert isinstance(cm, CvxpyModel)
    rows = rows_by_name(model_summary(cm))
    n_i, n_s, n_r = inst.n_jobs, inst.n_servers, len(inst.resources)
    assert {k: (r["type"], r["size"]) for k, r in rows.items()} == {
        "y": ("variable", n_i * n_s),
        "C": ("parameter", n_s * n_r),
        "u": ("parameter", n_i),
        "workers_limit": ("constraint", n_i),
        "capacity": ("constraint", n_s * n_r),
        "objective": ("objective", 1),
    }
    # the paper's symbols and equations, as the Pyomo model's docs say them
    assert rows["y"]["doc"].startswith("y_is") and rows["capacity"]["doc"].startswith("(4)")
    assert rows["objective"]["doc"].startswith("maximize")
    # the wrapper's own summary agrees with model_summary
    assert cm.summary() == {
        "variables": {"y": n_i * n_s},
        "constraints": {"workers_limit": n_i, "capacity": n_s * n_r},
    }
    # and with the cvxpy problem
    assert sum(v.size for v in cm.problem.variables()) == n_i * n_s
    assert sum(c.size for c in cm.problem.constraints) == n_i + n_s * n_r


def test_both_backends_have_the_same_sizes(inst):
    def sizes(model):
        rows = model_summary(model)
        return {t: sum(r["size"] for r in rows if r["type"] == t) for t in ("variable", "constraint")}

    assert sizes(build_worker_placement(inst)) == sizes(build_worker_placement_cvxpy(inst))


def test_summary_of_a_bare_cvxpy_wrapper():
    x = cp.Variable(3, name="x")
    cm = CvxpyModel(cp.Problem(cp.Minimize(cp.sum(x)), [x >= 0]), {"x": x}, {"nonneg": [x >= 0]})
    rows = rows_by_name(model_summary(cm))
    assert rows["x"]["size"] == 3 and rows["nonneg"]["size"] == 3
    assert rows["objective"]["doc"] == "Minimize"


# -- doc strings cite the paper ---------------------------------------------------------------------


def test_pyomo_components_cite_paper_equations(inst):
    m = build_worker_placement(inst)
    assert "(2)" in m.workers_limit.doc
    assert "(4)" in m.capacity.doc
    assert "(4)" in m.C.doc and "C_s^r" in m.C.doc
    assert "(4)" in m.l.doc and "l_i^r" in m.l.doc
    assert "(2)" in m.N.doc and "N_i" in m.N.doc
    assert "y_is" in m.y.doc
    rows = rows_by_name(model_summary(m))
    assert rows["workers_limit"]["doc"].startswith("(2)")
    assert rows["capacity"]["doc"].startswith("(4)")
    # every variable, parameter, constraint and objective has a doc
    for comp in m.component_objects((pyo.Var, pyo.Param, pyo.Constraint, pyo.Objective, pyo.Set)):
        assert comp.doc, comp.name


def test_pprint_reads_like_the_paper(inst, capsys):
    build_worker_placement(inst).pprint()
    out = capsys.readouterr().out
    assert "(2) sum_s y_is <= N_i" in out
    assert "(4) sum_i l_i^r y_is <= C_s^r" in out


def test_cvxpy_names_follow_the_paper(inst):
    cm = build_worker_placement_cvxpy(inst)
    assert set(cm.variables) == {"y"}
    assert set(cm.constraints) == {"workers_limit", "capacity"}
    assert set(cm.parameters) == {"C", "u"}
    assert cm.name == "worker_placement"


def test_builders_do_not_solve(inst):
    m = build_worker_placement(inst)
    assert all(v.value is None for v in m.y.values())
    cm = build_worker_placement_cvxpy(inst)
    assert cm.variables["y"].value is None
    assert cm.problem.status is None


# -- systems / demo -----------------------------------------------------------------------------------


def test_run_demo_one_verified_row_per_system():
    rows = run_demo()
    assert [r["system"] for r in rows] == list(SYSTEMS)
    assert "worker-placement" in SYSTEMS
    for row in rows:
        assert row["verified"] is True, row
        assert row["error"] == ""
        for key in ("paper", "instance", "model", "solver", "objective", "seconds"):
            assert key in row, (row["system"], key)
    wp = next(r for r in rows if r["system"] == "worker-placement")
    assert wp["model"] == "worker-placement" and wp["solver"] == "highs"
    assert wp["objective"] > 0


def test_run_demo_reports_a_failing_system(monkeypatch):
    from clusteropt import systems

    def broken():
        raise RuntimeError("boom")

    monkeypatch.setattr(systems, "SYSTEMS", {})
    register_system(SystemSpec("test-broken", "none", broken))
    (row,) = run_demo()
    assert row["system"] == "test-broken"
    assert row["verified"] is False
    assert row["error"] == "RuntimeError: boom"


def test_every_papers_builders_are_reexported():
    import clusteropt.models as models

    missing = [name for name in models.__all__ if not hasattr(models, name)]
    assert not missing
    for name in ("build_broker_milp", "build_cos_lp", "build_gvne", "build_ddljs", "build_region_lp",
                 "build_ring_static_opt", "build_worker_placement"):
        assert name in models.__all__
