"""HiGHS's process-wide thread pool and banner (clusteropt.solvers.highs; issue 42).

HiGHS refuses a run whose explicit thread count differs from the pool an earlier run started, and the
default count differs between highspy 1.15 and 1.16: every route of the package must ready the pool.
Each case runs in a fresh interpreter, since the pool is the process's.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import numpy as np, scipy.sparse as sp
    from clusteropt.solvers.direct import run_highs, WarmHighs
    a = sp.csc_array(np.array([[1.0, 1.0]]))
    out = []
    for threads in {sequence}:
        h, _, _ = run_highs([1.0, 2.0], [0, 0], [10, 10], a, [1.0], [np.inf], maximize=False,
                            integer=[True, True], threads=threads)
        out.append(h.getModelStatus().name)
    print(" ".join(out))
""")


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("sequence", [
    [None, 1],  # the sequence that failed in highspy 1.16.0 (the default pool, then one thread)
    pytest.param([None, 2], marks=pytest.mark.slow),
    pytest.param([2, 1], marks=pytest.mark.slow),
    [1, 2, None, 1],  # every change of thread count in one process
])
def test_any_thread_count_after_any_other_is_solved(sequence):
    done = _python(SCRIPT.format(sequence=sequence))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["kOptimal"] * len(sequence)


def test_the_slot_milp_after_a_default_lp_is_solved_through_every_route():
    """A_round's LP on HiGHS's own thread count, then the slot MILP with threads=1 (what failed)."""
    code = textwrap.dedent("""
        import numpy as np
        import pyomo.environ as pyo
        from clusteropt.solvers import solve
        from clusteropt.solvers.direct import solve_highs_direct
        m = pyo.ConcreteModel(); m.x = pyo.Var(within=pyo.NonNegativeReals); m.c = pyo.Constraint(expr=m.x >= 1)
        m.o = pyo.Objective(expr=m.x)
        first = solve(m, "highs").termination.name
        m2 = pyo.ConcreteModel(); m2.y = pyo.Var(within=pyo.NonNegativeIntegers)
        m2.c = pyo.Constraint(expr=m2.y >= 1.5); m2.o = pyo.Objective(expr=m2.y)
        one = solve_highs_direct(m2, threads=1).termination.name
        print(first, one, solve(m2, "highs", threads=2).termination.name)
    """)
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["OPTIMAL"] * 3


def test_no_banner_reaches_standard_output():
    """highspy 1.16 prints a banner when a process makes its first Highs; JSON on stdout must not see it."""
    done = _python(SCRIPT.format(sequence=[None]))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "kOptimal\n"
