"""Problems as data: frozen, validated instances with JSON IO, generators and trace readers."""

from clusteropt.instances.base import INSTANCE_KINDS, Instance, InstanceError, load_instance
from clusteropt.instances.worker_placement import (
    WorkerPlacementInstance,
    random_worker_placement,
)

__all__ = [
    "INSTANCE_KINDS",
    "Instance",
    "InstanceError",
    "WorkerPlacementInstance",
    "load_instance",
    "random_worker_placement",
]
