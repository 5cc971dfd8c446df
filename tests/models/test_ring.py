"""Paper 004 offline optima: the static / dynamic MILPs against the solver-free oracles (DP, brute force).

Also: LP bounds, capacity monotonicity, the A5 example (contiguous arcs are not optimal), the
run-length compression, the solutions replayed by ``clusteropt.verify.check_ring_run``, LP/MPS
export, the registry and CLI, and the line games' offline optima.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyomo.environ as pyo
import pytest

from clusteropt.algorithms.ring.offline import (
    compress_requests,
    dynamic_opt_dp,
    feasible_labellings,
    line_hitting_static_opt,
    line_mts_opt,
    migrations_from_placements,
    static_opt_bruteforce,
)
from clusteropt.instances.ring import RingInstance, random_ring
from clusteropt.models import get_model
from clusteropt.models.ring.offline import (
    build_ring_dynamic_opt,
    build_ring_static_opt,
    contiguous_arcs_cost,
    ring_dynamic_optimum,
    ring_static_optimum,
)
from clusteropt.solvers import available_solvers, solve, solve_file, write_model

TOL = 1e-6
A5_COUNTS = [0, 10, 0, 10, 10, 0, 10, 0]


def _tiny(n, ns, T, seed, alpha=1.0, pattern="hotspot"):
    return random_ring(n, ns, T, pattern, seed=seed, alpha=alpha)


def _a5(alpha=1.0):
    reqs = [e for e, r in enumerate(A5_COUNTS) for _ in range(r)]
    return RingInstance(n=8, servers=2, requests=reqs, alpha=alpha)


def _check(instance, run):
    verify = pytest.importorskip("clusteropt.verify.ring")
    return verify.check_ring_run(instance, run)


# ---------------------------------------------------------------------------------------------
# dynamic OPT: MILP == DP, and both solutions replay to their value


# three servers make the MILP much harder (alpha = 0.5 and T = 14: up to 7 s in HiGHS): keep those short
TINY = [(n, ns, T, seed, alpha) for (n, ns) in ((6, 2), (8, 2)) for seed in (0, 1, 2) for alpha in (0.5, 1, 2)
        for T in (16,)] + [(6, 3, 10, seed, alpha) for seed in (0, 1) for alpha in (1, 2)]


@pytest.mark.parametrize(("n", "ns", "T", "seed", "alpha"), TINY)
def test_dynamic_milp_equals_dp(n, ns, T, seed, alpha):
    inst = _tiny(n, ns, T, seed, alpha, pattern="uniform" if seed == 2 else "hotspot")
    dp = dynamic_opt_dp(inst)
    opt = ring_dynamic_optimum(inst)
    assert opt.proven_optimal
    assert opt.value == pytest.approx(dp.value, abs=TOL)
    assert opt.result.objective == pytest.approx(dp.value, abs=TOL)
    for run in (opt, dp):
        check = _check(inst, run)
        assert check.feasible, check.violations
        assert check.value == pytest.approx(dp.value, abs=TOL)


@pytest.mark.parametrize(("n", "ns", "cap"), [(6, 2, None), (6, 3, 3), (8, 2, 5), (8, 4, None), (9, 3, None)])
def test_dp_methods_agree(n, ns, cap):
    for seed in range(2):
        inst = _tiny(n, ns, 25, seed, alpha=1.5)
        a = dynamic_opt_dp(inst, cap, method="matrix")
        b = dynamic_opt_dp(inst, cap, method="transform")
        assert a.value == pytest.approx(b.value, abs=TOL)
        for sol in (a, b):
            check = _check(inst, sol)
            assert check.feasible and check.value == pytest.approx(a.value, abs=TOL)
            assert sol.augmentation == (cap or inst.k) / inst.k


def test_dp_refuses_past_its_limits():
    inst = _tiny(16, 4, 10, 0)
    with pytest.raises(ValueError, match="labellings"):
        dynamic_opt_dp(inst)
    with pytest.raises(ValueError, match="max_labellings"):
        dynamic_opt_dp(_tiny(12, 2, 10, 0), method="matrix", max_labellings=100)
    with pytest.raises(ValueError, match="max_table"):
        dynamic_opt_dp(_tiny(8, 2, 50, 0), method="matrix", max_table=100)
    with pytest.raises(ValueError, match="method"):
        dynamic_opt_dp(_tiny(8, 2, 5, 0), method="nope")


def test_dp_on_hand_cases():
    # no requests: nothing to pay; one server: nothing is ever cut
    assert dynamic_opt_dp(RingInstance(n=4, servers=2, requests=[])).value == 0
    assert dynamic_opt_dp(RingInstance(n=4, servers=1, requests=[0, 1, 2, 3])).value == 0
    # edge 3 = (3, 0) and edge 1 = (1, 2) are cut initially; alternating requests, alpha = 10:
    # stay (pay 6) rather than move (two processes, 20)
    inst = RingInstance(n=4, servers=2, requests=[1, 3] * 3, alpha=10)
    assert dynamic_opt_dp(inst).value == 6
    # alpha = 0: move for free before every run
    assert dynamic_opt_dp(RingInstance(n=4, servers=2, requests=[1, 3] * 3, alpha=0)).value == 0


# ---------------------------------------------------------------------------------------------
# static OPT: MILP == brute force; orderings and bounds


@pytest.mark.parametrize(("n", "ns"), [(6, 2), (6, 3), (8, 2), (8, 4), (9, 3)])
def test_static_milp_equals_brute_force(n, ns):
    for seed, alpha, cap in itertools.product((0, 1), (0.0, 1.0, 3.0), (None, n // ns + 1)):
        inst = _tiny(n, ns, 30, seed, alpha)
        value, _ = static_opt_bruteforce(inst, cap)
        opt = ring_static_optimum(inst, capacity=cap)
        assert opt.proven_optimal and opt.value == pytest.approx(value, abs=TOL)
        assert opt.capacity == (cap or inst.k)
        check = _check(inst, opt)
        assert check.feasible, check.violations
        assert check.value == pytest.approx(value, abs=TOL)
        assert (opt.migrations[:, 0] == -1).all()


@pytest.mark.parametrize(("n", "ns", "seed"), [(6, 2, 0), (6, 3, 1), (8, 2, 2), (8, 2, 3)])
def test_static_ge_dynamic_ge_lp_bounds(n, ns, seed):
    inst = _tiny(n, ns, 14, seed, alpha=1.0)
    static = ring_static_optimum(inst)
    static_lp = ring_static_optimum(inst, relax=True)
    dyn = ring_dynamic_optimum(inst)
    dyn_lp = ring_dynamic_optimum(inst, relax=True)
    assert static_lp.proven_optimal and dyn_lp.proven_optimal
    assert static_lp.migrations is None and dyn_lp.initial is None
    assert static.value + TOL >= dyn.value >= dyn_lp.value - TOL
    assert static_lp.value <= static.value + TOL
    assert contiguous_arcs_cost(inst)[0] >= static.value - TOL
    # the documented weakness: spreading evenly bounds both LPs whatever the requests
    assert static_lp.value <= inst.alpha * n * (ns - 1) / ns + TOL
    assert dyn_lp.value <= inst.alpha * n / ns + TOL


def test_capacity_is_monotone():
    for seed in range(3):
        inst = _tiny(8, 2, 40, seed, alpha=0.5)
        dyn = [dynamic_opt_dp(inst, cap).value for cap in (4, 5, 6, 8)]
        static = [ring_static_optimum(inst, capacity=cap).value for cap in (4, 5, 6, 8)]
        assert all(a >= b - TOL for a, b in itertools.pairwise(dyn)), dyn
        assert all(a >= b - TOL for a, b in itertools.pairwise(static)), static
        assert all(s >= d - TOL for s, d in zip(static, dyn, strict=True))
        assert dyn[-1] <= inst.alpha * inst.k and static[-1] <= inst.alpha * inst.k  # all on one server
    inst = _tiny(6, 3, 12, 0)
    small, big = ring_dynamic_optimum(inst), ring_dynamic_optimum(inst, capacity=2.5 * inst.k)
    assert big.capacity == 5 and big.augmentation == 2.5
    assert big.value <= small.value + TOL
    check = _check(inst, big)
    assert check.feasible and check.value == pytest.approx(big.value, abs=TOL)


def test_capacity_below_k_is_refused():
    inst = _tiny(6, 2, 5, 0)
    for build in (build_ring_static_opt, build_ring_dynamic_opt):
        with pytest.raises(ValueError, match="capacity"):
            build(inst, capacity=2)


# ---------------------------------------------------------------------------------------------
# the A5 example: contiguous arcs are not optimal


def test_a5_contiguous_arcs_are_not_optimal():
    free = _a5(alpha=0.0)
    assert free.request_counts().tolist() == A5_COUNTS
    assert ring_static_optimum(free).value == 0  # cut the four 0-edges, pack arcs {3, 1}, {2, 2}
    assert static_opt_bruteforce(free)[0] == 0
    cost, placement = contiguous_arcs_cost(free)
    assert cost == 10 and np.bincount(placement).tolist() == [4, 4]

    inst = _a5(alpha=1.0)
    opt = ring_static_optimum(inst)
    assert opt.value == 4  # zero communication, four migrations
    check = _check(inst, opt)
    assert check.communication_cost == 0 and check.n_migrations == 4
    assert contiguous_arcs_cost(inst)[0] == 10
    assert ring_dynamic_optimum(inst).value == dynamic_opt_dp(inst).value == 4


def test_contiguous_arcs_labels_by_overlap():
    # initial = contiguous arcs, no requests: rotation 0 keeps everything (cost 0)
    inst = RingInstance(n=12, servers=3, requests=[])
    cost, placement = contiguous_arcs_cost(inst)
    assert cost == 0 and placement.tolist() == inst.initial.tolist()
    # an initial assignment with permuted server names is matched, not migrated
    perm = RingInstance(n=12, servers=3, requests=[], initial=(2 - inst.initial))
    assert contiguous_arcs_cost(perm)[0] == 0


# ---------------------------------------------------------------------------------------------
# compression


def test_compression_is_exact():
    inst = RingInstance(n=6, servers=2, requests=[2, 2, 2, 5, 5, 2, 2, 0, 0, 0, 0, 2, 5, 5], alpha=1.5)
    edges, weights, _ = compress_requests(inst.requests)
    assert edges.tolist() == [2, 5, 2, 0, 2, 5] and weights.sum() == inst.n_requests
    full = build_ring_dynamic_opt(inst, compress=False)
    short = build_ring_dynamic_opt(inst)
    assert len(full.T) == 14 and len(short.T) == 6
    assert solve(full).objective == pytest.approx(solve(short).objective, abs=TOL)
    assert solve(short).objective == pytest.approx(dynamic_opt_dp(inst).value, abs=TOL)


def test_migration_timing_follows_the_runs():
    # edge 1 = (1, 2) is cut initially and requested 5 times, then edge 3 = (3, 0) 5 times:
    # with alpha = 1 the optimum moves before run 1 and again after request 4, before run 2
    inst = RingInstance(n=4, servers=2, requests=[1] * 5 + [3] * 5 + [1] * 5, alpha=1.0)
    opt = ring_dynamic_optimum(inst)
    dp = dynamic_opt_dp(inst)
    assert opt.value == dp.value
    for run in (opt, dp):
        assert set(run.migrations[:, 0].tolist()) <= {-1, 4, 9}
        assert _check(inst, run).value == pytest.approx(opt.value)
    assert migrations_from_placements([0, 1], np.zeros((0, 2), dtype=int), []).shape == (0, 3)


def test_dynamic_size_limit_names_the_sizes():
    inst = _tiny(16, 4, 200, 0, pattern="uniform")
    with pytest.raises(ValueError, match=r"T' = \d+ compressed requests .*n = 16, l = 4"):
        build_ring_dynamic_opt(inst)
    with pytest.raises(ValueError, match="max_steps = 3"):
        build_ring_dynamic_opt(_tiny(6, 2, 20, 0, pattern="uniform"), max_steps=3)


# ---------------------------------------------------------------------------------------------
# models read like the paper; export; registry; CLI


def test_components_carry_docs_and_only_requested_edges_get_z():
    inst = RingInstance(n=6, servers=2, requests=[0, 0, 4])
    m = build_ring_static_opt(inst)
    assert sorted(m.E) == [0, 4] and len(m.z) == 2
    assert "Sec. 1" in m.cost.doc and "capacity" in m.capacity.doc
    assert all(v.domain is pyo.Binary for v in m.x.values())
    relaxed = build_ring_dynamic_opt(inst, relax=True)
    assert all(v.domain is pyo.UnitInterval for v in relaxed.x.values())
    assert "OPT_dyn" in relaxed.cost.doc and relaxed.steps[1].tolist() == [2, 1]


FILE_SOLVERS = [s for s in ("highs", "scip") if s in available_solvers("file")]


@pytest.mark.parametrize("suffix", [".lp", ".mps"])
def test_export_round_trips(suffix, tmp_path):
    inst = _tiny(8, 2, 14, 1)
    for name, model in (("static", build_ring_static_opt(inst)), ("dynamic", build_ring_dynamic_opt(inst)),
                        ("dynamic-lp", build_ring_dynamic_opt(inst, relax=True))):
        want = solve(model).objective
        path = write_model(model, tmp_path / f"{name}{suffix}")
        for solver in FILE_SOLVERS:
            got = solve_file(path, solver).objective
            assert math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-6), (name, solver, got, want)


def test_registered_models_build_and_take_options():
    inst = _tiny(6, 2, 10, 0)
    static = get_model("ring-static-opt")
    assert static.kind == "ring" and "Thm 2.2" in static.description
    assert solve(static.build(inst)).objective == pytest.approx(ring_static_optimum(inst).value)
    dyn = get_model("ring-dynamic-opt")
    assert "Thm 2.1" in dyn.description
    m = dyn.build(inst, relax=True, capacity=4)
    assert pyo.value(m.K) == 4
    with pytest.raises(ValueError, match="no option"):
        static.build(inst, slot=1)


def test_cli_solve_and_export(tmp_path, capsys):
    from clusteropt.cli import main

    path = tmp_path / "ring.json"
    random_ring(8, 2, 20, seed=0).to_json(path)
    assert main(["solve", str(path), "--model", "ring-static-opt"]) == 0
    out = capsys.readouterr().out
    assert "optimal" in out
    lp = tmp_path / "x.lp"
    assert main(["build", str(path), "--model", "ring-dynamic-opt", "--export", str(lp)]) == 0
    capsys.readouterr()
    assert solve_file(lp, "highs").objective == pytest.approx(dynamic_opt_dp(RingInstance.read(path)).value)


# ---------------------------------------------------------------------------------------------
# solver-free helpers


def test_feasible_labellings_against_itertools():
    for n, ns, cap in [(4, 2, None), (6, 3, None), (6, 2, 4), (8, 4, 3), (5, 5, None)]:
        S = feasible_labellings(n, ns, cap)
        want = [p for p in itertools.product(range(ns), repeat=n)
                if max(np.bincount(p, minlength=ns)) <= (cap or n // ns)]
        assert S.tolist() == [list(p) for p in want]


def test_static_brute_force_hand_case():
    # n = 4, ns = 2, initial {0, 1} {2, 3}; edge 1 requested 3 times, alpha = 1: swap (2) beats 3
    inst = RingInstance(n=4, servers=2, requests=[1, 1, 1])
    value, placement = static_opt_bruteforce(inst)
    assert value == 2 and placement[1] == placement[2]
    assert static_opt_bruteforce(inst.with_requests([1, 1]))[0] == 2  # tie: stay or swap


def test_line_hitting_static_opt():
    assert line_hitting_static_opt([0], 0) == 0
    assert line_hitting_static_opt([4, 4, 4, 4, 4], 2) == 4  # moving never pays
    assert line_hitting_static_opt([0, 9, 9, 9, 9], 2) == 2  # walk to the unrequested end
    assert line_hitting_static_opt([3, 9, 9, 9, 9], 2) == 5
    with pytest.raises(ValueError, match="e0"):
        line_hitting_static_opt([1, 2], 2)


def _mts_brute(N, start, seq):
    """w_t(x) = min_y w_{t-1}(y) + c_t(y) + |y - x| with the full distance matrix."""
    x = np.arange(N)
    D = np.abs(x[:, None] - x[None, :])
    w = np.abs(x - start).astype(float)
    for e in seq:
        c = np.zeros(N)
        c[e] = 1
        w = ((w + c)[:, None] + D).min(axis=0)
    return float(w.min())


def test_line_mts_opt():
    assert line_mts_opt(1, 0, [0, 0, 0]) == 3  # nowhere to go
    assert line_mts_opt(2, 0, [0] * 5) == 1  # move once
    assert line_mts_opt(3, 1, [0, 1, 2, 1]) == 1
    assert line_mts_opt(4, 0, [0, 1] * 10) == 2  # go to the far end
    assert line_mts_opt(5, 2, []) == 0
    rng = np.random.default_rng(0)
    for _ in range(100):
        N = int(rng.integers(1, 8))
        start = int(rng.integers(0, N))
        seq = rng.integers(0, N, size=int(rng.integers(0, 30))).tolist()
        assert line_mts_opt(N, start, seq) == _mts_brute(N, start, seq)
    with pytest.raises(ValueError, match="requests"):
        line_mts_opt(3, 0, [3])
