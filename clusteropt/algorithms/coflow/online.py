"""Online coflow orderings: re-plan on the remaining demand at arrivals, continue the greedy schedule.

The orderings of :mod:`~clusteropt.algorithms.coflow.orderings` are *offline* (clairvoyant) when they
are computed once for the whole instance: ``primal-dual`` with release times, ``sincronia`` and
``lp-order`` look at coflows that have not arrived yet, so the schedule of an early slot can change
when a later coflow is dropped from the input.  ``sebf``, ``fifo`` and the size orders happen to give
online schedules with the greedy (a coflow's priority is a function of itself alone), but they never
look at what is left of a coflow.

:func:`online_greedy_schedule` is the online counterpart of every ordering (the ``--online`` flag of
``clusteropt run``).  Time is cut into windows at *re-plan slots*: every slot in which a coflow
becomes available (a coflow released at ``r`` may send from slot ``r + 1``), or, with ``epoch = P``,
the slots ``s_0, s_0 + P, ...`` from the first arrival.  At a re-plan slot ``s`` the coflows
available by ``s`` and not finished are ordered by the policy on their *remaining* demand, as a
residual instance in which every one of them is released (release 0); between re-plan slots a
newly available coflow joins the order last (FIFO among themselves).  Within a window the order is
fixed and the schedule is :func:`~clusteropt.algorithms.coflow.schedulers.greedy_schedule`'s
priority greedy restricted to the window's slots, on the remaining units; what a window leaves
carries over.  Each slot is thereby decided from the coflows available by its window's start
only, so cutting the input after any time leaves every earlier slot unchanged (the cut test of
``tests/algorithms/test_coflow_online.py``).

Per policy, on the residual instance (``L``: remaining units per coflow and port):

``primal-dual``
    :func:`~clusteropt.algorithms.coflow.orderings.primal_dual_order` on ``L`` with every release 0,
    so its release branch never fires: it is BSSI, the same order as ``sincronia`` (the offline
    primal-dual with release times is FIFO on arrival-spread workloads, see its docstring; re-planning
    on what is present is the release-aware reading).  Listed under both names.
``sincronia``
    BSSI on ``L``.  Sincronia's authors re-order at epochs too; ``epoch = P`` approximates theirs.
``sebf``
    Varys's smallest effective bottleneck first on ``L`` (the remaining bottleneck, as Varys does).
``fifo``
    Release order: no re-planning changes it (the same schedule as the offline greedy).
``smallest-first`` / ``largest-first``
    By remaining total units (smallest first: shortest remaining processing time).
``lp-order``
    The concurrent-open-shop LP (:func:`clusteropt.models.coflow.bound.cos_lower_bound`) of the residual
    instance, solved at every re-plan slot: slow on large inputs (use ``epoch``).

References
----------
Paper 001 (Ahmadi, Khuller, Purohit, Yang, coflow scheduling): the orderings and the greedy; Varys
(Chowdhury et al., SIGCOMM 2014) for SEBF on remaining demand; Sincronia (Agarwal et al., SIGCOMM
2018) for online epochs.
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

from clusteropt.algorithms.coflow.orderings import primal_dual_order, sebf_order, size_order
from clusteropt.algorithms.coflow.schedulers import _fill, _merge_blocks, flows_in_order
from clusteropt.decisions.coflow import CoflowSchedule
from clusteropt.instances.coflow.instance import CoflowInstance

__all__ = ["ONLINE_POLICIES", "OnlineSchedule", "online_greedy_schedule", "residual_order"]

log = logging.getLogger(__name__)

#: The orderings :func:`online_greedy_schedule` re-plans with (every ordering of ``run_coflow``).
ONLINE_POLICIES = ("primal-dual", "lp-order", "sincronia", "sebf", "fifo", "smallest-first", "largest-first")


@dataclasses.dataclass(frozen=True)
class OnlineSchedule:
    """Result of :func:`online_greedy_schedule`.

    Attributes
    ----------
    schedule : CoflowSchedule
        Its ``order`` is the coflows by completion slot (ties by index): the online run has no one
        static order.
    replan_slots : int array
        The slots at which the order was recomputed on the remaining demand.
    windows : int
        Windows simulated (re-plan slots plus arrival slots between them).
    """

    schedule: CoflowSchedule
    replan_slots: np.ndarray
    windows: int


def residual_order(inst: CoflowInstance, policy: str, present: np.ndarray, remaining: np.ndarray, *,
                   kappa: float = 0.5, solver: str = "highs", loads: np.ndarray | None = None) -> np.ndarray:
    """The order of ``present`` (coflow indices) by ``policy`` on their remaining units.

    ``remaining`` holds every flow's units left (instance flow order).  ``loads`` (optional,
    ``(n_coflows, n_ports)``): every coflow's remaining units per port, kept by the caller (as
    :func:`online_greedy_schedule` does across windows) instead of summed here from ``remaining``;
    the same integers either way.  Returns ``present`` re-ordered, highest priority first (module
    docstring for each policy).
    """
    present = np.asarray(present, dtype=np.int64)
    if present.size <= 1:
        return present
    if policy == "fifo":
        assert inst.ids is not None  # validation sets the default ids
        return present[np.lexsort((inst.ids[present], inst.release[present]))]
    if loads is not None and policy != "lp-order":
        loads = np.asarray(loads, dtype=np.int64)[present]
    else:
        pos = np.full(inst.n_coflows, -1, dtype=np.int64)
        pos[present] = np.arange(present.size)
        local = pos[inst.coflow]
        keep = (local >= 0) & (remaining > 0)
        units = remaining[keep]
        size = present.size * inst.n_ports
        row = local[keep] * inst.n_ports
        loads = (np.bincount(row + inst.input[keep], weights=units, minlength=size)
                 + np.bincount(row + inst.n_inputs + inst.output[keep], weights=units, minlength=size))
        loads = loads.astype(np.int64).reshape(present.size, inst.n_ports)  # exact: integer sums < 2^53
    weight = inst.weight[present]
    if policy in ("primal-dual", "sincronia"):
        local_order = primal_dual_order(loads, weight, None, kappa=kappa).order
    elif policy == "sebf":
        local_order = sebf_order(loads, weight, None)
    elif policy in ("smallest-first", "largest-first"):
        local_order = size_order(loads[:, : inst.n_inputs].sum(axis=1), largest_first=policy == "largest-first")
    elif policy == "lp-order":
        from clusteropt.models.coflow.bound import cos_lower_bound

        sub = CoflowInstance(inst.n_inputs, inst.n_outputs, coflow=local[keep], input=inst.input[keep],
                             output=inst.output[keep], units=units, weight=weight,
                             release=np.zeros(present.size, dtype=np.int64))
        _, completion, _ = cos_lower_bound(sub, solver=solver)
        local_order = np.argsort(np.asarray(completion, dtype=float), kind="stable")
    else:
        raise ValueError(f"policy = {policy!r}; expected one of {', '.join(ONLINE_POLICIES)}")
    return present[np.asarray(local_order, dtype=np.int64)]


def online_greedy_schedule(inst: CoflowInstance, policy: str = "sebf", *, epoch: int | None = None,
                           kappa: float = 0.5, solver: str = "highs") -> OnlineSchedule:
    """Re-plan ``policy`` on the remaining demand at arrivals (or every ``epoch`` slots); greedy in between.

    Parameters
    ----------
    inst : CoflowInstance
    policy : str
        One of :data:`ONLINE_POLICIES`.
    epoch : int, optional
        Re-plan every ``epoch`` slots from the first arrival (coflows arriving in between join the
        order last); default: at every slot in which a coflow arrives.
    kappa : float
        The primal-dual threshold (irrelevant online: module docstring).
    solver : str
        LP solver of ``lp-order``.

    Examples
    --------
    Coflow 0 (6 units on port pair 0) may send from slot 1; coflow 1 (4 units on the same ports)
    from slot 5.  Static SEBF ranks coflow 1 first (4 < 6) and preempts coflow 0 with 2 units
    left; re-planned at slot 5 on the remaining demand (2 < 4), coflow 0 finishes first:

    >>> inst = CoflowInstance(1, 1, coflow=[0, 1], input=[0, 0], output=[0, 0], units=[6, 4],
    ...                       weight=[1.0, 1.0], release=[0, 4])
    >>> run = online_greedy_schedule(inst, "sebf")
    >>> [(start, n, f.tolist()) for start, n, f in run.schedule.blocks()]
    [(1, 4, [[0, 0, 0]]), (5, 2, [[0, 0, 0]]), (7, 4, [[1, 0, 0]])]
    >>> run.replan_slots.tolist()
    [1, 5]
    """
    if policy not in ONLINE_POLICIES:
        raise ValueError(f"policy = {policy!r}; expected one of {', '.join(ONLINE_POLICIES)}")
    if epoch is not None and (isinstance(epoch, bool) or int(epoch) != epoch or int(epoch) < 1):
        raise ValueError(f"epoch = {epoch!r}; expected a whole number of slots >= 1 (or None: every arrival)")
    n = inst.n_coflows
    avail = inst.release.astype(np.int64) + 1
    remaining = inst.units.astype(np.int64).copy()
    left = np.bincount(inst.coflow, weights=remaining, minlength=n).astype(np.int64)
    port_left = inst.loads()  # (n, ports): units left per coflow and port, for residual_order
    out_port = inst.n_inputs + inst.output
    arrivals = np.unique(avail).tolist()
    by_slot: dict[int, list[int]] = {}
    assert inst.ids is not None  # validation sets the default ids
    for j in np.lexsort((inst.ids, inst.release)).tolist():
        by_slot.setdefault(int(avail[j]), []).append(j)
    starts: list[np.ndarray] = []
    lengths: list[np.ndarray] = []
    cof: list[np.ndarray] = []
    ins: list[np.ndarray] = []
    outs: list[np.ndarray] = []
    replans: list[int] = []
    order: list[int] = []
    k = 0  # next arrival slot index
    s = arrivals[0] if arrivals else 0
    next_replan = s
    windows = 0
    while True:
        order = [j for j in order if left[j] > 0]
        if not order and k == len(arrivals):
            break
        if not order and s < arrivals[k]:
            s = arrivals[k]  # idle until the next arrival
            if epoch is not None and next_replan < s:
                next_replan += -(-(s - next_replan) // int(epoch)) * int(epoch)
        new: list[int] = []
        if k < len(arrivals) and arrivals[k] == s:
            new = by_slot[s]
            k += 1
        if epoch is None:
            replan = bool(new)
        else:
            replan = s >= next_replan
            if replan:
                next_replan += int(epoch)
        if replan:
            present = np.asarray(order + [j for j in new if left[j] > 0], dtype=np.int64)
            order = residual_order(inst, policy, present, remaining, kappa=kappa, solver=solver,
                                   loads=port_left).tolist()
            replans.append(s)
        else:
            order += [j for j in new if left[j] > 0]
        end = arrivals[k] if k < len(arrivals) else None
        if epoch is not None and (end is None or next_replan < end) and order:
            end = next_replan
        windows += 1
        flows = flows_in_order(inst, order)
        flows = flows[remaining[flows] > 0]
        seg, a, b = _fill(inst.input[flows], inst.output[flows], remaining[flows],
                          np.full(flows.size, s, dtype=np.int64), end, inst.n_inputs, inst.n_outputs,
                          flows=inst.n_flows)
        f = flows[seg]
        np.subtract.at(remaining, f, b - a)
        np.subtract.at(left, inst.coflow[f], b - a)
        np.subtract.at(port_left, (inst.coflow[f], inst.input[f]), b - a)
        np.subtract.at(port_left, (inst.coflow[f], out_port[f]), b - a)
        starts.append(a)
        lengths.append(b - a)
        cof.append(inst.coflow[f])
        ins.append(inst.input[f])
        outs.append(inst.output[f])
        if end is None:
            break
        s = end
    if int(left.sum()):
        raise RuntimeError(f"online schedule left {int(left.sum())} units unscheduled (a bug)")
    # the run's order: coflows by completion slot (ties by index)
    empty = np.zeros(0, dtype=np.int64)
    starts_a, lengths_a, cof_a, ins_a, outs_a = (np.concatenate([empty, *x])
                                                 for x in (starts, lengths, cof, ins, outs))
    completion = np.zeros(n, dtype=np.int64)
    if starts_a.size:
        np.maximum.at(completion, cof_a, starts_a + lengths_a - 1)
    final = np.lexsort((np.arange(n), completion))
    schedule = _merge_blocks(starts_a, lengths_a, cof_a, ins_a, outs_a, final)
    return OnlineSchedule(schedule=schedule, replan_slots=np.asarray(replans, dtype=np.int64), windows=windows)
