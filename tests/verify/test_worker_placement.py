"""The worker-placement checker, and exact optima of the models checked against brute force.

* ``check_worker_placement`` flags each constraint of paper 000 at one slot (integrality,
  non-negativity, (2) worker limit, (4) capacity, shape) with the right label and amount, and
  recomputes the utility itself;
* on tiny instances, every integral placement is enumerated, the checker keeps the feasible ones,
  and the best of those must equal the MILP optimum of the Pyomo and the CVXPY model;
* the LP relaxation bounds the MILP optimum from above, and solver placements pass the checker.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import clusteropt
from clusteropt.instances import WorkerPlacementInstance, random_worker_placement
from clusteropt.models import build_worker_placement, build_worker_placement_cvxpy
from clusteropt.solvers import Termination
from clusteropt.verify import Check, Violation, check_worker_placement

# 2 jobs x 2 servers, resources (gpu, mem)
INST = WorkerPlacementInstance(
    capacity=[[2, 8], [4, 32]],
    per_worker=[[1, 4], [2, 8]],
    max_workers=[3, 2],
    utility=[2.0, 5.0],
    resources=("gpu", "mem"),
)


def only(check: Check) -> Violation:
    assert len(check.violations) == 1, check.violations
    return check.violations[0]


# -- the checker, constraint by constraint ----------------------------------------------------


def test_feasible_placement_and_recomputed_utility():
    check = check_worker_placement(INST, np.array([[2, 1], [0, 1]]))
    assert check.feasible
    assert check.violations == ()
    assert check.value == 2.0 * 3 + 5.0 * 1
    check.raise_if_infeasible()  # no error


def test_accepts_lists_and_the_empty_placement():
    check = check_worker_placement(INST, [[0, 0], [0, 0]])
    assert check.feasible and check.value == 0.0


def test_tight_capacity_is_feasible():
    # server 0 exactly full: gpu 2 = 2, mem 8 = 8
    check = check_worker_placement(INST, [[0, 0], [1, 0]])
    assert check.feasible and check.value == 5.0


def test_integrality():
    check = check_worker_placement(INST, [[1.5, 0], [0, 0]])
    assert only(check) == Violation("integrality", "i=0, s=0", 0.5)
    assert not check.feasible
    assert check.value == pytest.approx(3.0)  # still recomputed


def test_integrality_within_tolerance():
    assert check_worker_placement(INST, [[1 + 1e-9, 0], [0, 1 - 1e-9]]).feasible
    assert not check_worker_placement(INST, [[1 + 1e-3, 0], [0, 0]], tol=1e-4).feasible
    assert check_worker_placement(INST, [[1 + 1e-3, 0], [0, 0]], tol=1e-2).feasible


def test_non_negativity():
    check = check_worker_placement(INST, [[0, 0], [0, -1]])
    assert only(check) == Violation("non-negativity", "i=1, s=1", 1.0)
    assert check.value == -5.0


def test_worker_limit_2():
    check = check_worker_placement(INST, [[2, 2], [0, 0]])  # job 0: 4 workers > N_0 = 3
    assert only(check) == Violation("(2) worker limit", "i=0", 1.0)
    assert check.value == 8.0


def test_capacity_4_names_server_and_resource():
    check = check_worker_placement(INST, [[0, 3], [0, 1]])  # server 1 gpu: 3*1 + 1*2 = 5 > 4
    assert only(check) == Violation("(4) server capacity", "s=1, r=gpu", 1.0)


def test_capacity_4_every_resource_reported():
    check = check_worker_placement(INST, [[1, 0], [1, 0]])  # server 0: gpu 3 > 2, mem 12 > 8
    assert check.violations == (
        Violation("(4) server capacity", "s=0, r=gpu", 1.0),
        Violation("(4) server capacity", "s=0, r=mem", 4.0),
    )
    assert str(check.violations[1]) == "(4) server capacity violated at s=0, r=mem by 4"


def test_capacity_uses_resource_names():
    inst = WorkerPlacementInstance([[1, 1]], [[0, 2]], [1], [1.0], ("disk", "net"))
    assert only(check_worker_placement(inst, [[1]])) == Violation(
        "(4) server capacity", "s=0, r=net", 1.0
    )


def test_all_violations_are_listed_together():
    check = check_worker_placement(INST, [[4.5, -1], [0, 0]])
    kinds = [v.constraint for v in check.violations]
    assert kinds == ["integrality", "non-negativity", "(2) worker limit", "(4) server capacity",
                     "(4) server capacity"]
    with pytest.raises(AssertionError, match=r"^5 violation\(s\): integrality violated at i=0, s=0"):
        check.raise_if_infeasible()


@pytest.mark.parametrize("shape", [(2, 3), (3, 2), (2,), (4,), (1, 2, 2)])
def test_wrong_shape(shape):
    check = check_worker_placement(INST, np.zeros(shape))
    assert not check.feasible
    v = only(check)
    assert v.constraint == "shape"
    assert v.where == f"workers.shape={shape}"
    assert v.amount == math.inf
    assert math.isnan(check.value)


def test_non_finite_entries_are_infeasible():
    # BUG (see report): every comparison with NaN is False, so a NaN placement has no violations
    # and is reported feasible (with value nan).
    check = check_worker_placement(INST, [[np.nan, 0], [0, 0]])
    assert not check.feasible


def test_checker_matches_a_naive_reimplementation():
    rng = np.random.default_rng(5)
    inst = random_worker_placement(5, 3, seed=11)
    for _ in range(200):
        y = rng.integers(-1, 4, size=(5, 3))
        ok = (y >= 0).all() and (y.sum(1) <= inst.max_workers).all()
        ok = ok and all(
            sum(inst.per_worker[i, r] * y[i, s] for i in range(5)) <= inst.capacity[s, r]
            for s in range(3)
            for r in range(3)
        )
        check = check_worker_placement(inst, y)
        assert check.feasible == ok
        assert check.value == pytest.approx(sum(inst.utility[i] * y[i].sum() for i in range(5)))


# -- exact optimum by brute force ---------------------------------------------------------------


def tiny_instance(seed: int) -> WorkerPlacementInstance:
    """3 jobs x 2 servers with small limits and tight capacities (so (2) and (4) both bind)."""
    rng = np.random.default_rng(seed)
    n_i, n_s = 3, 2
    capacity = np.column_stack([rng.integers(1, 4, n_s), rng.integers(2, 13, n_s)])
    per_worker = np.column_stack([rng.integers(0, 2, n_i), rng.integers(1, 6, n_i)])
    return WorkerPlacementInstance(
        capacity=capacity,
        per_worker=per_worker,
        max_workers=rng.integers(1, 4, n_i),
        utility=np.round(rng.uniform(1, 10, n_i), 2),
        resources=("gpu", "cpu"),
    )


def tiny_from_generator(seed: int) -> WorkerPlacementInstance:
    """The paper's generator at 3 x 2 with max_workers clipped to <= 3 (keeps enumeration small)."""
    g = random_worker_placement(3, 2, seed=seed)
    return WorkerPlacementInstance(
        capacity=g.capacity / 2,
        per_worker=g.per_worker,
        max_workers=np.minimum(g.max_workers, 3),
        utility=g.utility,
        resources=g.resources,
    )


def brute_force(inst: WorkerPlacementInstance) -> tuple[float, list[np.ndarray]]:
    """Best utility over ALL integral placements with 0 <= y_is <= N_i (a superset of the feasible
    set, since (2) and y >= 0 imply y_is <= N_i), feasibility decided by the checker."""
    ranges = [range(int(inst.max_workers[i]) + 1) for i in range(inst.n_jobs) for _ in range(inst.n_servers)]
    best, argbest, n_feasible = -math.inf, [], 0
    for flat in itertools.product(*ranges):
        y = np.array(flat, dtype=float).reshape(inst.n_jobs, inst.n_servers)
        check = check_worker_placement(inst, y)
        if not check.feasible:
            continue
        n_feasible += 1
        if check.value > best + 1e-9:
            best, argbest = check.value, [y]
        elif abs(check.value - best) <= 1e-9:
            argbest.append(y)
    assert n_feasible >= 1  # y = 0 is always feasible
    return best, argbest


def milp_checks(inst: WorkerPlacementInstance, result, expected: float) -> None:
    assert result.termination is Termination.OPTIMAL
    assert result.has_solution
    assert result.objective == pytest.approx(expected, rel=1e-7, abs=1e-7)
    y = np.asarray(result.values["y"], dtype=float)
    check = check_worker_placement(inst, y)
    check.raise_if_infeasible()
    assert check.value == pytest.approx(result.objective, rel=1e-7, abs=1e-7)


TINY = [pytest.param(tiny_instance, s, id=f"tiny-{s}") for s in range(6)] + [
    pytest.param(tiny_from_generator, s, id=f"gen-{s}") for s in range(3)
]


@pytest.mark.parametrize(("make", "seed"), TINY)
def test_milp_optimum_equals_brute_force(make, seed):
    inst = make(seed)
    best, argbest = brute_force(inst)

    pyomo_result = clusteropt.solve(build_worker_placement(inst))
    milp_checks(inst, pyomo_result, best)
    # the solver's placement is one of the enumerated optima
    y = np.round(pyomo_result.values["y"])
    assert any(np.array_equal(y, a) for a in argbest)

    cvxpy_result = clusteropt.solve(build_worker_placement_cvxpy(inst))
    assert cvxpy_result.backend == "cvxpy"
    milp_checks(inst, cvxpy_result, best)

    lp = clusteropt.solve(build_worker_placement(inst, relax=True))
    assert lp.objective >= best - 1e-7


@pytest.mark.parametrize("solver", ["scip"])
def test_milp_optimum_equals_brute_force_second_solver(solver):
    inst = tiny_instance(1)
    best, _ = brute_force(inst)
    milp_checks(inst, clusteropt.solve(build_worker_placement(inst), solver), best)
    milp_checks(inst, clusteropt.solve(build_worker_placement_cvxpy(inst), solver), best)


def test_brute_force_sees_binding_constraints():
    # guard against a vacuous comparison: on some tiny instance the optimum is below the
    # "take every worker" utility, i.e. (4) actually cuts.
    cut = 0
    for s in range(6):
        inst = tiny_instance(s)
        best, _ = brute_force(inst)
        cut += best < float(inst.utility @ inst.max_workers) - 1e-9
    assert cut >= 3


# -- LP relaxation bound and checker on larger instances ---------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_lp_relaxation_bounds_milp(seed):
    inst = random_worker_placement(8, 4, seed=seed)
    milp = clusteropt.solve(build_worker_placement(inst))
    lp = clusteropt.solve(build_worker_placement(inst, relax=True))
    lp_cvxpy = clusteropt.solve(build_worker_placement_cvxpy(inst, relax=True))
    assert lp.termination is Termination.OPTIMAL
    assert lp.objective >= milp.objective - 1e-6
    assert lp_cvxpy.objective == pytest.approx(lp.objective, rel=1e-6)
    # also bounded by "every job gets all its workers"
    assert lp.objective <= float(inst.utility @ inst.max_workers) + 1e-6
    # the MILP placement passes the independent checker with the same utility
    check = check_worker_placement(inst, milp.values["y"])
    check.raise_if_infeasible()
    assert check.value == pytest.approx(milp.objective, rel=1e-7)
    # the two MILP backends agree
    milp_cvxpy = clusteropt.solve(build_worker_placement_cvxpy(inst))
    assert milp_cvxpy.objective == pytest.approx(milp.objective, rel=1e-7)
    check_worker_placement(inst, milp_cvxpy.values["y"]).raise_if_infeasible()


def test_lp_relaxation_solution_is_flagged_only_for_integrality():
    # a fractional LP optimum violates integrality but none of (2) / (4)
    for seed in range(10):
        inst = random_worker_placement(8, 4, seed=seed)
        lp = clusteropt.solve(build_worker_placement(inst, relax=True))
        check = check_worker_placement(inst, lp.values["y"])
        assert {v.constraint for v in check.violations} <= {"integrality"}
        assert check.value == pytest.approx(lp.objective, rel=1e-6)
