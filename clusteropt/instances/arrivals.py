"""Arrival processes shared by the generators of several systems.

:func:`bursty_arrivals` stands in for the cluster-trace arrivals of GADGET (paper 000, Sec. VI-1)
and is mlBroker's ``arrivals="bursty"`` (:func:`clusteropt.instances.broker.random_broker`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["bursty_arrivals"]


def bursty_arrivals(n_jobs: int, horizon: int, *, burst_rate: float = 5.0, p_start: float = 0.1,
                    p_end: float = 0.3, seed=None) -> np.ndarray:
    """Sorted arrival slots in ``1 .. horizon`` from a two-state bursty process.

    Stands in for the Google cluster arrivals the paper uses (Sec. VI-1), which we do not ship: a
    Markov chain switches between calm (intensity 1) and burst (intensity ``burst_rate``) slots,
    entering a burst with probability ``p_start`` and leaving it with ``p_end`` per slot; the
    ``n_jobs`` arrivals are spread over slots in proportion to the intensity (multinomial).
    Burst arrivals cluster, so queues form and drain as in the trace.

    >>> a = bursty_arrivals(20, 50, seed=1)
    >>> len(a), int(a.min()) >= 1, int(a.max()) <= 50
    (20, True, True)
    """
    rng = np.random.default_rng(seed)
    if n_jobs < 0 or horizon < 1:
        raise ValueError(f"n_jobs = {n_jobs}, horizon = {horizon}; expected n_jobs >= 0 and horizon >= 1")
    state = np.zeros(horizon, dtype=bool)
    u = rng.random(horizon)
    for t in range(1, horizon):
        state[t] = (u[t] >= p_end) if state[t - 1] else (u[t] < p_start)
    w = np.where(state, burst_rate, 1.0)
    counts = rng.multinomial(n_jobs, w / w.sum())
    return np.repeat(np.arange(1, horizon + 1), counts)
