"""A linear program as the sparse arrays HiGHS takes, with the Pyomo names of its columns and rows.

The array builders of the package (the two LPs of GADGET's LP-RS-MDE,
:mod:`clusteropt.models.gadget.matrix`; mlBroker's MILP (8),
:mod:`clusteropt.models.broker.matrix`; the concurrent-open-shop LP,
:mod:`clusteropt.models.coflow.matrix`; one frame of the real-time max-weight ILP,
:func:`clusteropt.models.realtime.max_weight_arrays`) build **the same LP as their Pyomo model**,
row for row, as Pyomo's :class:`~pyomo.repn.plugins.standard_form.LinearStandardFormCompiler`
gives it, without building the Pyomo model.  A registered model with such a builder
(``ModelSpec.array_builder``; ``clusteropt models`` lists its forms) is what ``clusteropt solve``
and ``export`` hand over: :func:`clusteropt.solve` takes a :class:`MatrixLP` (HiGHS from the arrays,
any other solver through an MPS file with the same names) and :func:`clusteropt.write_model`
writes one (HiGHS's writer, the columns named as Pyomo's LP writer names them).  This module is
what they share:

:class:`MatrixLP`
    The arrays (costs, bounds, the constraint matrix in canonical CSC form, row bounds), the
    variable and constraint components as :class:`Block` (index tuples and their column / row),
    integer flags for a MILP, and the Pyomo names (:meth:`MatrixLP.col_names`,
    :meth:`MatrixLP.row_names`) and values per component (:meth:`MatrixLP.values`).
:class:`Assembler`
    Collects COO entries row block by row block, then drops what the compiler drops (zero
    coefficients, rows left with no variable, columns in no row and without cost, fixed columns).
:func:`solve_matrix`
    Hands the arrays to HiGHS (:func:`clusteropt.solvers.direct.run_highs`) and returns a
    :class:`~clusteropt.solvers.result.SolveResult` plus the column values.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from clusteropt.solvers.direct import WarmHighs
    from clusteropt.solvers.result import SolveResult

__all__ = ["Assembler", "Block", "MatrixLP", "NoArrayForm", "file_label", "solve_matrix"]

_INF = math.inf


class NoArrayForm(ValueError):
    """An array builder's refusal of an instance or option it does not cover (the registered model's
    Pyomo builder does): ``build(..., arrays=None)`` then builds the Pyomo model.
    """


@dataclasses.dataclass(frozen=True)
class Block:
    """One Pyomo component (variable or constraint): its index tuples in the component's index
    order (``make_keys()``, built only when asked) and the column / row of each (-1: not in the
    matrix, as the compiler leaves it out).
    """

    name: str
    positions: np.ndarray
    make_keys: Callable[[], list[tuple]]

    def keys(self) -> list[tuple]:
        """The component's index tuples, in its index order."""
        return self.make_keys()


@dataclasses.dataclass
class MatrixLP:
    """An LP as HiGHS takes it, with the Pyomo names of its columns and rows.

    Attributes
    ----------
    name : str
        The Pyomo model's name.
    maximize : bool
    cost, col_lower, col_upper : arrays (n,)
    a : scipy.sparse.csc_array (m, n)
        Canonical (sorted indices, no duplicates, no explicit zeros): what HiGHS is given.
    row_lower, row_upper : arrays (m,)
        ``-inf`` / ``inf`` where there is no bound.
    col_blocks, row_blocks : tuple of Block
        Per Pyomo variable / constraint component: its index tuples and their column / row.
    form : str
        ``"tree"``.
    meta : dict
        What the readers need (layout, ring sizes, per-job bookkeeping).
    integer : bool array (n,), optional
        Integer columns (None: an LP).  :func:`solve_matrix` hands them to HiGHS as such.
    index_names : dict, optional
        Per variable component, the names of its index sets, one per part of its keys (what
        :func:`clusteropt.solvers.pyomo_backend.variable_index_names` reads from the Pyomo model:
        ``{"y": ("I", "S")}``); the labelled values of a solve carry them.
    shapes : dict, optional
        Per variable component, the shape a solve of the Pyomo model gives its values (one axis per
        index set, where the variable covers their whole product); components not named here are
        shaped from :attr:`index_names` and their keys (:meth:`shaped_values`).
    """

    solver_backend: ClassVar[str] = "matrix"  # what clusteropt.solvers.options.backend_of reads

    name: str
    maximize: bool
    cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    a: sp.csc_array
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_blocks: tuple[Block, ...]
    row_blocks: tuple[Block, ...]
    form: str = "tree"
    meta: dict = dataclasses.field(default_factory=dict)
    integer: np.ndarray | None = None
    index_names: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    shapes: dict[str, tuple[int, ...]] = dataclasses.field(default_factory=dict)

    @property
    def n_cols(self) -> int:
        """Number of columns."""
        return int(self.cost.size)

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return int(self.row_lower.size)

    @property
    def nnz(self) -> int:
        """Number of nonzeros of ``a``."""
        return int(self.a.nnz)

    def col_names(self) -> list[str]:
        """Pyomo names of the columns, in column order (``chi[3,2]``)."""
        return _names(self.col_blocks, self.n_cols)

    def row_names(self) -> list[str]:
        """Pyomo names of the rows' constraints, in row order (``eq13[3]``)."""
        return _names(self.row_blocks, self.n_rows)

    def file_col_names(self) -> list[str]:
        """The columns' names in an LP / MPS file: :meth:`col_names` spelled as Pyomo's LP writer
        spells them (:func:`file_label`: ``chi[3,2]`` -> ``chi(3_2)``).
        """
        return _file_names(self.col_names(), "column")

    def file_row_names(self) -> list[str]:
        """The rows' names in an LP / MPS file (:func:`file_label` of :meth:`row_names`)."""
        return _file_names(self.row_names(), "row")

    def labels(self) -> Mapping[str, list[tuple]]:
        """Per variable component, its index tuples in the order of :meth:`values` (each made when
        first read: a :class:`~clusteropt.solvers.result.LazyMapping`).
        """
        from clusteropt.solvers.result import LazyMapping

        return LazyMapping({b.name: b.keys for b in self.col_blocks})

    def values(self, x) -> dict[str, np.ndarray]:
        """Column values ``x`` per variable component, in its index order (NaN where a variable
        is not a column: fixed, or in no row and not in the objective).
        """
        x = np.asarray(x, dtype=float)
        out = {}
        for b in self.col_blocks:
            v = np.full(b.positions.size, np.nan)
            on = b.positions >= 0
            v[on] = x[b.positions[on]]
            out[b.name] = v
        return out

    def shaped_values(self, x, labels: Mapping[str, list[tuple]] | None = None) -> dict[str, np.ndarray]:
        """:meth:`values` shaped as a solve of the Pyomo model shapes them: :attr:`shapes`, else one
        axis per index set where the variable covers the whole product of two or more sets (the
        sets read from :attr:`index_names`, ``("IT.0", "IT.1", "R")`` being two sets), else flat.
        ``labels``: :meth:`labels`, if already made.
        """
        labels = self.labels() if labels is None else labels
        out = {k: v + 0.0 for k, v in self.values(x).items()}  # + 0.0: a solver's -0.0 reads 0.0, as Pyomo's do
        for name, arr in out.items():
            shape = self.shapes.get(name)
            if shape is None and name in self.index_names:
                shape = _dense_shape(self.index_names[name], functools.partial(labels.__getitem__, name))
            if shape is not None:
                out[name] = arr.reshape(shape)
        return out

    def values_by_key(self, x, name: str) -> dict[tuple, float]:
        """``{index tuple: value}`` of variable component ``name`` (0 where not a column)."""
        block = next(b for b in self.col_blocks if b.name == name)
        x = np.asarray(x, dtype=float)
        vals = np.where(block.positions >= 0, x[np.maximum(block.positions, 0)], 0.0)
        return dict(zip(block.keys(), vals.tolist(), strict=True))


def _dense_shape(index_names: tuple[str, ...], make_keys: Callable[[], list[tuple]]) -> tuple[int, ...] | None:
    """Sizes of the index sets (``"IT.0", "IT.1"``: one set of pairs) when there are two sets or more
    and the keys (``make_keys()``, made only then) are their whole product, as
    :func:`clusteropt.solvers.pyomo_backend.variable_values` shapes a Pyomo variable; else None.
    """
    groups: list[list[int]] = []
    last = None
    for k, part in enumerate(index_names):
        head = part.rsplit(".", 1)[0] if "." in part else part
        if head == last and "." in part:
            groups[-1].append(k)
        else:
            groups.append([k])
        last = head
    if len(groups) < 2:
        return None
    keys = make_keys()
    if not keys or len(keys[0]) != len(index_names):
        return None
    sizes = tuple(len({tuple(key[k] for k in g) for key in keys}) for g in groups)
    return sizes if math.prod(sizes) == len(keys) else None


def _keys(blocks, n: int) -> list[tuple]:
    """``(component, index tuple)`` of every position (column or row): its name across LPs."""
    out: list[tuple] = [()] * n
    for b in blocks:
        for key, pos in zip(b.keys(), b.positions.tolist(), strict=True):
            if pos >= 0:
                out[pos] = (b.name, key)
    return out


def _names(blocks, n: int) -> list[str]:
    out = [""] * n
    for b in blocks:
        for key, pos in zip(b.keys(), b.positions.tolist(), strict=True):
            if pos >= 0:
                out[pos] = f"{b.name}[{','.join(map(str, key))}]"
    return out


_FILE_KEEP = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789()_")
_FILE_TABLE = {ord(a): b for a, b in zip("[]{}", "()()", strict=True)}


def file_label(name: str) -> str:
    """``name`` as a column or row name of an LP / MPS file, by the rule of Pyomo's LP writer
    (``symbolic_solver_labels``): brackets become parentheses, letters, digits, parentheses and
    ``_`` stay, every other character becomes ``_``.  So a file written from the arrays names its
    columns as one written from the Pyomo model does.

    >>> file_label("chi[3,2]"), file_label("y[gpu-a,1.5]")
    ('chi(3_2)', 'y(gpu_a_1_5)')
    """
    out = name.translate(_FILE_TABLE)
    return "".join(ch if ch in _FILE_KEEP else "_" for ch in out)


def _file_names(names: list[str], what: str) -> list[str]:
    out = [file_label(n) for n in names]
    if len(set(out)) != len(out):
        seen: dict[str, str] = {}
        for raw, label in zip(names, out, strict=True):
            if label in seen:
                raise ValueError(f"{what}s {seen[label]!r} and {raw!r} are both written {label!r} in an LP / MPS "
                                 "file; rename one index")
            seen[label] = raw
    return out


class Assembler:
    """Collects COO entries row block by row block, then drops zeros, empty rows and columns."""

    def __init__(self, n_cols: int):
        self.n_cols = n_cols
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.lo: list[np.ndarray] = []
        self.hi: list[np.ndarray] = []
        self.row_blocks: list[tuple[str, int, object]] = []  # (name, count, make_keys)
        self.n_rows = 0

    def add(self, name: str, count: int, make_keys, entries, lo, hi) -> None:
        """``count`` rows named ``name[key]``; ``entries``: (local row, column, value) arrays."""
        r, c, v = entries
        self.rows.append(np.asarray(r, dtype=np.int64) + self.n_rows)
        self.cols.append(np.asarray(c, dtype=np.int64))
        self.vals.append(np.asarray(v, dtype=float))
        self.lo.append(np.broadcast_to(np.asarray(lo, dtype=float), (count,)))
        self.hi.append(np.broadcast_to(np.asarray(hi, dtype=float), (count,)))
        self.row_blocks.append((name, count, make_keys))
        self.n_rows += count

    def finish(self, cost, col_lower, col_upper, col_fixed, col_blocks_spec, *, col_map=None, row_drop=None):
        """The canonical arrays and the blocks' positions.  ``col_map`` (n_cols,) merges columns
        (entry of column c goes to ``col_map[c]``; a column no entry maps to and without cost is
        left out) and ``row_drop`` (n_rows,) leaves rows out: :func:`build_gvne_matrix`'s server
        classes.
        """
        r = np.concatenate(self.rows) if self.rows else np.zeros(0, np.int64)
        c = np.concatenate(self.cols) if self.cols else np.zeros(0, np.int64)
        v = np.concatenate(self.vals) if self.vals else np.zeros(0)
        if row_drop is not None:
            on = ~row_drop[r]
            r, c, v = r[on], c[on], v[on]
        if col_map is not None:
            c = col_map[c]
        nz = v != 0  # the compiler drops zero coefficients ...
        r, c, v = r[nz], c[nz], v[nz]
        row_keep = np.zeros(self.n_rows, dtype=bool)
        row_keep[r] = True  # ... and rows left with no variable (they read 0 <= bound: all hold here)
        lo = np.concatenate(self.lo) if self.lo else np.zeros(0)
        hi = np.concatenate(self.hi) if self.hi else np.zeros(0)
        dropped = ~row_keep & ((lo > 0) | (hi < 0))
        if dropped.any():
            raise ValueError(f"a row with no variable is infeasible (row {int(np.flatnonzero(dropped)[0])})")
        col_keep = np.zeros(self.n_cols, dtype=bool)
        col_keep[c] = True
        col_keep |= cost != 0
        col_keep &= ~col_fixed
        new_col = np.cumsum(col_keep) - 1
        new_row = np.cumsum(row_keep) - 1
        keep_entry = col_keep[c]  # entries of fixed columns: their value is 0 here, so no bound moves
        a = sp.csc_array((v[keep_entry], (new_row[r[keep_entry]], new_col[c[keep_entry]])),
                         shape=(int(row_keep.sum()), int(col_keep.sum())))
        a.sum_duplicates()
        a.eliminate_zeros()
        a.sort_indices()
        col_blocks = tuple(Block(name, np.where(col_keep[sl], new_col[sl], -1), keys)
                           for name, sl, keys in col_blocks_spec)
        row_blocks, start = [], 0
        for name, count, keys in self.row_blocks:
            sl = slice(start, start + count)
            row_blocks.append(Block(name, np.where(row_keep[sl], new_row[sl], -1), keys))
            start += count
        return (cost[col_keep], col_lower[col_keep], col_upper[col_keep], a, lo[row_keep], hi[row_keep],
                col_blocks, tuple(row_blocks))


def solve_matrix(lp: MatrixLP, *, options=None, time_limit: float | None = None,
                 mip_gap: float | None = None, raise_on_nonoptimal: bool = True,
                 warm: WarmHighs | None = None) -> tuple[SolveResult, np.ndarray | None]:
    """Solve ``lp`` with HiGHS (``options``: HiGHS option name -> value, e.g. the algorithm).

    A MILP (``lp.integer``) is solved as one, with ``mip_gap`` (HiGHS's ``mip_rel_gap``) and
    ``time_limit``; its ``bound`` is HiGHS's dual bound and a limit with an incumbent ends
    ``FEASIBLE`` (:func:`~clusteropt.solvers.result.settle`).  ``warm`` is for LPs only.

    Returns the :class:`SolveResult` (``values`` per variable component, :meth:`MatrixLP.values`;
    ``build_seconds`` = the hand-off, ``Highs.passModel``; ``solve_seconds`` = HiGHS's run;
    ``backend="matrix"``; ``raw["warm"]``: whether a warm re-solve ran; ``raw["run_cpu_s"]``: the
    run's CPU seconds, on a cold solve) and the column values
    (None without a solution).  With ``warm`` (a :class:`~clusteropt.solvers.direct.WarmHighs`
    kept across an online run's slots) an LP with the previous one's structure is re-solved from
    its basis after changing costs and bounds (the hand-off is then those changes); otherwise a
    fresh model is built and started from the previous basis matched by the Pyomo names of the
    columns and rows (``raw["warm_kind"]``: ``"warm"``, ``"mapped"`` or ``"cold"``).
    Raises :class:`NotOptimalError` unless optimal, unless ``raise_on_nonoptimal=False``.
    """
    # here, not at the top: building the arrays needs no solver (and `clusteropt models` stays light)
    from clusteropt.solvers.direct import highs_termination, run_highs
    from clusteropt.solvers.result import NotOptimalError, SolveResult, Termination, settle

    if lp.n_cols == 0:
        # nothing to decide (every row was left out with its columns, and the assembly refused an
        # infeasible empty row): the optimum is the empty point, as the Pyomo route reports a constant
        # model; HiGHS itself would stop with kModelEmpty
        empty = SolveResult(termination=Termination.OPTIMAL, has_solution=True, objective=0.0, bound=0.0, gap=0.0,
                            values=lp.values(np.zeros(0)), solver="highs", backend="matrix", build_seconds=0.0,
                            solve_seconds=0.0, raw={"status": "empty model (no column)", "route": "matrix",
                                                    "warm": False, "warm_kind": "cold"})
        return empty, np.zeros(0)
    warmed = False
    integer = lp.integer if lp.integer is not None and bool(np.any(lp.integer)) else None
    mip = integer is not None
    if warm is not None and mip:
        raise ValueError(f"model {lp.name!r} has integer columns; warm re-solves (WarmHighs) take LPs only")
    run_cpu = None
    if warm is None:
        h, pass_s, _ = run_highs(lp.cost, lp.col_lower, lp.col_upper, lp.a, lp.row_lower, lp.row_upper,
                                 maximize=lp.maximize, integer=integer, options=options,
                                 time_limit=time_limit, mip_gap=mip_gap, run=False)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        h.run()
        run_s, run_cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    else:
        h, pass_s, run_s, warmed = warm.solve(lp.cost, lp.col_lower, lp.col_upper, lp.a, lp.row_lower,
                                              lp.row_upper, maximize=lp.maximize, options=options,
                                              time_limit=time_limit,
                                              col_keys=lambda: _keys(lp.col_blocks, lp.n_cols),
                                              row_keys=lambda: _keys(lp.row_blocks, lp.n_rows))
    term, status = highs_termination(h)
    info = h.getInfo()
    has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
    x = np.asarray(h.getSolution().col_value, dtype=float) if has_solution else None
    objective = float(info.objective_function_value) if has_solution else None
    bound = None
    if mip and has_solution and math.isfinite(float(info.mip_dual_bound)):
        bound = float(info.mip_dual_bound)
    if integer is not None and x is not None:
        x = np.where(integer, np.round(x), x)  # HiGHS's integers are within its feasibility tolerance
    term, bound, gap = settle(term, has_solution, objective, bound, mip=mip)
    result = SolveResult(termination=term, has_solution=has_solution, objective=objective, bound=bound, gap=gap,
                         values=lp.values(x) if has_solution else {}, solver="highs", backend="matrix",
                         build_seconds=pass_s, solve_seconds=run_s,
                         raw={"status": status, "route": "matrix", "warm": warmed,
                              "warm_kind": "cold" if warm is None else warm.last_kind, "run_cpu_s": run_cpu})
    if raise_on_nonoptimal and term is not Termination.OPTIMAL:
        raise NotOptimalError(f"HiGHS (matrix) stopped with {term.name} ({status}) on model {lp.name!r}", result)
    return result, x
