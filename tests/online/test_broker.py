"""Paper 003 online: A_fractional (Alg. 1, Theorem 3), mlBroker (Alg. 1 + Alg. 2) and the Sec. 6.3 baselines.

Every integral run is judged by :func:`clusteropt.verify.check_broker_schedule`, never by the policy; the
fractional runs are put back into the Pyomo model of P_f (9) and checked row by row there.
"""

from __future__ import annotations

import math

import numpy as np
import pyomo.environ as pyo
import pytest

from clusteropt.decisions.broker import BrokerDecision, BrokerSchedule
from clusteropt.instances.broker import BrokerInstance, broker_preset
from clusteropt.models.broker.milp import build_broker_milp
from clusteropt.models.broker.optimum import broker_lp_bound, broker_offline_optimum
from clusteropt.online import run_online
from clusteropt.online.broker import (
    CLARABEL_RETRIES,
    POLICIES,
    AFractional,
    BrokerEnvironment,
    MlBroker,
    SlotSolveError,
    make_policy,
    oasis_placement,
)
from clusteropt.verify import check_broker_schedule

INTEGRAL = [("mlbroker", {}), ("mlbroker", {"rounding": "ir"}), ("mlbroker", {"rounding": "gr"}),
            ("mlbroker", {"price_form": "bigm"}), ("local", {}), ("central", {}), ("oasis", {})]


def _run(inst, name, seed=0, **options):
    return run_online(make_policy(name, **options), inst, horizon=inst.horizon, seed=seed)


@pytest.mark.parametrize(("name", "options"), INTEGRAL, ids=lambda v: v if isinstance(v, str) else str(v))
@pytest.mark.parametrize(("preset", "seed"), [("tiny", 0), ("tiny", 2), ("small", 0), ("small", 1)])
def test_every_integral_run_passes_the_verifier(name, options, preset, seed):
    inst = broker_preset(preset, seed=seed)
    run = _run(inst, name, seed=seed, **options)
    chk = check_broker_schedule(inst, run.schedule)
    assert chk.ok, chk.violations[:3]
    assert len(run.schedule) == inst.horizon
    # the environment's cost (objective of (8) at the decisions) is the verifier's recount
    assert math.isclose(chk.total_cost, run.total_cost, rel_tol=1e-9)
    ours = run.cost_totals()
    for key, value in chk.cost_totals().items():
        assert math.isclose(value, ours[key], rel_tol=1e-9, abs_tol=1e-9), key


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_no_policy_beats_the_offline_milp(seed):
    inst = broker_preset("tiny", seed=seed)
    opt, schedule, result = broker_offline_optimum(inst)
    assert result.is_optimal and check_broker_schedule(inst, schedule).ok
    for name, options in INTEGRAL:
        assert _run(inst, name, seed=seed, **options).total_cost >= opt - 1e-6 * max(1.0, opt), name


# -- A_fractional: Theorem 3 and feasibility for P_f ---------------------------------------------------------


def _pf_point(inst: BrokerInstance, schedule: BrokerSchedule, form: str) -> pyo.ConcreteModel:
    """P_f (9) of ``form`` with every variable fixed at the run's fractional decisions."""
    m = build_broker_milp(inst, relax=True, price_form=form)
    prev = np.zeros((inst.n_jobs, inst.n_dcs))
    for t in range(1, inst.horizon + 1):
        d = schedule.slots[t - 1]
        act = inst.active_mask(t)
        for i in np.flatnonzero(act):
            for r in range(inst.n_dcs):
                m.y[i, t, r].set_value(float(d.y[i, r]), skip_validation=True)
                m.s[i, t, r].set_value(float(d.s[i, r]), skip_validation=True)
                m.v[i, t, r].set_value(float(d.v[i, r]), skip_validation=True)
                m.z[i, t, r].set_value(max(float(d.v[i, r] - prev[i, r]), 0.0), skip_validation=True)
                for r2 in range(inst.n_dcs):
                    m.g[i, t, r, r2].set_value(float(d.g[i, r, r2]), skip_validation=True)
                    if (i, t, r, r2) in m.Q:
                        m.q[i, t, r, r2].set_value(float(d.q[i, r, r2]), skip_validation=True)
        for r in range(inst.n_dcs):
            for k in range(inst.n_resources):
                m.x[t, r, k].set_value(float(d.x[r, k]), skip_validation=True)
                m.u1[t, r, k].set_value(float(d.u1[r, k]), skip_validation=True)
                m.u2[t, r, k].set_value(float(d.u2[r, k]), skip_validation=True)
        prev = np.where(act[:, None], d.v, 0.0)
    return m


def _worst_violation(m: pyo.ConcreteModel) -> float:
    worst = 0.0
    for con in m.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(con.body)
        for bound, sign in ((con.lower, -1.0), (con.upper, 1.0)):
            if bound is not None:
                b = pyo.value(bound)
                worst = max(worst, sign * (body - b) / (1.0 + abs(b)))
    for var in m.component_data_objects(pyo.Var):
        if var.value is not None and var.lb is not None:
            worst = max(worst, (var.lb - var.value) / (1.0 + abs(var.lb)))
    return worst


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 2.0])
@pytest.mark.parametrize(("preset", "seed"), [("tiny", 0), ("tiny", 3), ("small", 0), ("small", 2)])
def test_theorem_3_afractional_within_r1_of_pf_bigm(preset, seed, epsilon):
    """Alg. 1's fractional run is a feasible point of P_f (9) whose cost is at most r1 times its optimum."""
    inst = broker_preset(preset, seed=seed)
    run = _run(inst, "afractional", epsilon=epsilon, price_form="bigm")
    m = _pf_point(inst, run.schedule, "bigm")
    assert _worst_violation(m) < 1e-5
    assert math.isclose(pyo.value(m.eq8), run.total_cost, rel_tol=1e-9, abs_tol=1e-9)
    pf, _ = broker_lp_bound(inst, price_form="bigm")
    r1 = 2 + (1 + epsilon) * math.log(1 + 1 / epsilon)
    assert pf - 1e-6 * (1 + pf) <= run.total_cost <= r1 * pf + 1e-9


@pytest.mark.parametrize("epsilon", [0.1, 2.0])
@pytest.mark.parametrize(("preset", "seed"), [("tiny", 1), ("small", 0), ("small", 1)])
def test_theorem_3_with_the_convex_hull_price(preset, seed, epsilon):
    """The same bound with the hull rows in (10) and in P_f (the tight LP is the offline reference)."""
    inst = broker_preset(preset, seed=seed)
    run = _run(inst, "afractional", epsilon=epsilon)  # default: price_form="tight"
    pf, _ = broker_lp_bound(inst, price_form="tight")
    r1 = 2 + (1 + epsilon) * math.log(1 + 1 / epsilon)
    assert pf - 1e-5 * (1 + pf) <= run.total_cost <= r1 * pf
    # the fractional decisions keep the relaxed (8a), (8b), (8f), (8i), (8j)
    for t, d in enumerate(run.schedule.slots, start=1):
        act = inst.active(t)
        data = inst.slot_data(t)[act]
        assert np.allclose(d.q[act].sum(axis=2), data, rtol=1e-6, atol=1e-6)
        assert (inst.capacity[act, None] * d.y[act] >= d.q[act].sum(axis=1) - 1e-5 * (1 + data.sum())).all()
        assert np.allclose(d.s[act].sum(axis=1), 1.0, atol=1e-6)
        assert np.allclose(d.g[act].sum(axis=2), d.y[act], atol=1e-5)
        need = inst.required_workers(t)[act]
        assert (d.g[act].sum(axis=1) >= need[:, None] * d.s[act] - 1e-5).all()


def test_afractional_carries_its_own_v():
    inst = broker_preset("small", seed=0)
    pol = AFractional()
    pol.reset(inst)
    for t in (1, 2, 3):
        before = pol.v_.copy()
        dec, info = pol.solve_slot(t)
        act = inst.active_mask(t)
        assert np.allclose(dec.z[act], np.maximum(dec.v[act] - before[act], 0.0))
        assert np.array_equal(pol.v_[~act], np.zeros_like(pol.v_[~act]))
        assert np.allclose(pol.v_[act], dec.v[act])
        assert info["status"] and info["jobs"] == int(act.sum())


class _FirstSolvesCut:
    """Wrap ``clusteropt.solvers.solve`` so that the first ``n`` solves stop after one iteration."""

    def __init__(self, n):
        from clusteropt.solvers import solve

        self.n, self.solve, self.options = n, solve, []

    def __call__(self, model, solver, **kwargs):
        self.options.append(kwargs.get("options"))
        if len(self.options) <= self.n:
            kwargs["options"] = {**(kwargs.get("options") or {}), "max_iter": 1}
        return self.solve(model, solver, **kwargs)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_afractional_solves_again_with_the_retry_settings(monkeypatch, caplog):
    import clusteropt.solvers

    inst = broker_preset("small", seed=0)
    plain = AFractional()
    plain.reset(inst)
    want, want_info = plain.solve_slot(1)
    assert want_info["attempts"] == 1 and want_info["solver_options"] == {}

    cut = _FirstSolvesCut(2)
    monkeypatch.setattr(clusteropt.solvers, "solve", cut)
    pol = AFractional(retry_options=({"max_step_fraction": 0.9}, {"equilibrate_enable": False}))
    pol.reset(inst)
    with caplog.at_level("WARNING", logger="clusteropt.online.broker"):
        dec, info = pol.solve_slot(1)
    # defaults, then the retry settings in turn; the third solve is not cut and is optimal
    assert cut.options == [None, {"max_step_fraction": 0.9}, {"equilibrate_enable": False}]
    assert info["attempts"] == 3 and info["solver_options"] == {"equilibrate_enable": False}
    assert info["status"].lower() == "optimal"
    assert sum("solving again" in r.getMessage() for r in caplog.records) == 2
    assert math.isclose(info["objective"], want_info["objective"], rel_tol=1e-5)
    assert np.allclose(dec.y, want.y, atol=1e-4)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_afractional_raises_when_no_setting_solves(monkeypatch):
    import clusteropt.solvers

    monkeypatch.setattr(clusteropt.solvers, "solve", _FirstSolvesCut(10))
    inst = broker_preset("small", seed=0)
    pol = AFractional(retry_options=({"max_step_fraction": 0.9},))
    pol.reset(inst)
    before = pol.v_.copy()
    # a solve stopped by the iteration limit has a point, but it is never used
    with pytest.raises(SlotSolveError, match=r"slot 1: problem \(10\) .* every clarabel setting tried"):
        pol.solve_slot(1)
    assert np.array_equal(pol.v_, before)  # v(t - 1) is not touched by the failed slot
    with pytest.raises(TypeError, match=r"retry_options\[1\]"):
        AFractional(retry_options=({}, "fast"))
    assert AFractional(solver="scs").retry_options == ()


def test_afractional_uses_an_inaccurate_solution_when_nothing_is_optimal(monkeypatch, caplog):
    """Every attempt ends ``optimal_inaccurate`` (the solver's point relabelled): the first is used."""
    import dataclasses

    import clusteropt.solvers
    from clusteropt.solvers import Termination

    real = clusteropt.solvers.solve
    calls = []

    def inaccurate(model, solver, **kwargs):
        calls.append(kwargs.get("options"))
        res = real(model, solver, **kwargs)
        return dataclasses.replace(res, termination=Termination.FEASIBLE,
                                   raw={**res.raw, "status": "optimal_inaccurate"})

    inst = broker_preset("small", seed=0)
    plain = AFractional()
    plain.reset(inst)
    want, _ = plain.solve_slot(1)

    monkeypatch.setattr(clusteropt.solvers, "solve", inaccurate)
    pol = AFractional(retry_options=({"max_step_fraction": 0.9},))
    pol.reset(inst)
    with caplog.at_level("WARNING", logger="clusteropt.online.broker"):
        dec, info = pol.solve_slot(1)
    assert calls == [None, {"max_step_fraction": 0.9}]  # the whole ladder is tried first
    assert info["attempts"] == 2 and info["status"] == "FEASIBLE" and info["solver_options"] == {}
    assert any("using the solution found" in r.getMessage() for r in caplog.records)
    assert np.allclose(dec.y, want.y, atol=1e-4) and np.array_equal(pol.v_[inst.active_mask(1)],
                                                                    dec.v[inst.active_mask(1)])


def test_mlbroker_finishes_where_clarabel_stalls_with_its_defaults():
    """broker-ratio's cell (small preset, T = 10, one job a slot, 700 GB, trial 1): with Clarabel 0.11's
    defaults problem (10) of slot 1 ends "InsufficientProgress"; the run used to stop there."""
    from clusteropt.experiments.broker import broker_instance

    inst = broker_instance({"preset": "small", "horizon": 10, "jobs_per_slot": 1, "data_per_slot": 700.0,
                            "trial": 1})
    run = _run(inst, "mlbroker", seed=0)
    chk = check_broker_schedule(inst, run.schedule)
    assert chk.ok, chk.violations[:3]
    assert all(d["status"].lower() == "optimal" for d in run.slot_info)
    assert all(d["attempts"] == 1 + ("max_step_fraction" in d["solver_options"]) for d in run.slot_info)


# -- mlBroker -----------------------------------------------------------------------------------------------


def test_mlbroker_is_seeded_and_reports_its_fractional_costs():
    inst = broker_preset("small", seed=1)
    a, b = _run(inst, "mlbroker", seed=5), _run(inst, "mlbroker", seed=5)
    assert a.total_cost == b.total_cost
    pairs = zip(a.schedule.slots, b.schedule.slots, strict=True)
    assert all(np.array_equal(x.y, y.y) and np.array_equal(x.s, y.s) for x, y in pairs)
    info = a.slot_info[3]
    for key in ("fractional_C1", "fractional_C2", "fractional_C3", "fractional_C4", "status", "round_seconds",
                "workers_added", "C1", "C2", "C3", "C4"):
        assert key in info
    # the fractional side is A_fractional's own run
    frac = _run(inst, "afractional")
    total = sum(s[f"fractional_C{c}"] for s in a.slot_info for c in range(1, 5))
    assert math.isclose(total, frac.total_cost, rel_tol=1e-9)


# -- baselines ----------------------------------------------------------------------------------------------


def test_local_processes_data_where_it_is():
    inst = broker_preset("small", seed=2)
    run = _run(inst, "local", seed=3)
    assert run.cost_totals()["C1"] == 0.0
    ps_seen: dict[int, int] = {}
    for t, d in enumerate(run.schedule.slots, start=1):
        act = inst.active(t)
        expect = np.ceil(inst.slot_data(t)[act] / inst.capacity[act, None] - 1e-9).clip(min=0)
        assert np.array_equal(d.y[act], expect)
        for i in act.tolist():
            ps = int(np.argmax(d.s[i]))
            assert ps_seen.setdefault(i, ps) == ps  # drawn once, kept
    pss = {tuple(int(np.argmax(d.s[i])) for d in _run(inst, "local", seed=s).schedule.slots[:1] for i in
                 inst.active(1)) for s in range(8)}
    assert len(pss) > 1 or len(inst.active(1)) == 0


def test_central_puts_each_job_in_one_dc():
    inst = broker_preset("small", seed=0)
    run = _run(inst, "central")
    assert run.cost_totals()["C4"] == 0.0
    for t, d in enumerate(run.schedule.slots, start=1):
        for i in inst.active(t):
            used = np.flatnonzero((d.y[i] + d.s[i]) > 0)
            assert used.size == 1
            assert d.y[i].sum() == inst.required_workers(t)[i]


def _oasis_instance() -> BrokerInstance:
    """1 job, 2 DCs, 1 resource: 20 GB in DC 0, P = 10 (N = 2), n = m = 1, B = 1, d = 0.5, c = 0."""
    return BrokerInstance(horizon=1, price_a=[[3.0], [1.0]], price_b=[[2.0], [0.5]], threshold=[[100.0], [100.0]],
                          transfer_cost=[[0.0, 0.5], [0.5, 0.0]], arrival=[1], last_slot=[1], data=[[[20.0, 0.0]]],
                          capacity=[10.0], worker_demand=[[1.0]], ps_demand=[[1.0]], traffic=[1.0],
                          deploy_cost=[0.0], resources=("gpu",))


def test_oasis_placement_by_hand():
    inst = _oasis_instance()
    # Unit prices p = (3, 1).  All in DC 0: 2 workers + PS = 3 * 3 = 9.  All in DC 1: move 20 GB at 0.5 = 10,
    # 3 units at 1 = 3: 13.  Workers in DC 0 and PS in DC 1: 2 * 3 + 1 + C4 2 * 0.5 = 8.  Workers in DC 1, PS in
    # DC 0: 10 + 2 + 3 + 1 = 16.  One worker each, PS in DC 0: 3 + 5 (10 GB moved) + 1 + 3 + 0.5 = 12.5.
    y, ps, cost = oasis_placement(inst, 1, 0, np.array([[3.0], [1.0]]))
    assert y.tolist() == [2, 0] and ps == 1 and math.isclose(cost, 8.0)
    # with a dear DC 1 (p = 10): all in DC 0 at 9
    y, ps, cost = oasis_placement(inst, 1, 0, np.array([[3.0], [10.0]]))
    assert y.tolist() == [2, 0] and ps == 0 and math.isclose(cost, 9.0)
    run = _run(inst, "oasis")  # the policy uses a (below the threshold): the first placement
    d = run.schedule.slots[0]
    assert d.y[0].tolist() == [2, 0] and int(np.argmax(d.s[0])) == 1
    assert check_broker_schedule(inst, run.schedule).ok


# -- errors and the JSON ------------------------------------------------------------------------------------


def test_errors():
    inst = broker_preset("tiny", seed=0)
    with pytest.raises(ValueError, match="unknown policy 'nope'"):
        make_policy("nope")
    with pytest.raises(ValueError, match="takes no options"):
        make_policy("local", epsilon=0.1)
    with pytest.raises(ValueError, match="epsilon"):
        AFractional(epsilon=0.0)
    with pytest.raises(ValueError, match="rounding"):
        MlBroker(rounding="best")
    with pytest.raises(ValueError, match="price_form"):
        MlBroker(price_form="hull")
    with pytest.raises(ValueError, match="horizon"):
        BrokerEnvironment(inst, inst.horizon + 1)
    env = BrokerEnvironment(inst, inst.horizon)
    env.observe(1)
    with pytest.raises(TypeError, match="expected a BrokerDecision"):
        env.apply(1, {"y": 0})
    with pytest.raises(ValueError, match=r"shape \(I, R, K\)"):
        env.apply(1, BrokerDecision.empty(inst.n_jobs + 1, inst.n_dcs, inst.n_resources))
    assert set(POLICIES) == {"mlbroker", "mlbroker-plus", "local", "central", "oasis", "afractional"}


def test_json_holds_everything_to_recheck():
    inst = broker_preset("small", seed=0)
    run = _run(inst, "mlbroker")
    out = run.to_json_dict(inst)
    assert {"policy", "total_cost", "costs", "seconds", "slots", "slot_info", "schedule"} <= set(out)
    assert math.isclose(out["total_cost"], sum(s["costs"]["total"] for s in out["slots"]), rel_tol=1e-9)
    t = 3
    slot = out["slots"][t - 1]
    assert slot["slot"] == t and set(slot["costs"]) == {"C1", "C2", "C3", "C4", "total"}
    d = run.schedule.slots[t - 1]
    for i in inst.active(t):
        job = slot["jobs"][str(i)]
        assert sum(job["workers"].values()) == d.y[i].sum() and d.s[i, job["ps"]] == 1
        assert sum(n for _, _, n in job["connections"]) == d.y[i].sum()
        moved = sum(gb for _, _, gb in job["data_moved"])
        assert math.isclose(moved, float(d.q[i].sum() - np.trace(d.q[i])), rel_tol=1e-9, abs_tol=1e-9)
    back = BrokerSchedule.from_dict(out["schedule"])
    chk = check_broker_schedule(inst, back)
    assert chk.ok and math.isclose(chk.total_cost, run.total_cost, rel_tol=1e-9)


# -- parameters, the paper's rounding and the fractional trace ------------------------------------------------


def test_get_params_names_everything_that_shapes_a_run():
    pol = make_policy("mlbroker", epsilon=0.5, price_form="bigm", rounding_variant="paper")
    params = pol.get_params()
    assert params["epsilon"] == 0.5 and params["sigma"] == pytest.approx(math.log(3.0))
    assert (params["price_form"], params["rounding"], params["rounding_variant"]) == ("bigm", "a_round", "paper")
    assert params["solver"] == "clarabel" and params["retry_options"] == [dict(o) for o in CLARABEL_RETRIES]
    assert params["rounding_tol"] == 1e-6 and params["transfers"] == "all"
    assert make_policy("mlbroker", transfers="sources").get_params()["transfers"] == "sources"
    with pytest.raises(ValueError, match="transfers = 'dense'; expected one of all, sources"):
        make_policy("afractional", transfers="dense")
    assert make_policy("oasis", time_limit=3.0).get_params() == {"time_limit": 3.0}
    assert make_policy("local").get_params() == make_policy("central").get_params() == {}
    with pytest.raises(ValueError, match="rounding_variant = 'exact'"):
        MlBroker(rounding_variant="exact")


def test_paper_rounding_variant_runs_and_matches_the_package_when_no_repair_fires():
    inst = broker_preset("small", seed=1)
    a = _run(inst, "mlbroker", seed=3)
    b = _run(inst, "mlbroker", seed=3, rounding_variant="paper")
    assert all(d["workers_added"] == 0 for d in a.slot_info + b.slot_info)
    assert check_broker_schedule(inst, b.schedule).ok and a.total_cost == b.total_cost


def test_paper_rounding_variant_stops_where_a_job_is_left_short(monkeypatch):
    from clusteropt.rounding.broker.placement import RoundingShortError

    inst = broker_preset("tiny", seed=1)
    real = AFractional.solve_slot

    def halved(self, t):  # a fractional y~ with half the capacity breaks the relaxed (8a)/(8b)
        dec, info = real(self, t)
        dec.y = dec.y * 0.5
        return dec, info

    monkeypatch.setattr(AFractional, "solve_slot", halved)
    run = _run(inst, "mlbroker")  # the package repairs it
    assert check_broker_schedule(inst, run.schedule).ok and sum(d["workers_added"] for d in run.slot_info) > 0
    with pytest.raises(RoundingShortError, match="as the paper writes it"):
        _run(inst, "mlbroker", rounding_variant="paper")


def test_trace_holds_every_slots_fractional_solution_and_candidates():
    from clusteropt.online.broker import trace_json

    inst = broker_preset("small", seed=0)
    pol = make_policy("mlbroker", keep_trace=True)
    run = run_online(pol, inst, horizon=inst.horizon, seed=0)
    trace = trace_json(inst, pol)
    assert trace["candidates"] == [f"Round1_y:{r}" for r in inst.resources] + ["Round2_y"]
    assert [s["slot"] for s in trace["slots"]] == list(range(1, inst.horizon + 1))
    for t, (rec, frac) in enumerate(zip(trace["slots"], pol.trace_, strict=True), start=1):
        dec = frac["decision"]
        assert set(rec["jobs"]) == {str(i) for i in inst.active(t)}
        for i, job in rec["jobs"].items():
            assert job["y"] == {str(r): float(dec.y[int(i), r]) for r in np.flatnonzero(dec.y[int(i)] > 0)}
            ybar = run.schedule.slots[t - 1].y[int(i)]
            top = np.zeros(inst.n_dcs)
            for r, cands in rec["rounding"]["jobs"][i]["candidates"].items():
                assert len(cands) == inst.n_resources + 1
                top[int(r)] = max(cands)
            assert np.array_equal(top, ybar)  # line 5, no repair
        assert set(rec["dcs"]["0"]) == {"x", "u1", "u2", "h_a", "h_b"}  # the hull's variables too
    with pytest.raises(ValueError, match="keep_trace=True"):
        trace_json(inst, make_policy("mlbroker"))


@pytest.mark.parametrize("seed", [0, 1])
def test_a_run_with_transfers_from_the_sources_only(seed):
    """The smaller form of (10) decides each slot's fractional problem to the same optimum; the run's
    schedule verifies (the rounding may then draw differently: the fractional points agree only to the
    solver's tolerance)."""
    from clusteropt.runs import run

    inst = broker_preset("small", seed=seed)
    full = run(inst, "mlbroker", seed=seed)
    part = run(inst, "mlbroker", seed=seed, transfers="sources")
    assert full.ok and part.ok and part.params["transfers"] == "sources" and full.params["transfers"] == "all"
    assert part.out["fractional_costs"]["total"] == pytest.approx(full.out["fractional_costs"]["total"], rel=1e-6)
