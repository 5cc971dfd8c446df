"""Each formulation as a Pyomo ConcreteModel or a CVXPY problem (builders only; they never solve).

Importing this package registers every system's models in :data:`MODELS`.
"""

from clusteropt.models import (  # noqa: F401  (register)
    broker,
    coflow,
    gadget,
    gadget_offline,
    realtime,
    ring,
    worker_placement,
)
from clusteropt.models.cvxpy_model import CvxpyModel
from clusteropt.models.registry import MODELS, ModelSpec, get_model, models_for, register_model
from clusteropt.models.summary import model_summary
from clusteropt.models.worker_placement import (
    build_worker_placement,
    build_worker_placement_cvxpy,
)

__all__ = [
    "MODELS",
    "CvxpyModel",
    "ModelSpec",
    "broker",
    "build_worker_placement",
    "build_worker_placement_cvxpy",
    "coflow",
    "get_model",
    "model_summary",
    "models_for",
    "register_model",
    "ring",
    "worker_placement",
]
