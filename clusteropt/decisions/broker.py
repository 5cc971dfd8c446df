"""What an mlBroker policy decides: per slot, workers, the PS, data moves, connections, tiers.

A :class:`BrokerDecision` is one slot's values of the variables of problem (8) of paper 003
(Sec. 3.3), named by their symbols and indexed by job number over *all* jobs of the instance
(rows of jobs not in ``I_t`` are zero), so that policies and checkers vectorize:

========  ==============  ===========================================================================
field     shape           meaning
========  ==============  ===========================================================================
``y``     int (I, R)      ``y_i^r(t)``: workers of job i in DC r
``s``     0/1 (I, R)      ``s_i^r(t)``: job i's PS is in DC r (one per active job, (8f))
``q``     (I, R, R)       ``q_i^{rr'}(t)`` >= 0: data of job i moved from r to r' (``q^{rr}`` stays)
``g``     int (I, R, R)   ``g_i^{rr'}(t)``: worker-PS connections from workers in r to the PS in r'
``v``     0/1 (I, R)      ``v_i^r(t)``: job i deployed (worker or PS) in r ((8g); C3 via (8h))
``u1``    0/1 (R, K)      ``u_{k,r}^1(t)``: 1 relaxes (8c), i.e. the discounted segment applies
``u2``    0/1 (R, K)      ``u_{k,r}^2(t)``: 1 relaxes (8d), i.e. the first-tier segment applies
``x``     (R, K)          ``x_k^r(t)`` >= 0: the resource cost paid (``C_2^*``)
``z``     0/1 (I, R)      optional ``z_i^r(t)`` of (8h) (``None``: not given; the checker derives it)
========  ==============  ===========================================================================

Values are kept as given (a fractional solution can be stored too); the checker
(:mod:`clusteropt.verify.broker`) reports non-integral ones.  A :class:`BrokerSchedule` is the
list of decisions of slots ``1 .. T``; both convert to sparse JSON-ready dicts.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from clusteropt.instances.broker import BrokerInstance

__all__ = ["FIELDS", "BrokerDecision", "BrokerSchedule", "decision_cost"]

#: Field name -> (shape axes, integral?); axes: "I" jobs, "R" data centers, "K" resources.
FIELDS: dict[str, tuple[str, bool]] = {
    "y": ("IR", True), "s": ("IR", True), "q": ("IRR", False), "g": ("IRR", True), "v": ("IR", True),
    "u1": ("RK", True), "u2": ("RK", True), "x": ("RK", False), "z": ("IR", True),
}


def _sparse(arr: np.ndarray) -> list[list]:
    """``[[*index, value], ...]`` for the non-zero entries (NaN counts as non-zero)."""
    arr = np.asarray(arr)
    idx = np.argwhere(arr != 0)
    return [[*(int(k) for k in ix), arr[tuple(ix)].item()] for ix in idx]


def _dense(entries, shape: tuple[int, ...], integral: bool, what: str) -> np.ndarray:
    """Inverse of :func:`_sparse`: int64 when ``integral`` and every value is a whole number."""
    out = np.zeros(shape)
    for e in entries:
        if len(e) != len(shape) + 1:
            raise ValueError(f"{what}: entry {e!r}; expected {len(shape)} indices and a value")
        idx = tuple(int(k) for k in e[:-1])
        if any(not 0 <= k < n for k, n in zip(idx, shape, strict=True)):
            raise ValueError(f"{what}: index {list(idx)} outside the shape {list(shape)}")
        out[idx] = float(e[-1])
    if integral and np.all(np.isfinite(out)) and np.array_equal(out, np.round(out)):
        return out.astype(np.int64)
    return out


@dataclasses.dataclass
class BrokerDecision:
    """One slot's decision (module docstring): ``y, s, q, g, v, u1, u2, x`` and optional ``z``.

    Examples
    --------
    >>> d = BrokerDecision.empty(n_jobs=2, n_dcs=3, n_resources=1)
    >>> d.y[1, 2] = 4
    >>> d.shape, d.to_dict()["y"]
    ((2, 3, 1), [[1, 2, 4]])
    >>> BrokerDecision.from_dict(d.to_dict(), 2, 3, 1).y.tolist()
    [[0, 0, 0], [0, 0, 4]]
    """

    y: np.ndarray
    s: np.ndarray
    q: np.ndarray
    g: np.ndarray
    v: np.ndarray
    u1: np.ndarray
    u2: np.ndarray
    x: np.ndarray
    z: np.ndarray | None = None

    def __post_init__(self):
        for name in FIELDS:
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, np.asarray(value))

    @property
    def shape(self) -> tuple[int, int, int]:
        """``(I, R, K)``."""
        return int(self.y.shape[0]), int(self.y.shape[1]), int(self.x.shape[1])

    @classmethod
    def empty(cls, n_jobs: int, n_dcs: int, n_resources: int) -> BrokerDecision:
        """All zero (integral fields int64); ``u1 = u2 = 0`` is not yet a valid tier choice."""
        i, r, k = n_jobs, n_dcs, n_resources
        return cls(y=np.zeros((i, r), np.int64), s=np.zeros((i, r), np.int64), q=np.zeros((i, r, r)),
                   g=np.zeros((i, r, r), np.int64), v=np.zeros((i, r), np.int64), u1=np.zeros((r, k), np.int64),
                   u2=np.zeros((r, k), np.int64), x=np.zeros((r, k)))

    @classmethod
    def from_placement(cls, inst: BrokerInstance, y, s, q, g, *, v=None) -> BrokerDecision:
        """Complete a placement ``y, s, q, g`` with ``v`` (default: 1 where ``y + s > 0``), the
        cheaper price segment ``u1, u2`` and ``x = F(h)`` (Eq. (7)) for the resulting amounts.

        ``u1 = 1`` (discounted segment) where ``b h + e < a h``, i.e. above the threshold; at or
        below it the first-tier segment is chosen (``u2 = 1``).  For policies that decide only
        the placement (e.g. the Local / Central baselines of Sec. 6.3).
        """
        y, s = np.asarray(y), np.asarray(s)
        if v is None:
            v = ((np.asarray(y, dtype=float) + np.asarray(s, dtype=float)) > 0).astype(np.int64)
        h = inst.resource_amount(y, s)
        first = inst.price_a * h
        second = inst.price_b * h + inst.price_e
        u1 = (second < first).astype(np.int64)
        return cls(y=y, s=s, q=np.asarray(q, dtype=float), g=np.asarray(g), v=np.asarray(v), u1=u1, u2=1 - u1,
                   x=np.minimum(first, second))

    def to_dict(self) -> dict[str, Any]:
        """``{field: [[*index, value], ...]}``: the non-zero entries of every field (``z`` if given)."""
        return {name: _sparse(getattr(self, name)) for name in FIELDS if getattr(self, name) is not None}

    @classmethod
    def from_dict(cls, data, n_jobs: int, n_dcs: int, n_resources: int) -> BrokerDecision:
        """Inverse of :meth:`to_dict`; whole-number integral fields come back as int64.

        Raises ``ValueError`` for an unknown field, a bad entry or an index outside the shape.
        """
        sizes = {"I": n_jobs, "R": n_dcs, "K": n_resources}
        unknown = sorted(set(data) - set(FIELDS) - {"slot"})
        if unknown:
            raise ValueError(f"unknown decision field {unknown[0]!r}; expected some of {list(FIELDS)}")
        values = {}
        for name, (axes, integral) in FIELDS.items():
            if name == "z" and name not in data:
                continue
            values[name] = _dense(data.get(name, []), tuple(sizes[a] for a in axes), integral, name)
        return cls(**values)


@dataclasses.dataclass
class BrokerSchedule:
    """Decisions for slots ``1 .. T`` (``slots[t - 1]``); a partial run may have fewer.

    Examples
    --------
    >>> d = BrokerDecision.empty(1, 2, 1)
    >>> d.s[0, 1] = 1
    >>> sched = BrokerSchedule([d, d])
    >>> sched.stack("s").shape
    (2, 1, 2)
    >>> BrokerSchedule.from_json(sched.to_json()).stack("s").tolist() == sched.stack("s").tolist()
    True
    """

    slots: list[BrokerDecision]

    def __len__(self) -> int:
        return len(self.slots)

    def stack(self, name: str) -> np.ndarray:
        """Field ``name`` stacked over the slots: (T, ...)."""
        if name not in FIELDS:
            raise ValueError(f"unknown field {name!r}; expected one of {list(FIELDS)}")
        if not self.slots:
            return np.zeros((0,))
        return np.stack([np.asarray(getattr(d, name)) for d in self.slots])

    def to_dict(self) -> dict[str, Any]:
        """``{"kind": "broker-schedule", "schema_version": 1, "n_jobs", "n_dcs", "n_resources",
        "slots": [{"slot": t, <field>: [[*index, value], ...], ...}, ...]}`` (non-zeros only).
        """
        shape = self.slots[0].shape if self.slots else (0, 0, 0)
        return {"kind": "broker-schedule", "schema_version": 1, "n_jobs": shape[0], "n_dcs": shape[1],
                "n_resources": shape[2],
                "slots": [{"slot": t, **d.to_dict()} for t, d in enumerate(self.slots, start=1)]}

    @classmethod
    def from_dict(cls, data) -> BrokerSchedule:
        """Inverse of :meth:`to_dict`; slots must be numbered ``1, 2, ...`` in order."""
        if data.get("kind") != "broker-schedule":
            raise ValueError(f"kind = {data.get('kind')!r}; expected 'broker-schedule'")
        if data.get("schema_version") != 1:
            raise ValueError(f"schema_version = {data.get('schema_version')!r}; expected 1")
        shape = (int(data["n_jobs"]), int(data["n_dcs"]), int(data["n_resources"]))
        slots = []
        for t, rec in enumerate(data["slots"], start=1):
            if rec.get("slot", t) != t:
                raise ValueError(f"slot record {t} is numbered {rec.get('slot')!r}; expected {t}")
            slots.append(BrokerDecision.from_dict(rec, *shape))
        return cls(slots)

    def to_json(self, path: str | Path | None = None) -> str:
        """JSON text of :meth:`to_dict`; also written to ``path`` when given."""
        from clusteropt.instances.base import write_text_atomic

        text = json.dumps(self.to_dict())
        if path is not None:
            write_text_atomic(path, text + "\n")
        return text

    @classmethod
    def from_json(cls, text: str) -> BrokerSchedule:
        """Parse JSON text written by :meth:`to_json`."""
        return cls.from_dict(json.loads(text))


def decision_cost(inst: BrokerInstance, decision: BrokerDecision, prev_v: np.ndarray, t: int) -> np.ndarray:
    """``[C1, C2*, C3, C4]`` of slot t's decision: the objective of paper 003's (8) / (9) at it.

    ``C1 = sum d^{rr'} q_i^{rr'}`` (data moved), ``C2* = sum x`` (the decision's price
    variables), ``C3 = sum c_i max(v_i^r - v_i^r(t - 1), 0)`` (the smallest ``z`` (8h) allows;
    ``v(t - 1)`` of a job not active in ``t - 1`` is 0) and ``C4 = sum d^{rr'} B_i g_i^{rr'}`` (the
    connections' traffic), over the active jobs ``I_t``.  For an integral decision ``x = F(h)``
    exactly (Eq. (7)), so this is the cost :func:`clusteropt.verify.check_broker_schedule`
    recomputes from ``y`` and ``s`` alone.
    """
    act = inst.active_mask(t)
    d = inst.transfer_cost
    c1 = float(np.einsum("irq,rq->", decision.q[act], d))
    c2 = float(np.sum(decision.x))
    c3 = float((np.maximum(decision.v[act] - prev_v[act], 0.0) * inst.deploy_cost[act, None]).sum())
    c4 = float(np.einsum("irq,rq,i->", decision.g[act], d, inst.traffic[act]))
    return np.array([c1, c2, c3, c4])
