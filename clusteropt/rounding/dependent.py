"""Weighted pairwise dependent rounding (paper 003, mlBroker, Sec. 5: Alg. 3 ``Round1_y``, ``Round2_y``).

:func:`pairwise_dependent_round` is the generic step of ``A_round`` (Alg. 2, lines 2 and 4): given
fractional numbers ``y_i >= 0`` and positive weights ``omega_i``, it keeps the integer parts
``floor(y_i)`` and rounds the fractional parts ``p_i = y_i - floor(y_i)`` (Alg. 3, lines 3-7)
two at a time so that each ``p_i`` keeps its expectation and ``sum_i omega_i p_i`` does not change,
until at most one is fractional; that one is rounded up (lines 23-25).  The paper calls it once per
data center ``r`` over the jobs with ``omega_i = n_{i,k}`` (``Round1_y``, constraint (8c)) and once
per job ``i`` over the data centers with ``omega_r = P_i`` (``Round2_y``, constraint (8a)); the
caller builds those vectors, this module knows nothing of jobs and data centers.

One step (Alg. 3, lines 9-21) on a random pair ``i1 != i2`` of fractional entries, with
``r = omega_{i2} / omega_{i1}``::

    Psi1 = min(1 - p1, r p2)          Psi2 = min(p1, r (1 - p2))                    (lines 10-11)
    w.p. Psi2 / (Psi1 + Psi2):  p1 += Psi1,  p2 -= Psi1 / r                          (lines 12-13)
    w.p. Psi1 / (Psi1 + Psi2):  p1 -= Psi2,  p2 += Psi2 / r                          (lines 14-15)

Both moves keep ``omega_1 p1 + omega_2 p2`` (Lemma 1), the probabilities make ``E[p1]`` and
``E[p2]`` unchanged, and the minimum in ``Psi`` makes one of ``p1, p2`` reach 0 or 1 in every
step, whichever move is drawn: the entry is then final (lines 16-21).  This is the dependent
rounding of Gandhi, Khuller, Parthasarathy and Srinivasan (J. ACM 2006) with weights
(Srinivasan, FOCS 2001).

Three slips in the paper's text, resolved as Alg. 3 and Lemma 1 require: the worked example
under Alg. 2 writes ``p_{i2} - (omega_{i2}/omega_{i1}) Psi1`` where Alg. 3 line 13 (and weight
preservation) has ``omega_{i1}/omega_{i2}``; lines 17 and 20 set ``ybar_i`` meaning ``ybar_{i1}``
and ``ybar_{i2}``; and (P1) as stated (exact marginals for every element) ignores the final
round-up of lines 23-25, which Lemma 1 itself accounts for with an inequality.  What holds
exactly is spelled out in :func:`pairwise_dependent_round`.
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

__all__ = ["DependentRoundingInfo", "pairwise_dependent_round"]

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class DependentRoundingInfo:
    """What one call of :func:`pairwise_dependent_round` did.

    Attributes
    ----------
    steps : int
        Pairing steps (passes through Alg. 3, lines 9-21); at most ``max(m - 1, 0)`` for ``m``
        fractional input entries, so at most ``n - 1``.
    last_index : int or None
        The entry left fractional after the pairing loop and rounded up (Alg. 3, lines 23-25),
        or None when every entry became integral.
    last_fraction : float or None
        Its fractional part just before the round-up, in ``(tol, 1 - tol)``; the round-up adds
        ``weights[last_index] * (1 - last_fraction)`` to the weighted sum.  None with
        ``last_index``.
    """

    steps: int
    last_index: int | None
    last_fraction: float | None


def _as_vector(name: str, x) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} = {x!r}; expected a 1-D array of real numbers") from exc
    if a.ndim != 1:
        raise ValueError(f"{name} has shape {a.shape}; expected a 1-D array")
    return a


def _first_bad(name: str, a: np.ndarray, bad: np.ndarray, expected: str) -> None:
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        more = int(bad.sum()) - 1
        tail = f" ({more} more such entries)" if more else ""
        raise ValueError(f"{name}[{i}] = {a[i].item()!r}; expected {expected}{tail}")


def pairwise_dependent_round(values, weights=None, rng=None, *, tol: float = 1e-9,
                             return_info: bool = False):
    """Round non-negative reals to integers, pair by pair, keeping ``sum_i w_i x_i`` (Alg. 3).

    Each entry becomes ``floor(values[i])`` or ``ceil(values[i])``.  Entries within ``tol`` of
    an integer are that integer and take no part.  The fractional parts of the others are
    paired at random and moved against each other along the direction that keeps
    ``sum_i weights[i] * p_i`` (lines 9-15 of Alg. 3) until at most one is fractional; that one
    is rounded up (lines 23-25), as the paper does to keep constraints (8a)/(8b) feasible.

    Let ``Z`` be the vector when the pairing loop ends (every entry integral except possibly
    one, ``L = info.last_index``, with fraction ``f = info.last_fraction``) and ``X`` the
    returned vector (``X = Z`` except ``X_L = Z_L + 1 - f``).  With exact arithmetic:

    * (P1) ``E[Z_i] = values[i]`` for every ``i``.  Hence
      ``E[X_i] = values[i] + E[(1 - f) 1{L = i}]``, so
      ``values[i] <= E[X_i] <= values[i] + P[L = i]`` (the right-hand ``<=`` strict when
      ``P[L = i] > 0``), and ``sum_i (E[X_i] - values[i]) < 1``.  ``P1`` holds exactly for an
      entry that can never be last; with equal weights ``f`` is the fractional part of
      ``sum_i values[i]`` on every draw, so if that sum is an integer no entry is ever last and
      ``E[X] = values`` exactly.
    * (P2) ``sum_i w_i Z_i = sum_i w_i values[i]`` on every draw, so
      ``sum_i w_i X_i - sum_i w_i values[i] = w_L (1 - f)``, in ``[0, w_L)`` (0 when no entry
      is left, and then ``L`` is None).
    * Termination: every step makes at least one more entry integral, so there are at most
      ``max(m - 1, 0) <= n - 1`` steps for ``m`` fractional entries.

    In floating point the equalities hold up to rounding (about ``1e-16`` relative) plus the
    snapping to integers within ``tol``: inputs within ``tol`` of an integer, and fractions
    that come within ``tol`` of 0 or 1 during the loop, move the weighted sum by at most
    ``tol * weights[i]`` each.

    Parameters
    ----------
    values : array_like, shape (n,)
        Finite reals ``>= 0`` (entries in ``[-tol, 0)``, solver noise, count as 0).  Values
        above 1 keep their integer parts; only the fractional parts are rounded.
    weights : array_like, shape (n,), optional
        Finite reals ``> 0``: ``omega`` of Alg. 3 (``n_{i,k}`` in ``Round1_y``, ``P_i`` in
        ``Round2_y``).  Default: all ones (what ``Round2_y`` amounts to, as ``P_i`` is the same
        for every data center).
    rng : numpy.random.Generator, int or None
        Normalized once with :func:`numpy.random.default_rng`; a Generator passed in is advanced.
        With ``m`` fractional entries (after ``tol``) the call draws exactly ``3 (m - 1)``
        uniform doubles in one ``rng.random`` call when ``m >= 2`` (two pick the pair, one the
        move, per possible step; unused ones are discarded), and nothing when ``m <= 1``: the
        generator's advance depends only on ``m``, not on the path, and an input with at most
        one fractional entry leaves it untouched (the result is then deterministic).
    tol : float, keyword-only
        Absolute tolerance, ``0 <= tol < 0.5``: a value within ``tol`` of an integer is that
        integer (Alg. 3 line 4's ``y != floor(y)`` test), and a fraction within ``tol`` of 0
        or 1 during the loop is final.
    return_info : bool, keyword-only
        Also return a :class:`DependentRoundingInfo` (steps, the entry rounded up and its
        fraction).

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        The rounded values; with ``return_info``, the tuple ``(rounded, info)``.

    Raises
    ------
    ValueError
        Naming the argument, the first offending index and what was expected: ``values`` or
        ``weights`` not 1-D or not numeric; a value non-finite or below ``-tol``; a weight
        non-finite or ``<= 0``; ``weights`` of another length than ``values``; ``tol`` outside
        ``[0, 0.5)``.

    References
    ----------
    - Paper 003 (mlBroker), Sec. 5.1: Alg. 3 ``Round1_y`` lines 1-27 (lines 3-7 the
      fractional set and ``p_i``; 9 the random pair; 10-15 the step; 16-21 the entries that
      became integral; 23-25 the final round-up), ``Round2_y`` (text after Alg. 2), Lemma 1
      (weight preservation per step); Sec. 5.2, proof of Theorem 4: (P1) marginal
      distribution, (P2) weight preservation.  Lemma 2: running time.
    - R. Gandhi, S. Khuller, S. Parthasarathy, A. Srinivasan, "Dependent rounding and its
      applications to approximation algorithms", J. ACM 53(3), 2006.
    - A. Srinivasan, "Distributions on level-sets with applications to approximation
      algorithms", FOCS 2001.

    Examples
    --------
    Two halves with equal weights: exactly one goes up, each with probability 1/2.

    >>> pairwise_dependent_round([0.5, 0.5], [1.0, 1.0], rng=0)
    array([0, 1])
    >>> pairwise_dependent_round([0.5, 0.5], [1.0, 1.0], rng=4)
    array([1, 0])

    Integer parts are kept; with equal weights the sum of the fractional parts (1.5 here) is
    kept but for the last one, rounded up: the total is always ``ceil(4.5) = 5``.

    >>> x = pairwise_dependent_round([1.5, 0.25, 2.0, 0.75], rng=5)
    >>> x, int(x.sum())
    (array([2, 0, 2, 1]), 5)

    Weights: ``0.3 * 1 + 0.6 * 2 = 1.5``.  One step; w.p. 0.3 the first entry goes to 1 and the
    second to ``0.6 - 0.7 / 2 = 0.25``, w.p. 0.7 the first to 0 and the second to
    ``0.6 + 0.3 / 2 = 0.75``; the second is left and rounded up, adding ``2 * (1 - f)``.

    >>> x, info = pairwise_dependent_round([0.3, 0.6], [1.0, 2.0], rng=4, return_info=True)
    >>> x, info
    (array([1, 1]), DependentRoundingInfo(steps=1, last_index=1, last_fraction=0.25))
    >>> float(x @ [1.0, 2.0] - 1.5), 2.0 * (1 - info.last_fraction)
    (1.5, 1.5)

    Integral input (within ``tol``) is returned as integers, drawing nothing:

    >>> pairwise_dependent_round([2.0, 0.0, 3.0000000001], [1.0, 5.0, 2.0])
    array([2, 0, 3])
    >>> pairwise_dependent_round([])
    array([], dtype=int64)

    >>> pairwise_dependent_round([0.5, -0.2], [1.0, 1.0])
    Traceback (most recent call last):
        ...
    ValueError: values[1] = -0.2; expected a finite number >= 0 (within tol=1e-09 below 0 counts as 0)
    """
    tol = float(tol)
    if not (0.0 <= tol < 0.5):
        raise ValueError(f"tol = {tol!r}; expected 0 <= tol < 0.5")
    v = _as_vector("values", values)
    n = v.size
    _first_bad("values", v, ~np.isfinite(v) | (v < -tol),
               f"a finite number >= 0 (within tol={tol:g} below 0 counts as 0)")
    if weights is None:
        w = np.ones(n)
    else:
        w = _as_vector("weights", weights)
        if w.size != n:
            raise ValueError(f"weights has {w.size} entries but values has {n}; expected one weight per value")
        _first_bad("weights", w, ~(np.isfinite(w) & (w > 0)), "a finite number > 0")
    rng = np.random.default_rng(rng)

    nearest = np.rint(v)
    integral = np.abs(v - nearest) <= tol
    base = np.where(integral, nearest, np.floor(v))  # Alg. 3 lines 3-7: floor(y), p = y - floor(y)
    out = base.astype(np.int64)
    frac_idx = np.flatnonzero(~integral)
    m = frac_idx.size
    steps, last, last_p = 0, None, None
    if m == 1:
        last, last_p = int(frac_idx[0]), float(v[frac_idx[0]] - base[frac_idx[0]])
    elif m >= 2:
        idx = frac_idx.tolist()  # Y_R: the entries still fractional, with p and omega alongside
        p = (v[frac_idx] - base[frac_idx]).tolist()
        om = w[frac_idx].tolist()
        draws = rng.random((m - 1, 3)).tolist()
        hi = 1.0 - tol
        ups = []  # entries whose p reached 1
        while len(idx) > 1:  # line 8
            k = len(idx)
            ua, ub, uc = draws[steps]
            a = min(int(ua * k), k - 1)  # line 9: an ordered pair a != b, uniformly
            b = min(int(ub * (k - 1)), k - 2)
            if b >= a:
                b += 1
            p1, p2 = p[a], p[b]
            r = om[b] / om[a]
            up1, down2 = 1.0 - p1, r * p2  # line 10: Psi1 = min(1 - p1, (w2 / w1) p2)
            down1, up2 = p1, r * (1.0 - p2)  # line 11: Psi2 = min(p1, (w2 / w1) (1 - p2))
            psi1 = up1 if up1 <= down2 else down2
            psi2 = down1 if down1 <= up2 else up2
            if uc * (psi1 + psi2) < psi2:  # lines 12-13, probability Psi2 / (Psi1 + Psi2)
                if up1 <= down2:  # Psi1 = 1 - p1: p1 reaches 1
                    p1, p2 = 1.0, p2 - up1 / r
                else:  # Psi1 = r p2: p2 reaches 0
                    p1, p2 = p1 + down2, 0.0
            elif down1 <= up2:  # lines 14-15; Psi2 = p1: p1 reaches 0
                p1, p2 = 0.0, p2 + down1 / r
            else:  # Psi2 = r (1 - p2): p2 reaches 1
                p1, p2 = p1 - up2, 1.0
            steps += 1
            p[a], p[b] = p1, p2
            for j in ((a, b) if a > b else (b, a)):  # lines 16-21: integral entries are final
                pj = p[j]  # (the higher position first: removal moves the last entry into place)
                if pj <= tol or pj >= hi:
                    if pj >= hi:
                        ups.append(idx[j])
                    idx[j], p[j], om[j] = idx[-1], p[-1], om[-1]
                    idx.pop()
                    p.pop()
                    om.pop()
        out[ups] += 1
        if idx:
            last, last_p = idx[0], p[0]
    if last is not None:  # lines 23-25: the one left is rounded up
        out[last] += 1
    if log.isEnabledFor(logging.DEBUG):
        log.debug("pairwise_dependent_round: n=%d fractional=%d steps=%d rounded up=%s (fraction %s)",
                  n, m, steps, last, last_p)
    if return_info:
        return out, DependentRoundingInfo(steps, last, last_p)
    return out
