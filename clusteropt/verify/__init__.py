"""Independent checkers: feasibility of every kind of decision, and its cost computed anew."""

from clusteropt.verify.base import Check, Violation, violations_where
from clusteropt.verify.worker_placement import check_worker_placement

__all__ = ["Check", "Violation", "check_worker_placement", "violations_where"]
