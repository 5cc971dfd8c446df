"""Problems as data: frozen, validated instances with JSON IO, generators and trace readers."""

from clusteropt.instances.base import INSTANCE_KINDS, Instance, InstanceError, load_instance
from clusteropt.instances.broker import (
    BrokerInstance,
    BrokerPrices,
    broker_preset,
    random_broker,
    read_prices_csv,
    read_transfer_costs_csv,
)
from clusteropt.instances.coflow.generate import random_coflows
from clusteropt.instances.coflow.instance import CoflowInstance, ConcurrentOpenShopInstance
from clusteropt.instances.coflow.trace import TraceError, read_coflow_benchmark
from clusteropt.instances.gadget.instance import (
    Cluster,
    GadgetInstance,
    fat_tree_cluster,
    gadget_preset,
    k_ary_fat_tree,
    random_gadget,
)
from clusteropt.instances.gadget.trace import read_alibaba_jobs, read_alibaba_nodes, read_philly_jobs
from clusteropt.instances.realtime import RealtimeInstance, random_realtime, realtime_preset
from clusteropt.instances.ring import RingInstance, random_ring
from clusteropt.instances.worker_placement import (
    WorkerPlacementInstance,
    random_worker_placement,
)

__all__ = [
    "INSTANCE_KINDS",
    "BrokerInstance",
    "BrokerPrices",
    "Cluster",
    "CoflowInstance",
    "ConcurrentOpenShopInstance",
    "GadgetInstance",
    "Instance",
    "InstanceError",
    "RealtimeInstance",
    "RingInstance",
    "TraceError",
    "WorkerPlacementInstance",
    "broker_preset",
    "fat_tree_cluster",
    "gadget_preset",
    "k_ary_fat_tree",
    "load_instance",
    "random_broker",
    "random_coflows",
    "random_gadget",
    "random_realtime",
    "random_ring",
    "random_worker_placement",
    "read_alibaba_jobs",
    "read_alibaba_nodes",
    "read_coflow_benchmark",
    "read_philly_jobs",
    "read_prices_csv",
    "read_transfer_costs_csv",
    "realtime_preset",
]
