"""Fractional -> integral: ring selection, dependent pairwise rounding, randomized embedding.

Pure functions over numpy arrays; anything random takes ``rng`` (a Generator, a seed or None).
The paper systems add their modules here.
"""
