"""Independent checker for coflow schedules (paper 001) and for coflow orderings.

A schedule (:class:`clusteropt.decisions.coflow.CoflowSchedule`) is a list of blocks
``(start, length, flows)``: each flow ``(coflow, input, output)`` of block b moves one unit in each
slot ``start[b] .. start[b] + length[b] - 1`` (1-based).  :func:`check_coflow_schedule` reads only
the schedule's arrays and the instance; it never calls the code that made the schedule.

Constraint labels (``Violation.constraint``), in the order they are checked and listed:

=================================  ==============================================================
``structure``                      arrays not 1-D integers, inconsistent shapes, bad ``ptr`` (fatal)
``start >= 1``, ``length >= 1``    a block starting before slot 1, or of length < 1
``coflow index``                   a flow's coflow index outside ``[0, n)``
``input port``, ``output port``    a flow's port outside ``[0, n_inputs)`` / ``[0, n_outputs)``
``matching: input`` / ``output``   a port used twice within one block
``port capacity: input`` / ...     a port used in the same slot by two different blocks
``release``                        a flow of coflow j in a slot ``<= r_j``
``demand: under-served`` / ...     served units of a (coflow, input, output) differ from ``d^j_{io}``
``demand: not a flow``             a served (coflow, input, output) that has no demand
=================================  ==============================================================
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from clusteropt.verify.base import Check, Violation

if TYPE_CHECKING:
    from clusteropt.decisions.coflow import CoflowSchedule
    from clusteropt.instances.coflow.instance import CoflowInstance

__all__ = ["CoflowCheck", "NotListed", "check_coflow_schedule", "check_order"]


@dataclass(frozen=True)
class NotListed(Violation):
    """The last entry of a capped violation list: how many more violations were found.

    ``constraint`` is ``"not listed"``, ``where`` names the cap, ``amount`` is the number of
    violations left out.

    >>> str(NotListed("not listed", "max_violations=20", 7.0))
    '... and 7 more violation(s) not listed (max_violations=20)'
    """

    def __str__(self) -> str:
        return f"... and {int(self.amount)} more violation(s) not listed ({self.where})"


@dataclass(frozen=True, eq=False)
class CoflowCheck(Check):
    """The verdict of :func:`check_coflow_schedule`.

    Attributes
    ----------
    violations : tuple of Violation
        At most ``max_violations`` violations, then, when more were found, one :class:`NotListed`
        entry saying how many were left out (so ``feasible`` stays ``not violations``).
    value : float
        Total weighted completion time ``sum_j w_j C_j`` (``nan`` when the structure is too
        broken to read the blocks).
    completion : int array (n,) or None
        ``C_j``: last busy slot of coflow j, ``max(start + length - 1)`` over the flows of j in the
        schedule; a coflow with no flow in the schedule completes at its release ``r_j``.  Flows
        flagged by a per-entry structure check (bad start / length / index / port) are left out.
        None when the structure is fatally broken.
    makespan : int or None
        ``max_j C_j`` (0 without coflows); None with ``completion``.
    n_violations : int
        Number of violations found, listed or not (the :class:`NotListed` entry not counted).

    Equality compares ``violations`` and ``value`` only (as :class:`Check` does).
    """

    completion: np.ndarray | None = None
    makespan: int | None = None
    n_violations: int = 0

    def raise_if_infeasible(self) -> None:
        """Raise ``AssertionError`` with the total count and the first violations."""
        if self.violations:
            listed = [v for v in self.violations if not isinstance(v, NotListed)]
            shown = "; ".join(str(v) for v in listed[:5])
            rest = self.n_violations - min(5, len(listed))
            more = f" (and {rest} more)" if rest > 0 else ""
            raise AssertionError(f"{self.n_violations} violation(s): {shown}{more}")


class _Collector:
    """Counts every violation, keeps the first ``cap``; entries are made lazily (vectorized checks)."""

    def __init__(self, cap: int) -> None:
        if isinstance(cap, bool) or not isinstance(cap, int | np.integer) or cap < 0:
            raise ValueError(f"max_violations = {cap!r}; expected an integer >= 0")
        self.cap = int(cap)
        self.listed: list[Violation] = []
        self.count = 0

    def add(self, constraint: str, where: str, amount: float) -> None:
        self.count += 1
        if len(self.listed) < self.cap:
            self.listed.append(Violation(constraint, where, float(amount)))

    def add_many(self, constraint: str, positions: np.ndarray, describe) -> None:
        """Count ``positions.size`` violations; ``describe(p) -> (where, amount)`` for the listed ones."""
        room = self.cap - len(self.listed)
        for p in positions[: max(room, 0)].tolist():
            where, amount = describe(p)
            self.listed.append(Violation(constraint, where, float(amount)))
        self.count += int(positions.size)

    def violations(self) -> tuple[Violation, ...]:
        extra = self.count - len(self.listed)
        if extra > 0:
            return (*self.listed, NotListed("not listed", f"max_violations={self.cap}", float(extra)))
        return tuple(self.listed)


def _int_array(name: str, value, out: _Collector) -> np.ndarray | None:
    """``value`` as a 1-D int64 array, or None after recording a ``structure`` violation."""
    arr = np.asarray(value)
    if arr.ndim != 1:
        out.add("structure", f"{name}.ndim = {arr.ndim}; expected 1", abs(arr.ndim - 1))
        return None
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64, copy=False)
    if arr.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(arr) | (arr != np.round(arr)))
        if not bad.size:
            return arr.astype(np.int64)
        k = int(bad[0])
        out.add("structure", f"{name}[{k}] = {arr[k]!r}; expected an integer", float("inf"))
        return None
    out.add("structure", f"{name}.dtype = {arr.dtype}; expected integers", float("inf"))
    return None


def _slots(s: int, e: int) -> str:
    """Slot range text of ``[s, e)``."""
    return f"slot {s}" if e - s == 1 else f"slots {s}..{e - 1}"


def check_coflow_schedule(
    instance: CoflowInstance, schedule: CoflowSchedule, *, max_violations: int = 20
) -> CoflowCheck:
    """Check a block schedule against a coflow instance and recompute its weighted completion time.

    Checks, reading only ``schedule.start, length, ptr, coflow, input, output`` and the instance:

    1. structure: 1-D integer arrays; ``start``, ``length`` of one shape (B,); ``ptr`` of shape
       (B + 1,), from 0 to K, non-decreasing; ``coflow``, ``input``, ``output`` of shape (K,)
       (a failure here is fatal: nothing else is checked).  Then per entry: ``start >= 1``,
       ``length >= 1``, coflow indices in ``[0, n)``, ports in range.  Flows of a block failing
       these, and flows with a bad index or port, are left out of checks 2-5 and of ``completion``;
    2. each block's flows form a matching (no input, no output twice in one block);
    3. no port is used by two blocks in one slot: per port, the intervals
       ``[start, start + length)`` of the blocks using it are pairwise disjoint;
    4. release: a flow of coflow j starts at slot ``>= r_j + 1``;
    5. demand: for every flow of the instance, the sum of the lengths of the blocks serving
       ``(coflow, input, output)`` equals its units; a served triple without demand is a violation.

    Parameters
    ----------
    instance : CoflowInstance
    schedule : CoflowSchedule
        Or any object with the six arrays (coflow *indices*, not ids).
    max_violations : int, default 20
        At most this many violations are listed (in the order above); when more were found one
        :class:`NotListed` entry follows with their number.  All are counted in ``n_violations``.

    Returns
    -------
    CoflowCheck
        ``violations``, ``value`` = ``sum_j w_j C_j``, ``completion`` ``C_j``, ``makespan``,
        ``n_violations``.  ``where`` texts name coflows by id (``instance.ids``), blocks by index
        and slots 1-based inclusive; ``amount`` is in slots (or units for demand).

    Notes
    -----
    Fully vectorized: one stable sort per port side for checks 2-3 (a running maximum of interval
    ends per port), a sorted look-up for 5.  ``python -m benchmarks.coflow_scale`` records its time
    on schedules of the Facebook trace's size (``verify s`` in ``benchmarks/results/coflow_scale.md``).

    References
    ----------
    Paper 001 (Ahmadi, Khuller, Purohit, Yang, "On Scheduling Coflows"): each slot's transfers
    form a matching of the big switch; ``C_j`` is coflow j's last busy slot.

    Examples
    --------
    >>> from clusteropt.instances.coflow.instance import CoflowInstance
    >>> from clusteropt.decisions.coflow import ScheduleBuilder
    >>> inst = CoflowInstance(2, 2, coflow=[0, 0, 1], input=[0, 1, 0], output=[0, 1, 1],
    ...                       units=[3, 1, 2], weight=[1.0, 2.0], release=[0, 0], ids=[10, 20])
    >>> b = ScheduleBuilder()
    >>> b.add(1, 2, [1], [0], [1])            # slots 1..2: coflow 20, input 0 -> output 1
    >>> b.add(3, 1, [0, 0], [0, 1], [0, 1])   # slot 3: coflow 10, both of its flows
    >>> b.add(4, 2, [0], [0], [0])            # slots 4..5: coflow 10, input 0 -> output 0
    >>> check = check_coflow_schedule(inst, b.build())
    >>> check.feasible, check.completion.tolist(), check.value, check.makespan
    (True, [5, 2], 9.0, 5)
    >>> b = ScheduleBuilder()
    >>> b.add(1, 3, [0, 0], [0, 1], [0, 1])   # coflow 10 takes slots 1..3 (flow (1, 1) too long)
    >>> b.add(3, 2, [1], [0], [1])            # coflow 20 at slots 3..4 clashes with it
    >>> for v in check_coflow_schedule(inst, b.build()).violations:
    ...     print(v)
    port capacity: input violated at input 0, slot 3: block 1 (coflow id 20, slots 3..4) and block 0 (coflow id 10, slots 1..3) by 1
    port capacity: output violated at output 1, slot 3: block 1 (coflow id 20, slots 3..4) and block 0 (coflow id 10, slots 1..3) by 1
    demand: over-served violated at coflow id 10, input 1, output 1: served 3, demanded 1 by 2
    """  # noqa: E501
    out = _Collector(max_violations)
    n, n_in, n_out = instance.n_coflows, instance.n_inputs, instance.n_outputs
    ids, release = np.asarray(instance.ids), np.asarray(instance.release, dtype=np.int64)

    # -- 1. structure ---------------------------------------------------------------------------
    read = {k: _int_array(k, getattr(schedule, k), out) for k in ("start", "length", "ptr", "coflow", "input",
                                                                   "output")}
    arrs = {k: a for k, a in read.items() if a is not None}
    if len(arrs) == len(read):
        start, length, ptr = arrs["start"], arrs["length"], arrs["ptr"]
        c, inp, outp = arrs["coflow"], arrs["input"], arrs["output"]
        n_blocks, n_bf = start.size, c.size
        if length.size != n_blocks:
            out.add("structure", f"length.shape = ({length.size},); expected ({n_blocks},) as start",
                    abs(length.size - n_blocks))
        if ptr.size != n_blocks + 1:
            out.add("structure", f"ptr.shape = ({ptr.size},); expected ({n_blocks + 1},) (blocks + 1)",
                    abs(ptr.size - n_blocks - 1))
        for name, a in (("input", inp), ("output", outp)):
            if a.size != n_bf:
                out.add("structure", f"{name}.shape = ({a.size},); expected ({n_bf},) as coflow",
                        abs(a.size - n_bf))
        if ptr.size:
            if ptr[0] != 0:
                out.add("structure", f"ptr[0] = {ptr[0]}; expected 0", abs(int(ptr[0])))
            if ptr[-1] != n_bf:
                out.add("structure", f"ptr[-1] = {ptr[-1]}; expected {n_bf} (the number of block-flows)",
                        abs(int(ptr[-1]) - n_bf))
            down = np.flatnonzero(np.diff(ptr) < 0)
            out.add_many("structure", down, lambda k: (
                f"ptr[{k + 1}] = {ptr[k + 1]} < ptr[{k}] = {ptr[k]}; expected non-decreasing",
                ptr[k] - ptr[k + 1]))
    if out.count:
        return CoflowCheck(out.violations(), float("nan"), None, None, out.count)

    # per-entry checks; bad entries are left out of what follows
    blk = np.repeat(np.arange(n_blocks, dtype=np.int64), np.diff(ptr))
    out.add_many("start >= 1", np.flatnonzero(start < 1),
                 lambda b: (f"block {b}: start = {start[b]}", 1 - start[b]))
    out.add_many("length >= 1", np.flatnonzero(length < 1),
                 lambda b: (f"block {b}: length = {length[b]}", 1 - length[b]))

    def outside(label: str, name: str, a: np.ndarray, hi: int) -> np.ndarray:
        bad = (a < 0) | (a >= hi)
        out.add_many(label, np.flatnonzero(bad), lambda k: (
            f"{name}[{k}] = {a[k]} (block {blk[k]}); expected in [0, {hi})",
            -a[k] if a[k] < 0 else a[k] - hi + 1))
        return bad

    bad = outside("coflow index", "coflow", c, n)
    bad |= outside("input port", "input", inp, n_in)
    bad |= outside("output port", "output", outp, n_out)
    good_block = (start >= 1) & (length >= 1)
    keep = np.flatnonzero(good_block[blk] & ~bad)
    if keep.size < n_bf:
        c, inp, outp, blk = c[keep], inp[keep], outp[keep], blk[keep]
    s = start[blk]
    e = s + length[blk]  # exclusive end

    def flow_text(k: int) -> str:
        return f"block {blk[k]} (coflow id {ids[c[k]]}, {_slots(s[k], e[k])})"

    # -- 2. matching within a block, 3. one unit per port per slot across blocks ----------------
    for side, port in (("input", inp), ("output", outp)):
        order = _port_order(port, s)
        ps, ss, es, bs = port[order], s[order], e[order], blk[order]
        same_port = ps[1:] == ps[:-1]
        # flows are stored block by block and the sort is stable, so a block's repeats are adjacent
        twice = same_port & (bs[1:] == bs[:-1])
        pos = np.flatnonzero(twice) + 1
        out.add_many(f"matching: {side}", pos, lambda p, ps=ps, order=order, es=es, ss=ss, side=side: (
            f"block {blk[order[p]]} ({_slots(ss[p], es[p])}), {side} {ps[p]}: coflow ids "
            f"{ids[c[order[p - 1]]]} and {ids[c[order[p]]]}", es[p] - ss[p]))
        first = np.ones(ps.size, dtype=bool)
        first[1:] = ~twice
        first = np.flatnonzero(first)
        order, ps, ss, es = order[first], ps[first], ss[first], es[first]
        prev_end, prev_at = _previous_max_end(ps, es)
        clash = np.flatnonzero(ss < prev_end)
        out.add_many(f"port capacity: {side}", clash, lambda p, ps=ps, ss=ss, es=es, prev_end=prev_end,
                     prev_at=prev_at, order=order, side=side: (
            f"{side} {ps[p]}, {_slots(ss[p], min(es[p], prev_end[p]))}: {flow_text(order[p])} and "
            f"{flow_text(order[prev_at[p]])}", min(es[p], prev_end[p]) - ss[p]))

    # -- 4. release ------------------------------------------------------------------------------
    r = release[c]
    early = np.flatnonzero(s < r + 1)
    out.add_many("release", early, lambda k: (
        f"{flow_text(k)}, input {inp[k]}, output {outp[k]}: release {r[k]}, first allowed slot {r[k] + 1}",
        r[k] + 1 - s[k]))

    # -- 5. demand ---------------------------------------------------------------------------------
    key_inst = (np.asarray(instance.coflow, dtype=np.int64) * n_in + instance.input) * n_out + instance.output
    units = np.asarray(instance.units, dtype=np.int64)
    inst_order = np.argsort(key_inst, kind="stable")  # already sorted for a validated instance
    key_sorted = key_inst[inst_order]
    key = (c * n_in + inp) * n_out + outp
    where = np.searchsorted(key_sorted, key)
    found = where < key_sorted.size
    found[found] = key_sorted[where[found]] == key[found]
    served = np.zeros(key_sorted.size, dtype=np.int64)
    np.add.at(served, where[found], e[found] - s[found])
    served_by_flow = np.empty_like(served)
    served_by_flow[inst_order] = served

    def triple(k: int) -> str:
        return f"coflow id {ids[instance.coflow[k]]}, input {instance.input[k]}, output {instance.output[k]}"

    out.add_many("demand: under-served", np.flatnonzero(served_by_flow < units), lambda k: (
        f"{triple(k)}: served {served_by_flow[k]}, demanded {units[k]}", units[k] - served_by_flow[k]))
    out.add_many("demand: over-served", np.flatnonzero(served_by_flow > units), lambda k: (
        f"{triple(k)}: served {served_by_flow[k]}, demanded {units[k]}", served_by_flow[k] - units[k]))
    if not found.all():
        stray = np.flatnonzero(~found)
        keys, first, inverse = np.unique(key[stray], return_index=True, return_inverse=True)
        amount = np.bincount(inverse.ravel(), weights=(e - s)[stray], minlength=keys.size)
        out.add_many("demand: not a flow", np.arange(keys.size), lambda u: (
            f"coflow id {ids[c[stray[first[u]]]]}, input {inp[stray[first[u]]]}, output {outp[stray[first[u]]]}: "
            f"served {int(amount[u])}, demanded 0 (first in block {blk[stray[first[u]]]})", amount[u]))

    # -- completion and cost -------------------------------------------------------------------
    last = np.zeros(n, dtype=np.int64)
    np.maximum.at(last, c, e - 1)  # e - 1 >= start >= 1, so 0 means "no flow scheduled"
    completion = np.where(last > 0, last, release)
    value = float(np.asarray(instance.weight, dtype=float) @ completion)
    makespan = int(completion.max()) if n else 0
    return CoflowCheck(out.violations(), value, completion, makespan, out.count)


def _port_order(port: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Stable order by (port, start): ties keep the storage (block) order."""
    if not port.size:
        return np.zeros(0, dtype=np.int64)
    span = int(start.max()) + 1
    if (int(port.max()) + 1) * span < 2**62:
        return np.argsort(port * span + start, kind="stable")
    return np.lexsort((start, port))


def _previous_max_end(ps: np.ndarray, es: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For intervals sorted by (port, start): the largest end among the earlier intervals on the
    same port (0 when none) and the position of an interval attaining it.
    """
    m = ps.size
    if not m:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    group_start = np.concatenate([[True], ps[1:] != ps[:-1]])
    rank = np.cumsum(group_start) - 1  # dense port rank: offsets keep the running max per port
    big = int(es.max()) + 1
    pos = np.arange(m)
    if int(rank[-1]) * big < 2**62:
        shifted = es + rank * big
        run = np.maximum.accumulate(shifted)
        at = np.maximum.accumulate(np.where(shifted == run, pos, 0))
        run -= rank * big
    else:  # huge slot numbers: per port
        run, at = np.empty_like(es), np.empty_like(pos)
        for lo, hi in itertools.pairwise([*np.flatnonzero(group_start).tolist(), m]):
            run[lo:hi] = np.maximum.accumulate(es[lo:hi])
            at[lo:hi] = np.maximum.accumulate(np.where(es[lo:hi] == run[lo:hi], pos[lo:hi], 0))
    prev_end = np.zeros(m, dtype=np.int64)
    prev_at = np.zeros(m, dtype=np.int64)
    prev_end[1:], prev_at[1:] = run[:-1], at[:-1]
    prev_end[group_start] = 0
    return prev_end, prev_at


def check_order(order, n: int, *, max_violations: int = 20) -> Check:
    """Check that ``order`` is a permutation of ``0..n-1`` (a coflow / job ordering).

    Violations: ``structure`` (not a 1-D integer array; ``len(order) != n``), ``order index``
    (an entry outside ``[0, n)``), ``order duplicate`` (an index a second time, naming both
    positions), ``order missing`` (an index that does not occur).  Listing is capped as in
    :func:`check_coflow_schedule`.  ``value`` is ``nan`` (an ordering has no cost).

    Examples
    --------
    >>> check_order([2, 0, 1], 3).feasible
    True
    >>> [str(v) for v in check_order([2, 0, 2], 3).violations]
    ['order duplicate violated at index 2 at positions 0 and 2 by 1', 'order missing violated at index 1 by 1']
    """
    out = _Collector(max_violations)
    arr = _int_array("order", order, out)
    if arr is None:
        return Check(out.violations(), float("nan"))
    if arr.size != n:
        out.add("structure", f"len(order) = {arr.size}; expected {n}", abs(arr.size - n))
    out.add_many("order index", np.flatnonzero((arr < 0) | (arr >= n)), lambda k: (
        f"order[{k}] = {arr[k]}; expected in [0, {n})", -arr[k] if arr[k] < 0 else arr[k] - n + 1))
    pos = np.flatnonzero((arr >= 0) & (arr < n))
    vals = arr[pos]
    srt = np.argsort(vals, kind="stable")
    sv, sp = vals[srt], pos[srt]
    dup = np.flatnonzero(sv[1:] == sv[:-1]) + 1
    first = np.maximum.accumulate(np.where(np.concatenate([[True], sv[1:] != sv[:-1]]), np.arange(sv.size), 0))
    out.add_many("order duplicate", dup, lambda p: (f"index {sv[p]} at positions {sp[first[p]]} and {sp[p]}", 1))
    seen = np.zeros(max(n, 0), dtype=bool)
    seen[vals] = True
    out.add_many("order missing", np.flatnonzero(~seen), lambda k: (f"index {k}", 1))
    return Check(out.violations(), float("nan"))
