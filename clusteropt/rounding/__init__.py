"""Fractional -> integral: ring selection, dependent pairwise rounding, randomized embedding.

Pure functions over numpy arrays; anything random takes ``rng`` (a Generator, a seed or None).
The paper systems add their modules here.
"""

from clusteropt.rounding.broker.placement import (
    BROKER_ROUNDINGS,
    BrokerRoundingInfo,
    a_round,
    build_transport_model,
    greedy_round,
    independent_round,
    round1_y,
    round2_y,
    sample_ps,
)
from clusteropt.rounding.broker.slot_milp import SlotMilpInfo, slot_milp_round
from clusteropt.rounding.dependent import DependentRoundingInfo, pairwise_dependent_round

__all__ = [
    "BROKER_ROUNDINGS",
    "BrokerRoundingInfo",
    "DependentRoundingInfo",
    "SlotMilpInfo",
    "a_round",
    "build_transport_model",
    "greedy_round",
    "independent_round",
    "pairwise_dependent_round",
    "round1_y",
    "round2_y",
    "sample_ps",
    "slot_milp_round",
]
