"""Coflows on a big switch, and concurrent open shop (paper 001, Ahmadi, Khuller, Purohit, Yang).

A *coflow* j is a set of flows through an ``n_inputs x n_outputs`` non-blocking switch: its demand
matrix ``D^j`` gives the units ``d^j_{io}`` to move from input i to output o.  In each time slot
every input and every output port moves at most one unit (the slides' model: a schedule is a
sequence of matchings).  A coflow released at slot ``r_j`` may use slots ``r_j + 1`` onward; its
completion time ``C_j`` is its last busy slot; the objective is the total weighted completion
time ``sum_j w_j C_j`` (the slides' objective, Sec. "Coflow scheduling").

*Concurrent open shop* has machines and jobs; job j needs ``p_{ij}`` units on machine i, all
machines work in parallel, and a job completes when its last operation does.  The slides'
conversions:

- coflow -> concurrent open shop: every port becomes a machine whose processing time for job j
  is the port's load ``L_{i,j}`` (row sum for an input, column sum for an output); the COS
  optimum is a lower bound for the coflow (:meth:`CoflowInstance.to_concurrent_open_shop`);
- concurrent open shop -> coflow: a *diagonal* coflow instance, machine i becoming the port pair
  (input i, output i) with ``d^j_{ii} = p_{ij}`` (:meth:`ConcurrentOpenShopInstance.to_coflow`).

Demands are stored sparse, as one row per flow ``(coflow, input, output, units)``, because trace
coflows are wide (up to ~150 x 150 flows) and their units reach millions.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from clusteropt.instances.base import FLOAT_INT_LIMIT, Instance, InstanceError, first_repeat, shown

__all__ = ["CoflowInstance", "ConcurrentOpenShopInstance"]


#: Most ports on either side of the switch.
MAX_PORTS = 2**31


def _ids(inst: CoflowInstance | ConcurrentOpenShopInstance, n: int) -> None:
    if inst.ids is None:
        default = np.arange(1, n + 1, dtype=np.int64)
        default.setflags(write=False)
        object.__setattr__(inst, "ids", default)
        return
    ids = inst._array("ids", dtype=np.int64, ndim=1, shape=(n,))
    rep = first_repeat(ids)
    if rep is not None:
        raise InstanceError(f"ids[{rep[0]}]", int(ids[rep[0]]), f"an id distinct from ids[{rep[1]}] (distinct "
                            "coflow / job ids)")


def _total_work(name: str, work: np.ndarray) -> int:
    """Sum of the units / processing times ``work``, at most ``2**53`` (slot numbers stay exact).

    A schedule ends by the latest release plus the total work; totals are summed through floats
    (``np.bincount`` weights) too, so they must stay below ``2**53``.
    """
    flat = work.reshape(-1)
    cum = np.cumsum(flat, dtype=float)
    if flat.size and cum[-1] > FLOAT_INT_LIMIT:
        k = int(np.argmax(cum > FLOAT_INT_LIMIT))
        idx = np.unravel_index(k, work.shape)
        raise InstanceError(f"{name}[{', '.join(str(int(i)) for i in idx)}]", int(work[idx]),
                            f"a total of at most 2**53 over all entries of {name} (slot numbers stay exact)")
    return int(flat.sum())


def _weights_and_release(inst: Instance, n: int, work: int) -> None:
    w = inst._array("weight", ndim=1, shape=(n,))
    inst._check("weight", w, w >= 0, ">= 0")
    r = inst._array("release", dtype=np.int64, ndim=1, shape=(n,))
    inst._check("release", r, r >= 0, ">= 0 (a slot index)")
    inst._check("release", r, r <= FLOAT_INT_LIMIT - work,
                f"<= 2**53 - {work} (the total work: every slot number of a schedule stays exact)")


@dataclasses.dataclass(frozen=True, eq=False)
class CoflowInstance(Instance):
    """Coflows on an ``n_inputs x n_outputs`` switch, demands as sparse unit triplets.

    Parameters
    ----------
    n_inputs, n_outputs : int
        Port counts (ports are 0-based), at most ``2**31`` each.
    coflow, input, output, units : int arrays (F,)
        One row per flow: coflow index (0..n-1), input port, output port and the units
        ``d^j_{io} >= 1`` to move.  A (coflow, input, output) triple appears at most once.  The
        rows are stored sorted by (coflow, input, output).
    weight : array (n,)
        ``w_j >= 0``.
    release : int array (n,)
        ``r_j >= 0``: the coflow may use slots ``r_j + 1`` onward.  The latest release plus the
        total units is at most ``2**53``, so every slot number of a schedule is exact.
    ids : int array (n,), optional
        Distinct coflow ids (a trace's ids); default ``1..n``.  Schedules and files name coflows
        by id.
    slot_seconds : float, optional
        The length of a slot in seconds, when the instance comes from a trace
        (``read_coflow_benchmark``: ``slot_ms / 1000``); runs then also report completion times in
        seconds.  ``None`` (the default, e.g. synthetic coflows): slots only.

    A coflow without flows is allowed (its completion time is its release).

    Examples
    --------
    >>> inst = CoflowInstance(2, 2, coflow=[0, 0, 1], input=[0, 1, 0], output=[0, 1, 1],
    ...                       units=[3, 1, 2], weight=[1.0, 2.0], release=[0, 0])
    >>> inst.loads().tolist()   # ports: inputs 0, 1 then outputs 0, 1
    [[3, 1, 3, 1], [2, 0, 0, 2]]
    >>> CoflowInstance(2, 2, [0], [2], [0], [1], [1.0], [0])
    Traceback (most recent call last):
    ...
    clusteropt.instances.base.InstanceError: input[0] = 2; expected a port in [0, 2)
    """

    kind = "coflow"

    n_inputs: int
    n_outputs: int
    coflow: np.ndarray
    input: np.ndarray
    output: np.ndarray
    units: np.ndarray
    weight: np.ndarray
    release: np.ndarray
    ids: np.ndarray | None = None
    slot_seconds: float | None = None

    def validate(self) -> None:
        """Check ports, units, uniqueness of (coflow, input, output), weights and releases."""
        for name in ("n_inputs", "n_outputs"):
            value = self._int(name, low=1, expected="a positive integer")
            if value > MAX_PORTS:
                raise InstanceError(name, value, "at most 2**31 ports")
        n = self._array("weight", ndim=1).shape[0]
        cols = {}
        for name in ("coflow", "input", "output", "units"):
            cols[name] = self._array(name, dtype=np.int64, ndim=1)
        f = cols["coflow"].shape[0]
        for name in ("input", "output", "units"):
            if cols[name].shape[0] != f:
                raise InstanceError(f"{name}.shape[0]", cols[name].shape[0], f"{f} (one row per flow, as coflow)")
        self._check("coflow", cols["coflow"], (cols["coflow"] >= 0) & (cols["coflow"] < n),
                    f"a coflow index in [0, {n})")
        self._check("input", cols["input"], (cols["input"] >= 0) & (cols["input"] < self.n_inputs),
                    f"a port in [0, {self.n_inputs})")
        self._check("output", cols["output"], (cols["output"] >= 0) & (cols["output"] < self.n_outputs),
                    f"a port in [0, {self.n_outputs})")
        self._check("units", cols["units"], cols["units"] >= 1, ">= 1 (leave out flows without demand)")
        work = _total_work("units", cols["units"])
        order = np.lexsort((cols["output"], cols["input"], cols["coflow"]))  # stable: equal rows keep their order
        key = np.stack([cols["coflow"][order], cols["input"][order], cols["output"][order]])
        same = np.concatenate([[False], (np.diff(key, axis=1) == 0).all(axis=0)])  # as the row before
        if same.any():
            pos = np.flatnonzero(same)
            at = pos[np.argmin(order[pos])]  # the repeat that comes first in the caller's order
            start = np.flatnonzero(~same)
            k, j = int(order[at]), int(order[start[np.searchsorted(start, at, side="right") - 1]])
            raise InstanceError(
                f"(coflow, input, output)[{k}]", (int(cols["coflow"][k]), int(cols["input"][k]),
                                                  int(cols["output"][k])),
                f"a triple listed once (add their units): row {j} has it already",
            )
        if not np.array_equal(order, np.arange(f)):
            for name, arr in cols.items():
                arr = arr[order]
                arr.setflags(write=False)
                object.__setattr__(self, name, arr)
        _weights_and_release(self, n, work)
        _ids(self, n)
        if self.slot_seconds is not None:
            sec = self.slot_seconds
            try:
                seconds = float(sec) if isinstance(sec, int | float) and not isinstance(sec, bool) else math.nan
            except OverflowError:  # an integer beyond any float
                seconds = math.nan
            if not (math.isfinite(seconds) and seconds > 0):
                raise InstanceError("slot_seconds", shown(sec), "a finite number of seconds > 0 (or null)")
            object.__setattr__(self, "slot_seconds", seconds)

    # -- shape ----------------------------------------------------------------------------
    @property
    def n_coflows(self) -> int:
        """Number of coflows n."""
        return int(self.weight.shape[0])

    @property
    def n_flows(self) -> int:
        """Number of (coflow, input, output) rows F."""
        return int(self.units.shape[0])

    @property
    def n_ports(self) -> int:
        """Machines of the concurrent-open-shop view: ``n_inputs + n_outputs``."""
        return self.n_inputs + self.n_outputs

    @property
    def coflow_ptr(self) -> np.ndarray:
        """CSR pointer: coflow j's flows are rows ``coflow_ptr[j]:coflow_ptr[j+1]``."""
        return np.searchsorted(self.coflow, np.arange(self.n_coflows + 1))

    def loads(self) -> np.ndarray:
        """``L[j, i]``: units of coflow j through port i, inputs ``0..n_inputs-1`` first, then
        outputs (``n_inputs + o``); the machines of the concurrent-open-shop view.
        """
        # summed as float64 by bincount: exact, as every partial sum is an integer of at most the
        # total, which validation keeps at most 2**53
        cells = self.n_coflows * self.n_ports
        units = self.units.astype(float)
        out = (np.bincount(self.coflow * self.n_ports + self.input, weights=units, minlength=cells)
               + np.bincount(self.coflow * self.n_ports + self.n_inputs + self.output, weights=units,
                             minlength=cells))
        return out.astype(np.int64).reshape(self.n_coflows, self.n_ports)

    def total_units(self) -> np.ndarray:
        """Units of each coflow (its total size)."""
        return np.bincount(self.coflow, weights=self.units, minlength=self.n_coflows).astype(np.int64)

    def demand(self, j: int) -> np.ndarray:
        """Dense demand matrix ``D^j`` (``n_inputs x n_outputs``) of coflow j (small instances)."""
        lo, hi = self.coflow_ptr[j], self.coflow_ptr[j + 1]
        d = np.zeros((self.n_inputs, self.n_outputs), dtype=np.int64)
        d[self.input[lo:hi], self.output[lo:hi]] = self.units[lo:hi]
        return d

    def index_of(self, coflow_id: int) -> int:
        """Index j of the coflow with id ``coflow_id``."""
        hits = np.flatnonzero(self.ids == coflow_id)
        if not hits.size:
            raise KeyError(f"no coflow with id {coflow_id}")
        return int(hits[0])

    # -- conversions -------------------------------------------------------------------------
    def to_concurrent_open_shop(self) -> ConcurrentOpenShopInstance:
        """The slides' relaxation: every port a machine with the coflows' loads on it."""
        return ConcurrentOpenShopInstance(processing=self.loads().T, weight=self.weight,
                                          release=self.release, ids=self.ids)


@dataclasses.dataclass(frozen=True, eq=False)
class ConcurrentOpenShopInstance(Instance):
    """Concurrent open shop: ``processing[i, j]`` units of job j on machine i.

    Parameters
    ----------
    processing : int array (M, n)
        ``p_{ij} >= 0``.
    weight : array (n,)
        ``w_j >= 0``.
    release : int array (n,)
        ``r_j >= 0``: job j may be processed in slots ``r_j + 1`` onward.  The latest release plus
        the total processing is at most ``2**53``.
    ids : int array (n,), optional
        Distinct job ids; default ``1..n``.

    Examples
    --------
    >>> cos = ConcurrentOpenShopInstance([[2, 0], [1, 3]], [1.0, 1.0], [0, 1])
    >>> cos.to_coflow().demand(1).tolist()   # the diagonal coflow of job 1
    [[0, 0], [0, 3]]
    """

    kind = "concurrent-open-shop"

    processing: np.ndarray
    weight: np.ndarray
    release: np.ndarray
    ids: np.ndarray | None = None

    def validate(self) -> None:
        """Check shapes and signs."""
        p = self._array("processing", dtype=np.int64, ndim=2)
        self._check("processing", p, p >= 0, ">= 0")
        _weights_and_release(self, p.shape[1], _total_work("processing", p))
        _ids(self, p.shape[1])

    @property
    def n_machines(self) -> int:
        """Number of machines M."""
        return int(self.processing.shape[0])

    @property
    def n_jobs(self) -> int:
        """Number of jobs n."""
        return int(self.processing.shape[1])

    def to_coflow(self) -> CoflowInstance:
        """The diagonal coflow instance: machine i is the port pair (input i, output i)."""
        machine, job = np.nonzero(self.processing)
        order = np.lexsort((machine, job))
        machine, job = machine[order], job[order]
        return CoflowInstance(
            n_inputs=self.n_machines, n_outputs=self.n_machines, coflow=job, input=machine, output=machine,
            units=self.processing[machine, job], weight=self.weight, release=self.release, ids=self.ids,
        )
