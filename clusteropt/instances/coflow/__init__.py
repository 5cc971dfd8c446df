"""Coflows on a big switch, and concurrent open shop (paper 001), as data.

=====================  ======================================================================
module                 what it holds
=====================  ======================================================================
:mod:`.instance`       :class:`CoflowInstance` and :class:`ConcurrentOpenShopInstance`
:mod:`.generate`       :func:`random_coflows`, the paper's random instances
:mod:`.trace`          :func:`read_coflow_benchmark`, the public coflow-benchmark trace format
=====================  ======================================================================
"""

from clusteropt.instances.coflow.generate import random_coflows
from clusteropt.instances.coflow.instance import CoflowInstance, ConcurrentOpenShopInstance
from clusteropt.instances.coflow.trace import MAX_FLOWS, MAX_INT, MAX_PORTS, TraceError, read_coflow_benchmark

__all__ = [
    "MAX_FLOWS",
    "MAX_INT",
    "MAX_PORTS",
    "CoflowInstance",
    "ConcurrentOpenShopInstance",
    "TraceError",
    "random_coflows",
    "read_coflow_benchmark",
]
