"""Independent checker for GADGET schedules (paper 000, Sec. IV, Eqs. (2)-(9)).

A schedule is one :class:`~clusteropt.decisions.gadget.SlotAllocation` per slot
``1 .. K`` (``K <= T``: a partial run is fine): ``workers[i, s] = y_is[t]`` and, per job, its
ring (servers in ring order, ``paths[k]`` the link indices from ``servers[k]`` to
``servers[(k + 1) % m]``).  The checker reads only the instance and these arrays; it never calls
scheduler code.  The utility ``sum_i mu_i(zeta_i z_i)`` of the DDLJS objective is recomputed
from the worker-slots ``z_i = sum_t sum_s y_is[t]`` with :meth:`GadgetInstance.utility_of`.

Constraint labels (``Violation.constraint``), in the order they are listed (each kind over all
slots, slot by slot):

================================  ===============================================================
``integrality``                   ``y_is[t]`` not a (finite) integer
``non-negativity``                ``y_is[t] < 0``
``(4) server capacity``           ``sum_i l_i^r y_is[t] > C_s^r`` (per slot, server, resource)
``(2) worker limit``              ``sum_s y_is[t] > N_i`` (per slot, job)
``(6) arrival``                   ``y_is[t] != 0`` for ``t < a_i``
``(7) ring of an unknown job``    a ring keyed by something that is not a job index
``(7) ring without workers``      a ring for a job with no worker in the slot
``(9) ring missing``              a job on two or more servers without a ring
``(7)-(9) ring servers``          the ring's server set is not the set with ``y_is[t] > 0``
``(9) ring repeats a server``     a server listed twice in one ring (two small cycles, not one)
``(7) ring structure``            ``len(paths) != len(servers)``
``(7) ring path: ...``            ``paths[k]`` is not a walk over existing links from
                                  ``servers[k]`` to ``servers[(k + 1) % m]``: ``unknown link``,
                                  ``wrong start``, ``not a walk``, ``wrong end``, ``empty``
``(8)/(19) link bandwidth``       ``sum_i b_i (times link e is on job i's ring paths) > e^{u,v}``
``(3) resource limit``            ``l_i^r sum_t sum_s y_is[t] > F_i^r`` (cumulative, per job, r)
================================  ===============================================================

Notes on the rules:

* (7)-(9): a job whose workers sit on one server needs no ring (Eq. (9) holds trivially); a
  ring of that one server with no path (``paths == ()``) or one empty path (``((),)``) is also
  accepted.  A job on ``m >= 2`` servers has exactly one ring visiting each of them once (the
  degree-two condition of Eq. (9) on ``S_i[t]``, one big cycle), and every ring edge is routed on
  a path of the substrate (``p in P_ss'`` of Eq. (7)).
* (8)/(19): bandwidth is checked per link, as the G-VNE constraint (19) does: a link carries
  ``b_i`` once for every time it appears on job i's ring paths, summed over jobs.  This implies
  Eq. (8) (the bottleneck ``B_min^p`` of every path).  Every in-range link index of every ring
  entry counts, including rings flagged for another reason.
* A schedule whose dense ``(T, I, S)`` workers would exceed :data:`BLOCK_BYTES` (a real trace:
  thousands of jobs, a thousand servers, thousands of slots) is checked block by block of slots,
  with (3) and the utility on the running totals: the same verdict, violations in the same order
  (``tests/verify/test_gadget.py`` checks it).
* Amounts are ``lhs - rhs`` (workers, resource units, Gbps), or 1 for a structural ring error;
  ``where`` names the slot (1-based), job, server or link (``link 3 (0 -> 4)``) and the numbers.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, SupportsFloat

import numpy as np

from clusteropt.decisions.gadget import PackedSlots
from clusteropt.verify.base import Check, Violation, violations_where

if TYPE_CHECKING:
    from clusteropt.decisions.gadget import GadgetSchedule, SlotAllocation
    from clusteropt.instances.gadget.instance import GadgetInstance

__all__ = ["GadgetCheck", "check_gadget_allocation", "check_gadget_schedule"]


@dataclasses.dataclass(frozen=True, eq=False)
class GadgetCheck(Check):
    """The verdict of :func:`check_gadget_schedule` / :func:`check_gadget_allocation`.

    Attributes
    ----------
    violations : tuple of Violation
        Every violation found (none when feasible), in the order of the module's table.
    value : float
        ``total_utility``.
    worker_slots : int array (I,)
        ``z_i = sum_t sum_s y_is[t]`` recounted from the workers (plus ``used`` for a single
        slot); float when some worker count is not an integer.
    utility : float array (I,)
        ``mu_i(zeta_i z_i)`` per job.
    server_load : float array (K, S, R)
        ``sum_i l_i^r y_is[t]`` for the K checked slots (``first_slot .. first_slot + K - 1``).
    link_load : float array (K, L)
        Reserved bandwidth per link and slot (the left side of (8)/(19)).
    first_slot : int
        The slot of ``server_load[0]`` / ``link_load[0]`` (1 for a schedule).

    Equality compares ``violations`` and ``value`` only (as :class:`Check` does).
    """

    worker_slots: np.ndarray | None = None
    utility: np.ndarray | None = None
    server_load: np.ndarray | None = None
    link_load: np.ndarray | None = None
    first_slot: int = 1

    @property
    def n_violations(self) -> int:
        """Number of violations."""
        return len(self.violations)

    @property
    def total_utility(self) -> float:
        """``sum_i mu_i(zeta_i z_i)``, the DDLJS objective (same as ``value``)."""
        return self.value


def _workers(inst: GadgetInstance, alloc, t: int) -> np.ndarray:
    """``alloc.workers`` as a float (I, S) array; ValueError on a wrong shape."""
    y = np.asarray(alloc.workers)
    want = (inst.n_jobs, inst.cluster.n_servers)
    if y.shape != want:
        raise ValueError(f"slot {t}: workers has shape {y.shape}; expected (I, S) = {want}")
    if y.dtype.kind not in "biuf":
        raise ValueError(f"slot {t}: workers has dtype {y.dtype}; expected integers")
    return y.astype(float)


def _fmt(x: SupportsFloat) -> str:
    """A number in a ``where`` text: integral values without ``.0``."""
    x = float(x)
    return str(int(x)) if np.isfinite(x) and x == round(x) and abs(x) < 2**53 else f"{x:.6g}"


def _check(inst: GadgetInstance, ys: np.ndarray, rings: list, first: int, used: np.ndarray,
           tol: float, *, limit: bool = True, jobs: np.ndarray | None = None) -> GadgetCheck:
    """Check slots ``first .. first + K - 1`` given workers ``ys`` (K, I, S) and per-slot rings;
    ``limit=False`` leaves out the cumulative (3), for a block of a longer schedule.  With
    ``jobs`` (ascending), ``ys`` holds only those jobs' rows (K, len(jobs), S): every other job
    has no worker and no ring in these slots (so nothing of it to flag).
    """
    cl = inst.cluster
    n_slots = ys.shape[0]
    res = cl.resources
    links = np.asarray(cl.links)
    out: list[Violation] = []
    rows = np.arange(inst.n_jobs) if jobs is None else np.asarray(jobs, dtype=np.int64)

    def slot_job_server(idx) -> str:
        return f"slot {first + idx[0]}, job {rows[idx[1]]}, server {idx[2]}"

    # -- workers: finite, integral, non-negative -----------------------------------------------
    finite = np.isfinite(ys)
    frac = np.where(finite, np.abs(ys - np.round(ys)), np.inf)
    out += violations_where("integrality", frac, lambda i: f"{slot_job_server(i)}: y = {_fmt(ys[i])}", tol=tol)
    ys = np.where(finite, ys, 0.0)
    out += violations_where("non-negativity", -ys, lambda i: f"{slot_job_server(i)}: y = {_fmt(ys[i])}", tol=tol)

    # -- (4) server capacity --------------------------------------------------------------------
    pw = np.asarray(inst.per_worker, dtype=float)[rows]
    cap = np.asarray(cl.capacity, dtype=float)
    load = np.einsum("ir,tis->tsr", pw, ys)
    out += violations_where("(4) server capacity", load - cap[None], lambda i: (
        f"slot {first + i[0]}, server {i[1]}, {res[i[2]]}: load {_fmt(load[i])} > capacity {_fmt(cap[i[1:]])}"),
        tol=tol)

    # -- (2) worker limit ------------------------------------------------------------------------
    per_job = ys.sum(axis=2)  # (K, I)
    nmax = np.asarray(inst.max_workers, dtype=float)[rows]
    out += violations_where("(2) worker limit", per_job - nmax[None], lambda i: (
        f"slot {first + i[0]}, job {rows[i[1]]}: {_fmt(per_job[i])} workers > N_i = {_fmt(nmax[i[1]])}"), tol=tol)

    # -- (6) arrival -----------------------------------------------------------------------------
    arrival = np.asarray(inst.arrival, dtype=np.int64)[rows]
    slots = first + np.arange(n_slots)
    early = (slots[:, None] < arrival[None, :])[:, :, None]
    out += violations_where("(6) arrival", np.where(early, np.abs(ys), 0.0), lambda i: (
        f"{slot_job_server(i)}: y = {_fmt(ys[i])} before arrival a_i = {arrival[i[1]]}"), tol=tol)

    # -- (7)-(9) rings, (8)/(19) link bandwidth ---------------------------------------------------
    bw = np.asarray(inst.bandwidth, dtype=float)
    n_links = cl.n_links
    link_load = np.zeros((n_slots, n_links))
    for k in range(n_slots):
        out += _check_rings(inst, ys[k], rings[k], first + k, link_load[k], links, bw, tol, rows)

    def link_text(e: int) -> str:
        return f"link {e} ({links[e, 0]} -> {links[e, 1]})"

    cap_link = np.asarray(cl.bandwidth, dtype=float)
    out += violations_where("(8)/(19) link bandwidth", link_load - cap_link[None], lambda i: (
        f"slot {first + i[0]}, {link_text(i[1])}: load {_fmt(link_load[i])} > bandwidth {_fmt(cap_link[i[1]])}"),
        tol=tol)

    # -- (3) resource limit, cumulative ------------------------------------------------------------
    every = np.zeros((n_slots, inst.n_jobs))
    every[:, rows] = per_job
    cum = used[None, :] + np.cumsum(every, axis=0)  # (K, I) worker-slots through each slot
    z = cum[-1] if n_slots else used.astype(float)
    if limit:
        out += _limit_violations(inst, z, _first_over(inst, cum, first, np.zeros(pw.shape, np.int64), tol), tol)
    ws = z.astype(np.int64) if np.array_equal(z, np.round(z)) else z
    util = np.asarray(inst.utility_of(z), dtype=float)
    return GadgetCheck(tuple(out), float(util.sum()), worker_slots=ws, utility=util, server_load=load,
                       link_load=link_load, first_slot=first)


def _first_over(inst: GadgetInstance, cum: np.ndarray, first: int, known: np.ndarray, tol: float) -> np.ndarray:
    """``known`` (I, R; 0 = not yet) with the first slot of ``first ..`` at which the cumulative
    worker-slots ``cum`` (K, I) put ``l_i^r z_i`` above ``F_i^r`` filled in where it was 0.
    """
    if not cum.shape[0]:
        return known
    pw = np.asarray(inst.per_worker, dtype=float)
    over_at = pw[None] * cum[:, :, None] - np.asarray(inst.limit, dtype=float)[None] > tol  # (K, I, R)
    hit = over_at.any(axis=0) & (known == 0)
    out = known.copy()
    out[hit] = first + np.argmax(over_at, axis=0)[hit]
    return out


def _limit_violations(inst: GadgetInstance, z: np.ndarray, first_over: np.ndarray, tol: float) -> list[Violation]:
    """(3) on the worker-slots ``z`` (I,), each named with the slot ``first_over`` gives."""
    pw = np.asarray(inst.per_worker, dtype=float)
    lim = np.asarray(inst.limit, dtype=float)
    res = inst.cluster.resources
    lhs = pw * z[:, None]

    def limit_text(i) -> str:
        job, r = i
        return (f"job {job}, {res[r]}: l_i^r z_i = {_fmt(pw[job, r])} * {_fmt(z[job])} = {_fmt(lhs[job, r])} "
                f"> F_i^r = {_fmt(lim[job, r])} (first exceeded at slot {first_over[job, r]})")

    return violations_where("(3) resource limit", lhs - lim, limit_text, tol=tol)


def _check_rings(inst: GadgetInstance, y: np.ndarray, rings, t: int, link_load: np.ndarray, links: np.ndarray,
                 bw: np.ndarray, tol: float, rows: np.ndarray) -> list[Violation]:
    """Ring checks (7)-(9) of one slot; adds every ring's bandwidth to ``link_load`` (L,).  Row r
    of ``y`` is job ``rows[r]`` (a job without a row has no worker); ``bw`` is per job.
    """
    out: list[Violation] = []
    n_jobs, n_links = inst.n_jobs, links.shape[0]
    rings = dict(rings or {})
    support: dict[int, list[int]] = {}
    for r, i in enumerate(rows.tolist()):
        support[i] = np.flatnonzero(y[r] > tol).tolist()
        if len(support[i]) >= 2 and rings.get(i) is None:
            out.append(Violation("(9) ring missing", f"slot {t}, job {i}: workers on servers {support[i]}, "
                                 "no ring", float(len(support[i]))))
    for key, ring in rings.items():
        if ring is None:
            continue
        if isinstance(key, bool) or not isinstance(key, int | np.integer) or not 0 <= key < n_jobs:
            out.append(Violation("(7) ring of an unknown job", f"slot {t}, ring key {key!r}; expected a job in "
                                 f"[0, {n_jobs})", 1.0))
            continue
        i = int(key)
        servers = [int(s) for s in ring.servers]
        paths = [[int(e) for e in p] for p in ring.paths]
        where = f"slot {t}, job {i}"
        for p in paths:  # the reservation counts whatever else is wrong with the ring
            for e in p:
                if 0 <= e < n_links:
                    link_load[e] += bw[i]
        if not support.get(i):
            out.append(Violation("(7) ring without workers", f"{where}: ring on servers {servers}, no worker",
                                 1.0))
            continue
        have, want = set(servers), set(support[i])
        if have != want:
            missing, extra = sorted(want - have), sorted(have - want)
            out.append(Violation("(7)-(9) ring servers", f"{where}: ring on servers {servers}, workers on "
                                 f"servers {support[i]} (missing {missing}, extra {extra})",
                                 float(len(missing) + len(extra))))
        if len(have) != len(servers):
            twice = sorted(s for s in have if servers.count(s) > 1)
            out.append(Violation("(9) ring repeats a server", f"{where}: ring {servers} lists servers {twice} "
                                 "more than once", float(len(servers) - len(have))))
        m = len(servers)
        if m == 1 and not paths:
            continue  # a one-server ring without paths: the job talks inside the server
        if len(paths) != m:
            out.append(Violation("(7) ring structure", f"{where}: {m} servers but {len(paths)} paths",
                                 float(abs(len(paths) - m))))
        for k, p in enumerate(paths[:m]):
            out += _check_path(p, servers[k], servers[(k + 1) % m], links, f"{where}, ring edge {k} "
                               f"({servers[k]} -> {servers[(k + 1) % m]})")
    return out


def _check_path(p: list[int], start: int, end: int, links: np.ndarray, where: str) -> list[Violation]:
    """At most one violation: the first thing wrong with walk ``p`` from ``start`` to ``end``."""
    n_links = links.shape[0]
    bad = [e for e in p if not 0 <= e < n_links]
    if bad:
        return [Violation("(7) ring path: unknown link", f"{where}: link {bad[0]} not in [0, {n_links})", 1.0)]
    if not p:
        if start != end:
            return [Violation("(7) ring path: empty", f"{where}: no link between distinct servers", 1.0)]
        return []
    if links[p[0], 0] != start:
        return [Violation("(7) ring path: wrong start", f"{where}: first link {p[0]} ({links[p[0], 0]} -> "
                          f"{links[p[0], 1]}) does not leave server {start}", 1.0)]
    for a, b in itertools.pairwise(p):
        if links[a, 1] != links[b, 0]:
            return [Violation("(7) ring path: not a walk", f"{where}: link {a} ({links[a, 0]} -> {links[a, 1]}) "
                              f"then link {b} ({links[b, 0]} -> {links[b, 1]})", 1.0)]
    if links[p[-1], 1] != end:
        return [Violation("(7) ring path: wrong end", f"{where}: ends at node {links[p[-1], 1]}, not server {end}",
                          1.0)]
    return []


def check_gadget_allocation(inst: GadgetInstance, alloc: SlotAllocation, t: int, *, used=None,
                            tol: float = 1e-9) -> GadgetCheck:
    """Check one slot's decision against Eqs. (2)-(9) and recompute the utility so far.

    Parameters
    ----------
    inst : GadgetInstance
    alloc : SlotAllocation
        ``workers`` (I, S) and ``rings`` (job -> Ring) of slot ``t``.
    t : int
        The slot, ``1 .. T``.
    used : array (I,), optional
        Worker-slots each job got in slots before ``t`` (default none): Eq. (3) is checked on
        ``used + sum_s y_is[t]``, and ``worker_slots`` / ``utility`` are of that sum.
    tol : float, default 1e-9
        Absolute slack on every inequality.

    Returns
    -------
    GadgetCheck
        ``violations`` (``ok``, ``n_violations``), ``worker_slots``, ``utility``,
        ``total_utility``, ``server_load`` (1, S, R) and ``link_load`` (1, L) with
        ``first_slot = t``.

    Raises
    ------
    ValueError
        ``workers`` not of shape (I, S), ``t`` outside ``1 .. T`` or ``used`` not of shape (I,).

    Examples
    --------
    >>> from clusteropt.decisions.gadget import Ring, SlotAllocation
    >>> from clusteropt.instances.gadget.instance import Cluster, GadgetInstance
    >>> c = Cluster([[4], [2]], links=[[0, 2], [2, 0], [1, 2], [2, 1]], bandwidth=[10, 10, 10, 10],
    ...             n_switches=1)
    >>> inst = GadgetInstance(c, horizon=2, arrival=[1], max_workers=[4], per_worker=[[1]], limit=[[5]],
    ...                       bandwidth=[4.0], zeta=[1.0], utility="sqrt", utility_params=[[1.0, 0, 0]])
    >>> ring = Ring((0, 1), ((0, 3), (2, 1)))  # 0 -> switch 2 -> 1 and back
    >>> chk = check_gadget_allocation(inst, SlotAllocation(np.array([[2, 2]]), {0: ring}), 1, used=[0])
    >>> chk.ok, chk.worker_slots.tolist(), chk.total_utility
    (True, [4], 2.0)
    >>> for v in check_gadget_allocation(inst, SlotAllocation(np.array([[2, 3]]), {}), 2, used=[4]).violations:
    ...     print(v)
    (4) server capacity violated at slot 2, server 1, gpu: load 3 > capacity 2 by 1
    (2) worker limit violated at slot 2, job 0: 5 workers > N_i = 4 by 1
    (9) ring missing violated at slot 2, job 0: workers on servers [0, 1], no ring by 2
    (3) resource limit violated at job 0, gpu: l_i^r z_i = 1 * 9 = 9 > F_i^r = 5 (first exceeded at slot 2) by 4
    """
    if isinstance(t, bool) or not isinstance(t, int | np.integer) or not 1 <= t <= inst.horizon:
        raise ValueError(f"t = {t!r}; expected a slot in 1 .. T = {inst.horizon}")
    y = _workers(inst, alloc, int(t))
    u = np.zeros(inst.n_jobs) if used is None else np.asarray(used, dtype=float)
    if u.shape != (inst.n_jobs,):
        raise ValueError(f"used has shape {u.shape}; expected (I,) = ({inst.n_jobs},)")
    return _check(inst, y[None], [getattr(alloc, "rings", None)], int(t), u, tol)


def check_gadget_schedule(inst: GadgetInstance, schedule: GadgetSchedule | Iterable[SlotAllocation], *,
                          tol: float = 1e-9) -> GadgetCheck:
    """Check every slot of a schedule against Eqs. (2)-(9) and recompute its total utility.

    Parameters
    ----------
    inst : GadgetInstance
    schedule : GadgetSchedule or sequence of SlotAllocation
        ``slots[t - 1]`` is slot t; at most ``T`` slots (fewer: a partial run, checked as far as
        it goes).
    tol : float, default 1e-9
        Absolute slack on every inequality.

    Returns
    -------
    GadgetCheck
        ``violations`` (``ok``, ``n_violations``), ``worker_slots`` ``z_i``, ``utility``
        ``mu_i(zeta_i z_i)``, ``total_utility`` (= ``value``), ``server_load`` (K, S, R) and
        ``link_load`` (K, L) for the K slots.

    Raises
    ------
    ValueError
        More than ``T`` slots, or a slot's ``workers`` not of shape (I, S).

    Examples
    --------
    >>> from clusteropt.decisions.gadget import GadgetSchedule, Ring, SlotAllocation
    >>> from clusteropt.instances.gadget.instance import Cluster, GadgetInstance
    >>> c = Cluster([[4], [2]], links=[[0, 2], [2, 0], [1, 2], [2, 1]], bandwidth=[10, 10, 10, 10],
    ...             n_switches=1)
    >>> inst = GadgetInstance(c, horizon=3, arrival=[1, 2], max_workers=[3, 2], per_worker=[[1], [1]],
    ...                       limit=[[5], [4]], bandwidth=[4.0, 7.0], zeta=[1.0, 2.0], utility="sqrt",
    ...                       utility_params=[[1.0, 0, 0], [3.0, 0, 0]])
    >>> ring = Ring((0, 1), ((0, 3), (2, 1)))
    >>> sched = GadgetSchedule([SlotAllocation(np.array([[2, 1], [0, 0]]), {0: ring}),
    ...                         SlotAllocation(np.array([[2, 0], [1, 1]]), {1: ring})])
    >>> chk = check_gadget_schedule(inst, sched)
    >>> chk.ok, chk.worker_slots.tolist(), chk.total_utility   # sqrt(5) + 3 sqrt(2 * 2)
    (True, [5, 2], 8.23606797749979)
    >>> chk.link_load.tolist()
    [[4.0, 4.0, 4.0, 4.0], [7.0, 7.0, 7.0, 7.0]]
    >>> sched.slots[1].rings[0] = ring  # job 0 sits on server 0 only in slot 2
    >>> [str(v) for v in check_gadget_schedule(inst, sched).violations]  # doctest: +NORMALIZE_WHITESPACE
    ['(7)-(9) ring servers violated at slot 2, job 0: ring on servers [0, 1], workers on servers [0]
      (missing [], extra [1]) by 1',
     '(8)/(19) link bandwidth violated at slot 2, link 0 (0 -> 2): load 11 > bandwidth 10 by 1',
     '(8)/(19) link bandwidth violated at slot 2, link 1 (2 -> 0): load 11 > bandwidth 10 by 1',
     '(8)/(19) link bandwidth violated at slot 2, link 2 (1 -> 2): load 11 > bandwidth 10 by 1',
     '(8)/(19) link bandwidth violated at slot 2, link 3 (2 -> 1): load 11 > bandwidth 10 by 1']
    """
    slots = schedule.slots if hasattr(schedule, "slots") else schedule
    if not isinstance(slots, Sequence):
        slots = list(slots)
    if len(slots) > inst.horizon:
        raise ValueError(f"schedule has {len(slots)} slots; expected at most T = {inst.horizon}")
    n_jobs, n_srv = inst.n_jobs, inst.cluster.n_servers
    block = max(1, BLOCK_BYTES // (8 * max(1, n_jobs * n_srv)))
    if len(slots) <= block:
        return _check(inst, _stack(inst, slots, 1, n_jobs, n_srv), _rings(slots), 1, np.zeros(n_jobs), tol)
    # a long schedule on a large instance: block by block, (3) and the utility on the totals
    parts: list[GadgetCheck] = []
    used = np.zeros(n_jobs)
    first_over = np.zeros(np.shape(inst.per_worker), dtype=np.int64)
    for start in range(0, len(slots), block):
        ys, rings, jobs = _block(inst, slots, start, min(start + block, len(slots)))
        part = _check(inst, ys, rings, start + 1, used, tol, limit=False, jobs=jobs)
        parts.append(part)
        every = np.zeros((ys.shape[0], n_jobs))
        every[:, jobs] = ys.sum(axis=2)
        cum = used[None, :] + np.cumsum(every, axis=0)
        first_over = _first_over(inst, cum, start + 1, first_over, tol)
        used = cum[-1]
    found = [v for part in parts for v in part.violations] + _limit_violations(inst, used, first_over, tol)
    found.sort(key=_table_rank)  # stable: each kind over all slots, slot by slot, as in one block
    ws = used.astype(np.int64) if np.array_equal(used, np.round(used)) else used
    util = np.asarray(inst.utility_of(used), dtype=float)
    return GadgetCheck(tuple(found), float(util.sum()), worker_slots=ws, utility=util,
                       server_load=np.concatenate([p.server_load for p in parts]),
                       link_load=np.concatenate([p.link_load for p in parts]), first_slot=1)


#: Largest dense ``(K, I, S)`` block of workers :func:`check_gadget_schedule` builds at once (bytes).
BLOCK_BYTES = 2**28

#: :func:`check_gadget_schedule`'s violation kinds in the module table's order (ring checks: one kind,
#: slot by slot, as :func:`_check_rings` lists them).
_TABLE: tuple[tuple[str, ...], ...] = (("integrality",), ("non-negativity",), ("(4)",), ("(2)",), ("(6)",),
                                        ("(7)", "(9)"), ("(8)/(19)",), ("(3)",))


def _table_rank(v: Violation) -> int:
    for k, prefix in enumerate(_TABLE):
        if v.constraint.startswith(prefix):
            return k
    return len(_TABLE)


def _stack(inst: GadgetInstance, slots, first: int, n_jobs: int, n_srv: int) -> np.ndarray:
    if not len(slots):
        return np.zeros((0, n_jobs, n_srv))
    return np.stack([_workers(inst, a, t) for t, a in enumerate(slots, start=first)])


def _block(inst: GadgetInstance, slots, start: int, stop: int) -> tuple[np.ndarray, list, np.ndarray]:
    """Slots ``start .. stop - 1`` (0-based) as the rows of the jobs that have a nonzero worker
    entry or a ring in one of them: ``(ys (K, J, S), rings, jobs)``.  Read from the stored entries
    of :class:`PackedSlots`, else from each slot's dense ``workers``.
    """
    n_srv = inst.cluster.n_servers
    packed = isinstance(slots, PackedSlots)
    if packed and slots.shape != (inst.n_jobs, n_srv):
        raise ValueError(f"packed slots of shape {slots.shape}; expected (I, S) = {(inst.n_jobs, n_srv)}")
    dense: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # per slot: jobs, servers, values
    for k in range(start, stop):
        if packed:
            i, srv, n = slots.entries(k)
            dense.append((i, srv, n.astype(float)))
        else:
            y = _workers(inst, slots[k], k + 1)
            i, srv = np.nonzero(y)  # NaN counts as nonzero
            dense.append((i, srv, y[i, srv]))
    rings = _valid_rings([slots.rings(k) for k in range(start, stop)] if packed
                         else [getattr(slots[k], "rings", None) for k in range(start, stop)])
    keys = {int(key) for r in rings if r for key in r
            if isinstance(key, int | np.integer) and not isinstance(key, bool) and 0 <= key < inst.n_jobs}
    jobs = np.union1d(np.concatenate([d[0] for d in dense] + [np.zeros(0, np.int64)]),
                      np.fromiter(keys, dtype=np.int64, count=len(keys))).astype(np.int64)
    row = np.full(inst.n_jobs, -1, dtype=np.int64)
    row[jobs] = np.arange(jobs.size)
    ys = np.zeros((stop - start, jobs.size, n_srv))
    for k, (i, srv, n) in enumerate(dense):
        ys[k, row[i], srv] = n
    return ys, rings, jobs


def _rings(slots) -> list:
    return _valid_rings([getattr(a, "rings", None) for a in slots])


def _valid_rings(rings: list) -> list:
    if any(r is not None and not isinstance(r, Mapping) for r in rings):
        raise ValueError("every slot's rings must be a mapping job -> Ring")
    return rings
