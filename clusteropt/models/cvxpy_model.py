"""The wrapper CVXPY builders return: the ``cp.Problem`` plus name lookups.

A bare ``cvxpy.Problem`` has no way to find a variable or a constraint by name; builders return
a :class:`CvxpyModel` so that users can inspect ``model.variables["v"]`` the way they would
inspect ``model.v`` on a Pyomo model, and so that exported LP / MPS files carry those names.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported lazily: listing the models (``clusteropt models``) needs no CVXPY
    import cvxpy as cp

# Importing CVXPY imports every solver it finds; with Xpress 9.9 installed that runs Pyomo 6.10's
# xpress_direct import hook, which asks the deprecated xpress.getversion, and Xpress warns with its
# own DeprecationWarning (a FutureWarning, shown by default) on every command that imports CVXPY,
# whatever the solve.  Only that one message is silenced, here: every CVXPY builder and the solvers
# import this module before CVXPY.
warnings.filterwarnings("ignore", message="Deprecated in Xpress 9.9: use xpress.getVersion instead",
                        category=FutureWarning)

__all__ = ["CvxpyModel"]


@dataclass
class CvxpyModel:
    """A CVXPY problem with named variables, constraints and parameters.

    Parameters
    ----------
    problem : cvxpy.Problem
        The problem itself (solve it with :func:`clusteropt.solvers.solve`).
    variables : Mapping[str, cvxpy.Variable]
        Name (the paper's symbol) -> variable.
    constraints : Mapping[str, cvxpy.Constraint | list[cvxpy.Constraint]]
        Name (the paper's equation, e.g. ``"10b"``) -> constraint or list of constraints.
    parameters : Mapping[str, cvxpy.Parameter]
        Name -> parameter, for re-solving with new data without rebuilding.
    name : str
        Model name, used as the ``NAME`` of exported files.
    docs : Mapping[str, str]
        Component name (a variable, constraint or parameter name, or ``"objective"``) -> the
        paper's symbol and equation, as Pyomo components carry in ``doc``; shown by
        :func:`clusteropt.models.summary.model_summary` and ``clusteropt build``.
    index : Mapping[str, Mapping[str, Sequence]]
        Variable name -> its axes in order, each the name of the index set and its keys (job ids,
        server ids, slots), as a Pyomo variable is indexed: ``{"y": {"I": job_ids, "S": servers}}``.
        A solve's :meth:`~clusteropt.solvers.SolveResult.labelled` then keys the values by them;
        variables without an entry are keyed by array position.  Checked by :meth:`index_keys`.

    Examples
    --------
    >>> import cvxpy as cp
    >>> x = cp.Variable(2, nonneg=True, name="x")
    >>> cap = cp.sum(x) <= 4
    >>> m = CvxpyModel(cp.Problem(cp.Maximize(x[0] + 2 * x[1]), [cap]), {"x": x}, {"cap": cap})
    >>> m.summary()
    {'variables': {'x': 2}, 'constraints': {'cap': 1}}

    Indexed by the model's own keys:

    >>> m = CvxpyModel(m.problem, {"x": x}, {"cap": cap}, index={"x": {"job": ["a", "b"]}})
    >>> m.index_keys("x")
    [('a',), ('b',)]
    """

    problem: cp.Problem
    variables: Mapping[str, cp.Variable] = field(default_factory=dict)
    constraints: Mapping[str, cp.Constraint | list[cp.Constraint]] = field(default_factory=dict)
    parameters: Mapping[str, cp.Parameter] = field(default_factory=dict)
    name: str = "clusteropt"
    docs: Mapping[str, str] = field(default_factory=dict)
    index: Mapping[str, Mapping[str, Sequence]] = field(default_factory=dict)

    def index_keys(self, name: str) -> list[tuple] | None:
        """Variable ``name``'s keys in the order of its values flattened row by row (numpy's C
        order), from :attr:`index`; None when it has no entry.

        Raises
        ------
        ValueError
            When the axes' lengths are not the variable's shape.
        """
        axes = self.index.get(name)
        if axes is None:
            return None
        shape = tuple(self.variables[name].shape)
        lengths = tuple(len(keys) for keys in axes.values())
        if lengths != shape:
            raise ValueError(f"variable {name!r} has shape {shape}, its index {', '.join(axes)} has lengths "
                             f"{lengths}")
        return [tuple(key) for key in itertools.product(*(list(keys) for keys in axes.values()))]

    def index_names(self, name: str) -> tuple[str, ...] | None:
        """The names of variable ``name``'s index sets (:attr:`index`), or None."""
        axes = self.index.get(name)
        return None if axes is None else tuple(axes)

    def constraint_list(self, name: str) -> list[cp.Constraint]:
        """The constraints registered under ``name`` as a list."""
        c = self.constraints[name]
        return list(c) if isinstance(c, list | tuple) else [c]

    def summary(self) -> dict[str, dict[str, int]]:
        """Scalar sizes of every named variable and constraint group."""
        return {
            "variables": {k: int(v.size) for k, v in self.variables.items()},
            "constraints": {
                k: int(sum(c.size for c in self.constraint_list(k))) for k in self.constraints
            },
        }
