"""The smooth minimum, its gradient (the softmin distribution) and the CDF coupling (paper 004).

Paper 004 (Räcke, Schmid, Zabrodin, SPAA'23), Appendix A, and docs/algorithms/ring-partitioning.md A3 (formulas
reconstructed [I]):

``smin_c(x) = -c ln sum_i exp(-x_i / c) = c smin(x / c)`` for a temperature ``c > 0``, with

* ``min(x) - c ln d <= smin_c(x) <= min(x)`` for ``x`` of dimension ``d``;
* ``grad smin_c(x)_i = exp(-x_i / c) / sum_j exp(-x_j / c)``: a probability distribution
  (the *softmin*), largest on the smallest entries;
* for ``y`` in ``[0, c]^d``: ``smin_c(x + y) - smin_c(x) >= (1 - 1/e) <grad smin_c(x), y>``
  (the hitting cost ``p_e`` of a request on ``e`` is paid for by an increase of ``smin_c``);
* for ``y >= 0``: ``||grad smin_c(x + y) - grad smin_c(x)||_1 <= (2 / c) <grad smin_c(x), y>``
  (the distribution moves little, so the moving cost is comparable to the hitting cost).

The hitting game (:mod:`clusteropt.algorithms.ring.hitting`) keeps the softmin of the request
counts of its interval as the distribution of its position, and turns it into one position with
the CDF coupling (docs/algorithms/ring-partitioning.md A4): one ``U ~ Uniform(0, 1]`` per interval, position = the
smallest ``j``
with ``F(j) >= U`` (:func:`cdf_position`).  The position has marginal ``p`` exactly, and when
``p`` changes to ``p'`` the expected distance moved is ``sum_j |F(j) - F'(j)|``, the earth
mover's distance ``W1(p, p')`` on the line (:func:`line_w1`): the optimal coupling.
"""

from __future__ import annotations

import numpy as np

__all__ = ["cdf_position", "line_w1", "smin_c", "smin_c_grad"]


def _vector(x) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"x has shape {arr.shape}; expected a non-empty vector")
    return arr


def _temperature(c) -> float:
    c = float(c)
    if not c > 0 or not np.isfinite(c):
        raise ValueError(f"c = {c!r}; expected a finite temperature > 0")
    return c


def smin_c(x, c: float = 1.0) -> float:
    """The smooth minimum ``-c ln sum_i exp(-x_i / c)``, computed without overflow.

    Shifted by ``m = min(x)``: ``smin_c(x) = m - c ln sum_i exp(-(x_i - m) / c)``, and every
    exponent is ``<= 0`` with at least one ``= 0``, so the sum lies in ``[1, d]``.

    Parameters
    ----------
    x : array_like (d,)
        Finite values (request counts in the hitting game).
    c : float
        Temperature ``> 0``; ``c -> 0`` gives ``min(x)``.

    Returns
    -------
    float
        ``smin_c(x)``, with ``min(x) - c ln d <= smin_c(x) <= min(x)``.

    References
    ----------
    Paper 004, Appendix A (smooth minimum), Sec. 4.1; docs/algorithms/ring-partitioning.md A3.

    Examples
    --------
    >>> bool(smin_c([0.0, 0.0], 1.0) == -np.log(2))
    True
    >>> x = np.array([3.0, 5.0, 4.0])
    >>> bool(x.min() - 2.0 * np.log(3) <= smin_c(x, 2.0) <= x.min())
    True
    >>> round(smin_c([1e6, 2e6], 1.0), 6)     # no overflow of exp(-x)
    1000000.0
    """
    arr = _vector(x)
    c = _temperature(c)
    m = float(arr.min())
    return m - c * float(np.log(np.exp(-(arr - m) / c).sum()))


def smin_c_grad(x, c: float = 1.0) -> np.ndarray:
    """``grad smin_c(x)``: the softmin distribution ``exp(-x_i / c) / sum_j exp(-x_j / c)``.

    Computed with the same shift by ``min(x)`` as :func:`smin_c`, so it never divides by zero.

    Parameters
    ----------
    x : array_like (d,)
        Finite values.
    c : float
        Temperature ``> 0``.

    Returns
    -------
    float array (d,)
        Non-negative, sums to 1; ``grad smin_c(x) = grad smin(x / c)`` (Appendix A).

    References
    ----------
    Paper 004, Appendix A; docs/algorithms/ring-partitioning.md A3
    (``||grad smin_c(x + y) - grad smin_c(x)||_1 <= (2/c) <p, y>``).

    Examples
    --------
    >>> smin_c_grad([0.0, 0.0]).tolist()
    [0.5, 0.5]
    >>> p = smin_c_grad([0.0, 1.0, 2.0], c=1.0)
    >>> bool(np.isclose(p.sum(), 1.0)), bool(p[0] > p[1] > p[2])
    (True, True)
    """
    arr = _vector(x)
    c = _temperature(c)
    w = np.exp(-(arr - arr.min()) / c)
    return w / w.sum()


def cdf_position(p, u):
    """The CDF coupling: the smallest index ``j`` with ``F(j) >= u``, ``F`` the CDF of ``p``.

    With ``u ~ Uniform(0, 1]`` the result has distribution ``p``; keeping ``u`` fixed while
    ``p`` changes to ``p'`` moves the index by ``sum_j |F(j) - F'(j)| = W1(p, p')`` in
    expectation (the optimal transport on the line, docs/algorithms/ring-partitioning.md A4).

    Parameters
    ----------
    p : array_like (d,)
        Non-negative weights; normalised here (``F`` is scaled by the total), so unnormalised
        weights give the same answer as the distribution they define.
    u : float or array_like
        Levels in ``(0, 1]``.

    Returns
    -------
    int or int array
        Index (indices) in ``0..d-1``; a level above the last rounded CDF value gives ``d - 1``.

    Examples
    --------
    >>> cdf_position([0.25, 0.5, 0.25], 0.2), cdf_position([0.25, 0.5, 0.25], 0.25)
    (0, 0)
    >>> cdf_position([0.25, 0.5, 0.25], [0.3, 0.75, 0.76, 1.0]).tolist()
    [1, 1, 2, 2]
    >>> cdf_position([0.0, 2.0, 2.0], 0.5)    # unnormalised weights
    1
    """
    w = np.asarray(p, dtype=float)
    if w.ndim != 1 or w.size == 0:
        raise ValueError(f"p has shape {w.shape}; expected a non-empty vector")
    F = np.cumsum(w)
    total = F[-1]
    if not total > 0:
        raise ValueError("p has no positive weight")
    uu = np.asarray(u, dtype=float)
    j = np.minimum(np.searchsorted(F, uu * total, side="left"), w.size - 1)
    return int(j) if j.ndim == 0 else j.astype(np.int64)


def line_w1(p, q) -> float:
    """Earth mover's distance ``W1(p, q) = sum_j |F_p(j) - F_q(j)|`` between distributions on a line.

    Points ``0..d-1`` at unit spacing; ``p`` and ``q`` must have the same total.  This is the
    expected move of the CDF coupling (:func:`cdf_position`) when ``p`` changes to ``q``.

    Examples
    --------
    >>> line_w1([1.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    2.0
    >>> line_w1([0.5, 0.5], [0.5, 0.5])
    0.0
    """
    a = np.asarray(p, dtype=float)
    b = np.asarray(q, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"p has shape {a.shape}, q {b.shape}; expected two vectors of one length")
    return float(np.abs(np.cumsum(a - b)[:-1]).sum())
