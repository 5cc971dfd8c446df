"""Every registered model with an array form is its Pyomo model, and solves and exports as it does.

``clusteropt solve`` and ``export`` hand a model's :class:`~clusteropt.models.matrix.MatrixLP` to the
solver instead of the Pyomo model (``ModelSpec.array_builder``; DESIGN.md, Speed: "a fast path may
build the solver's matrices directly, provided a test shows it solves the very same model").  For
every such model, on small instances of each kind (both price forms, the whole horizon and one slot,
relaxed and not):

* the arrays are what Pyomo's standard-form compiler makes of the Pyomo model: the same columns (by
  name) with the same bounds, costs and integrality, the same rows (by name) with the same
  coefficients and bounds;
* ``solve`` gives the same objective as the Pyomo route and the same value shapes, labels and index
  names (what ``--json`` writes), with HiGHS (arrays) and SCIP (the arrays through an MPS file);
* the LP and MPS files written from the arrays name the columns as Pyomo's LP writer names them and
  re-solve to the same objective in HiGHS and SCIP.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyomo.core.base.label import LPFileLabeler
from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

from clusteropt import build, solve, solve_file, write_model
from clusteropt.instances import random_coflows
from clusteropt.instances.broker import broker_preset
from clusteropt.instances.gadget.instance import gadget_preset
from clusteropt.instances.realtime import RealtimeInstance, random_realtime, realtime_preset
from clusteropt.models import get_model, register_all
from clusteropt.models.matrix import MatrixLP, NoArrayForm, file_label
from clusteropt.solvers.registry import available_solvers
from clusteropt.solvers.result import LazyMapping
from tests.models.test_coflow import random_cos
from tests.models.test_gadget_extended import _tight

REL = 1e-9
SCIP = "scip" in available_solvers()


def _cases():
    out = []
    for slot, relax in ((10, True), (10, False), (3, True)):
        out.append((f"gvne-small-t{slot}-{relax}", "gvne", lambda: gadget_preset("small", jobs=4, seed=0),
                    {"slot": slot}, relax))
    out.append(("gvne-tiny", "gvne", lambda: gadget_preset("tiny", jobs=3, seed=1), {"slot": 3}, False))
    for form in ("tight", "bigm"):
        out.append((f"broker-lp-tiny-{form}", "broker-lp", lambda: broker_preset("tiny", seed=0),
                    {"price_form": form}, True))
        out.append((f"broker-milp-tiny-slot-{form}", "broker-milp", lambda: broker_preset("tiny", seed=1),
                    {"slot": 2, "price_form": form}, False))
    out.append(("broker-milp-tiny-relaxed", "broker-milp", lambda: broker_preset("tiny", seed=2), {}, True))
    out.append(("coflow-lp", "coflow-lp", lambda: random_coflows(12, 5, seed=3), {}, False))
    out.append(("cos-lp", "cos-lp", lambda: random_cos(np.random.default_rng(4), 4, 7, max_release=3), {}, False))
    out.append(("realtime-random", "realtime-max-weight",
                lambda: random_realtime(4, 4, requirement=[0.2, 0.5, 0.1, 0.3], seed=0), {}, False))
    out.append(("realtime-random-relaxed", "realtime-max-weight",
                lambda: random_realtime(3, 5, requirement=[0.4, 0.1, 0.3], seed=2), {}, True))
    out.append(("realtime-paper", "realtime-max-weight", lambda: realtime_preset("paper"), {}, False))
    return out


CASES = _cases()


def test_cases_cover_every_array_form():
    with_arrays = {name for name, spec in register_all().items() if spec.array_builder is not None}
    assert with_arrays == {c[1] for c in CASES}


def _pyomo_form(model):
    repn = LinearStandardFormCompiler().write(model, mixed_form=True, set_sense=None)
    cols = [(v.name, -math.inf if v.lb is None else float(v.lb), math.inf if v.ub is None else float(v.ub),
             bool(v.is_integer() or v.is_binary())) for v in repn.columns]
    c = np.asarray(repn.c.toarray()).ravel() if cols else np.zeros(0)
    a = repn.A.tocsr()
    rows = {}
    for q, ((con, mult), rhs) in enumerate(zip(repn.rows, repn.rhs, strict=True)):
        sl = slice(a.indptr[q], a.indptr[q + 1])
        coefs = {cols[j][0]: float(v) for j, v in zip(a.indices[sl], a.data[sl], strict=True)}
        lo = -math.inf if mult == 1 else float(rhs)
        hi = math.inf if mult == -1 else float(rhs)
        rows.setdefault(con.name, []).append(_canonical(coefs, lo, hi))
    return cols, c, rows


def _canonical(coefs: dict, lo: float, hi: float):
    """A row with its first coefficient (by column name) positive (Pyomo may write it negated)."""
    first = min(coefs)
    if coefs[first] < 0:
        return {k: -v for k, v in coefs.items()}, -hi, -lo
    return coefs, lo, hi


def _array_form(lp: MatrixLP):
    names = lp.col_names()
    integer = lp.integer if lp.integer is not None else np.zeros(lp.n_cols, dtype=bool)
    cols = [(n, float(lo), float(hi), bool(i)) for n, lo, hi, i in
            zip(names, lp.col_lower, lp.col_upper, integer, strict=True)]
    a = lp.a.tocsr()
    rows = {}
    for q, name in enumerate(lp.row_names()):
        sl = slice(a.indptr[q], a.indptr[q + 1])
        coefs = {names[j]: float(v) for j, v in zip(a.indices[sl], a.data[sl], strict=True)}
        rows.setdefault(name, []).append(_canonical(coefs, float(lp.row_lower[q]), float(lp.row_upper[q])))
    return cols, lp.cost, rows


def _close_rows(got, want):
    assert got.keys() == want.keys()
    for name in want:
        assert len(got[name]) == len(want[name]), name
        for (gc, glo, ghi), (wc, wlo, whi) in zip(got[name], want[name], strict=True):
            assert gc.keys() == wc.keys(), name
            for k in wc:
                assert gc[k] == pytest.approx(wc[k], rel=1e-12, abs=1e-12), (name, k)
            for g, w in ((glo, wlo), (ghi, whi)):
                assert (math.isinf(g) and g == w) or g == pytest.approx(w, rel=1e-12, abs=1e-12), name


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def case(request):
    _, name, make, options, relax = request.param
    inst = make()
    return name, inst, options, relax, build(name, inst, relax=relax, arrays=True, **options), \
        build(name, inst, relax=relax, **options)


def test_arrays_are_the_compiled_pyomo_model(case):
    _, _, _, _, lp, model = case
    assert isinstance(lp, MatrixLP)
    p_cols, p_c, p_rows = _pyomo_form(model)
    a_cols, a_c, a_rows = _array_form(lp)
    # the same columns (the broker arrays order them by block, not as the compiler does)
    assert sorted(c[0] for c in a_cols) == sorted(c[0] for c in p_cols)
    want = {c[0]: (c, cost) for c, cost in zip(p_cols, p_c, strict=True)}
    for got, cost in zip(a_cols, a_c, strict=True):
        w, w_cost = want[got[0]]
        assert got[3] == w[3], got[0]  # integrality
        for g, b in zip(got[1:3], w[1:3], strict=True):
            assert (math.isinf(g) and g == b) or g == pytest.approx(b, abs=1e-12), got[0]
        assert cost == pytest.approx(w_cost, rel=1e-12, abs=1e-12), got[0]
    assert lp.maximize == _maximize(model)
    _close_rows(a_rows, p_rows)


def _maximize(model) -> bool:
    import pyomo.environ as pyo

    obj = next(model.component_data_objects(pyo.Objective, active=True))
    return obj.sense == pyo.maximize


def test_solve_is_the_pyomo_route(case):
    _, _, _, _, lp, model = case
    a, p = solve(lp), solve(model)
    assert a.backend == "matrix" and p.backend == "pyomo"
    assert a.objective == pytest.approx(p.objective, rel=REL, abs=1e-9)
    assert set(a.values) == set(p.values)
    for k in p.values:
        assert np.shape(a.values[k]) == np.shape(p.values[k]), k
    assert {k: list(v) for k, v in a.labels.items()} == {k: list(v) for k, v in p.labels.items()}
    assert dict(a.index_names) == dict(p.index_names)
    d = a.to_dict()
    assert set(d["labelled_values"]) == set(p.to_dict()["labelled_values"])


@pytest.mark.skipif(not SCIP, reason="SCIP not installed")
def test_another_solver_takes_the_arrays_through_a_file(case):
    _, _, _, _, lp, model = case
    a, p = solve(lp, "scip"), solve(model)
    assert a.solver == "scip" and a.backend == "matrix" and a.raw["route"] == "file"
    assert a.objective == pytest.approx(p.objective, rel=1e-7, abs=1e-7)
    for k in p.values:
        assert np.shape(a.values[k]) == np.shape(p.values[k]), k
    assert {k: list(v) for k, v in a.labels.items()} == {k: list(v) for k, v in p.labels.items()}


@pytest.mark.parametrize("suffix", [".lp", ".mps"])
def test_files_from_the_arrays(case, suffix, tmp_path: Path):
    _, _, _, _, lp, model = case
    if not lp.n_cols:
        pytest.skip("nothing to decide: no file")
    path = write_model(lp, tmp_path / f"m{suffix}")
    objective = solve(model).objective
    for solver in ("highs", "scip") if SCIP else ("highs",):
        r = solve_file(path, solver)
        assert r.objective == pytest.approx(objective, rel=1e-7, abs=1e-7), solver
    labeler = LPFileLabeler()
    import pyomo.environ as pyo

    pyomo_names = {labeler(v) for v in model.component_data_objects(pyo.Var)}
    assert set(solve_file(path).values) <= pyomo_names  # the columns are named as Pyomo's LP writer names them
    back = solve_file(path, model=lp)  # and come back as the model's variables
    assert set(back.values) == set(solve(lp).values)


def test_lp_file_names_follow_pyomos_rule():
    from pyomo.core.base.label import cpxlp_label_from_name

    for name in ("chi[3,2]", "y[gpu-a,1.5]", "q[0,1,2,3]", "x{a b}", "release[12]"):
        assert file_label(name) == cpxlp_label_from_name(name)


def test_colliding_file_names_are_refused():
    from clusteropt.models.matrix import Block

    lp = MatrixLP("t", False, np.ones(2), np.zeros(2), np.ones(2), __import__("scipy").sparse.csc_array((0, 2)),
                  np.zeros(0), np.zeros(0), (Block("x", np.arange(2), lambda: [("a-b",), ("a_b",)]),), ())
    with pytest.raises(ValueError, match=r"'x\[a-b\]' and 'x\[a_b\]' are both written 'x\(a_b\)'"):
        lp.file_col_names()


def test_labels_are_made_when_read():
    calls = []
    m = LazyMapping({"y": lambda: calls.append(1) or [("a",)]})
    assert not calls and list(m) == ["y"] and len(m) == 1
    assert m["y"] == [("a",)] and m["y"] == [("a",)] and calls == [1]


def test_forms_and_errors():
    assert get_model("gvne").forms == ("model", "arrays")
    assert get_model("ddljs").forms == ("model",)
    with pytest.raises(ValueError, match=r"model 'ddljs' has no array form; models with one: .*gvne"):
        build("ddljs", gadget_preset("tiny", jobs=2, seed=0), arrays=True)
    # the flow form (a cluster that is no tree, or asked for) has no arrays: auto builds the Pyomo model
    inst = _tight(0)  # a leaf-spine fabric
    assert not inst.cluster.is_tree()
    with pytest.raises(NoArrayForm):
        build("gvne", inst, arrays=True, slot=2)
    assert not isinstance(build("gvne", inst, arrays=None, slot=2), MatrixLP)
    tree = gadget_preset("tiny", jobs=2, seed=0)
    assert not isinstance(build("gvne", tree, arrays=None, slot=2, form="flow"), MatrixLP)
    assert isinstance(build("gvne", tree, arrays=None, slot=2), MatrixLP)
    with pytest.raises(ValueError, match="form = 'ring'"):
        build("gvne", tree, arrays=True, slot=2, form="ring")


def test_an_empty_model_is_solved_as_the_pyomo_route_solves_it():
    inst = random_realtime(2, 2, generation=0.0, seed=0)  # no job: nothing to decide
    lp = build("realtime-max-weight", inst, arrays=True)
    assert lp.n_cols == 0
    a, p = solve(lp), solve(build("realtime-max-weight", inst))
    assert a.termination == p.termination and a.objective == p.objective == 0.0


# -- the realtime frame: the most likely pattern without enumerating ------------------------------------


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 3), m=st.integers(1, 3), data=st.data())
def test_most_likely_pattern_is_the_enumerations_first_argmax(n, m, data):
    g = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.3, 0.5, 0.7, 1.0, 0.49, 0.51]), min_size=n * m,
                                    max_size=n * m))).reshape(n, m)
    inst = dataclasses.replace(random_realtime(n, m, seed=0), generation=g)
    masks, prob = inst.states()  # also with no random task (a single state)
    assert masks.shape[0] == 1 << int(((g > 0) & (g < 1)).sum())
    np.testing.assert_array_equal(inst.most_likely_pattern(), masks[int(np.argmax(prob))])


def test_most_likely_pattern_of_explicit_patterns():
    inst = RealtimeInstance(success=[[0.9, 0.9]], patterns=[[[1, 0]], [[0, 1]], [[1, 0]]],
                            pattern_prob=[0.3, 0.4, 0.3], requirement=[0.1])
    np.testing.assert_array_equal(inst.most_likely_pattern(), [[True, False]])  # 0.3 + 0.3 merged


def test_a_frame_past_the_enumeration_limit_builds():
    inst = realtime_preset("fig5")  # N = M = 5: 2^25 patterns, past max_states
    with pytest.raises(ValueError, match="exceed max_states"):
        inst.states()
    assert isinstance(build("realtime-max-weight", inst, arrays=True), MatrixLP)
    build("realtime-max-weight", inst)
