"""GADGET (paper 000): ring-all-reduce DL jobs on a GPU cluster, as data.

=====================  ======================================================================
module                 what it holds
=====================  ======================================================================
:mod:`.instance`       :class:`Cluster`, :class:`GadgetInstance`, the fat-tree topologies,
                       the utilities, :func:`random_gadget` and the presets
:mod:`.trace`          the Philly and Alibaba GPU-trace readers
=====================  ======================================================================
"""

from clusteropt.instances.gadget.instance import (
    MAX_HORIZON,
    PRESETS,
    UTILITIES,
    Cluster,
    GadgetInstance,
    ServerPaths,
    bursty_arrivals,
    fat_tree_cluster,
    gadget_preset,
    iterations_per_slot,
    k_ary_fat_tree,
    random_gadget,
    utility_value,
)
from clusteropt.instances.gadget.trace import MAX_GPUS, read_alibaba_jobs, read_alibaba_nodes, read_philly_jobs

__all__ = [
    "MAX_GPUS",
    "MAX_HORIZON",
    "PRESETS",
    "UTILITIES",
    "Cluster",
    "GadgetInstance",
    "ServerPaths",
    "bursty_arrivals",
    "fat_tree_cluster",
    "gadget_preset",
    "iterations_per_slot",
    "k_ary_fat_tree",
    "random_gadget",
    "read_alibaba_jobs",
    "read_alibaba_nodes",
    "read_philly_jobs",
    "utility_value",
]
