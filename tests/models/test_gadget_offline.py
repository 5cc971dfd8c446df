"""The offline DDLJS MILP (paper 000, Sec. IV): brute force, verified schedules, LP bound, never beaten
by an online policy, the competitive ratio of Theorem 10, both ring forms."""

from __future__ import annotations

import dataclasses
import itertools

import networkx as nx
import numpy as np
import pytest

from clusteropt.decisions.gadget import GadgetSchedule, Ring, SlotAllocation
from clusteropt.instances.gadget.instance import Cluster, GadgetInstance, gadget_preset, k_ary_fat_tree
from clusteropt.models.gadget.ddljs import build_ddljs, ddljs_optimum, schedule_from_solution
from clusteropt.models.gadget.gvne import worker_bound
from clusteropt.models.registry import MODELS
from clusteropt.online.driver import run_online
from clusteropt.online.gadget import make_policy
from clusteropt.solvers import solve
from clusteropt.verify import check_gadget_schedule

POLICIES = [("gadget", {"slot_solver": "greedy"}), ("gadget", {"slot_solver": "exact"}), ("fifo", {}),
            ("drf", {}), ("las", {})]


def _tol(value: float) -> float:
    """Slack for comparing a MILP objective with an exact value (HiGHS's absolute gap is 1e-6)."""
    return 1e-6 * max(1.0, abs(value))


# -- a brute force independent of the MILP --------------------------------------------------------


def _ring_options(cl: Cluster, servers: tuple[int, ...]) -> dict[tuple[int, ...], Ring]:
    """Every ring through ``servers`` (each once; every cyclic order, every simple path per edge):
    Pareto-minimal link-use counts -> a ring with those counts."""
    g = cl.graph()
    simple = {}
    for a, b in itertools.permutations(servers, 2):
        simple[a, b] = [tuple(g[u][v]["index"] for u, v in itertools.pairwise(p))
                        for p in nx.all_simple_paths(g, a, b)]
    found: dict[tuple[int, ...], Ring] = {}
    for rest in itertools.permutations(servers[1:]):
        order = (servers[0], *rest)
        edges = [(order[k], order[(k + 1) % len(order)]) for k in range(len(order))]
        for choice in itertools.product(*(simple[e] for e in edges)):
            use = np.zeros(cl.n_links, dtype=int)
            for p in choice:
                np.add.at(use, list(p), 1)
            found.setdefault(tuple(use.tolist()), Ring(order, tuple(choice)))
    keys = [np.array(k) for k in found]
    return {tuple(k.tolist()): found[tuple(k.tolist())] for k in keys
            if not any((o <= k).all() and (o < k).any() for o in keys)}


def _slot_options(inst: GadgetInstance, t: int, rings) -> dict[tuple[int, ...], SlotAllocation]:
    """Every feasible allocation of slot t (Eqs. (2), (4)-(9)), one per vector of job totals."""
    cl = inst.cluster
    n_srv = cl.n_servers
    pw, cap, bw = inst.per_worker, cl.capacity, inst.bandwidth
    per_job = []
    for i in range(inst.n_jobs):
        if inst.arrival[i] > t:
            per_job.append([np.zeros(n_srv, dtype=int)])
            continue
        fit = [int(min(np.floor(cap[s, r] / pw[i, r]) for r in range(pw.shape[1]) if pw[i, r] > 0))
               for s in range(n_srv)]
        per_job.append([np.array(v) for v in itertools.product(*(range(f + 1) for f in fit))
                        if sum(v) <= inst.max_workers[i]])
    out: dict[tuple[int, ...], SlotAllocation] = {}
    for ys in itertools.product(*per_job):
        y = np.array(ys)
        if (np.einsum("ir,is->sr", pw, y) > cap + 1e-9).any():
            continue
        totals = tuple(y.sum(axis=1).tolist())
        if totals in out:
            continue
        multi = [i for i in range(inst.n_jobs) if (y[i] > 0).sum() >= 2]
        opts = [list(rings(tuple(np.flatnonzero(y[i]).tolist())).items()) for i in multi]
        for pick in itertools.product(*opts):
            load = sum((bw[i] * np.array(use) for i, (use, _) in zip(multi, pick, strict=True)),
                       np.zeros(cl.n_links))
            if (load <= cl.bandwidth + 1e-9).all():
                chosen = {i: ring for i, (_, ring) in zip(multi, pick, strict=True)}
                out[totals] = SlotAllocation(y.astype(np.int64), chosen)
                break
    return out


def _brute_force(inst: GadgetInstance) -> tuple[float, GadgetSchedule]:
    """Best total utility over all schedules, by dynamic programming over the worker-slot vectors."""
    cache: dict[tuple[int, ...], dict] = {}

    def rings(servers):
        if servers not in cache:
            cache[servers] = _ring_options(inst.cluster, servers)
        return cache[servers]

    states: dict[tuple[int, ...], list[SlotAllocation]] = {(0,) * inst.n_jobs: []}
    for t in range(1, inst.horizon + 1):
        options = _slot_options(inst, t, rings)
        nxt: dict[tuple[int, ...], list[SlotAllocation]] = {}
        for z, slots in states.items():
            for add, alloc in options.items():
                z2 = tuple(a + b for a, b in zip(z, add, strict=True))
                if (inst.per_worker * np.array(z2)[:, None] <= inst.limit + 1e-9).all():  # Eq. (3)
                    nxt.setdefault(z2, [*slots, alloc])
        states = nxt
    value = {z: float(inst.utility_of(np.array(z)).sum()) for z in states}
    best = max(value, key=value.get)
    return value[best], GadgetSchedule(states[best])


def _bf_instance(cluster: Cluster, seed: int, utility: str, n_jobs: int = 2, horizon: int = 2) -> GadgetInstance:
    """Jobs small enough to enumerate, bandwidth of the same order as the links'."""
    rng = np.random.default_rng(seed)
    l1 = rng.integers(1, 10, n_jobs).astype(float)
    if utility == "sigmoid":  # inflection inside the reachable range, so the sigmoid matters
        params = np.column_stack([l1, rng.uniform(1.0, 3.0, n_jobs), rng.integers(1, 5, n_jobs)])
    elif utility == "quadratic":  # peak at 1-4 worker-slots: some jobs gain nothing from more
        params = np.column_stack([l1, l1 / rng.integers(1, 5, n_jobs), np.zeros(n_jobs)])
    else:
        params = np.column_stack([l1, np.zeros(n_jobs), np.zeros(n_jobs)])
    return GadgetInstance(cluster, horizon=horizon, arrival=rng.integers(1, horizon + 1, n_jobs),
                          max_workers=rng.integers(2, 4, n_jobs), per_worker=np.ones((n_jobs, 1)),
                          limit=rng.integers(3, 7, (n_jobs, 1)).astype(float),
                          bandwidth=rng.choice([2.0, 3.5, 5.0], n_jobs), zeta=rng.choice([0.5, 1.0, 2.0], n_jobs),
                          utility=utility, utility_params=params)


def _both_ways(pairs, bandwidth):
    links = [[u, v] for u, v in pairs] + [[v, u] for u, v in pairs]
    return links, list(bandwidth) * 2


def _star() -> Cluster:
    """Three one-GPU servers under one switch (a tree)."""
    links, bw = _both_ways([(0, 3), (1, 3), (2, 3)], [3.0, 5.0, 4.0])
    return Cluster([[1], [1], [1]], links=links, bandwidth=bw, n_switches=1)


def _chain() -> Cluster:
    """Servers 0 - 1 - 2 in a line, no switch: a tree whose inner node is a server."""
    links, bw = _both_ways([(0, 1), (1, 2)], [3.0, 6.0])
    return Cluster([[1], [1], [1]], links=links, bandwidth=bw)


def _cycle() -> Cluster:
    """A switch under three servers plus a direct link 0 - 1: not a tree, servers forward."""
    links, bw = _both_ways([(0, 3), (1, 3), (2, 3), (0, 1)], [4.0, 3.0, 4.0, 3.0])
    return Cluster([[1], [1], [1]], links=links, bandwidth=bw, n_switches=1)


def _racks() -> Cluster:
    """Two racks of two servers, rack switches joined (a tree)."""
    links, bw = _both_ways([(0, 4), (1, 4), (2, 5), (3, 5), (4, 5)], [4.0, 5.0, 4.0, 6.0, 5.0])
    return Cluster([[1], [1], [1], [1]], links=links, bandwidth=bw, n_switches=2)


def _two_cores() -> Cluster:
    """Two racks joined through two core switches: two paths between the racks."""
    links, bw = _both_ways([(0, 4), (1, 4), (2, 5), (3, 5), (4, 6), (5, 6), (4, 7), (5, 7)],
                           [4.0, 5.0, 4.0, 6.0, 3.0, 3.0, 3.0, 3.0])
    return Cluster([[1], [1], [1], [1]], links=links, bandwidth=bw, n_switches=4)


BRUTE = [(_star, "sqrt", 0, 2, 2), (_star, "quadratic", 1, 2, 2), (_chain, "log", 9, 2, 2),
         (_chain, "sigmoid", 0, 2, 2), (_cycle, "sqrt", 5, 2, 2), (_cycle, "sigmoid", 6, 2, 2),
         (_racks, "log", 1, 3, 3), (_racks, "sigmoid", 5, 3, 3), (_racks, "quadratic", 4, 3, 3),
         (_two_cores, "sqrt", 2, 3, 3), (_two_cores, "quadratic", 3, 3, 3), (_two_cores, "sigmoid", 1, 3, 3)]


@pytest.mark.parametrize("cluster, utility, seed, n_jobs, horizon", BRUTE,
                         ids=[f"{c.__name__[1:]}-{u}-{s}" for c, u, s, _, _ in BRUTE])
def test_milp_equals_brute_force(cluster, utility, seed, n_jobs, horizon):
    inst = _bf_instance(cluster(), seed, utility, n_jobs=n_jobs, horizon=horizon)
    best, witness = _brute_force(inst)
    check = check_gadget_schedule(inst, witness)
    assert check.ok, check.violations[:3]
    assert check.total_utility == pytest.approx(best)
    # not vacuous: the links' bandwidth (rows (8)-(9)) costs utility here
    wide = dataclasses.replace(inst.cluster, bandwidth=inst.cluster.bandwidth * 100)
    assert _brute_force(dataclasses.replace(inst, cluster=wide))[0] > best + 1e-6
    forms = ["tree", "flow"] if inst.cluster.is_tree() else ["flow"]
    for form in forms:
        value, schedule, res = ddljs_optimum(inst, form=form)
        assert res.is_optimal
        assert value == pytest.approx(best, abs=_tol(best)), form
        assert res.objective == pytest.approx(best, abs=_tol(best)), form
        assert check_gadget_schedule(inst, schedule).ok


# -- tiny presets: verified optimum, LP bound, never beaten, Theorem 10 ------------------------------


def _sigmoid_in_range(inst: GadgetInstance) -> GadgetInstance:
    """The preset's sigmoid with its inflection at half the job's budget (the paper's ranges put it far
    above what a tiny instance reaches: every utility is then below 1e-60)."""
    p = np.array(inst.utility_params, dtype=float)
    top = inst.zeta * np.maximum(inst.budget, 1)
    p[:, 1], p[:, 2] = 8.0 / top, top / 2
    return dataclasses.replace(inst, utility_params=p)


TINY = [(4, 0, "sqrt"), (5, 1, "log"), (6, 2, "quadratic"), (7, 3, "sigmoid"), (8, 4, "sqrt"), (6, 5, "sigmoid"),
        (7, 0, "sigmoid-preset")]


def _tiny(jobs: int, seed: int, utility: str) -> GadgetInstance:
    """The tiny preset; ``"sigmoid"`` moved into range, ``"sigmoid-preset"`` as the preset draws it."""
    inst = gadget_preset("tiny", jobs=jobs, seed=seed, utility=utility.removesuffix("-preset"))
    return _sigmoid_in_range(inst) if utility == "sigmoid" else inst


@pytest.fixture(scope="module", params=TINY, ids=[f"{u}-{j}jobs-seed{s}" for j, s, u in TINY])
def solved(request):
    inst = _tiny(*request.param)
    value, schedule, res = ddljs_optimum(inst)
    return inst, value, schedule, res


def test_read_back_schedule_is_verified_and_worth_the_objective(solved):
    inst, value, schedule, res = solved
    assert res.is_optimal
    check = check_gadget_schedule(inst, schedule)
    assert check.ok, check.violations[:3]
    assert len(schedule.slots) == inst.horizon
    assert check.total_utility == pytest.approx(value)
    assert value == pytest.approx(res.objective, abs=_tol(value))
    assert (schedule.worker_slots() <= inst.budget).all()


def test_lp_relaxation_bounds_the_optimum(solved):
    inst, value, _, _ = solved
    lp = solve(build_ddljs(inst, relax=True))
    assert lp.objective >= value - _tol(value)


def test_never_beaten_by_an_online_policy_and_theorem_10(solved):
    inst, opt, _, _ = solved
    q = worker_bound(inst, np.zeros(inst.n_jobs), np.arange(inst.n_jobs))
    gamma = int(np.ceil(q).max())
    assert opt > 0
    for name, options in POLICIES:
        run = run_online(make_policy(name, **options), inst, horizon=inst.horizon, seed=0)
        check = check_gadget_schedule(inst, run.schedule)
        assert check.ok, (name, options, check.violations[:3])
        assert check.total_utility == pytest.approx(run.total_utility)
        assert check.total_utility <= opt + _tol(opt), (name, options)
        if name == "gadget":  # Theorem 10: at least OPT / (3 Gamma + 1) (its proof wants concave mu_i;
            ratio = check.total_utility / opt  # the sigmoid cases hold here all the same)
            assert ratio >= 1.0 / (3 * gamma + 1), (options, gamma, ratio)


def test_preset_sigmoid_far_below_inflection_is_numerically_zero():
    """With the paper's sigmoid parameters the tiny preset's utilities vanish; the MILP still returns a
    verified schedule, optimal up to the solver's absolute tolerance."""
    inst = gadget_preset("tiny", jobs=6, seed=0, utility="sigmoid")
    value, schedule, _ = ddljs_optimum(inst)
    assert check_gadget_schedule(inst, schedule).ok and value < 1e-50
    run = run_online(make_policy("gadget"), inst, horizon=inst.horizon, seed=0)
    assert run.total_utility <= value + 1e-6


# -- forms, linearizations, errors ----------------------------------------------------------------


@pytest.mark.parametrize("jobs, seed, utility", [(6, 1, "sqrt"), (5, 2, "sigmoid")])
def test_tree_and_flow_forms_agree(jobs, seed, utility):
    inst = _tiny(jobs, seed, utility)
    tree = solve(build_ddljs(inst, form="tree"), mip_gap=0.0)
    flow_model = build_ddljs(inst, form="flow")
    flow = solve(flow_model, mip_gap=0.0)
    assert (tree.objective, flow_model.form) == (pytest.approx(flow.objective, abs=_tol(flow.objective)), "flow")
    schedule = schedule_from_solution(inst, flow_model)
    check = check_gadget_schedule(inst, schedule)
    assert check.ok and check.total_utility == pytest.approx(flow.objective, abs=_tol(flow.objective))
    lp_tree = solve(build_ddljs(inst, form="tree", relax=True)).objective
    lp_flow = solve(build_ddljs(inst, form="flow", relax=True)).objective
    assert min(lp_tree, lp_flow) >= tree.objective - _tol(tree.objective)


@pytest.mark.parametrize("utility", ["sqrt", "log", "quadratic"])
def test_onehot_and_chords_agree_on_concave_utilities(utility):
    inst = gadget_preset("tiny", jobs=5, seed=3, utility=utility)
    chords = build_ddljs(inst)
    assert chords.utility_form == "chords"
    a = solve(chords, mip_gap=0.0).objective
    b = solve(build_ddljs(inst, utility_form="onehot"), mip_gap=0.0).objective
    assert a == pytest.approx(b, abs=_tol(a))


def test_flow_form_on_a_fat_tree_with_many_paths():
    cl = k_ary_fat_tree(4, gpus=(1, 2), host_bw=4.0, fabric_bw=6.0, seed=0)  # 16 servers, many paths
    assert not cl.is_tree()
    inst = dataclasses.replace(gadget_preset("tiny", jobs=3, seed=0, utility="log"), cluster=cl)
    value, schedule, res = ddljs_optimum(inst)
    assert res.is_optimal and check_gadget_schedule(inst, schedule).ok
    assert value == pytest.approx(res.objective, abs=_tol(value))


def test_relaxed_solution_is_not_read_as_a_schedule():
    inst = _bf_instance(_star(), 0, "sqrt")
    for form in ("tree", "flow"):
        m = build_ddljs(inst, form=form, relax=True)
        lp = solve(m).objective
        assert lp > _brute_force(inst)[0] + 1e-6  # a strict bound here: the LP point is fractional
        with pytest.raises(ValueError, match="fractional"):
            schedule_from_solution(inst, m)
    tiny = gadget_preset("tiny", jobs=6, seed=0, utility="sqrt")
    with pytest.raises(ValueError, match="no value"):
        schedule_from_solution(tiny, build_ddljs(tiny))
    with pytest.raises(ValueError, match="the model has 2 jobs"):
        schedule_from_solution(tiny, m)


def test_bad_input():
    inst = gadget_preset("tiny", jobs=3, seed=0)
    with pytest.raises(ValueError, match="form = 'ring'"):
        build_ddljs(inst, form="ring")
    cyc = _bf_instance(_cycle(), 0, "sqrt")
    with pytest.raises(ValueError, match="needs a tree cluster"):
        build_ddljs(cyc, form="tree")
    assert build_ddljs(cyc).form == "flow"
    with pytest.raises(ValueError, match="utility_form"):
        build_ddljs(inst, utility_form="sos2")
    with pytest.raises(ValueError, match="not concave"):
        build_ddljs(_tiny(4, 0, "sigmoid"), utility_form="chords")


def test_no_solution_raises(monkeypatch):
    import clusteropt.solvers

    inst = gadget_preset("tiny", jobs=3, seed=0, utility="sqrt")
    real = clusteropt.solvers.solve

    def stopped(model, *args, **kwargs):
        res = real(model, *args, **kwargs)
        return dataclasses.replace(res, has_solution=False, termination=type(res.termination).TIME_LIMIT)

    monkeypatch.setattr(clusteropt.solvers, "solve", stopped)
    with pytest.raises(RuntimeError, match="TIME_LIMIT and no solution"):
        ddljs_optimum(inst)


def test_registered():
    spec = MODELS["ddljs"]
    inst = gadget_preset("tiny", jobs=3, seed=0, utility="log")
    assert (spec.kind, spec.backend) == ("gadget", "pyomo")
    m = spec.build(inst, relax=True, form="flow")
    assert m.form == "flow" and not m.y[0, 0, 1].is_integer()
