"""Fractional -> integral: ring selection, dependent pairwise rounding, randomized embedding.

Pure functions over numpy arrays; anything random takes ``rng`` (a Generator, a seed or None).
The paper systems add their modules here.
"""

from clusteropt.rounding.dependent import DependentRoundingInfo, pairwise_dependent_round

__all__ = ["DependentRoundingInfo", "pairwise_dependent_round"]
