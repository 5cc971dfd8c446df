"""The two operations every registry of the package shares (models, demo systems, experiments).

A registry is a plain ``dict`` from name to a frozen spec with a ``name`` attribute, filled by
modules as they are imported.  These helpers give the three of them the same rules and messages.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, TypeVar

__all__ = ["lookup", "register"]

S = TypeVar("S")


def register(table: MutableMapping[str, S], spec: S, what: str) -> S:
    """Add ``spec`` under ``spec.name``; the same spec again is a no-op, another one an error.

    >>> from types import SimpleNamespace
    >>> table = {}
    >>> a = register(table, SimpleNamespace(name="a"), "model")
    >>> register(table, SimpleNamespace(name="a"), "model")
    Traceback (most recent call last):
    ...
    ValueError: model 'a' is registered twice
    """
    name: Any = spec.name  # type: ignore[attr-defined]
    if name in table and table[name] is not spec:
        raise ValueError(f"{what} {name!r} is registered twice")
    table[name] = spec
    return spec


def lookup(table: MutableMapping[str, S], name: str, what: str) -> S:
    """The spec registered as ``name``; an unknown name gets an error listing the registered ones.

    >>> lookup({"b": 1, "a": 2}, "c", "experiment")
    Traceback (most recent call last):
    ...
    ValueError: unknown experiment 'c'; registered: a, b
    """
    try:
        return table[name]
    except KeyError:
        raise ValueError(f"unknown {what} {name!r}; registered: {', '.join(sorted(table)) or 'none'}") from None
