"""What each system decides, as data: the types that models read solutions into, online policies
return, and :mod:`clusteropt.verify` checks.

================================  ===========================================================
module                            decision types
================================  ===========================================================
:mod:`.coflow`                    :class:`CoflowSchedule`: blocks of matchings held for a number
                                  of slots (paper 001)
:mod:`.gadget`                    :class:`SlotAllocation` (workers per server and each job's
                                  ring), :class:`GadgetSchedule`, :class:`PackedSlots`,
                                  :class:`Ring`, :class:`Mapping` (paper 000)
:mod:`.broker`                    :class:`BrokerDecision` (one slot's variables of (8)),
                                  :class:`BrokerSchedule`, :func:`decision_cost` (paper 003)
================================  ===========================================================

The real-time and ring systems decide plain arrays (each slot's chosen jobs and worker-job
pairs; each step's process -> server map), held by their online runs
(:class:`clusteropt.online.realtime.RealtimeRun`, :class:`clusteropt.online.ring.RingRun`).

These modules import nothing of the package but the instances, so the models, the rounding, the
online policies and the verifiers may all use them without importing one another.
"""

from clusteropt.decisions.broker import FIELDS, BrokerDecision, BrokerSchedule, decision_cost
from clusteropt.decisions.coflow import CoflowSchedule
from clusteropt.decisions.gadget import GadgetSchedule, Mapping, PackedSlots, Ring, SlotAllocation

__all__ = [
    "FIELDS",
    "BrokerDecision",
    "BrokerSchedule",
    "CoflowSchedule",
    "GadgetSchedule",
    "Mapping",
    "PackedSlots",
    "Ring",
    "SlotAllocation",
    "decision_cost",
]
