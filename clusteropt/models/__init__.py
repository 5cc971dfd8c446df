"""Each formulation as a Pyomo ConcreteModel or a CVXPY problem (builders only; they never solve), and the
optima an exact algorithm of the package solves better than any solver as an :class:`ExactModel`.

Importing this package registers every system's models in :data:`MODELS` and re-exports every
paper's main builders (and the offline optima / bounds that solve them), so that
``from clusteropt.models import build_broker_milp`` works without knowing the module.  CVXPY is
imported only when a CVXPY builder runs.

A system with several model files is a subpackage (:mod:`clusteropt.models.gadget`,
:mod:`~clusteropt.models.broker`, :mod:`~clusteropt.models.coflow`, :mod:`~clusteropt.models.ring`)
whose ``__init__`` re-exports its modules' public names; :mod:`clusteropt.models.matrix` is the
sparse-array LP the array builders of several systems share.
"""

from clusteropt.models import (  # noqa: F401  (each system's package registers its models)
    broker,
    coflow,
    gadget,
    realtime,
    ring,
    worker_placement,
)
from clusteropt.models.broker.milp import build_broker_milp
from clusteropt.models.broker.optimum import broker_lp_bound, broker_offline_optimum
from clusteropt.models.broker.regularized import build_broker_regularized
from clusteropt.models.coflow.bound import cos_lower_bound
from clusteropt.models.coflow.open_shop import build_coflow_milp, build_cos_lp, build_cos_milp
from clusteropt.models.cvxpy_model import CvxpyModel
from clusteropt.models.exact import ExactModel, ExactSolution
from clusteropt.models.gadget.ddljs import build_ddljs, ddljs_optimum
from clusteropt.models.gadget.gvne import build_gvne
from clusteropt.models.realtime import build_max_weight_ilp, build_region_lp
from clusteropt.models.registry import MODELS, ModelSpec, get_model, models_for, register_model
from clusteropt.models.ring.offline import (
    build_ring_dynamic_opt,
    build_ring_static_opt,
    ring_dynamic_optimum,
    ring_static_optimum,
)
from clusteropt.models.summary import model_summary
from clusteropt.models.worker_placement import (
    build_worker_placement,
    build_worker_placement_cvxpy,
)

__all__ = [
    "MODELS",
    "CvxpyModel",
    "ExactModel",
    "ExactSolution",
    "ModelSpec",
    "broker",
    "broker_lp_bound",
    "broker_offline_optimum",
    "build_broker_milp",
    "build_broker_regularized",
    "build_coflow_milp",
    "build_cos_lp",
    "build_cos_milp",
    "build_ddljs",
    "build_gvne",
    "build_max_weight_ilp",
    "build_region_lp",
    "build_ring_dynamic_opt",
    "build_ring_static_opt",
    "build_worker_placement",
    "build_worker_placement_cvxpy",
    "coflow",
    "cos_lower_bound",
    "ddljs_optimum",
    "get_model",
    "model_summary",
    "models_for",
    "register_model",
    "ring",
    "ring_dynamic_optimum",
    "ring_static_optimum",
    "worker_placement",
]
