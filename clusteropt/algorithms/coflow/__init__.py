"""Coflow scheduling (paper 001): orderings, schedulers and the compressed schedule format."""
