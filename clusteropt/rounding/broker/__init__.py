"""mlBroker (paper 003): one slot's fractional placement rounded to an integral decision.

=====================  ======================================================================
module                 what it rounds
=====================  ======================================================================
:mod:`.placement`      ``A_round`` (Sec. 5, Alg. 2 with Alg. 3) and the IR / GR baselines
                       (Sec. 6.2), with the data moves completed by a transport problem
:mod:`.slot_milp`      ours: the slot's exact MILP beside ``A_round``, kept when cheaper
=====================  ======================================================================
"""

from clusteropt.rounding.broker.placement import (
    BROKER_ROUNDINGS,
    DEFAULT_TOL,
    ROUNDING_VARIANTS,
    TRANSPORT_BUILDERS,
    BrokerRoundingInfo,
    RoundingShortError,
    a_round,
    build_transport_model,
    complete_placement,
    greedy_round,
    independent_round,
    round1_y,
    round2_y,
    sample_ps,
)
from clusteropt.rounding.broker.slot_milp import (
    DEFAULT_SLOT_FIX,
    DEFAULT_SLOT_GAP,
    FIX_MODES,
    FIX_TOL,
    SlotMilpInfo,
    slot_milp_round,
)

__all__ = [
    "BROKER_ROUNDINGS",
    "DEFAULT_SLOT_FIX",
    "DEFAULT_SLOT_GAP",
    "DEFAULT_TOL",
    "FIX_MODES",
    "FIX_TOL",
    "ROUNDING_VARIANTS",
    "TRANSPORT_BUILDERS",
    "BrokerRoundingInfo",
    "RoundingShortError",
    "SlotMilpInfo",
    "a_round",
    "build_transport_model",
    "complete_placement",
    "greedy_round",
    "independent_round",
    "round1_y",
    "round2_y",
    "sample_ps",
    "slot_milp_round",
]
