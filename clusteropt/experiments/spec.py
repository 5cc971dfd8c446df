"""Experiment specs: a paper figure or table as parameters x seeds x policies, and their registry.

An :class:`Experiment` names a grid of parameters, a list of replicate seeds, a list of policies
and a module-level function ``run(params, seed, policy) -> dict`` that runs one cell and returns
a flat dict of metrics (numbers and short strings).  Each paper system registers the figures and
tables it reproduces here under names like ``gadget-fig4``; ``experiment.quick_variant()`` is a
seconds-long version of the same experiment for tests and notebooks.

Seeds.  The ``seed`` a cell function receives is derived from the spec's ``root_seed``, the
cell's parameters and its replicate seed with :class:`numpy.random.SeedSequence`, so it depends on
neither the worker count, nor the order cells run in, nor which other values are in the grid.
All policies of one (params, replicate) get the same seed, so they meet the same random
instance (common random numbers).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from clusteropt.registries import lookup, register

__all__ = [
    "EXPERIMENTS",
    "RESERVED_COLUMNS",
    "Cell",
    "Experiment",
    "cell_seed",
    "code_version",
    "get_experiment",
    "params_key",
    "register_experiment",
]

#: Columns of the results table that parameter and metric names may not take.
RESERVED_COLUMNS = frozenset(
    {"experiment", "code_version", "seed", "cell_seed", "policy", "status", "error", "traceback",
     "seconds", "worker", "finished_at", "params", "environment", "versions", "git_commit"}
)
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_SCALARS = (bool, int, float, str)


def params_key(params: Mapping[str, Any]) -> str:
    """Canonical JSON of a cell's parameters: the store's key (sorted keys, no spaces)."""
    return json.dumps(dict(params), sort_keys=True, separators=(",", ":"))


def cell_seed(root_seed: int, params: Mapping[str, Any], seed: int) -> int:
    """The seed handed to a cell: ``SeedSequence(root_seed, spawn_key=(hash(params), seed))``.

    The parameters enter through the SHA-256 of their canonical JSON (four 32-bit words), so the
    result is the same in every process and does not depend on the grid's other values.  The
    value is below 2**63, so it fits an SQLite integer.

    Examples
    --------
    >>> cell_seed(0, {"n": 4}, 1) == cell_seed(0, {"n": 4}, 1)
    True
    >>> cell_seed(0, {"n": 4}, 1) != cell_seed(0, {"n": 4}, 2) != cell_seed(1, {"n": 4}, 2)
    True
    """
    digest = hashlib.sha256(params_key(params).encode()).digest()
    words = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    seq = np.random.SeedSequence(int(root_seed), spawn_key=(*words, int(seed)))
    return int(seq.generate_state(1, np.uint64)[0] >> np.uint64(1))


@dataclass(frozen=True)
class Cell:
    """One (params, seed, policy) cell of an experiment, with the seed its function receives."""

    params: Mapping[str, Any]
    seed: int
    policy: str
    cell_seed: int

    @property
    def key(self) -> tuple[str, int, str]:
        """The store key without experiment and code version: (params JSON, seed, policy)."""
        return params_key(self.params), self.seed, self.policy


def _function_ref(fn: Callable) -> str:
    """``module:qualname`` of a module-level function, the way a worker process imports it."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or not qualname or "<" in qualname or module == "__main__":
        raise ValueError(
            f"Experiment.run = {fn!r}; expected a function defined at module level in an importable "
            "module (not a lambda, closure or __main__ function), so worker processes can import it"
        )
    return f"{module}:{qualname}"


@dataclass(frozen=True)
class Experiment:
    """A paper figure or table: parameters x seeds x policies, and the function that runs a cell.

    Attributes
    ----------
    name : str
        Registry name, lower case (``gadget-fig4``); the store keys results by it.
    run : callable
        ``run(params: dict, seed: int, policy: str) -> dict`` of metrics: flat, numbers and
        strings of at most 200 characters.  Must be a module-level function (workers import it).
        Metric names ending in ``_seconds`` are timings and stay out of the default table.
    grid : mapping
        Parameter name -> list of values (JSON scalars); the cells are the Cartesian product,
        in the order given.  Fixed settings are one-element lists, so they are part of the key.
    seeds : sequence of int
        Replicate seeds (non-negative, distinct).
    policies : sequence of str
        Policies / algorithms compared in each (params, seed).
    description, paper : str
        One line each, for ``clusteropt experiment list`` (paper: file number and figure).
    root_seed : int
        Root of every cell's seed (see :func:`cell_seed`).
    timeout : float, optional
        Per-cell time limit in seconds; a cell past it is stopped and recorded as timed out.
    quick : mapping, optional
        Overrides for :meth:`quick_variant`: any of ``grid`` (merged key by key), ``seeds``,
        ``policies``, ``timeout``.
    figures : mapping
        Figure name -> ``plot(table) -> matplotlib Figure``, written by ``experiment report``.
    tables : mapping
        Table name -> ``make(table) -> DataFrame``, written by ``experiment report``.
    variant : str
        ``"full"`` or ``"quick"`` (set by :meth:`quick_variant`).
    """

    name: str
    run: Callable[[dict[str, Any], int, str], Mapping[str, Any]]
    grid: Mapping[str, Sequence[Any]]
    seeds: Sequence[int]
    policies: Sequence[str]
    description: str = ""
    paper: str = ""
    root_seed: int = 0
    timeout: float | None = None
    quick: Mapping[str, Any] | None = None
    figures: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    tables: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    variant: str = "full"

    def __post_init__(self) -> None:
        set_ = functools.partial(object.__setattr__, self)
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ValueError(
                f"Experiment.name = {self.name!r}; expected lower-case letters, digits, '-', '.', '_'"
            )
        where = f"experiment {self.name!r}"
        _function_ref(self.run)
        if not isinstance(self.grid, Mapping) or not self.grid:
            raise ValueError(f"{where}: grid = {self.grid!r}; expected a non-empty mapping name -> list of values")
        grid = {}
        for key, values in self.grid.items():
            if not isinstance(key, str) or not key.isidentifier() or key in RESERVED_COLUMNS:
                raise ValueError(
                    f"{where}: grid key {key!r}; expected an identifier other than "
                    f"{', '.join(sorted(RESERVED_COLUMNS))}"
                )
            if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
                raise ValueError(f"{where}: grid[{key!r}] = {values!r}; expected a non-empty list of values")
            for i, v in enumerate(values):
                if not isinstance(v, _SCALARS) or (isinstance(v, float) and not np.isfinite(v)):
                    raise ValueError(
                        f"{where}: grid[{key!r}][{i}] = {v!r}; expected a finite number, string or bool"
                    )
            if len({params_key({"v": v}) for v in values}) != len(values):
                raise ValueError(f"{where}: grid[{key!r}] = {list(values)!r}; expected distinct values")
            grid[key] = tuple(values)
        set_("grid", grid)
        seeds = tuple(self.seeds) if isinstance(self.seeds, Sequence) else None
        if not seeds or any(isinstance(s, bool) or not isinstance(s, int | np.integer) or s < 0 for s in seeds):
            raise ValueError(f"{where}: seeds = {self.seeds!r}; expected a non-empty list of non-negative ints")
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"{where}: seeds = {list(seeds)!r}; expected distinct seeds")
        set_("seeds", tuple(int(s) for s in seeds))
        policies = tuple(self.policies) if isinstance(self.policies, Sequence) else ()
        if (not policies or isinstance(self.policies, str)
                or any(not isinstance(p, str) or not p for p in policies)):
            raise ValueError(f"{where}: policies = {self.policies!r}; expected a non-empty list of names")
        if len(set(policies)) != len(policies):
            raise ValueError(f"{where}: policies = {list(policies)!r}; expected distinct names")
        set_("policies", policies)
        if self.timeout is not None and not (isinstance(self.timeout, int | float) and self.timeout > 0):
            raise ValueError(f"{where}: timeout = {self.timeout!r}; expected a positive number of seconds")
        if self.quick is not None:
            unknown = set(self.quick) - {"grid", "seeds", "policies", "timeout"}
            if unknown:
                raise ValueError(
                    f"{where}: quick has {', '.join(sorted(unknown))}; expected grid, seeds, policies, timeout"
                )
            extra = set(self.quick.get("grid", {})) - set(grid)
            if extra:
                raise ValueError(f"{where}: quick grid names {', '.join(sorted(extra))}, which the grid lacks")
        if self.variant not in ("full", "quick"):
            raise ValueError(f"{where}: variant = {self.variant!r}; expected 'full' or 'quick'")
        for attr in ("figures", "tables"):
            for key, fn in getattr(self, attr).items():
                if not callable(fn):
                    raise ValueError(f"{where}: {attr}[{key!r}] = {fn!r}; expected a callable")

    @property
    def function(self) -> str:
        """``module:qualname`` of :attr:`run`, as worker processes import it."""
        return _function_ref(self.run)

    def cells(self) -> list[Cell]:
        """Every cell, in order: grid product (first key slowest), then seeds, then policies."""
        out: list[Cell] = []
        names = list(self.grid)
        for values in itertools.product(*self.grid.values()):
            params = dict(zip(names, values, strict=True))
            for seed in self.seeds:
                derived = cell_seed(self.root_seed, params, seed)
                out.extend(Cell(params, seed, policy, derived) for policy in self.policies)
        return out

    def quick_variant(self) -> Experiment:
        """The seconds-long variant (same name and function, the ``quick`` overrides applied)."""
        if self.variant == "quick":
            return self
        over = dict(self.quick or {})
        grid = {**self.grid, **{k: tuple(v) for k, v in over.pop("grid", {}).items()}}
        return replace(self, grid=grid, variant="quick", **over)

    def with_grid(self, **values: Sequence[Any]) -> Experiment:
        """The same experiment with some grid values replaced (``spec.with_grid(trace=["x.txt"])``);
        only names already in the grid may be given.
        """
        unknown = set(values) - set(self.grid)
        if unknown:
            raise ValueError(
                f"experiment {self.name!r} has no parameter {', '.join(sorted(unknown))}; "
                f"its grid: {', '.join(self.grid)}"
            )
        return replace(self, grid={**self.grid, **{k: tuple(v) for k, v in values.items()}})

    def describe(self) -> dict[str, Any]:
        """One row for listings: name, paper, cell counts (full / quick) and description."""
        return {
            "name": self.name,
            "paper": self.paper,
            "cells": len(self.cells()),
            "quick cells": len(self.quick_variant().cells()),
            "policies": list(self.policies),
            "description": self.description,
        }


#: Registered experiments by name (filled when :mod:`clusteropt.experiments` is imported).
EXPERIMENTS: dict[str, Experiment] = {}


def register_experiment(spec: Experiment) -> Experiment:
    """Add ``spec`` to :data:`EXPERIMENTS` (a name may be registered once)."""
    return register(EXPERIMENTS, spec, "experiment")


def get_experiment(name: str) -> Experiment:
    """The experiment registered as ``name``; unknown names list the registered ones."""
    import clusteropt.experiments  # noqa: F401  (registers every system's experiments)

    return lookup(EXPERIMENTS, name, "experiment")


def code_version(spec: Experiment | None = None) -> str:
    """``<package version>+<hash>``: SHA-256 over the package's Python sources (and the file
    defining ``spec.run`` when it lives outside the package), so any edit gives a new version
    and results of different code are never mixed.  It needs no git checkout.
    """
    import sys

    from clusteropt import provenance

    extra = None
    if spec is not None:
        module = sys.modules.get(spec.run.__module__)
        extra = getattr(module, "__file__", None)
    return provenance.code_version(extra)
