"""Independent checker for mlBroker decisions (paper 003, Sec. 3, problem (8), constraints (8a)-(8k)).

A decision is one :class:`~clusteropt.decisions.broker.BrokerDecision` per slot: ``y,
s, q, g, v, u1, u2, x`` (and optionally ``z``) over all jobs, zero for jobs not in ``I_t``.  The
checker reads only the instance's data and these arrays; it never calls policy, model or rounding
code, and recomputes the four costs of Sec. 3.2 itself:

* C1 = ``sum d^{rr'} q_i^{rr'}(t)`` (Eq. (1));
* C2 = ``sum_{r,k} min(a_k^r h, b_k^r h + e_k^r)`` with ``e = (a - b) l`` (Eqs. (2), (3), (7)),
  ``h = sum_i n_{i,k} y_i^r(t) + m_{i,k} s_i^r(t)`` from the decision's ``y`` and ``s``, **not**
  from its ``x`` or ``u`` (the decision's ``sum x`` is reported apart as ``x_cost``);
* C3 = ``sum c_i max(v_i^r(t) - v_i^r(t - 1), 0)`` (Eqs. (4)-(5), (8h)): a job pays ``c_i`` in
  every DC where ``v`` goes from 0 to 1; ``v(0) = 0`` before slot 1;
* C4 = ``sum d^{rr'} B_i g_i^{rr'}(t)`` (Eq. (6)).

Only jobs in ``I_t`` count; a schedule's ``v(t - 1)`` is the previous slot's ``v`` of the jobs
active then (0 for a job not active in ``t - 1``).

Constraint labels (``Violation.constraint``), in the order they are listed (each over all slots):

==============================  =================================================================
``(8k) finite``                 a NaN or infinite entry (then read as 0 below)
``(8k) integrality``            ``y, s, g, v, u1, u2, z`` not a whole number
``(8k) binary``                 ``s, v, u1, u2, z`` outside [0, 1]
``(8k) non-negativity``         ``y, g, q, x < 0``
``inactive job``                a non-zero entry of ``y, s, q, g, v, z`` for a job not in ``I_t``
``(8a) worker capacity``        ``sum_r q_i^{rr'} > P_i y_i^{r'}``
``(8b) data conservation``      ``sum_{r'} q_i^{rr'} != D_i^r(t)``
``(8c) first-tier price``       ``u1 = 0`` and ``x_k^r < a_k^r h_k^r``
``(8d) second-tier price``      ``u2 = 0`` and ``x_k^r < b_k^r h_k^r + e_k^r``
``(8e) one tier``               ``u1 + u2 != 1``
``(8f) one PS``                 ``sum_r s_i^r != 1`` for an active job
``(8g) deployment indicator``   ``y_i^r + s_i^r > 0`` with ``v_i^r = 0``
``(8h) deployment cost``        ``z_i^r < v_i^r(t) - v_i^r(t - 1)`` (only when ``z`` is given)
``(8i) connections from r``     ``sum_{r'} g_i^{rr'} != y_i^r``
``(8j) connections to the PS``  ``sum_r g_i^{rr'} < s_i^{r'} ceil(sum_r D_i^r(t) / P_i)``
==============================  =================================================================

Notes on the rules:

* (8c)-(8e), (8g) are checked in their logical form, i.e. with the big constants ``M`` and ``U``
  large enough (the paper defines them as such bounds): a relaxed segment (``u = 1``) and a
  deployed DC (``v = 1``) impose nothing, so the verdict does not depend on a choice of M or U.
  An entry counts as 0 or 1 by rounding (a fractional one is flagged by ``(8k) integrality``).
* ``ceil`` in (8j): a quotient within 1e-9 above a whole number is that number.
* Tolerance: an (in)equality with right side ``rhs`` is violated by more than ``tol * (1 + |rhs|)``
  (relative for large data volumes, absolute near 0).
* Amounts are ``lhs - rhs`` (or ``|lhs - rhs|`` for equalities; the distance to the allowed
  values for ``(8k)``; the sum of the absolute entries for ``inactive job``); ``where`` names
  the slot (1-based), job, DC(s) and resource, with the numbers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, SupportsFloat

import numpy as np

from clusteropt.verify.base import Check, Violation, violations_where

if TYPE_CHECKING:
    from clusteropt.decisions.broker import BrokerDecision, BrokerSchedule
    from clusteropt.instances.broker import BrokerInstance

__all__ = ["BrokerCheck", "check_broker_decision", "check_broker_schedule"]

_CEIL_SLACK = 1e-9
_JOB_FIELDS = ("y", "s", "q", "g", "v", "z")
_INTEGRAL = ("y", "s", "g", "v", "u1", "u2", "z")
_BINARY = ("s", "v", "u1", "u2", "z")
_NONNEG = ("y", "g", "q", "x")


@dataclasses.dataclass(frozen=True, eq=False)
class BrokerCheck(Check):
    """The verdict of :func:`check_broker_schedule` / :func:`check_broker_decision`.

    Attributes
    ----------
    violations : tuple of Violation
        Every violation found (none when feasible), in the order of the module's table.
    value : float
        ``total_cost``: C1 + C2 + C3 + C4 over the checked slots.
    c1, c2, c3, c4 : float array (S,)
        The four costs of each of the S checked slots (``first_slot .. first_slot + S - 1``).
    resource_amount : float array (S, R, K)
        ``h_k^r(t)``, the amounts C2 prices.
    x_cost : float array (S,)
        ``sum_{r,k} x_k^r(t)`` as the decision states it (``C_2^*``; >= ``c2`` when (8c)-(8e) hold).
    first_slot : int

    Equality compares ``violations`` and ``value`` only (as :class:`Check` does).
    """

    c1: np.ndarray | None = None
    c2: np.ndarray | None = None
    c3: np.ndarray | None = None
    c4: np.ndarray | None = None
    resource_amount: np.ndarray | None = None
    x_cost: np.ndarray | None = None
    first_slot: int = 1

    @property
    def n_violations(self) -> int:
        """Number of violations."""
        return len(self.violations)

    @property
    def total_cost(self) -> float:
        """C1 + C2 + C3 + C4 summed over the checked slots (same as ``value``)."""
        return self.value

    @property
    def slot_cost(self) -> np.ndarray:
        """C1 + C2 + C3 + C4 per checked slot, (S,)."""
        c1, c2, c3, c4 = self.c1, self.c2, self.c3, self.c4
        assert c1 is not None and c2 is not None and c3 is not None and c4 is not None  # the checker sets them
        return c1 + c2 + c3 + c4

    def cost_totals(self) -> dict[str, float]:
        """``{"C1": ..., "C2": ..., "C3": ..., "C4": ..., "total": ...}`` over the checked slots."""
        out = {name: float(np.sum(getattr(self, name.lower()))) for name in ("C1", "C2", "C3", "C4")}
        out["total"] = self.value
        return out

    def labels(self) -> list[str]:
        """The distinct violated constraint labels, in order of first appearance."""
        return list(dict.fromkeys(v.constraint for v in self.violations))


def _fmt(x: SupportsFloat) -> str:
    """A number in a ``where`` text: integral values without ``.0``."""
    x = float(x)
    return str(int(x)) if np.isfinite(x) and x == round(x) and abs(x) < 2**53 else f"{x:.6g}"


def _arrays(inst: BrokerInstance, d, t: int) -> dict[str, np.ndarray]:
    """The decision's fields as float arrays of the instance's shapes; ValueError otherwise."""
    sizes = {"I": inst.n_jobs, "R": inst.n_dcs, "K": inst.n_resources}
    axes = {"y": "IR", "s": "IR", "q": "IRR", "g": "IRR", "v": "IR", "u1": "RK", "u2": "RK", "x": "RK",
            "z": "IR"}
    out: dict[str, np.ndarray] = {}
    for name, ax in axes.items():
        raw = getattr(d, name, None)
        if raw is None:
            if name == "z":
                continue  # optional: left out
            raise ValueError(f"slot {t}: the decision has no {name!r}")
        arr = np.asarray(raw)
        want = tuple(sizes[a] for a in ax)
        if arr.shape != want:
            raise ValueError(f"slot {t}: {name} has shape {arr.shape}; expected ({', '.join(ax)}) = {want}")
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"slot {t}: {name} has dtype {arr.dtype}; expected numbers")
        out[name] = arr.astype(float)
    return out


def _viol(label: str, excess: np.ndarray, rhs, labels, tol: float) -> list[Violation]:
    """Violations where ``excess > tol * (1 + |rhs|)``."""
    excess = np.asarray(excess, dtype=float)
    bad = excess > tol * (1.0 + np.abs(np.broadcast_to(np.asarray(rhs, dtype=float), excess.shape)))
    return violations_where(label, np.where(bad, excess, 0.0), labels, tol=0.0)


def _check(inst: BrokerInstance, decisions: Sequence, first: int, prev_v: np.ndarray, prev_active: np.ndarray,
           tol: float) -> BrokerCheck:
    """Check slots ``first .. first + S - 1``; ``prev_v`` (I, R) is ``v(first - 1)``."""
    n_slots = len(decisions)
    n_jobs, n_dcs, n_res = inst.n_jobs, inst.n_dcs, inst.n_resources
    res = inst.resources
    per_slot = [_arrays(inst, d, first + k) for k, d in enumerate(decisions)]
    out: list[Violation] = []

    def stack(name: str) -> np.ndarray:
        shape = {"q": (n_jobs, n_dcs, n_dcs), "g": (n_jobs, n_dcs, n_dcs), "u1": (n_dcs, n_res),
                 "u2": (n_dcs, n_res), "x": (n_dcs, n_res)}.get(name, (n_jobs, n_dcs))
        return np.stack([a[name] for a in per_slot]) if n_slots else np.zeros((0, *shape))

    has_z = np.array(["z" in a for a in per_slot], dtype=bool)
    arr = {name: stack(name) for name in ("y", "s", "q", "g", "v", "u1", "u2", "x")}
    arr["z"] = np.stack([a["z"] if "z" in a else np.zeros((n_jobs, n_dcs)) for a in per_slot]) \
        if n_slots else np.zeros((0, n_jobs, n_dcs))

    def where(name: str, idx: tuple[int, ...]) -> str:
        t = first + idx[0]
        rest = idx[1:]
        if name in ("u1", "u2", "x"):
            text = f"slot {t}, DC {rest[0]}, {res[rest[1]]}"
        elif name in ("q", "g"):
            text = f"slot {t}, job {rest[0]}, DC {rest[1]} -> DC {rest[2]}"
        else:
            text = f"slot {t}, job {rest[0]}, DC {rest[1]}"
        return f"{text}: {name} = {_fmt(arr[name][idx])}"

    # -- (8k): finite, integral, binary, non-negative ---------------------------------------------
    for name in ("y", "s", "q", "g", "v", "u1", "u2", "x", "z"):
        a = arr[name]
        bad = ~np.isfinite(a)
        if name == "z":
            bad &= has_z[:, None, None]
        out += violations_where("(8k) finite", bad.astype(float), lambda i, n=name: where(n, i), tol=0.0)
        arr[name] = np.where(np.isfinite(a), a, 0.0)
    for name in _INTEGRAL:
        a = arr[name]
        frac = np.abs(a - np.round(a))
        out += violations_where("(8k) integrality", frac, lambda i, n=name: where(n, i), tol=tol)
    for name in _BINARY:
        a = arr[name]
        dist = np.maximum(a - 1.0, 0.0) + np.maximum(-a, 0.0)
        out += violations_where("(8k) binary", dist, lambda i, n=name: where(n, i), tol=tol)
    for name in _NONNEG:
        out += violations_where("(8k) non-negativity", -arr[name], lambda i, n=name: where(n, i), tol=tol)

    # -- inactive jobs ---------------------------------------------------------------------------------
    slots = first + np.arange(n_slots)
    arrival = np.asarray(inst.arrival, dtype=np.int64)
    last = np.asarray(inst.last_slot, dtype=np.int64)
    active = (slots[:, None] >= arrival[None, :]) & (slots[:, None] <= last[None, :])  # (S, I)
    mass = {name: np.abs(arr[name]).sum(axis=tuple(range(2, arr[name].ndim))) for name in _JOB_FIELDS}
    idle = np.where(active, 0.0, sum(mass.values()))

    def inactive_text(i) -> str:
        k, job = i
        names = [n for n in _JOB_FIELDS if mass[n][k, job] > 0]
        return (f"slot {first + k}, job {job} (active {arrival[job]} .. {last[job]}): non-zero "
                f"{', '.join(names)}")

    out += violations_where("inactive job", idle, inactive_text, tol=tol)
    act3 = active[:, :, None]
    act4 = active[:, :, None, None]
    y, s, v, z = (np.where(act3, arr[n], 0.0) for n in ("y", "s", "v", "z"))
    q, g = (np.where(act4, arr[n], 0.0) for n in ("q", "g"))
    u1, u2, x = arr["u1"], arr["u2"], arr["x"]

    # -- (8a), (8b) data ---------------------------------------------------------------------------------
    cap = np.asarray(inst.capacity, dtype=float)
    data = np.asarray(inst.data, dtype=float)[:, slots - 1, :].transpose(1, 0, 2) if n_slots else \
        np.zeros((0, n_jobs, n_dcs))  # (S, I, R)
    data = np.where(act3, data, 0.0)
    into = q.sum(axis=2)  # (S, I, R'): data arriving at r'
    proc = cap[None, :, None] * y
    out += _viol("(8a) worker capacity", into - proc, proc, lambda i: (
        f"slot {first + i[0]}, job {i[1]}, DC {i[2]}: data in {_fmt(into[i])} > P_i y = {_fmt(cap[i[1]])} * "
        f"{_fmt(y[i])} = {_fmt(proc[i])}"), tol)
    sent = q.sum(axis=3)  # (S, I, R): data leaving r (including staying)
    out += _viol("(8b) data conservation", np.abs(sent - data), data, lambda i: (
        f"slot {first + i[0]}, job {i[1]}, DC {i[2]}: sum_r' q = {_fmt(sent[i])} != D = {_fmt(data[i])}"), tol)

    # -- (8c)-(8e) price tiers --------------------------------------------------------------------------
    a, b, ell = (np.asarray(getattr(inst, f), dtype=float) for f in ("price_a", "price_b", "threshold"))
    e = (a - b) * ell
    nd = np.asarray(inst.worker_demand, dtype=float)
    md = np.asarray(inst.ps_demand, dtype=float)
    h = np.einsum("sir,ik->srk", y, nd) + np.einsum("sir,ik->srk", s, md)  # (S, R, K)
    seg1 = a[None] * h
    seg2 = b[None] * h + e[None]
    out += _viol("(8c) first-tier price", np.where(np.round(u1) == 0, seg1 - x, 0.0), seg1, lambda i: (
        f"slot {first + i[0]}, DC {i[1]}, {res[i[2]]}: u1 = 0, x = {_fmt(x[i])} < a h = {_fmt(a[i[1:]])} * "
        f"{_fmt(h[i])} = {_fmt(seg1[i])}"), tol)
    out += _viol("(8d) second-tier price", np.where(np.round(u2) == 0, seg2 - x, 0.0), seg2, lambda i: (
        f"slot {first + i[0]}, DC {i[1]}, {res[i[2]]}: u2 = 0, x = {_fmt(x[i])} < b h + e = {_fmt(b[i[1:]])} * "
        f"{_fmt(h[i])} + {_fmt(e[i[1:]])} = {_fmt(seg2[i])}"), tol)
    tiers = u1 + u2
    out += violations_where("(8e) one tier", np.abs(tiers - 1.0), lambda i: (
        f"slot {first + i[0]}, DC {i[1]}, {res[i[2]]}: u1 + u2 = {_fmt(tiers[i])}"), tol=tol)

    # -- (8f) one PS -------------------------------------------------------------------------------------
    n_ps = s.sum(axis=2)
    out += violations_where("(8f) one PS", np.where(active, np.abs(n_ps - 1.0), 0.0), lambda i: (
        f"slot {first + i[0]}, job {i[1]}: sum_r s = {_fmt(n_ps[i])}"), tol=tol)

    # -- (8g), (8h) deployment ------------------------------------------------------------------------------
    placed = y + s
    out += violations_where("(8g) deployment indicator", np.where(np.round(v) == 0, placed, 0.0), lambda i: (
        f"slot {first + i[0]}, job {i[1]}, DC {i[2]}: y + s = {_fmt(placed[i])} with v = {_fmt(v[i])}"), tol=tol)
    before = np.concatenate([np.where(prev_active[:, None], prev_v, 0.0)[None], v[:-1]]) if n_slots else v
    rise = v - before
    out += violations_where("(8h) deployment cost", np.where(has_z[:, None, None], rise - z, 0.0), lambda i: (
        f"slot {first + i[0]}, job {i[1]}, DC {i[2]}: z = {_fmt(z[i])} < v(t) - v(t-1) = {_fmt(v[i])} - "
        f"{_fmt(before[i])}"), tol=tol)

    # -- (8i), (8j) connections ------------------------------------------------------------------------------
    out_conn = g.sum(axis=3)  # (S, I, R): from workers in r
    out += _viol("(8i) connections from r", np.abs(out_conn - y), y, lambda i: (
        f"slot {first + i[0]}, job {i[1]}, DC {i[2]}: sum_r' g = {_fmt(out_conn[i])} != y = {_fmt(y[i])}"), tol)
    in_conn = g.sum(axis=2)  # (S, I, R'): to the PS in r'
    n_work = np.ceil(data.sum(axis=2) / cap[None, :] - _CEIL_SLACK).clip(min=0)  # (S, I)
    need = s * n_work[:, :, None]
    out += _viol("(8j) connections to the PS", need - in_conn, need, lambda i: (
        f"slot {first + i[0]}, job {i[1]}, DC {i[2]}: sum_r g = {_fmt(in_conn[i])} < s * ceil(sum D / P) = "
        f"{_fmt(s[i])} * {_fmt(n_work[i[:2]])}"), tol)

    # -- costs ------------------------------------------------------------------------------------------------
    d = np.asarray(inst.transfer_cost, dtype=float)
    c1 = np.einsum("sirq,rq->s", q, d)
    c2 = np.minimum(seg1, seg2).sum(axis=(1, 2))
    c3 = (np.maximum(rise, 0.0) * np.asarray(inst.deploy_cost, dtype=float)[None, :, None]).sum(axis=(1, 2))
    c4 = np.einsum("sirq,rq,i->s", g, d, np.asarray(inst.traffic, dtype=float))
    total = float(c1.sum() + c2.sum() + c3.sum() + c4.sum())
    return BrokerCheck(tuple(out), total, c1=c1, c2=c2, c3=c3, c4=c4, resource_amount=h, x_cost=x.sum(axis=(1, 2)),
                       first_slot=first)


def check_broker_decision(inst: BrokerInstance, decision: BrokerDecision, t: int, prev_v=None, *,
                          tol: float = 1e-6) -> BrokerCheck:
    """Check slot t's decision against (8a)-(8k) and recompute its costs C1-C4.

    Parameters
    ----------
    inst : BrokerInstance
    decision : BrokerDecision
        Slot t's ``y, s, q, g, v, u1, u2, x`` (and ``z`` if given), over all jobs.
    t : int
        The slot, ``1 .. T``.
    prev_v : array (I, R), optional
        ``v_i^r(t - 1)`` (default all 0: nothing deployed before).  C3 charges ``c_i`` where
        ``v`` goes from 0 to 1; ``(8h)`` compares ``z`` with ``v(t) - v(t - 1)``.
    tol : float, default 1e-6
        Relative-and-absolute slack (module docstring).

    Returns
    -------
    BrokerCheck
        ``violations`` (``ok``), ``c1 .. c4`` (1,), ``total_cost``, ``resource_amount`` (1, R, K),
        ``x_cost`` (1,), ``first_slot = t``.

    Raises
    ------
    ValueError
        ``t`` outside ``1 .. T``, a field missing or of the wrong shape, or ``prev_v`` not (I, R).

    Examples
    --------
    >>> from clusteropt.decisions.broker import BrokerDecision
    >>> from clusteropt.instances.broker import BrokerInstance
    >>> inst = BrokerInstance(horizon=1, price_a=[[2.0], [3.0]], price_b=[[1.0], [2.0]], threshold=[[4.0], [4.0]],
    ...                       transfer_cost=[[0, 0.5], [0.5, 0]], arrival=[1], last_slot=[1],
    ...                       data=[[[20.0, 10.0]]], capacity=[15.0], worker_demand=[[1.0]], ps_demand=[[0.0]],
    ...                       traffic=[2.0], deploy_cost=[7.0], resources=("gpu",))
    >>> # both workers in DC 0, all data moved there, the PS in DC 1
    >>> d = BrokerDecision.from_placement(inst, y=[[2, 0]], s=[[0, 1]], q=[[[20.0, 0], [10.0, 0]]],
    ...                                   g=[[[0, 2], [0, 0]]])
    >>> chk = check_broker_decision(inst, d, 1)
    >>> chk.ok, chk.cost_totals()   # C1 = 0.5 * 10, C2 = 2 * 2, C3 = 2 * 7, C4 = 0.5 * 2 * 2
    (True, {'C1': 5.0, 'C2': 4.0, 'C3': 14.0, 'C4': 2.0, 'total': 25.0})
    >>> d.y[0, 0] = 1
    >>> for v in check_broker_decision(inst, d, 1).violations:
    ...     print(v)
    (8a) worker capacity violated at slot 1, job 0, DC 0: data in 30 > P_i y = 15 * 1 = 15 by 15
    (8i) connections from r violated at slot 1, job 0, DC 0: sum_r' g = 2 != y = 1 by 1
    """
    if isinstance(t, bool) or not isinstance(t, int | np.integer) or not 1 <= t <= inst.horizon:
        raise ValueError(f"t = {t!r}; expected a slot in 1 .. T = {inst.horizon}")
    t = int(t)
    if prev_v is None:
        prev = np.zeros((inst.n_jobs, inst.n_dcs))
    else:
        prev = np.asarray(prev_v, dtype=float)
        if prev.shape != (inst.n_jobs, inst.n_dcs):
            raise ValueError(f"prev_v has shape {prev.shape}; expected (I, R) = ({inst.n_jobs}, {inst.n_dcs})")
    return _check(inst, [decision], t, prev, np.ones(inst.n_jobs, dtype=bool), tol)


def check_broker_schedule(inst: BrokerInstance, schedule: BrokerSchedule | Iterable[BrokerDecision], *,
                          tol: float = 1e-6) -> BrokerCheck:
    """Check every slot of a schedule against (8a)-(8k) and recompute C1-C4 per slot and in total.

    Parameters
    ----------
    inst : BrokerInstance
    schedule : BrokerSchedule or sequence of BrokerDecision
        ``slots[t - 1]`` is slot t; at most ``T`` slots (fewer: a partial run, checked as far as
        it goes).  ``v(0) = 0``; ``v(t - 1)`` is the previous slot's ``v`` of jobs active then.
    tol : float, default 1e-6
        Relative-and-absolute slack (module docstring).

    Returns
    -------
    BrokerCheck
        ``violations`` (``ok``), ``c1 .. c4`` per slot, ``total_cost`` (= ``value``),
        ``resource_amount`` (S, R, K), ``x_cost`` (S,).

    Raises
    ------
    ValueError
        More than ``T`` slots, or a slot's field missing or of the wrong shape.

    Examples
    --------
    >>> from clusteropt.decisions.broker import BrokerDecision, BrokerSchedule
    >>> from clusteropt.instances.broker import BrokerInstance
    >>> inst = BrokerInstance(horizon=2, price_a=[[2.0]], price_b=[[1.0]], threshold=[[4.0]],
    ...                       transfer_cost=[[0.0]], arrival=[1], last_slot=[2], data=[[[30.0], [10.0]]],
    ...                       capacity=[15.0], worker_demand=[[1.0]], ps_demand=[[1.0]], traffic=[2.0],
    ...                       deploy_cost=[7.0], resources=("gpu",))
    >>> slot1 = BrokerDecision.from_placement(inst, [[2]], [[1]], [[[30.0]]], [[[2]]])
    >>> slot2 = BrokerDecision.from_placement(inst, [[1]], [[1]], [[[10.0]]], [[[1]]])
    >>> chk = check_broker_schedule(inst, BrokerSchedule([slot1, slot2]))
    >>> chk.ok, chk.c2.tolist(), chk.c3.tolist(), chk.total_cost   # deployed once: c = 7
    (True, [6.0, 4.0], [7.0, 0.0], 17.0)
    """
    slots = list(schedule.slots if hasattr(schedule, "slots") else schedule)
    if len(slots) > inst.horizon:
        raise ValueError(f"schedule has {len(slots)} slots; expected at most T = {inst.horizon}")
    n = inst.n_jobs
    return _check(inst, slots, 1, np.zeros((n, inst.n_dcs)), np.zeros(n, dtype=bool), tol)
