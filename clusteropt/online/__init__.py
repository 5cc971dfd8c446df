"""The time-slotted online driver and the policies that decide each slot.

Policies follow the estimator habit (``__init__`` stores parameters, ``reset(instance, rng)``,
``step(t, observation)``); :func:`run_online` runs any policy on any system whose environment is
registered.  Systems: paper 000 (``clusteropt.online.gadget``), paper 002
(``clusteropt.online.realtime``: policies and feasibility regions), paper 003
(``clusteropt.online.broker``), paper 004 (``clusteropt.online.ring``).
"""

import importlib
from typing import Any

from clusteropt.online.driver import ENVIRONMENTS, register_environment, run_online

__all__ = ["ENVIRONMENTS", "broker", "gadget", "realtime", "register_environment", "ring", "run_online"]

#: The systems' modules, imported when first named (``clusteropt.online.ring``, or the attribute
#: ``clusteropt.online.ring``), so a run pays only for the system it runs.
SYSTEMS = ("broker", "gadget", "realtime", "ring")


def __getattr__(name: str) -> Any:
    if name in SYSTEMS:
        return importlib.import_module(f"clusteropt.online.{name}")
    raise AttributeError(f"module 'clusteropt.online' has no attribute {name!r}")
