"""Every HiGHS object the package makes: silent, with the thread count it asks for, alike on every highspy.

Two pieces of process-wide state in HiGHS decide whether a run works and what it prints, and both
differ between the highspy versions the package allows (``highspy>=1.15``):

**The thread pool.**  HiGHS runs its parallel parts on one task scheduler per process, started by
the first run with that run's ``threads`` option (0, the default, lets HiGHS choose).  A later run
that asks for another explicit count is refused: ``run()`` returns ``kError`` and the model status
stays ``kNotset``, so there is no solution.  How many threads HiGHS chooses by default moved
between versions: on a 2-core machine highspy 1.15.1 starts 1 thread, highspy 1.16.0 starts 2
(both measured: a ``threads=1`` MILP after a default-threads LP is refused under 1.16.0 and solved
under 1.15.1; ``threads=2`` after a default run is refused under 1.15.1).  So a route that set a
count without resetting the pool worked or failed by the solver's version and the machine's core
count.  :func:`ready_threads` resets the pool (``Highs.resetGlobalScheduler(True)``, about 0.1 ms
of CPU) before every run that asks for a count, and every route of the package asks through it:
:func:`new_highs` (the array routes and the live models), and the registry's ``prepare`` hook of
HiGHS, which :func:`~clusteropt.solvers.core.native_options` calls before the Pyomo, CVXPY and
file routes.  A run that asks for no count takes ``$CLUSTEROPT_THREADS``
(:func:`~clusteropt.solvers.options.default_threads`), which the experiments harness sets to 1 in
every cell, so recorded cells run on one thread whatever the version's default; with neither, the
pool as it stands (HiGHS's own choice on the first run).

**The banner.**  highspy 1.16 writes ``Running HiGHS ...`` and a notice to the C-level standard
output when the first ``Highs`` object of a process is made, before any option can silence it;
that breaks ``--json -`` (JSON on standard output) and doctests.  :func:`quiet_banner` makes that
first object with file descriptor 1 pointed at ``/dev/null``, once per process; every route calls
it before it makes or lets a modelling layer make a ``Highs``.  highspy 1.15 prints nothing there.

>>> h = new_highs(threads=1, options={"mip_rel_gap": 0.0})
>>> h.getOptionValue("threads")[1], h.getOptionValue("output_flag")[1]
(1, False)
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Mapping
from typing import Any

import highspy

__all__ = ["new_highs", "prepare", "quiet_banner", "ready_threads", "run_live"]

log = logging.getLogger(__name__)


@functools.cache
def quiet_banner() -> None:
    """Make this process's first ``Highs`` with the C-level stdout silenced (module docstring).

    Runs once per process (``functools.cache``); later ``Highs`` objects print no banner anyway.
    Where file descriptor 1 cannot be redirected (no such descriptor), the object is made as is.
    """
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:
        highspy.Highs()
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            try:
                highspy.Highs()
            finally:
                os.dup2(saved, 1)
    finally:
        os.close(saved)


def ready_threads(threads: int | None) -> int | None:
    """Ready HiGHS's process-wide thread pool for a run with ``threads`` and return the count to set.

    ``None`` becomes :func:`~clusteropt.solvers.options.default_threads` (``$CLUSTEROPT_THREADS``);
    when a count results, the pool is reset so that the run's count is the pool's (module
    docstring: without it the run is refused whenever an earlier run started another pool).
    """
    from clusteropt.solvers.options import default_threads

    quiet_banner()
    if threads is None:
        threads = default_threads()
    if threads is not None:
        highspy.Highs.resetGlobalScheduler(True)
    return threads


def prepare(threads: int | None) -> None:
    """The registry's hook for HiGHS, called before a Pyomo, CVXPY or file route solves.

    ``threads`` is the resolved count the route will set (None: none); see :func:`ready_threads`.
    """
    quiet_banner()
    if threads is not None:
        highspy.Highs.resetGlobalScheduler(True)


def new_highs(*, threads: int | None = None, options: Mapping[str, Any] | None = None) -> highspy.Highs:
    """A fresh, silent ``Highs`` with ``threads`` (:func:`ready_threads`) and ``options`` set.

    ``options`` maps HiGHS option names to values; one that HiGHS rejects raises ``ValueError``
    naming it.  An explicit ``"threads"`` among the options counts as ``threads``.

    Raises
    ------
    ValueError
        An option HiGHS rejects (unknown name, wrong type, out of range).
    """
    opts = dict(options or {})
    asked = opts.pop("threads", threads)
    count = ready_threads(None if asked is None else int(asked))
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    if count is not None:
        opts["threads"] = int(count)
    for key, val in opts.items():
        if h.setOptionValue(key, val) != highspy.HighsStatus.kOk:
            raise ValueError(f"HiGHS rejected option {key} = {val!r}; see the HiGHS options list "
                             "(https://ergo-code.github.io/HiGHS/dev/options/definitions/)")
    return h


def run_live(h: highspy.Highs) -> highspy.HighsStatus:
    """Run a ``Highs`` that is kept across solves (a live model re-solved slot after slot).

    Another route may have started the pool with another count since ``h`` last ran; the pool
    is readied for ``h``'s own ``threads`` option (0: none asked, :func:`ready_threads`) first.
    """
    own = int(h.getOptionValue("threads")[1])
    count = ready_threads(own or None)
    if count is not None and count != own:
        h.setOptionValue("threads", int(count))
    return h.run()
