"""mlBroker (paper 003, Li et al.): geo-distributed ML jobs under volume-discount prices, as data.

A broker rents K resource types in R data centers (DCs) for parameter-server ML jobs over slots
``1 .. T`` (Sec. 3.1).  A :class:`BrokerInstance` holds:

* **Prices** per DC r and resource k (Sec. 3.2, Eq. (2)): first-tier unit price ``a_k^r``,
  discounted unit price ``b_k^r < a_k^r`` and threshold ``l_k^r``; ``e_k^r = a_k^r l_k^r - b_k^r
  l_k^r`` (the paper's definition, which makes the price function continuous at ``l_k^r``).  The
  price of an amount ``h`` is ``F_k^r(h) = a h`` for ``h <= l`` and ``b h + e`` above, which equals
  ``min(a h, b h + e)`` (the reformulation of Sec. 3.3, Eq. (7)): :func:`volume_price`.
  Arrays are indexed ``[r, k]``.
* **Transfer costs** ``d^{rr'}`` per unit of data from r to r' (zero diagonal), used by the data
  transfer cost C1 (Eq. (1)) and the worker-PS communication cost C4 (Eq. (6)).
* **Jobs** i: the first slot ``t_i`` in which the broker places it (``arrival``; the paper's job
  submitted in ``t - 1`` is placed at the beginning of ``t``) and its last slot (``last_slot``):
  ``I_t = {i : arrival_i <= t <= last_slot_i}`` (:meth:`BrokerInstance.active`); the input data
  ``D_i^r(t)`` per slot and DC (``data[i, t - 1, r]``, zero outside the active window); the
  processing capacity ``P_i`` of one worker; per-worker and per-PS resources ``n_{i,k}``,
  ``m_{i,k}``; the parameter traffic ``B_i`` per worker-PS connection per slot; the deployment
  cost ``c_i`` (Eqs. (4)-(5)).

The four costs of a slot (Sec. 3.2), for decisions ``y, s, q, g, v`` (see
:mod:`clusteropt.decisions.broker`):

* C1 = ``sum_{i in I_t} sum_{r, r'} d^{rr'} q_i^{rr'}(t)`` (Eq. (1));
* C2 = ``sum_{r, k} F_k^r(h_k^r(t))`` with ``h_k^r(t) = sum_{i in I_t} (n_{i,k} y_i^r(t) + m_{i,k}
  s_i^r(t))`` (Eq. (3)): :meth:`BrokerInstance.resource_amount`, :meth:`BrokerInstance.resource_price`;
* C3 = ``sum_{i in I_t} sum_r c_i max(v_i^r(t) - v_i^r(t - 1), 0)`` (Eqs. (4)-(5));
* C4 = ``sum_{i in I_t} sum_{r, r'} d^{rr'} B_i g_i^{rr'}(t)`` (Eq. (6)).

Constraint (8j) needs the number of workers of job i, ``N_i(t) = ceil(sum_r D_i^r(t) / P_i)``
(Sec. 3.1): :meth:`BrokerInstance.required_workers`.  The big-M constants of (8c)-(8d) and (8g)
are offered as :attr:`BrokerInstance.big_m` and :attr:`BrokerInstance.big_u`.

Generators: :func:`random_broker` (the Sec. 6.1 settings) and :func:`broker_preset`.  Readers:
:func:`read_prices_csv` and :func:`read_transfer_costs_csv` give price tables and transfer-cost
matrices that override the generator's draws (no public volume-discount price table exists, so
these are documented synthetic parameter files).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from pathlib import Path

import numpy as np

from clusteropt.instances.arrivals import bursty_arrivals
from clusteropt.instances.base import (
    FLOAT_INT_LIMIT,
    MAX_MAGNITUDE,
    Instance,
    InstanceError,
    check_string,
    job_count,
)
from clusteropt.instances.readers import NUMBER, TraceError, csv_records, csv_rows

__all__ = [
    "DEFAULT_RESOURCES",
    "DEPLOY_PER",
    "PRESETS",
    "BrokerInstance",
    "BrokerPrices",
    "broker_preset",
    "random_broker",
    "read_prices_csv",
    "read_transfer_costs_csv",
    "volume_price",
]

log = logging.getLogger(__name__)

#: The paper's four resource types (Sec. 6.1: GPUs, vCPUs, memory in GB, storage in GB).
DEFAULT_RESOURCES = ("gpu", "vcpu", "memory", "storage")

#: Slack on ``ceil(sum_r D_i^r(t) / P_i)``: a quotient within this of an integer is that integer.
_CEIL_SLACK = 1e-9


def volume_price(amount, a, b, threshold) -> np.ndarray:
    """The volume-discount price ``F(h) = min(a h, b h + e)``, ``e = (a - b) l`` (Eqs. (2), (7)).

    For ``0 <= h <= l`` this is ``a h``, above it ``b h + e`` (``b < a``): Eq. (2) of Sec. 3.2,
    continuous at the threshold.  All arguments broadcast against each other.

    >>> volume_price([0.0, 50.0, 100.0, 200.0], 2.0, 1.5, 100.0).tolist()
    [0.0, 100.0, 200.0, 350.0]
    """
    h = np.asarray(amount, dtype=float)
    a, b, ell = (np.asarray(v, dtype=float) for v in (a, b, threshold))
    return np.minimum(a * h, b * h + (a - b) * ell)


@dataclasses.dataclass(frozen=True, eq=False)
class BrokerInstance(Instance):
    """R data centers with volume-discount prices, transfer costs and ML jobs (paper 003, Sec. 3).

    Parameters
    ----------
    horizon : int
        ``T`` >= 1; slots are ``1 .. T``.
    price_a : array (R, K)
        ``a_k^r`` > 0: first-tier unit price (per unit of resource per slot).
    price_b : array (R, K)
        ``b_k^r`` in ``[0, a_k^r)``: the discounted unit price above the threshold.
    threshold : array (R, K)
        ``l_k^r`` >= 0: the amount above which the discount applies.
    transfer_cost : array (R, R)
        ``d^{rr'}`` >= 0 per unit of data from r to r'; ``d^{rr} = 0``.
    arrival : int array (I,)
        ``t_i`` in ``1 .. T``: the first slot of job i (I >= 1 jobs).
    last_slot : int array (I,)
        In ``arrival_i .. T``: the last slot of job i.
    data : array (I, T, R)
        ``D_i^r(t)`` >= 0 at ``[i, t - 1, r]``; zero outside ``arrival_i .. last_slot_i``.
    capacity : array (I,)
        ``P_i`` > 0: the data one worker of job i trains in a slot; ``N_i(t)`` (:meth:`required_workers`)
        is at most ``2**53``.
    worker_demand : array (I, K)
        ``n_{i,k}`` >= 0 per worker.
    ps_demand : array (I, K)
        ``m_{i,k}`` >= 0 for the parameter server.
    traffic : array (I,)
        ``B_i`` >= 0: data exchanged per worker-PS connection per slot.
    deploy_cost : array (I,)
        ``c_i`` >= 0: paid for every DC where job i is deployed in t but not in t - 1.
    resources : tuple of str
        The K resource names, distinct.
    name : str

    Examples
    --------
    >>> inst = BrokerInstance(horizon=2, price_a=[[2.0], [3.0]], price_b=[[1.0], [2.0]],
    ...                       threshold=[[10.0], [10.0]], transfer_cost=[[0, 1], [1, 0]],
    ...                       arrival=[1], last_slot=[2], data=[[[30.0, 10.0], [5.0, 0.0]]],
    ...                       capacity=[15.0], worker_demand=[[1.0]], ps_demand=[[0.5]], traffic=[0.2],
    ...                       deploy_cost=[3.0], resources=("gpu",))
    >>> inst.n_jobs, inst.n_dcs, inst.n_resources, inst.price_e.tolist()
    (1, 2, 1, [[10.0], [10.0]])
    >>> inst.required_workers(1).tolist(), inst.active(2).tolist()
    ([3], [0])
    >>> inst.resource_price([[10.0], [20.0]]).tolist()  # F = min(a h, b h + e)
    [[20.0], [50.0]]
    >>> dataclasses.replace(inst, price_b=[[1.0], [3.0]])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusteropt.instances.base.InstanceError: price_b[1, 0] = 3.0; expected < price_a[1, 0] = 3.0 (the ...
    """

    kind = "broker"

    horizon: int
    price_a: np.ndarray
    price_b: np.ndarray
    threshold: np.ndarray
    transfer_cost: np.ndarray
    arrival: np.ndarray
    last_slot: np.ndarray
    data: np.ndarray
    capacity: np.ndarray
    worker_demand: np.ndarray
    ps_demand: np.ndarray
    traffic: np.ndarray
    deploy_cost: np.ndarray
    resources: tuple[str, ...] = DEFAULT_RESOURCES
    name: str = ""

    def validate(self) -> None:
        """Check shapes, signs, the price tiers, the transfer matrix and the jobs' windows."""
        n_res = len(self._names("resources"))  # distinct: a repeat would merge rows of the models
        a = self._array("price_a", ndim=2, shape=(None, n_res))
        n_dcs = a.shape[0]
        if n_dcs < 1:
            raise InstanceError("price_a.shape[0]", 0, "at least one data center")
        self._check("price_a", a, a > 0, "> 0")
        b = self._array("price_b", ndim=2, shape=(n_dcs, n_res))
        self._check("price_b", b, b >= 0, ">= 0")
        if not (b < a).all():
            r, k = (int(x) for x in np.argwhere(~(b < a))[0])
            raise InstanceError(f"price_b[{r}, {k}]", float(b[r, k]),
                                f"< price_a[{r}, {k}] = {float(a[r, k])!r} (the discounted price, b < a)")
        ell = self._array("threshold", ndim=2, shape=(n_dcs, n_res))
        self._check("threshold", ell, ell >= 0, ">= 0")
        d = self._array("transfer_cost", ndim=2, shape=(n_dcs, n_dcs))
        self._check("transfer_cost", d, d >= 0, ">= 0")
        diag = np.diag(d)
        if (diag != 0).any():
            r = int(np.flatnonzero(diag != 0)[0])
            raise InstanceError(f"transfer_cost[{r}, {r}]", float(diag[r]), "0 (d^{rr} = 0 on the diagonal)")
        horizon = self._int("horizon", low=1)
        arr = self._array("arrival", dtype=np.int64, ndim=1)
        n = arr.shape[0]
        if n < 1:
            raise InstanceError("arrival.shape[0]", 0, "at least one job")
        self._check("arrival", arr, (arr >= 1) & (arr <= horizon), f"a slot in 1 .. T = {horizon}")
        last = self._array("last_slot", dtype=np.int64, ndim=1, shape=(n,))
        ok = (last >= arr) & (last <= horizon)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise InstanceError(f"last_slot[{i}]", int(last[i]),
                                f"a slot in arrival[{i}] .. T = {int(arr[i])} .. {horizon}")
        data = self._array("data", ndim=3, shape=(n, horizon, n_dcs))
        self._check("data", data, data >= 0, ">= 0")
        slots = np.arange(1, horizon + 1)
        inside = (slots[None, :] >= arr[:, None]) & (slots[None, :] <= last[:, None])  # (I, T)
        outside = (~inside)[:, :, None] & (data != 0)
        if outside.any():
            i, t0, r = (int(x) for x in np.argwhere(outside)[0])
            raise InstanceError(f"data[{i}, {t0}, {r}]", float(data[i, t0, r]),
                                f"0 outside the active slots {int(arr[i])} .. {int(last[i])} of job {i} "
                                f"(axis 1 is slot - 1)")
        cap = self._array("capacity", ndim=1, shape=(n,))
        self._check("capacity", cap, cap > 0, "> 0 (data one worker trains per slot)")
        with np.errstate(over="ignore"):  # N_i(t) = ceil(sum_r D_i^r(t) / P_i) becomes an int64: keep it exact
            workers = data.sum(axis=2).max(axis=1) / cap
        self._check("capacity", cap, workers <= FLOAT_INT_LIMIT,
                    "large enough that ceil(sum_r D_i^r(t) / P_i) <= 2**53 workers in every slot")
        for field in ("worker_demand", "ps_demand"):
            dem = self._array(field, ndim=2, shape=(n, n_res))
            self._check(field, dem, dem >= 0, ">= 0")
        for field in ("traffic", "deploy_cost"):
            val = self._array(field, ndim=1, shape=(n,))
            self._check(field, val, val >= 0, ">= 0")
        check_string("name", self.name)

    # -- sizes ------------------------------------------------------------------------------
    @property
    def n_jobs(self) -> int:
        """I, the number of jobs."""
        return int(self.arrival.shape[0])

    @property
    def n_dcs(self) -> int:
        """R, the number of data centers."""
        return int(self.price_a.shape[0])

    @property
    def n_resources(self) -> int:
        """K, the number of resource types."""
        return int(self.price_a.shape[1])

    # -- derived numbers --------------------------------------------------------------------
    @property
    def price_e(self) -> np.ndarray:
        """``e_k^r = a_k^r l_k^r - b_k^r l_k^r`` (Sec. 3.2), (R, K)."""
        return (self.price_a - self.price_b) * self.threshold

    def _slot(self, t: int) -> int:
        if isinstance(t, bool) or not isinstance(t, int | np.integer) or not 1 <= t <= self.horizon:
            raise ValueError(f"t = {t!r}; expected a slot in 1 .. T = {self.horizon}")
        return int(t)

    def active_mask(self, t: int) -> np.ndarray:
        """Bool (I,): job i is in ``I_t`` (``arrival_i <= t <= last_slot_i``)."""
        t = self._slot(t)
        return (self.arrival <= t) & (t <= self.last_slot)

    def active(self, t: int) -> np.ndarray:
        """``I_t``: the indices of the jobs active in slot t, ascending."""
        return np.flatnonzero(self.active_mask(t))

    def slot_data(self, t: int) -> np.ndarray:
        """``D_i^r(t)``, (I, R) (zero rows for inactive jobs)."""
        return self.data[:, self._slot(t) - 1, :]

    def required_workers(self, t: int) -> np.ndarray:
        """``N_i(t) = ceil(sum_r D_i^r(t) / P_i)`` per job, int (I,) (Sec. 3.1; the right side of (8j)).

        A quotient within 1e-9 above an integer counts as that integer (floating-point noise).
        Inactive jobs get 0.
        """
        total = self.slot_data(t).sum(axis=1)
        return np.ceil(total / self.capacity - _CEIL_SLACK).clip(min=0).astype(np.int64)

    def resource_amount(self, y, s) -> np.ndarray:
        """``h_k^r = sum_i (n_{i,k} y_i^r + m_{i,k} s_i^r)`` for y, s of shape (..., I, R): (..., R, K).

        Sums over the rows given (a decision's inactive rows are zero).
        """
        y = np.asarray(y, dtype=float)
        s = np.asarray(s, dtype=float)
        return (np.einsum("...ir,ik->...rk", y, self.worker_demand)
                + np.einsum("...ir,ik->...rk", s, self.ps_demand))

    def resource_price(self, amount) -> np.ndarray:
        """``F_k^r(h)`` of Eq. (7) for amounts broadcastable to (..., R, K)."""
        return volume_price(amount, self.price_a, self.price_b, self.threshold)

    @property
    def big_u(self) -> int:
        """A value for ``U`` of (8g): ``max_{i,t} N_i(t) + 1``.

        Bounds ``y_i^r(t) + s_i^r(t)`` for every decision that places at most ``N_i(t)`` workers
        of job i in one DC, which some optimal solution of (8) does: ``y_i^{r'} = ceil(sum_r
        q_i^{rr'} / P_i) <= N_i(t)`` satisfies (8a), and with all connections to the PS (8j) holds.
        """
        n_max = max(int(self.required_workers(t).max()) for t in range(1, self.horizon + 1))
        return n_max + 1

    @property
    def big_m(self) -> np.ndarray:
        """Per (r, k) a valid ``M`` of (8c)-(8d): ``(a - b) max(l, h_max - l)``, (R, K).

        ``h_max = sum_i (n_{i,k} (U - 1) + m_{i,k})`` bounds the amount when every DC holds at
        most ``U - 1`` workers of a job (:attr:`big_u`); then ``|b h + e - a h| = (a - b) |l - h|
        <= M``.  The paper uses one constant ``M``: ``big_m.max()``.
        """
        h_max = (self.worker_demand * (self.big_u - 1) + self.ps_demand).sum(axis=0)  # (K,)
        gap = self.price_a - self.price_b
        return gap * np.maximum(self.threshold, h_max[None, :] - self.threshold)


# ---------------------------------------------------------------------------------------------
# price tables and transfer-cost matrices from CSV


@dataclasses.dataclass(frozen=True)
class BrokerPrices:
    """A price table: ``a``, ``b``, ``threshold`` (R, K) and the K resource names.

    ``e = (a - b) threshold`` follows (Sec. 3.2); :class:`BrokerInstance` validates ``b < a``.
    """

    a: np.ndarray
    b: np.ndarray
    threshold: np.ndarray
    resources: tuple[str, ...]

    @property
    def n_dcs(self) -> int:
        """R."""
        return int(self.a.shape[0])


#: Columns of a price CSV (:func:`read_prices_csv`).
PRICE_COLUMNS = ("dc", "resource", "a", "b", "threshold")
#: Most data centers a price or transfer-cost file may describe (``dc`` at most ``MAX_DCS - 1``).
MAX_DCS = 10**6


def read_prices_csv(path: str | Path, *, resources=None) -> BrokerPrices:
    """Read a volume-discount price table: one row per data center and resource type.

    Columns (a header line; other columns may be present and are ignored)::

        dc,resource,a,b,threshold

    * ``dc``: the data center, a whole number ``0 .. R - 1`` (R is the largest plus one, at most
      :data:`MAX_DCS` = 10**6);
    * ``resource``: a resource name (e.g. ``gpu``);
    * ``a``: the first-tier unit price ``a_k^r`` > 0, per unit per slot (used as written);
    * ``b``: the discounted unit price ``b_k^r``, ``0 <= b < a``;
    * ``threshold``: ``l_k^r`` >= 0, the amount above which ``b`` applies.

    ``a``, ``b`` and ``threshold`` are at most :data:`~clusteropt.instances.base.MAX_MAGNITUDE`
    (1e7), as every real-valued field of an instance.

    Every (dc, resource) pair appears exactly once.  Resources are ordered as ``resources`` when
    given (then the file must name exactly those), else by first appearance.  The file is read as
    UTF-8 (a byte-order mark is accepted); whatever it holds, the result is a table or one
    :class:`TraceError` (see :mod:`~clusteropt.instances.coflow.trace`, "Hostile input").

    Raises
    ------
    TraceError
        A bad line, with the file and line number (line 1 is the header): also bytes that are not
        UTF-8, CSV syntax errors (e.g. a field longer than ``csv.field_size_limit()``) and a ``dc``
        of :data:`MAX_DCS` or more; a missing pair is reported at the last line.
    FileNotFoundError

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "prices.csv"
    >>> _ = p.write_text("dc,resource,a,b,threshold\\n0,gpu,2,1.5,100\\n1,gpu,3,2,80\\n")
    >>> pr = read_prices_csv(p)
    >>> pr.a.tolist(), pr.b.tolist(), pr.threshold.tolist(), pr.resources
    ([[2.0], [3.0]], [[1.5], [2.0]], [[100.0], [80.0]], ('gpu',))
    >>> _ = p.write_text("dc,resource,a,b,threshold\\n0,gpu,2,2.5,100\\n")
    >>> read_prices_csv(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusteropt.instances.readers.TraceError: ...prices.csv:2: b = '2.5'; expected < a = 2.0 ...
    """
    path = Path(path)
    entries: dict[tuple[int, str], tuple[float, float, float]] = {}
    order: dict[str, int] = {}  # resource name -> column, in order (a dict: a hostile file may name many)
    for name in resources or ():
        order.setdefault(name, len(order))
    last_line = 1
    for row in csv_rows(path, PRICE_COLUMNS, "price rows"):
        last_line = row.lineno
        dc = row.count("dc", minimum=0, maximum=MAX_DCS - 1, why="MAX_DCS = 10**6 data centers")
        name = row.row["resource"].strip()
        if not name:
            raise row.error("resource", name, "a resource name")
        if resources is not None and name not in order:
            raise row.error("resource", name, f"one of {list(order)}")
        a = row.number("a", most=MAX_MAGNITUDE)
        if a <= 0:
            raise row.error("a", row.row["a"].strip(), "> 0")
        b = row.number("b", most=MAX_MAGNITUDE)
        if not b < a:
            raise row.error("b", row.row["b"].strip(), f"< a = {a!r} (the discounted price)")
        ell = row.number("threshold", most=MAX_MAGNITUDE)
        if (dc, name) in entries:
            raise row.error("dc, resource", f"{dc}, {name}", "a pair listed once")
        entries[dc, name] = (a, b, ell)
        order.setdefault(name, len(order))
    n_dcs = 1 + max(dc for dc, _ in entries)
    shown = list(order) if len(order) <= 10 else f"({len(order)} named)"
    for r in range(n_dcs):  # stops at the first gap, so never runs longer than the file: check before allocating
        for name in order:
            if (r, name) not in entries:
                raise TraceError(path, last_line, "dc, resource", f"{r}, {name}",
                                 f"a row for every dc 0 .. {n_dcs - 1} and resource {shown}; this pair is missing")
    table = np.zeros((3, n_dcs, len(order)))
    for (r, name), values in entries.items():
        table[:, r, order[name]] = values
    log.info("read %s: prices of %d resources in %d data centers", path, len(order), n_dcs)
    return BrokerPrices(a=table[0], b=table[1], threshold=table[2], resources=tuple(order))


def read_transfer_costs_csv(path: str | Path) -> np.ndarray:
    """Read the R x R transfer-cost matrix ``d^{rr'}`` (cost per unit of data from r to r').

    Format: R lines of R comma-separated numbers, no header; line r (counting data lines from
    0) holds ``d^{r0}, ..., d^{r(R-1)}``.  Blank lines and lines starting with ``#`` are ignored.
    Entries are finite, in ``0 .. MAX_MAGNITUDE`` (1e7, :mod:`clusteropt.instances.base`) and the
    diagonal is 0 (``d^{rr} = 0``, Sec. 3.1); R is at most
    :data:`MAX_DCS` = 10**6.  The file is read as UTF-8 (a byte-order mark is accepted).

    Raises
    ------
    TraceError
        A bad line, with the file and line number: a non-number or negative entry, a wrong entry
        count, a non-zero diagonal entry, or a row count that differs from the column count; also
        bytes that are not UTF-8, CSV syntax errors (e.g. a field longer than
        ``csv.field_size_limit()``) and more than :data:`MAX_DCS` entries in a row.
    FileNotFoundError

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.csv"
    >>> _ = p.write_text("# unit transfer cost, USD per GB\\n0,0.01\\n0.02,0\\n")
    >>> read_transfer_costs_csv(p).tolist()
    [[0.0, 0.01], [0.02, 0.0]]
    """
    path = Path(path)
    rows: list[list[float]] = []
    last_line = 0
    for lineno, cells in csv_records(path):
        last_line = lineno
        if not cells or all(not c.strip() for c in cells) or cells[0].lstrip().startswith("#"):
            continue
        width = len(rows[0]) if rows else len(cells)
        if len(cells) != width:
            raise TraceError(path, lineno, "entry count", len(cells), f"{width} (as the first row)")
        if width > MAX_DCS:
            raise TraceError(path, lineno, "entry count", width, f"at most MAX_DCS = {MAX_DCS} data centers")
        r = len(rows)
        values = []
        for col, text in enumerate(c.strip() for c in cells):
            if not NUMBER.fullmatch(text) or not math.isfinite(float(text)) or float(text) < 0:
                raise TraceError(path, lineno, f"d[{r}, {col}]", text, "a finite number >= 0")
            if float(text) > MAX_MAGNITUDE:
                raise TraceError(path, lineno, f"d[{r}, {col}]", text, "a finite number in 0 .. 1e7 "
                                 "(MAX_MAGNITUDE: solvers mishandle coefficients near 1e15)")
            values.append(float(text))
        if r < width and values[r] != 0:
            raise TraceError(path, lineno, f"d[{r}, {r}]", cells[r].strip(), "0 (d^{rr} = 0 on the diagonal)")
        if r >= width:
            raise TraceError(path, lineno, "row count", r + 1, f"{width} (a square matrix: as many rows "
                             "as columns)")
        rows.append(values)
    if not rows:
        raise TraceError(path, max(last_line, 1), "matrix", "", "an R x R matrix; the file has no data lines")
    if len(rows) != len(rows[0]):
        raise TraceError(path, last_line, "row count", len(rows), f"{len(rows[0])} (a square matrix: as many "
                         "rows as columns)")
    log.info("read %s: %d x %d transfer costs", path, len(rows), len(rows))
    return np.array(rows)


# ---------------------------------------------------------------------------------------------
# the Sec. 6.1 generator and presets

#: ``a_k^r`` ranges, USD per unit per day, for gpu, vcpu, memory (GB), storage (GB) (Sec. 6.1).
PAPER_PRICE_A = ((1.2, 9.6), (0.13, 0.24), (0.01, 0.1), (0.01, 0.1))
#: ``b_k^r / a_k^r`` range (Sec. 6.1).
PAPER_DISCOUNT = (0.7, 0.8)
#: ``l_k^r`` ranges per resource (Sec. 6.1).
PAPER_THRESHOLD = ((500, 600), (800, 1000), (1000, 1050), (1000, 1050))
#: ``n_{i,k}`` ranges per worker: 0-4 GPUs, 1-10 vCPUs, 2-32 GB memory, 5-10 GB storage (Sec. 6.1).
PAPER_WORKER_DEMAND = ((0, 4), (1, 10), (2, 32), (5, 10))
#: ``m_{i,k}`` ranges for the PS: no GPU, 1-10 vCPUs, 2-32 GB memory, 5-10 GB storage (Sec. 6.1).
PAPER_PS_DEMAND = ((0, 0), (1, 10), (2, 32), (5, 10))
#: Worker-PS parameter exchanges per slot: 4.32 GB / 30 MB = 82.8 GB / 575 MB = 144 (Sec. 6.1).
EXCHANGES_PER_SLOT = 144


def _pairs(value, n: int, what: str) -> list[tuple[float, float]]:
    """``n`` (low, high) ranges with ``0 <= low <= high``."""
    pairs = [tuple(float(x) for x in p) for p in value]
    if len(pairs) != n or any(len(p) != 2 for p in pairs):
        raise ValueError(f"{what} = {value!r}; expected {n} (low, high) ranges, one per resource")
    for lo, hi in pairs:
        if not 0 <= lo <= hi:
            raise ValueError(f"{what} = {value!r}; expected 0 <= low <= high in every range")
    return [(lo, hi) for lo, hi in pairs]  # each of length 2 (checked above)


def _range(value, what: str, *, positive: bool = False) -> tuple[float, float]:
    """A number (low = high) or a (low, high) range with ``0 <= low <= high`` (``0 < low`` if positive)."""
    lo, hi = (float(value), float(value)) if np.ndim(value) == 0 else (float(x) for x in value)
    if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo <= hi) or (positive and lo <= 0):
        raise ValueError(f"{what} = {value!r}; expected a number or a (low, high) range with "
                         f"{'0 < low' if positive else '0 <= low'} <= high")
    return lo, hi


def _int_range(value, what: str, minimum: int) -> tuple[int, int]:
    lo, hi = (value, value) if np.ndim(value) == 0 else tuple(value)
    whole = all(not isinstance(v, bool) and isinstance(v, int | np.integer) for v in (lo, hi))
    if not whole or not minimum <= lo <= hi:
        raise ValueError(f"{what} = {value!r}; expected an integer or a (low, high) integer range with "
                         f"{minimum} <= low <= high")
    return int(lo), int(hi)


#: What the paper's deployment rate "[0.05, 0.1] USD per GB" is per GB of (:func:`random_broker`).
DEPLOY_PER = ("model", "data")


def random_broker(n_jobs: int = 100, *, horizon: int = 50, n_dcs: int | None = None,
                  duration=(10, 30), arrivals: str = "bursty", data_per_slot=500.0, sources=(2, 5),
                  capacity=(16.0, 66.0), exchange_mb=(30.0, 575.0), transfer_range=(0.01, 0.02),
                  deploy_rate=(0.05, 0.1), image_gb=None, deploy_per: str = "model",
                  price_a=PAPER_PRICE_A, discount=PAPER_DISCOUNT, threshold=PAPER_THRESHOLD,
                  threshold_scale: float = 1.0, worker_demand=PAPER_WORKER_DEMAND, ps_demand=PAPER_PS_DEMAND,
                  resources=DEFAULT_RESOURCES, slot_days: float = 0.5, prices: BrokerPrices | None = None,
                  transfer_costs=None, seed=None, name: str = "") -> BrokerInstance:
    """An mlBroker instance with the paper's Sec. 6.1 simulation settings by default.

    From the paper (Sec. 6.1), with the sentence each range comes from:

    * ``horizon = 50``: "We simulate a geo-distributed ML system running for T in [50, 100]
      time slots (T = 50 by default); each time slot is half day long" (``slot_days = 0.5``).
    * ``n_dcs = 15``: "The default number of data centers in this system is 15."
    * ``worker_demand``: "we set the resource demand of each worker as follows: 0-4 GPUs, 1-10
      vCPUs, 2-32 GB memory and 5-10 GB storage"; ``ps_demand``: "we also set the resource demand
      of each parameter server as 1-10 vCPUs, 2-32 GB memory and 5-10 GB storage" (no GPU).
      Drawn as integers, uniformly.
    * ``capacity`` ``P_i`` in [16, 66] GB: "For each job, the processing capacity of a worker
      ranges in 16-66 GB".
    * ``data_per_slot`` 500 GB: "The size of the total training data accumulated during each time
      slot in a job is in [100, 700] GB (500 GB by default)".  A number fixes the total of every
      (job, active slot); a (low, high) range draws it uniformly per (job, slot).
    * ``exchange_mb`` [30, 575] MB and ``B_i``: "We set the transmission data size between each
      pair of worker and PS in [30, 575] MB, thus the overall transmission size per time slot,
      B_i, is set in [4.32, 82.8] GB": ``B_i = 144 w_i / 1000`` GB for the drawn size ``w_i``
      (144 = 4.32 GB / 30 MB = 82.8 GB / 575 MB exchanges per slot).
    * ``transfer_range`` [0.01, 0.02]: "The unit data transmission cost is in [0.01, 0.02] USD
      per GB."
    * ``deploy_rate`` [0.05, 0.1]: "The deployment cost for each job is set in [0.05, 0.1] USD per
      GB."
    * ``price_a``: "The unit prices of resources in different data centers before volume discount,
      a_k^r, are set in [1.2, 9.6], [0.13, 0.24], [0.01, 0.1], [0.01, 0.1] USD per day,
      respectively"; ``discount``: "The discounted unit prices, b_k^r, are within [70%, 80%] of
      the respective price before discount"; ``threshold``: "The thresholds, l_k^r, are set
      within [500, 600], [800, 1000], [1000, 1050], and [1000, 1050] for the respective resource
      types" (drawn as integers).

    Chosen here, where the paper is silent or gives no numbers:

    * **Per-slot prices**: the paper quotes prices per day and slots of half a day; ``a_k^r`` is
      the drawn daily price times ``slot_days`` (default 0.5), so C2 is the rent of one slot
      (``slot_days = 1`` keeps the quoted numbers).  ``b_k^r`` is the drawn fraction of that.
    * **Jobs and arrivals**: the paper follows Google cluster arrivals, which we do not ship;
      ``arrivals="bursty"`` uses :func:`~clusteropt.instances.gadget.instance.bursty_arrivals` (a two-state
      calm / burst process) for ``n_jobs`` (default 100, our choice) arrivals in ``1 .. T``;
      ``"uniform"`` draws them uniformly, ``"zero"`` puts all in slot 1.  A job stays
      ``duration`` slots (an integer drawn uniformly in 10 .. 30 by default, our choice; cut at
      T).
    * **Where data originate**: each job has a set of origin DCs (its size drawn uniformly in
      ``sources``, default 2-5, capped at R); each active slot's total is split among them by a
      flat Dirichlet draw.
    * **Transfer costs** are symmetric (``d^{rr'} = d^{r'r}``), each pair drawn once.
    * **Deployment cost**: ``c_i = rate_i * size_i``, the per-GB rate drawn in ``deploy_rate``.
      The paper does not say per GB of what.  ``deploy_per="model"`` (default): ``size_i`` is the
      model's parameter size ``w_i / 1000`` GB (0.03-0.575 GB: C3 is then about 0.01% of the
      total), or ``image_gb`` (a number or range, GB) when given; ``deploy_per="data"``: the job's
      mean training data per active slot (``data_per_slot``, 100-700 GB: c_i of 5-70 USD, the
      reading under which the regularization of (10) has something to trade).
    * ``threshold_scale`` multiplies the drawn thresholds (1 for the paper; the small presets use
      less, so that their few jobs can reach the discount).

    Overrides: ``prices`` (e.g. from :func:`read_prices_csv`, taken as per-slot prices, not
    scaled) replaces ``price_a``, ``discount``, ``threshold``; its resources must be
    ``resources``.  ``transfer_costs`` (an R x R matrix, e.g. from
    :func:`read_transfer_costs_csv`) replaces the drawn ``d``.  ``n_dcs`` defaults to 15, or to
    the size of an override.

    >>> inst = random_broker(6, horizon=5, n_dcs=3, duration=(1, 3), seed=0)
    >>> inst.n_jobs, inst.n_dcs, inst.n_resources, inst.horizon
    (6, 3, 4, 5)
    >>> bool(np.allclose(inst.data.sum(axis=2)[inst.data.sum(axis=2) > 0], 500.0))
    True
    """
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int | np.integer) or n_jobs < 1:
        raise ValueError(f"n_jobs = {n_jobs!r}; expected an integer >= 1")
    if isinstance(horizon, bool) or not isinstance(horizon, int | np.integer) or horizon < 1:
        raise ValueError(f"horizon = {horizon!r}; expected an integer >= 1")
    resources = tuple(resources)
    n_res = len(resources)
    sizes = {}
    if prices is not None:
        if tuple(prices.resources) != resources:
            raise ValueError(f"prices list resources {tuple(prices.resources)}; expected {resources}")
        sizes["prices"] = prices.n_dcs
    if transfer_costs is not None:
        transfer_costs = np.asarray(transfer_costs, dtype=float)
        sizes["transfer_costs"] = transfer_costs.shape[0]
    if n_dcs is not None:
        sizes["n_dcs"] = n_dcs
    if len(set(sizes.values())) > 1:
        raise ValueError(f"data center counts disagree: {sizes}")
    n_dcs = next(iter(sizes.values())) if sizes else 15
    if isinstance(n_dcs, bool) or not isinstance(n_dcs, int | np.integer) or n_dcs < 1:
        raise ValueError(f"n_dcs = {n_dcs!r}; expected an integer >= 1")
    dur = _int_range(duration, "duration", 1)
    src = _int_range(sources, "sources", 1)
    data_lo, data_hi = _range(data_per_slot, "data_per_slot")
    p_lo, p_hi = _range(capacity, "capacity", positive=True)
    w_lo, w_hi = _range(exchange_mb, "exchange_mb")
    d_lo, d_hi = _range(transfer_range, "transfer_range")
    c_lo, c_hi = _range(deploy_rate, "deploy_rate")
    if deploy_per not in DEPLOY_PER:
        raise ValueError(f"deploy_per = {deploy_per!r}; expected one of {', '.join(DEPLOY_PER)}")
    if deploy_per == "data" and image_gb is not None:
        raise ValueError("image_gb sizes the model image; with deploy_per = 'data' the size is the job's data "
                         "per slot: give one or the other")
    if not (math.isfinite(slot_days) and slot_days > 0):
        raise ValueError(f"slot_days = {slot_days!r}; expected > 0")
    if not (math.isfinite(threshold_scale) and threshold_scale >= 0):
        raise ValueError(f"threshold_scale = {threshold_scale!r}; expected >= 0")
    wd = _pairs(worker_demand, n_res, "worker_demand")
    pd = _pairs(ps_demand, n_res, "ps_demand")
    rng = np.random.default_rng(seed)

    # -- data centers: prices and transfer costs -------------------------------------------------
    if prices is None:
        pa = _pairs(price_a, n_res, "price_a")
        th = _pairs(threshold, n_res, "threshold")
        disc = _range(discount, "discount", positive=True)
        if disc[1] >= 1:
            raise ValueError(f"discount = {discount!r}; expected fractions below 1 (b < a)")
        a = np.column_stack([rng.uniform(lo, hi, n_dcs) for lo, hi in pa]) * slot_days
        b = a * rng.uniform(disc[0], disc[1], (n_dcs, n_res))
        ell = np.column_stack([rng.integers(int(lo), int(hi) + 1, n_dcs) for lo, hi in th]) * threshold_scale
    else:
        a, b, ell = prices.a, prices.b, prices.threshold
    if transfer_costs is None:
        upper = np.triu(rng.uniform(d_lo, d_hi, (n_dcs, n_dcs)), k=1)
        transfer_costs = upper + upper.T

    # -- jobs -------------------------------------------------------------------------------------
    if arrivals == "bursty":
        arr = bursty_arrivals(n_jobs, horizon, seed=rng)
    elif arrivals == "uniform":
        arr = np.sort(rng.integers(1, horizon + 1, n_jobs))
    elif arrivals == "zero":
        arr = np.ones(n_jobs, dtype=np.int64)
    else:
        raise ValueError(f"arrivals = {arrivals!r}; expected 'bursty', 'uniform' or 'zero'")
    length = rng.integers(dur[0], dur[1] + 1, n_jobs)
    last = np.minimum(arr + length - 1, horizon)
    data = np.zeros((n_jobs, horizon, n_dcs))
    for i in range(n_jobs):
        k = min(int(rng.integers(src[0], src[1] + 1)), n_dcs)
        origins = np.sort(rng.choice(n_dcs, size=k, replace=False))
        n_slots = int(last[i] - arr[i] + 1)
        total = rng.uniform(data_lo, data_hi, n_slots) if data_hi > data_lo else np.full(n_slots, data_lo)
        window = data[i, arr[i] - 1:last[i]]  # a view, (n_slots, R)
        window[:, origins] = rng.dirichlet(np.ones(k), n_slots) * total[:, None]
    cap = rng.uniform(p_lo, p_hi, n_jobs)
    n_dem = np.column_stack([rng.integers(int(lo), int(hi) + 1, n_jobs) for lo, hi in wd]).astype(float)
    m_dem = np.column_stack([rng.integers(int(lo), int(hi) + 1, n_jobs) for lo, hi in pd]).astype(float)
    w_gb = rng.uniform(w_lo, w_hi, n_jobs) / 1000.0
    traffic = EXCHANGES_PER_SLOT * w_gb
    if image_gb is None:
        image = w_gb
    else:
        i_lo, i_hi = _range(image_gb, "image_gb")
        image = rng.uniform(i_lo, i_hi, n_jobs)
    rate = rng.uniform(c_lo, c_hi, n_jobs)
    if deploy_per == "data":
        active_slots = (data.sum(axis=2) > 0).sum(axis=1)
        image = data.sum(axis=(1, 2)) / np.maximum(active_slots, 1)
    deploy = rate * image
    return BrokerInstance(horizon=int(horizon), price_a=a, price_b=b, threshold=ell, transfer_cost=transfer_costs,
                          arrival=arr, last_slot=last, data=data, capacity=cap, worker_demand=n_dem,
                          ps_demand=m_dem, traffic=traffic, deploy_cost=deploy, resources=resources,
                          name=name)


#: Preset names of :func:`broker_preset`.
PRESETS = ("paper", "small", "tiny")


def broker_preset(preset: str = "paper", *, n_jobs: int | None = None, jobs: int | None = None,
                  horizon: int | None = None, prices: BrokerPrices | None = None, transfer_costs=None, seed=None,
                  deploy_per: str = "model") -> BrokerInstance:
    """Named settings (all other parameters as :func:`random_broker`); ``n_jobs`` jobs (``jobs=`` is
    the same, as in the CLI's ``--jobs``; default per preset).

    ``"paper"``
        Sec. 6.1: T = 50, R = 15, K = 4, ``n_jobs`` jobs (default 100, our choice) with the
        paper's ranges (:func:`random_broker` defaults).
    ``"small"``
        R = 5, T = 10, 8 jobs staying 2-6 slots with data from 1-3 DCs, thresholds scaled by
        0.1 (so that a few jobs reach the discount): for per-slot MILPs and notebooks.
    ``"tiny"``
        R = 3, T = 4, 3 jobs staying 1-3 slots with data from 1-2 DCs, uniform arrivals,
        thresholds scaled by 0.1: small enough for the offline MILP (8) and hand checks.

    ``prices`` / ``transfer_costs`` override the draws (their size then sets R); ``deploy_per``
    is :func:`random_broker`'s reading of the deployment cost.
    """
    if horizon is not None and (isinstance(horizon, bool) or not isinstance(horizon, int | np.integer)
                                or horizon < 1):
        raise ValueError(f"horizon = {horizon!r}; expected an integer >= 1 (or None for the preset's)")
    jobs = job_count(n_jobs, jobs, None)
    common = {"prices": prices, "transfer_costs": transfer_costs, "seed": seed, "deploy_per": deploy_per}
    override = prices is not None or transfer_costs is not None
    if preset == "paper":
        n = 100 if jobs is None else jobs
        return random_broker(n, horizon=horizon or 50, name=f"paper-{n}", **common)
    if preset == "small":
        n = 8 if jobs is None else jobs
        return random_broker(n, horizon=horizon or 10, n_dcs=None if override else 5,
                             duration=(2, 6), sources=(1, 3), threshold_scale=0.1, name=f"small-{n}", **common)
    if preset == "tiny":
        n = 3 if jobs is None else jobs
        return random_broker(n, horizon=horizon or 4, n_dcs=None if override else 3,
                             duration=(1, 3), sources=(1, 2), arrivals="uniform", threshold_scale=0.1,
                             name=f"tiny-{n}", **common)
    raise ValueError(f"unknown preset {preset!r}; expected one of {PRESETS}")
