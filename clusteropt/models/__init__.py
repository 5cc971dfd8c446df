"""Each formulation as a Pyomo ConcreteModel or a CVXPY problem (builders only; they never solve), and the
optima an exact algorithm of the package solves better than any solver as an :class:`ExactModel`.

This package re-exports every paper's main builders (and the offline optima / bounds that solve
them), so that ``from clusteropt.models import build_broker_milp`` works without knowing the
module; each system's models are imported, and registered in :data:`MODELS`, when first named,
or all at once by :func:`~clusteropt.models.registry.register_all` (which :func:`get_model` and
:func:`models_for` call), so a run imports Pyomo only when it builds a Pyomo model.  CVXPY is
imported only when a CVXPY builder runs.

A system with several model files is a subpackage (:mod:`clusteropt.models.gadget`,
:mod:`~clusteropt.models.broker`, :mod:`~clusteropt.models.coflow`, :mod:`~clusteropt.models.ring`)
whose ``__init__`` re-exports its modules' public names; :mod:`clusteropt.models.matrix` is the
sparse-array LP the array builders of several systems share.
"""

import importlib
from typing import Any

from clusteropt._lazy import lazy_exports
from clusteropt.models.cvxpy_model import CvxpyModel
from clusteropt.models.exact import ExactModel, ExactSolution
from clusteropt.models.registry import MODELS, ModelSpec, get_model, models_for, register_all, register_model

#: Each system's model package (imported on first use: Pyomo alone takes 0.7 s to import).
SYSTEMS = ("broker", "coflow", "gadget", "realtime", "ring", "worker_placement")

#: The re-exported names and the module each comes from (loaded when first asked for).
_LAZY = {
    "build_broker_milp": "broker.milp", "broker_lp_bound": "broker.optimum",
    "broker_offline_optimum": "broker.optimum", "build_broker_regularized": "broker.regularized",
    "cos_lower_bound": "coflow.bound", "build_coflow_milp": "coflow.open_shop", "build_cos_lp": "coflow.open_shop",
    "build_cos_milp": "coflow.open_shop", "build_ddljs": "gadget.ddljs", "ddljs_optimum": "gadget.ddljs",
    "build_gvne": "gadget.gvne", "build_max_weight_ilp": "realtime", "build_region_lp": "realtime",
    "build_ring_dynamic_opt": "ring.offline", "build_ring_static_opt": "ring.offline",
    "ring_dynamic_optimum": "ring.offline", "ring_static_optimum": "ring.offline", "model_summary": "summary",
    "build_worker_placement": "worker_placement", "build_worker_placement_cvxpy": "worker_placement",
}


_lazy_getattr, __dir__ = lazy_exports(__name__, {k: f"{__name__}.{v}" for k, v in _LAZY.items()})


def __getattr__(name: str) -> Any:
    if name in SYSTEMS:  # a subpackage: importing it makes it an attribute of this package
        return importlib.import_module(f"{__name__}.{name}")
    return _lazy_getattr(name)


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
    "register_all",
    "register_model",
    "ring",
    "ring_dynamic_optimum",
    "ring_static_optimum",
    "worker_placement",
]
