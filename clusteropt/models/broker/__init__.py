"""mlBroker (paper 003): the MILP (8), its LP relaxation P_f (9), the regularized slot problem (10).

=====================  ======================================================================
module                 what it builds
=====================  ======================================================================
:mod:`.milp`           the MILP (8) and P_f (9) over a window of slots, as Pyomo models
:mod:`.matrix`         the same MILP / LP built directly as sparse arrays for HiGHS
:mod:`.regularized`    the entropic-regularized convex problem (10) of one slot, as CVXPY
:mod:`.optimum`        the offline optimum of (8) and the fractional optimum P_f (9)
:mod:`.inputs`         the arguments they all check, and the price bound ``H_k(t)``
=====================  ======================================================================

Every public name of these modules is re-exported here (``from clusteropt.models.broker import
build_broker_milp``); importing the package registers the mlBroker models in
:data:`clusteropt.models.MODELS`.  The names of :mod:`.matrix` load on first use (they bring in
SciPy, which the CLI's listings do without).
"""

from typing import TYPE_CHECKING

from clusteropt._lazy import lazy_exports
from clusteropt.models.broker.inputs import DEFAULT_PRICE_FORM, PRICE_FORMS, price_bound
from clusteropt.models.broker.milp import build_broker_milp, decisions_from_solution, schedule_from_solution
from clusteropt.models.broker.optimum import broker_lp_bound, broker_offline_optimum
from clusteropt.models.broker.regularized import (
    DEFAULT_EPSILON,
    BrokerSlotModel,
    build_broker_regularized,
    decision_from_regularized,
)

if TYPE_CHECKING:
    from clusteropt.models.broker.matrix import build_broker_arrays, decisions_from_arrays, solve_broker_arrays

_LAZY = {name: "clusteropt.models.broker.matrix" for name in (
    "build_broker_arrays", "decisions_from_arrays", "solve_broker_arrays")}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "DEFAULT_EPSILON",
    "DEFAULT_PRICE_FORM",
    "PRICE_FORMS",
    "BrokerSlotModel",
    "broker_lp_bound",
    "broker_offline_optimum",
    "build_broker_arrays",
    "build_broker_milp",
    "build_broker_regularized",
    "decision_from_regularized",
    "decisions_from_arrays",
    "decisions_from_solution",
    "price_bound",
    "schedule_from_solution",
    "solve_broker_arrays",
]
