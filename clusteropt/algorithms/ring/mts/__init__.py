"""Line metrical task systems with unit "hit" costs: the black box of paper 004's dynamic algorithm (Sec. 3).

==================  =========================================================================
module              what it holds
==================  =========================================================================
:mod:`.line`        the interface (:class:`LineMTS`), the work function algorithm, the soft
                    heuristic, :func:`chase`
:mod:`.hst`         the paper's randomized black box: a random 2-HST and entropic mirror descent
:mod:`.mix`         ours: several line MTS side by side, followed by exponential weights
==================  =========================================================================

:data:`MTS_CLASSES` names them (``DynamicRing(mts=...)``) and :func:`make_line_mts` builds one by
name.
"""

from __future__ import annotations

from clusteropt.algorithms.ring.mts.hst import EntropicHSTLine, hst_line_opt
from clusteropt.algorithms.ring.mts.line import LineMTS, SoftWorkFunctionLine, WorkFunctionLine, chase
from clusteropt.algorithms.ring.mts.mix import DEFAULT_EXPERTS, DEFAULT_RATE, CombinedLine, check_rate

__all__ = [
    "DEFAULT_EXPERTS",
    "DEFAULT_RATE",
    "MTS_CLASSES",
    "CombinedLine",
    "EntropicHSTLine",
    "LineMTS",
    "SoftWorkFunctionLine",
    "WorkFunctionLine",
    "chase",
    "check_rate",
    "hst_line_opt",
    "make_line_mts",
]

#: MTS name -> class (``DynamicRing(mts=...)``): ``hst`` the paper's randomized black box
#: (:mod:`~clusteropt.algorithms.ring.mts.hst`), ``soft`` the heuristic,
#: ``wfa`` the deterministic work function algorithm, ``mix`` the combination of ``hst`` and
#: ``wfa`` (ours, :mod:`~clusteropt.algorithms.ring.mts.mix`).
MTS_CLASSES: dict[str, type[LineMTS]] = {
    "hst": EntropicHSTLine,
    "mix": CombinedLine,
    "soft": SoftWorkFunctionLine,
    "wfa": WorkFunctionLine,
}


def make_line_mts(name: str, *, theta: float | None = None, rate: float | None = None) -> LineMTS:
    """A line MTS by name (:data:`MTS_CLASSES`); ``theta`` only for the soft one, ``rate`` only for ``mix``.

    >>> type(make_line_mts("wfa")).__name__
    'WorkFunctionLine'
    >>> make_line_mts("mix", rate=0.25).rate
    0.25
    >>> make_line_mts("nope")
    Traceback (most recent call last):
    ...
    ValueError: unknown line MTS 'nope'; available: hst, mix, soft, wfa
    """
    if name not in MTS_CLASSES:
        raise ValueError(f"unknown line MTS {name!r}; available: {', '.join(sorted(MTS_CLASSES))}")
    cls = MTS_CLASSES[name]
    if rate is not None and name != "mix":
        raise ValueError(f"rate = {rate!r} is a parameter of the combined line MTS ('mix'), not of {name!r}")
    if cls is SoftWorkFunctionLine:
        return SoftWorkFunctionLine(theta=theta)
    if theta is not None:
        raise ValueError(f"theta = {theta!r} is a parameter of the randomized (soft) line MTS, not of {name!r}")
    if rate is not None:  # the combined MTS (its own default rate otherwise)
        return cls(rate=rate)  # type: ignore[call-arg]
    return cls()
