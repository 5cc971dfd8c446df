"""Synthetic, trace-like coflow workloads on a big switch (paper 001).

:func:`random_coflows` is a *synthetic stand-in* for the public Facebook coflow trace
(``FB2010-1Hr-150-0.txt``, read by :func:`~clusteropt.instances.coflow.trace.read_coflow_benchmark`):
it reproduces the trace's qualitative shape (most coflows narrow, a few spanning most ports,
heavy-tailed sizes, Poisson-like arrivals) with documented, tunable distributions, not the trace's
exact statistics.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from clusteropt.instances.base import FLOAT_INT_LIMIT
from clusteropt.instances.coflow.instance import CoflowInstance

__all__ = ["random_coflows"]

log = logging.getLogger(__name__)

WIDTHS = ("heavy", "narrow", "uniform")
SIZES = ("heavy", "uniform", "unit")
ARRIVALS = ("poisson", "bursty")
WEIGHTS = ("unit", "random")

NARROW_FRACTION = 0.7
"""Share of narrow coflows (one mapper or one reducer) under ``width="heavy"``."""
PARETO_ALPHA = 1.1
"""Tail index of the per-coflow flow-size scale under ``size="heavy"``."""
FLOW_SIGMA = 0.5
"""Log-standard deviation of a flow's size around its coflow's scale under ``size="heavy"``."""
BURST_MEAN = 5.0
"""Mean number of coflows per batch under ``arrival="bursty"``."""
MAX_CELLS = 2**27
"""Most ``n_coflows * n_ports``: the generator draws two tables of that size."""


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} = {value!r}; expected one of {', '.join(map(repr, allowed))}")
    return value


def _count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} = {value!r}; expected an integer >= 1")
    return int(value)


def _positive(name: str, value: object) -> float:
    if (isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating)
            or not math.isfinite(value) or value <= 0):
        raise ValueError(f"{name} = {value!r}; expected a positive finite number")
    return float(value)


def _log_uniform(rng: np.random.Generator, high: int, size: tuple[int, ...]) -> np.ndarray:
    """Integers in ``[1, high]`` with ``P(w <= x) ~ log(x + 1) / log(high + 1)``."""
    return np.minimum(np.floor((high + 1.0) ** rng.random(size)), high).astype(np.int64)


def random_coflows(
    n_coflows: int = 50,
    n_ports: int = 20,
    *,
    width: str = "heavy",
    size: str = "heavy",
    arrival: str = "poisson",
    load: float = 0.9,
    release: bool = True,
    weights: str = "unit",
    units_scale: float = 1.0,
    max_units: int | None = 1000,
    seed: int | np.random.Generator | None = None,
) -> CoflowInstance:
    """Random coflows shaped like the Facebook coflow trace (a synthetic stand-in, not the trace).

    Every coflow j has ``M_j`` mapper ports (distinct inputs) and ``R_j`` reducer ports (distinct
    outputs), chosen uniformly at random, and one flow per (mapper, reducer) pair.  A port may be
    both a mapper and a reducer of a coflow (a rack-local flow from input p to output p), as in the
    trace.  The draws, in this fixed order from one ``np.random.default_rng(seed)``:

    * **Width** ``(M_j, R_j)``:

      - ``"heavy"`` (default): with probability ``NARROW_FRACTION = 0.7`` the coflow is *narrow*,
        one side (mappers or reducers, equally likely) being a single port; otherwise it is *wide*.
        Every other side count is log-uniform on ``1..n_ports``
        (``w = floor((n_ports + 1) ** U)``, U uniform on [0, 1)), so most coflows are small and a
        few span most ports (about 14 % of the log-uniform draws exceed half the ports at 150
        ports).  Among the public trace's first 89 coflows about three quarters have one mapper
        or one reducer, and widths reach 147 mappers x 145 reducers.
      - ``"narrow"``: every coflow narrow as above.
      - ``"uniform"``: ``M_j`` and ``R_j`` uniform on ``1..n_ports``.

    * **Size** of a flow, ``x`` (in units before scaling):

      - ``"heavy"`` (default): a coflow scale ``s_j ~ Pareto(alpha = 1.1, x_min = 1)`` (median
        1.9, infinite variance) times a per-flow factor ``exp(0.5 Z)``, Z standard normal, so
        flows of one coflow have similar sizes and coflows differ by orders of magnitude;
      - ``"uniform"``: ``x`` uniform on [0, 10) (1..10 units after rounding up);
      - ``"unit"``: ``x = 1``.

      ``units = min(max(ceil(units_scale * x), 1), max_units)``: integers ``>= 1``, capped.

    * **Arrivals** (slots): the offered load is set from the drawn demands: with ``B`` the total
      work of all coflows on the busiest port (input or output), the mean interarrival time is
      ``B / (load * n_coflows)``, so while the coflows arrive the busiest port is offered
      ``load`` units per slot on average (its capacity is 1).  The first coflow arrives at 0.

      - ``"poisson"`` (default): exponential interarrival times;
      - ``"bursty"``: batch Poisson: batches of geometric size (mean ``BURST_MEAN = 5``) arrive
        with exponential gaps of mean ``5 x`` the interarrival time; a batch shares one arrival.

      ``release = floor(arrival time)``; coflow indices follow arrival order.  With
      ``release=False`` every release is 0 (the arrivals are still drawn, so the flows and
      weights do not depend on ``release``; likewise ``load`` only rescales the arrival times).

    * **Weights**: ``"unit"`` (default): all 1.0; ``"random"``: integers uniform on 1..10 (as
      floats).

    Parameters
    ----------
    n_coflows, n_ports : int
        Number of coflows n and switch ports (``n_inputs = n_outputs = n_ports``); both ``>= 1``,
        their product at most ``MAX_CELLS = 2**27``.
    width : {"heavy", "narrow", "uniform"}
    size : {"heavy", "uniform", "unit"}
    arrival : {"poisson", "bursty"}
    load : float, default 0.9
        Offered load of the busiest port (positive).
    release : bool, default True
        False: all coflows released at slot 0.
    weights : {"unit", "random"}
    units_scale : float, default 1.0
        Multiplies flow sizes before rounding up (positive).
    max_units : int or None, default 1000
        Cap on a flow's units (the Pareto tail's cap); None: no cap.  ``max_units=3`` with small
        ``n_coflows`` / ``n_ports`` gives instances small enough for exact MILPs.
    seed : int, np.random.Generator or None
        Randomness, normalized once with ``np.random.default_rng``.

    Returns
    -------
    CoflowInstance
        Ids ``1..n`` in arrival order.

    Raises
    ------
    ValueError
        A bad parameter; the message names it and the allowed values.  Also when the draws leave
        the instance's range (more than ``2**53`` units in all, or releases beyond ``2**53`` minus
        that): the message names ``units_scale`` or ``load``.

    References
    ----------
    Coflow-benchmark trace FB2010-1Hr-150-0 (github.com/coflow/coflow-benchmark); paper 001's
    big-switch coflow model.

    Examples
    --------
    >>> inst = random_coflows(4, 3, max_units=3, seed=0)
    >>> inst.n_coflows, inst.n_inputs, int(inst.units.max()) <= 3
    (4, 3, True)
    >>> bool((random_coflows(4, 3, seed=1).release == random_coflows(4, 3, seed=1).release).all())
    True
    >>> random_coflows(width="wide")
    Traceback (most recent call last):
    ...
    ValueError: width = 'wide'; expected one of 'heavy', 'narrow', 'uniform'
    """
    n = _count("n_coflows", n_coflows)
    p = _count("n_ports", n_ports)
    width = _choice("width", width, WIDTHS)
    size = _choice("size", size, SIZES)
    arrival = _choice("arrival", arrival, ARRIVALS)
    load = _positive("load", load)
    if not isinstance(release, bool | np.bool_):
        raise ValueError(f"release = {release!r}; expected True or False")
    weights = _choice("weights", weights, WEIGHTS)
    units_scale = _positive("units_scale", units_scale)
    if max_units is not None:
        max_units = _count("max_units", max_units)
    if n * p > MAX_CELLS:
        raise ValueError(f"n_coflows * n_ports = {n} * {p}; expected at most 2**27 (the generator draws "
                         "n_coflows x n_ports tables of port orders)")
    rng = np.random.default_rng(seed)

    # -- widths and ports -------------------------------------------------------------------
    if width == "uniform":
        m, r = rng.integers(1, p + 1, size=(2, n))
    else:
        m, r = _log_uniform(rng, p, (2, n))
        narrow = rng.random(n) < (NARROW_FRACTION if width == "heavy" else 1.0)
        one_mapper = rng.random(n) < 0.5
        m = np.where(narrow & one_mapper, 1, m)
        r = np.where(narrow & ~one_mapper, 1, r)
    mapper_ports = rng.random((n, p)).argsort(axis=1)  # row j: a random permutation of the ports
    reducer_ports = rng.random((n, p)).argsort(axis=1)

    flows = m * r
    coflow = np.repeat(np.arange(n), flows)
    q = np.arange(coflow.size) - np.repeat(np.cumsum(flows) - flows, flows)  # position in its coflow
    inputs = mapper_ports[coflow, q // r[coflow]]
    outputs = reducer_ports[coflow, q % r[coflow]]

    # -- sizes ---------------------------------------------------------------------------------
    if size == "heavy":
        scale = rng.pareto(PARETO_ALPHA, n) + 1.0
        x = scale[coflow] * np.exp(FLOW_SIGMA * rng.standard_normal(coflow.size))
    elif size == "uniform":
        x = rng.uniform(0.0, 10.0, coflow.size)
    else:
        x = np.ones(coflow.size)
    units = np.maximum(np.ceil(units_scale * x), 1.0)
    if max_units is not None:
        units = np.minimum(units, float(max_units))
    total = float(units.sum())
    if not total <= FLOAT_INT_LIMIT:  # the instance keeps slot numbers exact (CoflowInstance)
        raise ValueError(f"units_scale = {units_scale!r} gives {total:.3g} units in all; expected at most 2**53 "
                         "(lower units_scale or set max_units)")
    units = units.astype(np.int64)

    # -- arrivals ------------------------------------------------------------------------------
    port_work = np.bincount(inputs, weights=units, minlength=p)
    port_work = np.maximum(port_work, np.bincount(outputs, weights=units, minlength=p))
    gap = float(port_work.max()) / (load * n)
    if arrival == "poisson":
        gaps = rng.exponential(gap, n)
        times = np.concatenate(([0.0], np.cumsum(gaps[:-1])))
    else:
        batch_sizes = rng.geometric(1.0 / BURST_MEAN, n)
        batch = np.searchsorted(np.cumsum(batch_sizes), np.arange(n), side="right")
        gaps = rng.exponential(BURST_MEAN * gap, n)
        times = np.concatenate(([0.0], np.cumsum(gaps[:-1])))[batch]
    if release and not times[-1] <= FLOAT_INT_LIMIT - total:  # times are sorted
        raise ValueError(f"load = {load!r} spreads the arrivals over {times[-1]:.3g} slots; expected at most "
                         "2**53 minus the total units (raise load)")
    releases = np.floor(times).astype(np.int64) if release else np.zeros(n, dtype=np.int64)

    # -- weights -------------------------------------------------------------------------------
    weight = rng.integers(1, 11, n).astype(float) if weights == "random" else np.ones(n)

    inst = CoflowInstance(n_inputs=p, n_outputs=p, coflow=coflow, input=inputs, output=outputs,
                          units=units, weight=weight, release=releases)
    log.info("random_coflows: %d coflows, %d ports, %d flows, %d units, bottleneck work %d, "
             "mean interarrival %.3g slots", n, p, inst.n_flows, int(units.sum()), int(port_work.max()), gap)
    return inst
