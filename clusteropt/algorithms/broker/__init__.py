"""mlBroker (paper 003): no solver-free algorithm of its own.

Its decision types live in :mod:`clusteropt.decisions.broker` (re-exported here; the old module
path ``clusteropt.algorithms.broker.decision`` still imports).
"""

from clusteropt.decisions.broker import BrokerDecision, BrokerSchedule

__all__ = ["BrokerDecision", "BrokerSchedule"]
