"""LP-RS-MDE's routes (paper 000, Alg. 2 lines 3-6): the ``"auto"`` default, the named routes, their LP optima.

Bars: ``"auto"`` resolves to the paper's route below :data:`AUTO_SERVERS` servers and to the fast
route from there on where it applies, never to a route that cannot run (non-tree clusters, another
solver, the flow form, Pyomo); a named route that cannot run is refused with the reason; the
resolved route is in the policy's params, the run's JSON and every slot's info; every route reaches
the same selection-LP optimum, and for the same ring sizes the same augmented-LP optimum; the
experiments name the route they were recorded with.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusteropt.experiments.gadget import GADGET_POLICIES, make_gadget_policy
from clusteropt.instances.gadget.instance import fat_tree_cluster, gadget_preset, k_ary_fat_tree, random_gadget
from clusteropt.models.gadget.colgen import solve_embedding_colgen
from clusteropt.models.gadget.gvne import slot_problem
from clusteropt.models.gadget.matrix import build_embedding_matrix, solve_matrix
from clusteropt.online import run_online
from clusteropt.online.gadget import Gadget, make_policy
from clusteropt.rounding.gadget import (
    AUTO_SERVERS,
    EMBED_HIGHS_OPTIONS,
    FAST_ROUTE,
    PAPER_ROUTE,
    lp_rs_mde,
    positive_gain,
    resolve_routes,
    select_rings,
)
from clusteropt.verify import check_gadget_schedule

ROUTES = [(e, s) for e in ("lp", "colgen") for s in ("full", "capacity")]


def _instance(n_servers: int, n_jobs: int = 6, seed: int = 0, horizon: int = 2):
    return random_gadget(n_jobs, cluster=fat_tree_cluster(n_servers, seed=seed), horizon=horizon, arrivals="zero",
                         utility="sqrt", seed=seed)


# -- resolve_routes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", ["tiny", "small"])
def test_auto_is_the_papers_route_on_small_presets(preset):
    cluster = gadget_preset(preset, seed=0).cluster
    assert cluster.n_servers < AUTO_SERVERS
    assert resolve_routes(cluster) == PAPER_ROUTE == ("lp", "full")


def test_auto_is_the_fast_route_from_the_threshold_on():
    assert resolve_routes(gadget_preset("paper", seed=0).cluster) == FAST_ROUTE == ("colgen", "capacity")
    assert resolve_routes(fat_tree_cluster(AUTO_SERVERS, seed=1)) == FAST_ROUTE
    assert resolve_routes(fat_tree_cluster(AUTO_SERVERS - 1, seed=1)) == PAPER_ROUTE
    assert resolve_routes(fat_tree_cluster(400, seed=2)) == FAST_ROUTE


def test_auto_never_picks_a_route_that_cannot_run():
    fabric = k_ary_fat_tree(4, seed=0)  # 16 servers, not a tree
    assert fabric.n_servers >= AUTO_SERVERS and not fabric.is_tree()
    assert resolve_routes(fabric) == PAPER_ROUTE
    big = fat_tree_cluster(50, seed=0)
    assert resolve_routes(big, solver="scip") == PAPER_ROUTE  # column generation and the arrays are HiGHS's
    assert resolve_routes(big, form="flow") == ("colgen", "full")
    assert resolve_routes(big, builder="pyomo") == PAPER_ROUTE  # a builder named: its LPs, the paper's route
    assert resolve_routes(big, builder="matrix") == PAPER_ROUTE
    assert resolve_routes(big, embed_form="flow") == ("lp", "capacity")
    # each of the two resolves on its own
    assert resolve_routes(big, embed_route="lp") == ("lp", "capacity")
    assert resolve_routes(big, select_route="full") == ("colgen", "full")
    small = fat_tree_cluster(8, seed=0)
    assert resolve_routes(small, embed_route="colgen", select_route="capacity") == FAST_ROUTE  # named: as asked


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"embed_route": "colgen"}, ["colgen", "tree"]),
    ({"select_route": "capacity"}, ["capacity", "tree"]),
])
def test_named_route_off_a_tree_is_refused(kwargs, words):
    with pytest.raises(ValueError) as err:
        resolve_routes(k_ary_fat_tree(4, seed=0), **kwargs)
    assert all(w in str(err.value) for w in words)


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"embed_route": "colgen", "solver": "scip"}, ["colgen", "HiGHS", "scip"]),
    ({"select_route": "capacity", "solver": "scip"}, ["capacity", "HiGHS", "scip"]),
    ({"select_route": "capacity", "form": "flow"}, ["capacity", "flow"]),
    ({"select_route": "capacity", "builder": "pyomo"}, ["capacity", "pyomo"]),
    ({"embed_route": "colgen", "embed_form": "flow"}, ["colgen", "flow"]),
    ({"embed_route": "dw"}, ["embed_route", "auto"]),
    ({"select_route": "dual"}, ["select_route", "auto"]),
])
def test_named_route_that_cannot_run_is_refused(kwargs, words):
    with pytest.raises(ValueError) as err:
        resolve_routes(fat_tree_cluster(50, seed=0), **kwargs)
    assert all(w in str(err.value) for w in words)


def test_lp_rs_mde_refuses_a_named_route_it_cannot_run():
    inst = random_gadget(4, cluster=k_ary_fat_tree(4, seed=0), horizon=2, arrivals="zero", utility="sqrt", seed=0)
    p = slot_problem(inst, 1, np.zeros(inst.n_jobs))
    with pytest.raises(ValueError, match=r"colgen.*tree"):
        lp_rs_mde(p, rng=0, embed_route="colgen")
    _, info = lp_rs_mde(p, rng=0)  # auto: the paper's route, which runs on any cluster
    assert (info["embed_route"], info["select_route"], info["route_requested"]) == ("lp", "full", "auto/auto")


# -- the policy records the resolved route ----------------------------------------------------------------


@pytest.mark.parametrize(("n_servers", "route"), [(8, PAPER_ROUTE), (AUTO_SERVERS, FAST_ROUTE)])
def test_resolved_route_is_in_the_params_json_and_slot_info(n_servers, route):
    inst = _instance(n_servers)
    run = run_online(Gadget("lp-rs-mde"), inst, horizon=inst.horizon, seed=0)
    assert check_gadget_schedule(inst, run.schedule).ok
    assert (run.params["embed_route"], run.params["select_route"]) == route
    assert run.params["route_requested"] == "auto/auto"
    params = json.loads(json.dumps(run.to_json_dict(inst)))["params"]
    assert (params["embed_route"], params["select_route"], params["route_requested"]) == (*route, "auto/auto")
    slots = [i for i in run.slot_info if i.get("jobs")]
    assert slots and all((i["embed_route"], i["select_route"]) == route for i in slots)
    # the paper's route by name still runs where auto takes the fast one, and says so
    named = run_online(Gadget("lp-rs-mde", embed_route="lp", select_route="full"), inst, horizon=inst.horizon,
                       seed=0)
    assert (named.params["embed_route"], named.params["select_route"], named.params["route_requested"]) == (
        "lp", "full", "lp/full")
    assert all(i["route_requested"] == "lp/full" for i in named.slot_info if i.get("jobs"))


def test_params_before_reset_say_auto_and_other_slot_solvers_say_nothing():
    assert (Gadget("lp-rs-mde").get_params()["embed_route"], Gadget("lp-rs-mde").get_params()["select_route"]) == (
        "auto", "auto")
    p = Gadget("greedy").get_params()
    assert p["embed_route"] is None and p["select_route"] is None and p["route_requested"] is None


def test_policy_refuses_a_named_route_off_a_tree_at_reset():
    inst = random_gadget(4, cluster=k_ary_fat_tree(4, seed=0), horizon=2, arrivals="zero", utility="sqrt", seed=0)
    for kwargs, word in (({"embed_route": "colgen"}, "colgen"), ({"select_route": "capacity"}, "capacity"),
                         ({"select_classes": True}, "select_classes")):
        with pytest.raises(ValueError, match=word):
            make_policy("gadget", slot_solver="lp-rs-mde", **kwargs).reset(inst)
    pol = make_policy("gadget", slot_solver="lp-rs-mde")
    pol.reset(inst)
    assert (pol.get_params()["embed_route"], pol.get_params()["select_route"]) == PAPER_ROUTE


def test_experiments_name_the_route_they_were_recorded_with():
    lp_policies = [k for k, (_, opts) in GADGET_POLICIES.items() if opts.get("slot_solver") == "lp-rs-mde"]
    assert lp_policies
    paper = gadget_preset("paper", jobs=4, seed=0)  # where auto would take the fast route
    for name in lp_policies:
        pol = make_gadget_policy(name)
        pol.reset(paper)
        assert (pol.get_params()["embed_route"], pol.get_params()["select_route"]) == PAPER_ROUTE, name


# -- every route's LP optima agree ------------------------------------------------------------------------


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_servers=st.integers(4, 10), n_racks=st.integers(1, 3), n_jobs=st.integers(1, 8),
       seed=st.integers(0, 10_000), utility=st.sampled_from(["sqrt", "log"]))
def test_every_route_reaches_the_same_lp_optima(n_servers, n_racks, n_jobs, seed, utility):
    cluster = fat_tree_cluster(n_servers, n_racks=n_racks, seed=seed)
    inst = random_gadget(n_jobs, cluster=cluster, horizon=1, arrivals="zero", utility=utility, seed=seed)
    p = slot_problem(inst, 1, np.zeros(inst.n_jobs))
    infos = {r: lp_rs_mde(p, rng=seed, embed_route=r[0], select_route=r[1])[1] for r in ROUTES}
    lp_values = [i.get("lp_value", 0.0) for i in infos.values()]
    assert np.allclose(lp_values, lp_values[0], rtol=1e-6, atol=1e-6), lp_values
    for select in ("full", "capacity"):  # the same selection route keeps the same ring sizes
        a, b = infos[("lp", select)], infos[("colgen", select)]
        assert np.isclose(a.get("augmented_value", 0.0), b.get("augmented_value", 0.0), rtol=1e-6, atol=1e-6)
    gaining = positive_gain(p)
    if gaining.jobs.size:
        sel, _ = select_rings(gaining)
        if sel.kappa:
            res, _ = solve_matrix(build_embedding_matrix(gaining, sel.kappa), options=EMBED_HIGHS_OPTIONS)
            colgen = solve_embedding_colgen(gaining, sel.kappa)
            assert np.isclose(res.objective, colgen.value, rtol=1e-6, atol=1e-6)
            assert np.isclose(res.objective, infos[("lp", "full")]["augmented_value"], rtol=1e-6, atol=1e-6)


def test_route_benchmark_quick(tmp_path):
    from benchmarks import gadget_route

    assert gadget_route.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "gadget_route.json").read_text())
    assert [c["case"] for c in report["cases"]] == ["tiny", "small"]
    for case in report["cases"]:
        assert case["auto"] == "lp/full" and case["lp_values_agree"] and case["cross"]["agree"]
        assert {r["route"] for r in case["rows"]} == set(gadget_route.ROUTES)
        assert all(r["cpu_s"] > 0 and r["build_s"] >= 0 and r["solve_s"] > 0 for r in case["rows"])
        assert all(r["resolved"] == list(gadget_route.ROUTES[r["route"]]) for r in case["rows"])
    text = (tmp_path / "gadget_route.md").read_text()
    assert "python -m benchmarks.gadget_route --quick" in text and "highspy" in text
