"""GADGET (paper 000): allocations, ring placement and per-slot decisions that need no solver."""
