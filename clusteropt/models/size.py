"""Refusing a model that would not fit in memory, before a single row is built.

The time-indexed and horizon-wide models (DDLJS, the coflow and concurrent-open-shop MILPs,
the broker MILP over the horizon) grow with jobs x slots x servers; at trace scale they would
build for minutes and end in a ``MemoryError`` at several GB.  Their builders count the
variables they are about to create (cheaply, from the instance's arrays) and call
:func:`check_model_size` first, which raises :class:`ModelTooLargeError` (a ``ValueError``: exit 2
with one line on the command line) naming the model, the count, where it comes from and how to
go on.

The limit is :data:`DEFAULT_MAX_VARIABLES`, or the environment variable
``CLUSTEROPT_MAX_VARIABLES`` (an integer; ``0`` lifts the guard).  A Pyomo variable with its
share of the rows takes about 1 KB (``python benchmarks/model_memory.py`` measures it on the
coflow MILP and writes ``benchmarks/results/model_memory.json``), so the default of two million
variables keeps a model near 2 GB.
"""

from __future__ import annotations

import os

__all__ = ["DEFAULT_MAX_VARIABLES", "ENV_MAX_VARIABLES", "ModelTooLargeError", "check_model_size", "max_variables"]

DEFAULT_MAX_VARIABLES = 2_000_000
"""Largest model (in variables) a builder builds unless told otherwise."""

ENV_MAX_VARIABLES = "CLUSTEROPT_MAX_VARIABLES"
"""Environment variable overriding :data:`DEFAULT_MAX_VARIABLES` (``0``: no limit)."""


class ModelTooLargeError(ValueError):
    """A model whose variable count exceeds the limit; raised before anything is built."""


def max_variables() -> int | None:
    """The limit in force: ``$CLUSTEROPT_MAX_VARIABLES`` if set (None for ``0``), else the default.

    >>> max_variables() == DEFAULT_MAX_VARIABLES or ENV_MAX_VARIABLES in os.environ
    True
    """
    text = os.environ.get(ENV_MAX_VARIABLES)
    if text is None or not text.strip():
        return DEFAULT_MAX_VARIABLES
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"${ENV_MAX_VARIABLES} = {text!r}; expected a whole number of variables "
                         "(0 for no limit)") from None
    if value < 0:
        raise ValueError(f"${ENV_MAX_VARIABLES} = {value}; expected >= 0 (0 for no limit)")
    return value or None


def check_model_size(model: str, n_variables: int, detail: str, *, advice: str = "",
                     limit: int | None = -1) -> None:
    """Raise :class:`ModelTooLargeError` when ``n_variables`` exceeds the limit.

    Parameters
    ----------
    model : str
        The model's name (``"coflow-milp"``).
    n_variables : int
        Variables the builder would create.
    detail : str
        Where the count comes from (``"120 flows x 5000 slots"``).
    advice : str
        What to do instead (a smaller horizon, the LP bound, ...).
    limit : int or None
        The limit; default :func:`max_variables`; None for no limit.

    >>> check_model_size("coflow-milp", 10, "2 flows x 5 slots")
    >>> try:
    ...     check_model_size("coflow-milp", 10**9, "10^4 flows x 10^5 slots", advice="Use coflow-lp.")
    ... except ModelTooLargeError as exc:
    ...     print(str(exc)[:89])
    coflow-milp would have 1,000,000,000 variables (10^4 flows x 10^5 slots), above the limit
    """
    if limit == -1:
        limit = max_variables()
    if limit is None or n_variables <= limit:
        return
    raise ModelTooLargeError(
        f"{model} would have {n_variables:,} variables ({detail}), above the limit of {limit:,} "
        f"(about {limit * 1e3 / 1e9:.2g} GB); refused before building. {advice + ' ' if advice else ''}"
        f"Raise the limit knowingly with ${ENV_MAX_VARIABLES} or the CLI's --max-variables (0: none)."
    )
