"""Independent checkers: feasibility of every kind of decision, and its cost computed anew."""

from clusteropt.verify.base import Check, Violation, violations_where
from clusteropt.verify.broker import BrokerCheck, check_broker_decision, check_broker_schedule
from clusteropt.verify.coflow import CoflowCheck, NotListed, check_coflow_schedule, check_order
from clusteropt.verify.gadget import GadgetCheck, check_gadget_allocation, check_gadget_schedule
from clusteropt.verify.realtime import RealtimeCheck, check_realtime_run
from clusteropt.verify.ring import RingCheck, check_ring_run
from clusteropt.verify.worker_placement import check_worker_placement

__all__ = [
    "BrokerCheck",
    "Check",
    "CoflowCheck",
    "GadgetCheck",
    "NotListed",
    "RealtimeCheck",
    "RingCheck",
    "Violation",
    "check_broker_decision",
    "check_broker_schedule",
    "check_coflow_schedule",
    "check_gadget_allocation",
    "check_gadget_schedule",
    "check_order",
    "check_realtime_run",
    "check_ring_run",
    "check_worker_placement",
    "violations_where",
]
