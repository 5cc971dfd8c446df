"""Checker for paper 004 runs: replay a ring-partitioning migration log and recount its cost.

A run is the instance's initial assignment and an ``(M, 3)`` log of migrations
``[request index, process, to server]`` in the order they were applied.  A migration with index
``t`` is applied *after* request ``t`` is served; index ``-1`` means before the first request.
Request ``t`` on ring edge ``e`` (the pair ``e, e + 1 mod n``) costs 1 when its two processes
sit on different servers after every migration with index ``< t``.  Migrations are paid per step:
a process whose server after the rows of index ``t`` differs from its server before them costs
``alpha`` (``alpha`` times the Hamming distance of consecutive placements, the paper's cost), so a
process moved out and back within one step costs nothing and one moved ``A -> B -> C`` costs
one.  Capacity ``c * k`` (``c`` the run's augmentation) must hold after every *step*: the
initial placement, and the end of each request index that has
migrations (loads in the middle of one step's migrations do not count; paper Sec. 1-2,
docs/algorithms/ring-partitioning.md A1).

Only the instance and the run's ``initial`` / ``migrations`` / ``augmentation`` are read; nothing
from the algorithm that made the run is imported or trusted.  The run may be a
:class:`~clusteropt.online.ring.RingRun` or a mapping (an ``out.json`` read back with
``json.load``: lists instead of arrays).

Constraint labels (``Violation.constraint``):

``run fields``
    the run has no ``migrations`` (or no ``initial``)
``request count``
    the run's ``n_requests`` is not the instance's ``T``
``augmentation``
    the run's augmentation is not a finite number > 0
``initial assignment``
    the run's ``initial`` is not the instance's (the first differing process is named; amount =
    how many differ)
``migration row``
    ``migrations`` is not an ``(M, 3)`` array of integers
``migration index in -1..T-1``
    a row's request index is out of range
``migration order (non-decreasing index)``
    a row's index is below the previous row's
``migration process in 0..n-1``
    a row's process is out of range
``migration server in 0..l-1``
    a row's target server is out of range
``capacity c*k``
    a server holds more than ``c * k`` processes after a step (amount = load minus capacity)

Malformed rows (the four ``migration ...`` labels) stop the check: the violations are returned
with ``value = nan`` and no costs.  A wrong ``initial`` does not: the log is replayed from the
instance's initial assignment (the real starting point).

The replay is vectorized (a million requests and a million migrations in about a second): the
rows are sorted stably by ``(process, index)``, so the server of process ``v`` at request ``t``
is found by binary search as its last migration with index ``< t``, and server loads come from
per-server cumulative sums of ``-1`` / ``+1`` events read at the last event of each step.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from clusteropt.instances.ring import RingInstance
from clusteropt.verify.base import Check, Violation

__all__ = ["RingCheck", "box_lp_dual_bound", "check_ring_run", "cut_lagrangian_bound", "switching_excess"]

_MISSING = object()


@dataclasses.dataclass(frozen=True, eq=False)
class RingCheck(Check):
    """The verdict of :func:`check_ring_run`.

    Attributes
    ----------
    violations : tuple of Violation
        Every violation found (none when feasible); see the module's table.
    value : float
        Total cost ``communication_cost + migration_cost`` (nan when the rows are malformed).
    communication_cost : int or None
        Requests whose two processes were on different servers when served.
    migration_cost : float or None
        ``alpha`` times ``n_migrations``.
    n_migrations : int or None
        (step, process) pairs whose server at the end of the step differs from its start.
    noop_migrations : int or None
        Rows beyond those (cost 0): a process put where it already was, moved out and back
        within one step, or moved twice in one step.
    max_load : int or None
        Largest server load after any step (initial placement included).
    capacity : float
        ``c * k`` (nan when the augmentation is unusable).
    max_load_ratio : float or None
        ``max_load / k``.
    final_assignment : int array (n,) or None
        Server of each process after the last migration.

    Equality compares ``violations`` and ``value`` only (as :class:`Check` does).
    """

    communication_cost: int | None = None
    migration_cost: float | None = None
    n_migrations: int | None = None
    noop_migrations: int | None = None
    max_load: int | None = None
    capacity: float = float("nan")
    max_load_ratio: float | None = None
    final_assignment: np.ndarray | None = None


def _get(run: Any, name: str) -> Any:
    if isinstance(run, Mapping):
        return run.get(name, _MISSING)
    return getattr(run, name, _MISSING)


def _augmentation(value: Any) -> float | None:
    """``value`` as a finite float > 0, or None."""
    if isinstance(value, bool):
        return None
    try:
        c = float(value)
    except (TypeError, ValueError):
        return None
    return c if math.isfinite(c) and c > 0 else None


def _row_text(rows: np.ndarray, i: int) -> str:
    return f"row {i} {rows[i].tolist()}"


def _bad_rows(constraint: str, bad: npt.ArrayLike, why, limit: int) -> list[Violation]:
    """One violation per row flagged in ``bad`` (at most ``limit``); ``why(i)`` is the text."""
    idx = np.flatnonzero(bad)
    out = [Violation(constraint, why(int(i)), 1.0) for i in idx[:limit]]
    if idx.size > limit:
        out.append(Violation(constraint, f"{idx.size - limit} more rows", float(idx.size - limit)))
    return out


def _migration_rows(raw: Any, n: int, servers: int, T: int, limit: int) -> tuple[np.ndarray | None,
                                                                                    list[Violation]]:
    """``raw`` as an int64 ``(M, 3)`` array, or None and the violations that make it unusable."""
    try:
        arr = np.asarray(raw)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        return None, [Violation("migration row", f"migrations is not an (M, 3) array ({exc})", 1.0)]
    if arr.size == 0 and arr.ndim <= 2 and (arr.ndim < 2 or arr.shape[1] in (0, 3)):
        return np.zeros((0, 3), dtype=np.int64), []
    if arr.ndim != 2 or arr.shape[1] != 3:
        return None, [Violation("migration row", f"migrations has shape {arr.shape}; expected (M, 3)", 1.0)]
    if arr.dtype.kind in "iu":
        if arr.dtype.kind == "u" and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
            bad = (arr > np.iinfo(np.int64).max).any(axis=1)
            return None, _bad_rows("migration row", bad, lambda i: f"{_row_text(arr, i)}: not an int64", limit)
        rows = arr.astype(np.int64, copy=False)
    else:
        try:
            flt = arr.astype(np.float64)
        except (TypeError, ValueError):
            flt = np.array([[_to_float(x) for x in row] for row in arr.tolist()], dtype=np.float64)
        bad = (~np.isfinite(flt) | (flt != np.round(flt)) | (np.abs(flt) > 2.0**62)).any(axis=1)
        if arr.dtype.kind == "b":
            bad[:] = True
        if bad.any():
            return None, _bad_rows("migration row", bad, lambda i: f"row {i} {arr[i].tolist()}: not integers",
                                   limit)
        rows = flt.astype(np.int64)
    idx, proc, to = rows[:, 0], rows[:, 1], rows[:, 2]
    out: list[Violation] = []
    out += _bad_rows("migration index in -1..T-1", (idx < -1) | (idx >= T),
                     lambda i: f"{_row_text(rows, i)}: index {idx[i]} not in -1..{T - 1}", limit)
    dec = np.zeros(idx.size, dtype=bool)
    dec[1:] = idx[1:] < idx[:-1]
    out += _bad_rows("migration order (non-decreasing index)", dec, lambda i: (
        f"{_row_text(rows, i)}: index {idx[i]} after index {idx[i - 1]} (row {i - 1})"), limit)
    out += _bad_rows("migration process in 0..n-1", (proc < 0) | (proc >= n),
                     lambda i: f"{_row_text(rows, i)}: process {proc[i]} not in 0..{n - 1}", limit)
    out += _bad_rows("migration server in 0..l-1", (to < 0) | (to >= servers),
                     lambda i: f"{_row_text(rows, i)}: server {to[i]} not in 0..{servers - 1}", limit)
    return (None if out else rows), out


def _to_float(x: Any) -> float:
    if isinstance(x, bool):
        return math.nan
    try:
        return float(x)
    except (TypeError, ValueError, OverflowError):
        return math.nan


def _initial_violations(raw: Any, initial: np.ndarray) -> list[Violation]:
    if raw is _MISSING:
        return [Violation("run fields", "the run has no 'initial'", 1.0)]
    try:
        got = np.asarray(raw)
    except (TypeError, ValueError):  # ragged
        return [Violation("initial assignment", f"run initial is not a list of {initial.size} servers", 1.0)]
    if got.shape != initial.shape:
        return [Violation("initial assignment", f"run initial has shape {got.shape}; expected (n,) = "
                          f"({initial.size},)", 1.0)]
    if got.dtype.kind in "iuf":
        diff = got != initial
    else:  # booleans, strings, None: compared entry by entry
        diff = np.array([isinstance(a, bool | np.bool_) or a != b for a, b in zip(got.tolist(), initial.tolist(),
                                                                              strict=True)], dtype=bool)
    if not diff.any():
        return []
    v = int(np.argmax(diff))
    return [Violation("initial assignment", f"process {v}: run has server {got[v].item()!r}, the instance "
                      f"{int(initial[v])} ({int(diff.sum())} processes differ)", float(diff.sum()))]


def check_ring_run(instance: RingInstance, run: Any, *, augmentation: float | None = None, tol: float = 0,
                   max_violations: int = 100) -> RingCheck:
    """Replay a ring-partitioning run on ``instance``: violations and recomputed costs.

    Parameters
    ----------
    instance : RingInstance
    run : RingRun or mapping
        Anything with ``initial`` (n,) and ``migrations`` (M, 3) ``[request index, process, to
        server]`` in applied order, optionally ``augmentation`` (and ``n_requests``), as
        attributes or keys (an ``out.json`` read back with ``json.load`` works).
    augmentation : float, optional
        ``c`` of the capacity ``c * k``; overrides the run's.  Default: the run's, else 1.
    tol : float, default 0
        Slack on the capacity: a load above ``c * k + tol`` is a violation.
    max_violations : int, default 100
        At most this many listed violations per kind (one more entry counts the rest).

    Returns
    -------
    RingCheck
        ``violations``, ``value`` (total cost), ``communication_cost``, ``migration_cost``,
        ``n_migrations``, ``noop_migrations``, ``max_load``, ``capacity``, ``max_load_ratio``,
        ``final_assignment``.

    Raises
    ------
    TypeError
        ``instance`` is not a :class:`~clusteropt.instances.ring.RingInstance`.
    ValueError
        ``augmentation`` not a finite number > 0, ``tol`` negative or ``max_violations`` < 1.
        Bad run data never raises: it is reported as violations.

    References
    ----------
    Räcke, Schmid, Zabrodin, "Dynamic Balanced Graph Partitioning for Ring Demands", SPAA 2023,
    Sec. 1-2 (cost model: 1 per request across servers, 1 per migrated process, capacity after
    each step's migrations, resource augmentation ``c``).

    Examples
    --------
    Eight processes on two servers of capacity 4; after request 0 process 3 moves to server 1
    and process 7 to server 0 (server 1 holds 5 processes between the two rows, which is fine:
    only the end of a step counts):

    >>> inst = RingInstance(n=8, servers=2, requests=[3, 3, 7, 1])
    >>> run = {"initial": inst.initial.tolist(), "migrations": [[0, 3, 1], [0, 7, 0]]}
    >>> chk = check_ring_run(inst, run)
    >>> chk.feasible, chk.communication_cost, chk.migration_cost, chk.value, chk.max_load
    (True, 1, 2.0, 3.0, 4)
    >>> chk.final_assignment.tolist()
    [0, 0, 0, 1, 1, 1, 1, 0]
    >>> for v in check_ring_run(inst, {**run, "migrations": [[0, 3, 1], [2, 1, 1]]}).violations:
    ...     print(v)
    capacity c*k violated at step 0 (after request 0), server 1: load 5 > capacity 4 by 1
    capacity c*k violated at step 2 (after request 2), server 1: load 6 > capacity 4 by 2
    >>> check_ring_run(inst, {**run, "migrations": [[0, 3, 1], [2, 1, 1]]}, augmentation=1.5).feasible
    True
    >>> bad = check_ring_run(inst, {**run, "migrations": [[1, 3, 1], [0, 9, 0]]})
    >>> [str(v) for v in bad.violations], bad.value  # doctest: +NORMALIZE_WHITESPACE
    (['migration order (non-decreasing index) violated at row 1 [0, 9, 0]: index 0 after index 1 (row 0) by 1',
      'migration process in 0..n-1 violated at row 1 [0, 9, 0]: process 9 not in 0..7 by 1'], nan)
    """
    if not isinstance(instance, RingInstance):
        raise TypeError(f"instance must be a RingInstance, got {type(instance).__name__}")
    if augmentation is not None and _augmentation(augmentation) is None:
        raise ValueError(f"augmentation = {augmentation!r}; expected a finite number > 0")
    if isinstance(tol, bool) or not isinstance(tol, int | float | np.integer | np.floating) or not tol >= 0:
        raise ValueError(f"tol = {tol!r}; expected a number >= 0")
    if isinstance(max_violations, bool) or not isinstance(max_violations, int | np.integer) or max_violations < 1:
        raise ValueError(f"max_violations = {max_violations!r}; expected an integer >= 1")
    n, servers, k, T = instance.n, instance.servers, instance.k, instance.n_requests
    initial = np.asarray(instance.initial, dtype=np.int64)
    out: list[Violation] = []

    # -- the run's own fields ----------------------------------------------------------------------
    count = _get(run, "n_requests")
    if count is not _MISSING and count is not None and not (
            isinstance(count, int | np.integer) and not isinstance(count, bool) and int(count) == T):
        out.append(Violation("request count", f"run n_requests = {count!r}; the instance has T = {T}", 1.0))
    if augmentation is not None:
        c: float | None = float(augmentation)
    else:
        raw_c = _get(run, "augmentation")
        if raw_c is _MISSING or raw_c is None:
            c = 1.0
        else:
            c = _augmentation(raw_c)
            if c is None:
                out.append(Violation("augmentation", f"run augmentation = {raw_c!r}; expected a finite number > 0",
                                     1.0))
    capacity = c * k if c is not None else float("nan")
    out += _initial_violations(_get(run, "initial"), initial)
    raw_m = _get(run, "migrations")
    if raw_m is _MISSING:
        out.append(Violation("run fields", "the run has no 'migrations'", 1.0))
        return RingCheck(tuple(out), float("nan"), capacity=capacity)
    rows, bad = _migration_rows(raw_m, n, servers, T, int(max_violations))
    if rows is None:
        return RingCheck(tuple(out + bad), float("nan"), capacity=capacity)

    # -- replay -------------------------------------------------------------------------------------
    idx, proc, to = rows[:, 0], rows[:, 1], rows[:, 2]
    M, span = idx.size, T + 1  # keys: process * span + (index + 1), index + 1 in 0..T
    order = np.argsort(proc * span + (idx + 1), kind="stable")  # per process, in applied order
    s_proc, s_to = proc[order], to[order]
    s_key = s_proc * span + (idx[order] + 1)
    first = np.ones(M, dtype=bool)
    first[1:] = s_proc[1:] != s_proc[:-1]
    s_prev = np.empty(M, dtype=np.int64)  # server before the row, per sorted row
    s_prev[first] = initial[s_proc[first]]
    s_prev[~first] = s_to[:-1][~first[1:]]
    real = s_prev != s_to
    # one migration per process per step: a process costs alpha when the server it ends a step on
    # differs from the one it began it on (its rows of that step are consecutive in sorted order)
    g_first = np.ones(M, dtype=bool)
    g_first[1:] = s_key[1:] != s_key[:-1]
    g_last = np.ones(M, dtype=bool)
    g_last[:-1] = s_key[1:] != s_key[:-1]
    n_real = int(np.count_nonzero(s_prev[g_first] != s_to[g_last]))

    def server_at(v: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Server of processes ``v`` when request ``t`` is served (after rows with index < t)."""
        pos = np.searchsorted(s_key, v * span + t, side="right") - 1
        posc = np.maximum(pos, 0)
        hit = (pos >= 0) & (s_proc[posc] == v) if M else np.zeros(v.shape, dtype=bool)
        return np.where(hit, s_to[posc] if M else 0, initial[v])

    req = np.asarray(instance.requests, dtype=np.int64)
    ts = np.arange(T, dtype=np.int64)
    comm = int(np.count_nonzero(server_at(req, ts) != server_at((req + 1) % n, ts)))
    final = initial.copy()
    last = np.ones(M, dtype=bool)
    last[:-1] = s_proc[1:] != s_proc[:-1]
    final[s_proc[last]] = s_to[last]

    # -- loads after every step ----------------------------------------------------------------------
    load0 = np.bincount(initial, minlength=servers)
    max_load = int(load0.max())
    steps: list[np.ndarray] = [np.full(servers, -2, dtype=np.int64)]  # -2: the initial placement
    loads: list[np.ndarray] = [load0]
    where_real = np.sort(order[real])  # real rows in applied order
    if where_real.size:
        prev = np.empty(M, dtype=np.int64)
        prev[order] = s_prev
        ev_srv = np.concatenate([prev[where_real], to[where_real]])
        ev_step = np.concatenate([idx[where_real], idx[where_real]])
        ev_d = np.concatenate([-np.ones(where_real.size, np.int64), np.ones(where_real.size, np.int64)])
        ev_key = ev_srv * span + (ev_step + 1)
        ev = np.argsort(ev_key, kind="stable")
        ev_srv, ev_step, ev_key = ev_srv[ev], ev_step[ev], ev_key[ev]
        cum = np.cumsum(ev_d[ev])
        start = np.ones(ev.size, dtype=bool)
        start[1:] = ev_srv[1:] != ev_srv[:-1]
        seg = np.maximum.accumulate(np.where(start, np.arange(ev.size), 0))  # the server's first event
        before = (cum - ev_d[ev])[seg]  # cumulative sum before it
        level = load0[ev_srv] + cum - before
        end = np.ones(ev.size, dtype=bool)
        end[:-1] = ev_key[1:] != ev_key[:-1]
        steps.append(ev_step[end])
        loads.append(level[end])
        max_load = max(max_load, int(level[end].max()))
        srv_end = ev_srv[end]
    else:
        srv_end = np.zeros(0, dtype=np.int64)
    if c is not None:
        step_all = np.concatenate(steps)
        load_all = np.concatenate(loads)
        srv_all = np.concatenate([np.arange(servers, dtype=np.int64), srv_end])
        over = np.flatnonzero(load_all > capacity + tol)
        over = over[np.lexsort((srv_all[over], step_all[over]))]
        for i in over[:max_violations]:
            s, t = int(step_all[i]), int(srv_all[i])
            when = ("initial placement" if s == -2 else "step -1 (before the first request)" if s == -1
                    else f"step {s} (after request {s})")
            out.append(Violation("capacity c*k", f"{when}, server {t}: load {int(load_all[i])} > capacity "
                                 f"{_fmt(capacity)}", float(load_all[i] - capacity)))
        if over.size > max_violations:
            out.append(Violation("capacity c*k", f"{over.size - max_violations} more (step, server) pairs",
                                 float(over.size - max_violations)))
    mig = float(instance.alpha) * n_real
    return RingCheck(
        tuple(out), float(comm + mig), communication_cost=comm, migration_cost=mig, n_migrations=n_real,
        noop_migrations=int(M - n_real), max_load=max_load, capacity=capacity, max_load_ratio=max_load / k,
        final_assignment=final)


def _fmt(x: float) -> str:
    """A number in a ``where`` text: integral values without ``.0``."""
    return str(int(x)) if math.isfinite(x) and x == round(x) and abs(x) < 2**53 else f"{x:.6g}"


def cut_lagrangian_bound(instance: RingInstance, multipliers: npt.ArrayLike, *, capacity: int | None = None,
                         switching: npt.ArrayLike | None = None) -> float:
    """A lower bound on OPT_dyn certified by multipliers of the cut-set LP's window rows (weak duality).

    The cut-set LP (:mod:`clusteropt.models.ring.cut`, ours, not the paper's) relaxes OPT_dyn: on
    the run-length compressed requests ``(e_s, w_s)``, ``s = 0..T'-1`` (a run of ``w`` equal
    consecutive edge ids is one request of weight ``w``), ``y[s, e] = 1`` when edge ``e`` is cut
    while request ``s`` is served, every *window* of ``capacity`` consecutive edges
    ``j, j + 1, ..., j + capacity - 1 (mod n)`` has a cut edge (else ``capacity + 1`` consecutive
    processes would share a server), a request costs ``w_s y[s, e_s]``, and a change of an edge's
    cut status costs at least ``alpha / 2`` (moving one process changes the status of its two
    edges only).  Given any ``multipliers[s, j] >= 0`` for those window rows, this returns::

        L = sum_(s, j) multipliers[s, j]
            + sum_e min over y in {0, 1}^T' of  sum_s c[s, e] y_s
                                               + alpha / 2 (|y_0 - y0_e| + sum_(s >= 1) |y_s - y_(s-1)|)

    with ``c[s, e] = w_s [e = e_s] - sum_(i < capacity) multipliers[s, e - i mod n]`` and ``y0_e``
    the initial assignment's cut status of ``e``.  Every labelling sequence gives a 0/1 ``y`` that
    meets every window row, so ``L <= OPT_dyn`` at ``capacity`` for *every* choice of
    multipliers: the bound does not depend on how (or how accurately) they were found.  Each edge's
    minimum is a two-state shortest path over the compressed requests, computed here for all edges
    at once; nothing from the code that found the multipliers is used.

    With ``switching`` (the certificate of the LP with the min-move rows), a change of edge ``e``'s
    status before request ``s`` costs ``switching[s, e]`` instead of ``alpha / 2``.  Any
    non-negative weights are accepted, each step's row scaled down first so that it charges no set
    of status changes more than the move it takes: a change of labelling between two requests in
    which the edges of ``D`` change status costs at least ``f(D) = max(alpha |D| / 2, m [D
    non-empty])``, ``m`` the smallest move (``2 alpha`` when ``servers * capacity <= n``, every server full, so a
    process can only arrive where one leaves; else ``alpha``).  ``w . d <= f(d)`` for every
    ``d >= 0`` exactly when ``rho = max {w . d : alpha / 2 sum d <= 1, m d <= 1, d >= 0} <= 1`` (a
    fractional knapsack: the largest ``2 m / alpha`` weights over ``m``), so a row with ``rho > 1`` is
    divided by ``rho``; then the sum of the step's switching charges never exceeds its move cost,
    and ``L <= OPT_dyn`` again.  ``switching = alpha / 2`` everywhere (``rho = 1``) is the default.

    Parameters
    ----------
    instance : RingInstance
    multipliers : array-like, shape (T', n)
        Finite and ``>= 0``; ``T'`` the number of compressed requests.
    capacity : int, optional
        Load bound per server (default ``k``), between 1 and ``n - 1``.
    switching : array-like, shape (T', n), optional
        Finite and ``>= 0``: what a status change of edge ``e`` before request ``s`` is charged
        (scaled down per step as above; default ``alpha / 2``).

    Raises
    ------
    ValueError
        Wrong shape, a negative or non-finite multiplier or switching weight (its indices named),
        or a capacity outside ``1..n-1`` (with ``n`` or more, one server may hold every process: no
        window row).

    Examples
    --------
    >>> from clusteropt.instances.ring import RingInstance
    >>> inst = RingInstance(n=4, servers=2, requests=[1] * 5)   # one compressed request, weight 5
    >>> cut_lagrangian_bound(inst, np.zeros((1, 4)))  # no multipliers: uncut edge 1 for alpha / 2
    0.5
    >>> cut_lagrangian_bound(inst, [[0, 1, 0, 0]])    # window {1, 2} must keep a cut: OPT_dyn = 2 >= 1
    1.0
    >>> cut_lagrangian_bound(inst, np.zeros((1, 4)), switching=[[9, 9, 9, 9]])  # scaled to m / 4 = 1/2 each
    0.5
    >>> cut_lagrangian_bound(inst, [[0, 5, 0, 0]], switching=[[0, 0, 2, 0]])  # cutting edge 2 is charged m = 2
    2.0
    """
    n, alpha = int(instance.n), float(instance.alpha)
    cap = instance.k if capacity is None else capacity
    if not isinstance(cap, (int, np.integer)) or not 1 <= cap <= n - 1:
        given = "" if capacity is not None else " (k)"
        raise ValueError(f"capacity = {cap!r}{given}; expected an integer in 1..n-1 = 1..{n - 1} (with n or "
                         f"more one server may hold every process and no window row exists)")
    req = np.asarray(instance.requests, dtype=np.int64).ravel()
    first = np.flatnonzero(np.r_[True, req[1:] != req[:-1]]) if req.size else np.zeros(0, dtype=np.int64)
    edges, weights = req[first], np.diff(np.r_[first, req.size]).astype(float)
    lam = np.asarray(multipliers, dtype=float)
    if lam.shape != (edges.size, n):
        raise ValueError(f"multipliers has shape {lam.shape}; expected (T', n) = ({edges.size}, {n}): one row per "
                         f"compressed request, one column per window start")
    bad = np.argwhere(~np.isfinite(lam) | (lam < 0))
    if bad.size:
        s, j = bad[0].tolist()
        raise ValueError(f"multipliers[{s}, {j}] = {float(lam[s, j])!r}; expected a finite number >= 0 "
                         f"({bad.shape[0]} such entries)")
    cover = np.cumsum(np.concatenate([lam[:, n - cap + 1:], lam], axis=1), axis=1)  # prefix sums, wrapped
    mu = cover[:, cap - 1:] - np.concatenate([np.zeros((lam.shape[0], 1)), cover[:, :n]], axis=1)[:, :n]
    c = -mu
    c[np.arange(edges.size), edges] += weights
    if switching is None:
        sw = np.full(lam.shape, alpha / 2.0)
    else:
        sw = np.asarray(switching, dtype=float)
        if sw.shape != lam.shape:
            raise ValueError(f"switching has shape {sw.shape}; expected (T', n) = {lam.shape}, like multipliers")
        bad = np.argwhere(~np.isfinite(sw) | (sw < 0))
        if bad.size:
            s, e = bad[0].tolist()
            raise ValueError(f"switching[{s}, {e}] = {float(sw[s, e])!r}; expected a finite number >= 0 "
                             f"({bad.shape[0]} such entries)")
        m = 2 * alpha if instance.servers * cap <= n else alpha
        sw = sw / np.maximum(1.0, switching_excess(sw, alpha, m))[:, None]
    init = np.asarray(instance.initial, dtype=np.int64)
    cut0 = init != np.roll(init, -1)
    v0 = np.where(cut0, np.inf, 0.0)  # cheapest cost so far ending uncut / cut, per edge
    v1 = np.where(cut0, 0.0, np.inf)
    for row, h in zip(c, sw, strict=True):
        v0, v1 = np.minimum(v0, v1 + h), np.minimum(v1, v0 + h) + row
    return float(lam.sum() + np.minimum(v0, v1).sum())


def switching_excess(sw: np.ndarray, alpha: float, m: float) -> np.ndarray:
    """Per row, ``rho = max {w . d : alpha / 2 sum d <= 1, 0 <= d <= 1 / m}`` (fractional knapsack;
    ``inf`` where a positive weight meets ``alpha = 0``, nothing then being paid for a move).
    """
    if alpha <= 0:
        return np.where(sw.max(axis=1, initial=0.0) > 0, np.inf, 0.0)
    top = -np.sort(-sw, axis=1)  # descending
    budget = 2.0 / alpha  # sum d <= budget, each d <= 1 / m
    q = min(int(np.floor(budget * m + 1e-12)), sw.shape[1])
    rho = top[:, :q].sum(axis=1) / m
    if q < sw.shape[1]:
        rho += (budget - q / m) * top[:, q]
    return rho


def box_lp_dual_bound(cost: npt.ArrayLike, a, lower: npt.ArrayLike, multipliers: npt.ArrayLike) -> float:
    """A lower bound on ``min c x`` s.t. ``A x >= lower``, ``0 <= x <= 1``, from any row multipliers
    (weak duality; used to certify the move LP, :mod:`clusteropt.models.ring.move`).

    For ``lambda >= 0`` (negative entries, and those of rows with ``lower = -inf``, are set to 0)
    and every feasible ``x``: ``c x >= c x - lambda (A x - lower) = lambda . lower + (c - A^T
    lambda) x >= lambda . lower + sum_j min(0, (c - A^T lambda)_j)``, since each ``x_j`` lies in
    ``[0, 1]``.  So the returned value bounds the LP's optimum, and anything the LP relaxes, from
    below, however the multipliers were found: a solver's inaccurate or early duals can only make
    it weaker.  ``a`` is any matrix with ``a.T @ vector`` (scipy sparse or numpy).

    Examples
    --------
    ``min x0 + x1`` with ``x0 + x1 >= 1``: the dual 1 certifies 1, a poor dual 0.5 certifies 0.5.

    >>> box_lp_dual_bound([1, 1], np.array([[1.0, 1.0]]), [1.0], [1.0])
    1.0
    >>> box_lp_dual_bound([1, 1], np.array([[1.0, 1.0]]), [1.0], [0.5])
    0.5
    >>> box_lp_dual_bound([1, 1], np.array([[1.0, 1.0]]), [1.0], [3.0])   # overshoot: 3 - 2 - 2
    -1.0
    """
    c = np.asarray(cost, dtype=float)
    low = np.asarray(lower, dtype=float)
    lam = np.maximum(np.asarray(multipliers, dtype=float), 0.0)
    if lam.shape != low.shape:
        raise ValueError(f"multipliers: shape {lam.shape}; expected one per row, {low.shape}")
    lam[~np.isfinite(low)] = 0.0
    reduced = c - a.T @ lam
    return float(lam[np.isfinite(low)] @ low[np.isfinite(low)] + np.minimum(reduced, 0.0).sum())
