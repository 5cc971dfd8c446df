"""GADGET's fast per-slot solver (paper 000, problem (10)) and the greedy fill of the others.

:func:`greedy_slot` solves one slot's problem (10) greedily with :func:`place_ring`, or, given a
``start`` allocation (an ILP optimum, a rounded LP embedding), hands the capacity it leaves idle
to the jobs it did not place.  The slot's data is a :class:`clusteropt.models.gadget.gvne.SlotProblem`
(only its attributes are read, so this module needs no solver).
"""

from __future__ import annotations

import numpy as np

from clusteropt.algorithms.gadget.placement import Residual, place_ring
from clusteropt.decisions.gadget import SlotAllocation
from clusteropt.instances.gadget.instance import GadgetInstance, utility_value

__all__ = ["future_density", "greedy_slot", "place_job"]


def greedy_slot(problem, start: SlotAllocation | None = None, paths=None, *,
                zero_gain: bool = True) -> tuple[SlotAllocation, float]:
    """The fast per-slot solver, and the work-conserving fill of the others.

    Jobs go by best utility gain per worker this slot (``max_kappa pi[i, kappa] / kappa``), ties
    (most often: gains of 0) by the best gain per worker-slot still reachable
    (:func:`future_density`), then by arrival;
    each takes the ring size with the largest gain that :func:`place_ring` fits into what is
    left (the larger size on equal gains), zero gains included: with a sigmoid utility a job far
    below its inflection gains almost nothing from one slot (``pi`` underflows to 0), yet it must
    run to ever get there, and an allocation with more zero-gain workers is still an optimum of
    (10) because every ``mu_i`` is non-decreasing.  Negative gains (the quadratic utility past
    its peak) are never taken.  Jobs already placed in ``start`` keep their placement.

    ``zero_gain=False`` takes only ring sizes that gain something (more than ``1e-12`` times the
    largest ``lambda_1``; smaller gains count as 0, as in the job order): the greedy solution of
    problem (10) itself.  GADGET's greedy slot solver runs it so, then (with its fill on) this
    function again with that result as ``start`` and ``zero_gain=True``: the fill only takes
    what the first pass left idle, so it never lowers the slot's gain.

    ``paths`` are the cluster's server-to-server paths (:meth:`Cluster.paths`; computed when not
    given: pass them when calling slot after slot).  Returns the allocation and its gain (Eq. (12))
    over the jobs it placed.
    """
    inst = problem.inst
    cl = inst.cluster
    alloc = SlotAllocation.empty(inst.n_jobs, cl.n_servers) if start is None else SlotAllocation(
        np.array(start.workers, dtype=np.int64), dict(start.rings))
    res = Residual.full(cl, paths)
    for i in np.flatnonzero(alloc.workers.sum(axis=1)).tolist():
        workers = {int(s): int(n) for s, n in enumerate(alloc.workers[i]) if n}
        res.take(workers, inst.per_worker[i], alloc.rings.get(i), float(inst.bandwidth[i]))
    placed = alloc.workers.sum(axis=1) > 0
    density = np.array([float(np.max(p / np.arange(1, p.size + 1))) for p in problem.pi])
    scale = float(np.abs(inst.utility_params[:, 0]).max(initial=1.0))
    density[density < 1e-12 * scale] = 0.0  # underflowed sigmoid gains are ties, not an order
    future = future_density(problem)
    arrival = inst.arrival[problem.jobs]
    gain = 0.0
    for j in np.lexsort((problem.jobs, arrival, -future, -density)).tolist():
        i, pi = int(problem.jobs[j]), problem.pi[j]
        if placed[i]:
            continue
        sizes = np.arange(1, pi.size + 1)
        for k in sizes[np.lexsort((-sizes, -pi))].tolist():
            if pi[k - 1] < 0 or (not zero_gain and pi[k - 1] <= 1e-12 * scale):
                break
            if place_job(inst, res, alloc, i, k):
                gain += float(pi[k - 1])
                break
    return alloc, gain


def place_job(inst: GadgetInstance, res: Residual, alloc: SlotAllocation, i: int, k: int) -> bool:
    """Place k workers of job i with :func:`place_ring` and commit them to ``res`` and ``alloc``."""
    got = place_ring(res, k, inst.per_worker[i], float(inst.bandwidth[i]))
    if got is None:
        return False
    workers, ring = got
    res.take(workers, inst.per_worker[i], ring, float(inst.bandwidth[i]))
    for s, n in workers.items():
        alloc.workers[i, s] = n
    if ring is not None:
        alloc.rings[i] = ring
    return True


def future_density(problem) -> np.ndarray:
    """``max_m (mu_i(zeta_i (z + m)) - mu_i(zeta_i z)) / m`` over the worker-slots ``m = 1 .. M``
    job i can still get (``M = min(budget left, N_i * slots left)``), per active job.

    The utility per worker-slot a job can still earn; 0 for a saturated job.  Only used to order
    zero-gain jobs in :func:`greedy_slot`.
    """
    inst = problem.inst
    out = np.zeros(problem.jobs.size)
    left_slots = inst.horizon - problem.t + 1
    budget = inst.budget  # computed from F and l on each access: once here
    for j, i in enumerate(problem.jobs.tolist()):
        z = problem.z_prev[i]
        most = int(min(budget[i] - z, inst.max_workers[i] * left_slots))
        if most < 1:
            continue
        m = np.arange(0, most + 1, dtype=float)
        u = utility_value(inst.utility, inst.utility_params[i:i + 1], inst.zeta[i] * (z + m)[None, :])[0]
        out[j] = float(np.max((u[1:] - u[0]) / m[1:]))
    return out
