"""Combinatorial algorithms that need no solver: orderings, edge colouring, line MTS, ...

The paper systems add their modules here.
"""
