"""The time-slotted online driver and the policies that decide each slot.

Policies follow the estimator habit (``__init__`` stores parameters, ``reset(instance, rng)``,
``step(t, observation)``); :func:`run_online` runs any policy on any system whose environment is
registered.  Systems: paper 000 (``clusteropt.online.gadget``), paper 002
(``clusteropt.online.realtime``: policies and feasibility regions), paper 003
(``clusteropt.online.broker``), paper 004 (``clusteropt.online.ring``).
"""

from clusteropt.online import broker, gadget, realtime, ring
from clusteropt.online.driver import ENVIRONMENTS, register_environment, run_online

__all__ = ["ENVIRONMENTS", "broker", "gadget", "realtime", "register_environment", "ring", "run_online"]
