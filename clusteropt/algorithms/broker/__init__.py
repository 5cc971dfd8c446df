"""mlBroker (paper 003): the per-slot decision and schedule types."""

from clusteropt.algorithms.broker.decision import BrokerDecision, BrokerSchedule

__all__ = ["BrokerDecision", "BrokerSchedule"]
