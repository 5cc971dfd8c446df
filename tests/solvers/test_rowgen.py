"""The generic row-generation loop: statuses, bounds, persistence, purging, timing and logging.

The cut family used throughout is small and known in closed form: minimize ``x + y`` over
``0 <= x, y <= 10`` and the cuts ``x + k y >= k`` (k = 1..K), which only ``separate`` knows.
The optimum is ``x = 0, y = 1`` (objective 1).  The coflow LP's row generation is tested with the
model in ``tests/models/test_coflow.py``.
"""

from __future__ import annotations

import itertools
import logging
import time

import numpy as np
import pyomo.environ as pyo
import pytest

from clusteropt.solvers import NotOptimalError, PersistentSolver, solve
from clusteropt.solvers.rowgen import STATUSES, Cut, RowGenResult, row_generation

K = 6


def toy(ub: float = 10.0) -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, ub), doc="x")
    m.y = pyo.Var(bounds=(0, ub), doc="y")
    m.obj = pyo.Objective(expr=m.x + m.y, doc="x + y")
    return m


def ladder(k_max: int = K, *, keys: bool = True):
    """``separate`` offering every cut ``x + k y >= k`` with its violation at the current point."""
    calls = []

    def separate(m, result):
        x, y = float(result.values["x"]), float(result.values["y"])
        calls.append((x, y))
        return [Cut(m.x + k * m.y >= k, k - (x + k * y), k, key=k if keys else None) for k in range(1, k_max + 1)]

    separate.calls = calls
    return separate


def test_converges_to_the_full_lp_optimum():
    m = toy()
    rg = row_generation(m, ladder())
    assert isinstance(rg, RowGenResult)
    assert rg.status == "converged" and rg.converged and rg.status in STATUSES
    assert rg.objective == pytest.approx(1.0)
    assert rg.result.is_optimal and rg.result.objective == rg.objective
    assert float(rg.result.values["y"]) == pytest.approx(1.0)
    assert rg.rounds == len(rg.cuts_per_round) + 1
    assert rg.n_cuts == len(m.rowgen_cuts) == rg.n_rows
    assert rg.max_violation == 0.0
    assert rg.sense == "minimize" and rg.bound == rg.objective
    assert "optimum of the full LP" in rg.message
    # the full LP written out gives the same optimum
    full = toy()
    full.cuts = pyo.Constraint(range(1, K + 1), rule=lambda m, k: m.x + k * m.y >= k)
    assert solve(full).objective == pytest.approx(rg.objective)


def test_times_are_recorded_separately():
    rg = row_generation(toy(), ladder())
    for name in ("build_seconds", "solve_seconds", "separation_seconds", "total_seconds"):
        assert getattr(rg, name) >= 0.0, name
    assert rg.solve_seconds > 0
    assert rg.build_seconds + rg.solve_seconds + rg.separation_seconds <= rg.total_seconds + 1e-6
    assert rg.model_build_seconds == 0.0


def test_max_rounds_is_reported_and_gives_a_lower_bound():
    converged = row_generation(toy(), ladder(), max_cuts_per_round=1)
    stopped = row_generation(toy(), ladder(), max_rounds=1)
    assert stopped.status == "max_rounds" and not stopped.converged
    assert stopped.rounds == 1 and stopped.cuts_per_round == ()
    assert stopped.objective == pytest.approx(0.0)  # x = y = 0 before any cut
    assert stopped.objective <= converged.objective + 1e-9
    assert stopped.max_violation > 0
    assert "lower bound" in stopped.message and "not its optimum" in stopped.message


def test_rounds_raise_the_bound_monotonically():
    objectives = []
    sep = ladder()

    def recording(m, result):
        objectives.append(result.objective)
        return sep(m, result)

    rg = row_generation(toy(), recording, max_cuts_per_round=1)
    assert rg.converged
    assert all(a <= b + 1e-9 for a, b in itertools.pairwise(objectives))
    assert all(n == 1 for n in rg.cuts_per_round)


def test_max_cuts_per_round_takes_the_most_violated():
    m = toy()
    rg = row_generation(m, ladder(), max_cuts_per_round=2, max_rounds=2)
    # at x = y = 0 every cut has relative violation k / k = 1: the first two (stable sort) go in
    assert rg.cuts_per_round[0] == 2
    assert len(m.rowgen_cuts) == 2


def test_tuples_are_accepted_and_bad_items_refused():
    def as_tuples(m, result):
        x, y = float(result.values["x"]), float(result.values["y"])
        return [(m.x + k * m.y >= k, k - (x + k * y), k) for k in range(1, K + 1)]

    assert row_generation(toy(), as_tuples).objective == pytest.approx(1.0)
    with pytest.raises(TypeError, match="expected Cut"):
        row_generation(toy(), lambda m, r: [m.x >= 1])


def test_tolerance_is_relative_to_the_rhs():
    m = toy(ub=1e9)
    big = 1e8

    def separate(m, result):
        x = float(result.values["x"])
        # violated by 1 on a right-hand side of 1e8: relative 1e-8, below tol = 1e-7
        return [Cut(m.x >= big, big - x, big)] if x < big - 2 else [Cut(m.x >= big + 1, big + 1 - x, big + 1)]

    m.x.setlb(big - 1)
    rg = row_generation(m, separate, tol=1e-7)
    assert rg.status == "converged" and rg.n_cuts == 0
    rg = row_generation(m, separate, tol=1e-9)
    assert rg.n_cuts == 1 and rg.objective == pytest.approx(big + 1)


def test_stalled_when_only_known_cuts_stay_violated():
    def stubborn(m, result):  # claims the same cut is violated whatever the point
        return [Cut(m.x >= 1, 1.0, 1.0, key="x>=1")]

    rg = row_generation(toy(), stubborn)
    assert rg.status == "stalled" and not rg.converged
    assert rg.cuts_per_round == (1,)
    assert "not its optimum" in rg.message


def test_time_limit_stops_with_a_valid_bound():
    counter = iter(range(10**6))

    def slow(m, result):  # always a new violated cut, and slow
        time.sleep(0.05)
        k = next(counter)
        return [Cut(m.x + m.y >= 1e-3 * (k + 1), 1e-3 * (k + 1) - float(result.objective), 1.0, key=k)]

    rg = row_generation(toy(), slow, time_limit=0.2, max_rounds=10**6)
    assert rg.status == "time_limit"
    assert rg.result.is_optimal
    assert rg.total_seconds < 5
    assert "lower bound" in rg.message


def test_persistent_and_rebuild_agree():
    a = row_generation(toy(), ladder(), persistent=True, max_cuts_per_round=1)
    b = row_generation(toy(), ladder(), persistent=False, max_cuts_per_round=1)
    assert a.converged and b.converged
    assert a.objective == pytest.approx(b.objective)


def test_existing_cut_list_is_reused():
    m = toy()
    row_generation(m, ladder())
    n = len(m.rowgen_cuts)
    again = row_generation(m, ladder())
    assert again.rounds == 1 and again.n_cuts == 0 and len(m.rowgen_cuts) == n
    m2 = toy()
    m2.rowgen_cuts = pyo.Var()
    with pytest.raises(TypeError, match="not a ConstraintList"):
        row_generation(m2, ladder())


def test_maximization_reports_an_upper_bound():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.obj = pyo.Objective(expr=m.x, sense=pyo.maximize)

    def separate(m, result):
        x = float(result.values["x"])
        return [Cut(m.x <= 3, x - 3, 3, key=0)]

    rg = row_generation(m, separate, max_rounds=1)
    assert rg.status == "max_rounds" and rg.sense == "maximize"
    assert rg.objective == pytest.approx(10.0) and "upper bound" in rg.message
    assert row_generation(m, separate).objective == pytest.approx(3.0)


def test_infeasible_first_solve_raises():
    m = toy()
    m.bad = pyo.Constraint(expr=m.x + m.y >= 100)
    with pytest.raises(NotOptimalError, match="round 1"):
        row_generation(m, ladder())


@pytest.mark.parametrize(
    "kwargs",
    [{"tol": -1.0}, {"max_rounds": 0}, {"max_cuts_per_round": 0}, {"time_limit": 0.0}, {"purge_after": 0}],
)
def test_bad_arguments(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        row_generation(toy(), ladder(), **kwargs)


def test_logging_per_round_and_summary(caplog):
    with caplog.at_level(logging.DEBUG, logger="clusteropt.solvers.rowgen"):
        rg = row_generation(toy(), ladder(), max_cuts_per_round=1)
    rounds = [r for r in caplog.records if r.levelno == logging.DEBUG and "round" in r.getMessage()]
    assert len(rounds) == rg.rounds
    assert any(r.levelno == logging.INFO and "converged" in r.getMessage() for r in caplog.records)


# ---------------------------------------------------------------------------------------------
# purging slack cuts


def moving_target(n_steps: int):
    """Cuts ``x + y >= k`` (k = 1..n), the smallest violated one offered each round.

    Minimizing ``x + 2 y``, each new cut makes the previous ``x + y >= k - 1`` slack.
    """

    def separate(m, result):
        x, y = float(result.values["x"]), float(result.values["y"])
        out = []
        for k in range(1, n_steps + 1):
            viol = k - (x + y)
            if viol > 0:
                out.append(Cut(m.x + m.y >= k, viol, k, key=("sum", k)))
                break
        return out

    return separate


def test_purge_deletes_slack_cuts_and_keeps_the_optimum():
    def model():
        m = pyo.ConcreteModel()
        m.x = pyo.Var(bounds=(0, 100))
        m.y = pyo.Var(bounds=(0, 100))
        m.obj = pyo.Objective(expr=m.x + 2 * m.y)
        return m

    keep = row_generation(model(), moving_target(8))
    m = model()
    purged = row_generation(m, moving_target(8), purge_after=2)
    assert keep.converged and purged.converged
    assert purged.objective == pytest.approx(keep.objective) == pytest.approx(8.0)
    assert keep.removed_per_round == (0,) * len(keep.cuts_per_round)
    assert sum(purged.removed_per_round) > 0
    assert purged.n_rows == len(m.rowgen_cuts) == purged.n_cuts - sum(purged.removed_per_round)
    assert len(m.rowgen_cuts) < keep.n_rows
    # only the binding cut x + y >= 8 and at most the last ones that were slack for < 2 rounds stay
    for con in m.rowgen_cuts.values():
        assert pyo.value(con.lower) >= 6


@pytest.mark.parametrize("persistent", [True, False])
def test_purge_with_the_ladder_matches(persistent):
    a = row_generation(toy(), ladder(), max_cuts_per_round=1, purge_after=1, persistent=persistent)
    b = row_generation(toy(), ladder(), max_cuts_per_round=1)
    assert a.converged and a.objective == pytest.approx(b.objective)


# ---------------------------------------------------------------------------------------------
# PersistentSolver sees rows added to and deleted from a ConstraintList between solves


def test_persistent_solver_adds_and_removes_rows_incrementally():
    m = toy()
    m.cuts = pyo.ConstraintList()
    ps = PersistentSolver(m, "highs")
    assert ps.solve().objective == pytest.approx(0.0)
    highs = ps.solver_._solver_model  # the native highspy object inside Pyomo's interface
    rows0 = highs.getNumRow()
    m.cuts.add(m.x + m.y >= 2)
    r = ps.solve()
    assert r.objective == pytest.approx(2.0)
    assert ps.solver_._solver_model is highs and highs.getNumRow() == rows0 + 1
    m.cuts.add(m.x + 3 * m.y >= 3)
    m.cuts.add(m.y >= 0.5)
    assert ps.solve().objective == pytest.approx(2.0)
    assert highs.getNumRow() == rows0 + 3
    del m.cuts[1]
    r = ps.solve()
    assert highs.getNumRow() == rows0 + 2
    want = solve(m).objective  # a fresh hand-off of the same model
    assert r.objective == pytest.approx(want) == pytest.approx(1.0)
    assert ps.n_solves_ == 4


def test_warm_start_needs_few_iterations_after_new_rows():
    rng = np.random.default_rng(0)
    n = 40
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), bounds=(0, 1))
    w = rng.uniform(1, 2, n)
    m.obj = pyo.Objective(expr=sum(w[j] * m.x[j] for j in range(n)))
    m.cuts = pyo.ConstraintList()
    for _ in range(60):
        a = rng.uniform(0, 1, n)
        m.cuts.add(sum(a[j] * m.x[j] for j in range(n)) >= 0.3 * a.sum())
    ps = PersistentSolver(m, "highs")
    ps.solve()
    highs = ps.solver_._solver_model
    cold = highs.getInfo().simplex_iteration_count
    a = rng.uniform(0, 1, n)
    m.cuts.add(sum(a[j] * m.x[j] for j in range(n)) >= 0.35 * a.sum())
    ps.solve()
    assert highs.getInfo().simplex_iteration_count <= max(cold // 2, 10)
