"""Models solved by an exact algorithm of the package instead of a solver (backend ``"exact"``).

Some optima have a combinatorial algorithm that is exact and far faster than any MILP of the
same problem: ring partitioning's dynamic OPT is a DP over labellings (paper 004, Sec. 1;
:func:`~clusteropt.algorithms.ring.offline.dynamic_opt_dp`) that proves in seconds what the
time-expanded MILP does not prove in minutes.  An :class:`ExactModel` puts such an algorithm
behind the same verbs as the solver models: ``clusteropt build`` shows its components,
``clusteropt solve`` runs it and returns a :class:`~clusteropt.solvers.SolveResult` (solver: the
algorithm's name, backend ``"exact"``, objective = bound, gap 0).  What it cannot do is say so:
it has no LP/MPS form (``export`` names the solver model of the same optimum) and takes no
other solver.

>>> import numpy as np
>>> m = ExactModel("toy", "enumeration", [{"component": "x", "type": "variable", "size": 1, "doc": "x"}],
...                lambda time_limit: ExactSolution(2.0, {"x": np.array([1.0])}), solver_model="toy-milp")
>>> m.backend, m.solution is None
('exact', True)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

__all__ = ["ExactModel", "ExactSolution"]


@dataclasses.dataclass(frozen=True)
class ExactSolution:
    """What an exact algorithm returns: the optimum, its decisions, and what its output adds.

    Attributes
    ----------
    objective : float
        The optimal value (proved by the algorithm: it is also the bound).
    values : mapping of str to numpy arrays
        The decisions, as a solver model's variable values.
    labels, index_names : mappings
        Each value's index keys and the names of their parts (as in
        :class:`~clusteropt.solvers.SolveResult`).
    output : mapping
        JSON-ready fields the written result adds beside the values (ring: the run's ``system``,
        ``initial`` and ``migrations``, so that ``clusteropt verify`` replays it).
    """

    objective: float
    values: Mapping[str, np.ndarray]
    labels: Mapping[str, list] = dataclasses.field(default_factory=dict)
    index_names: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    output: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(eq=False)
class ExactModel:
    """A registered model whose solve is an exact algorithm of the package.

    Attributes
    ----------
    name : str
        The model's name (as registered).
    method : str
        The algorithm, reported as the result's ``solver`` (``"labelling-dp"``); ``solve`` accepts
        it (or no solver) and refuses every other solver.
    components : list of dict
        ``clusteropt build``'s rows: component, type, size, doc (the paper's symbols).
    run : callable
        ``run(time_limit) -> ExactSolution``; raises ``TimeoutError`` when ``time_limit`` (seconds,
        or None) runs out.
    solver_model : str
        The registered solver model of the same optimum, named when a solver or an export is
        asked of this one.
    build_seconds : float
        Time the builder took (sizes checked, data prepared).
    solution : ExactSolution or None
        Set by a solve (as a solver model's variables are loaded back).
    """

    name: str
    method: str
    components: list[dict[str, Any]]
    run: Callable[[float | None], ExactSolution]
    solver_model: str
    build_seconds: float = 0.0
    solution: ExactSolution | None = None

    backend = "exact"

    def no_solver_form(self, what: str) -> str:
        """The message refusing ``what`` (a solver, an export) for this model."""
        return (f"model {self.name!r} is solved exactly by the package's {self.method} and has no {what}; "
                f"model {self.solver_model!r} is the same optimum for solvers and LP/MPS files")
