"""Per-frame decisions of paper 002 (Hsu, Huang, Shieh) as pure functions over one frame.

A frame is given by each application's job as a worker bitmask (``masks[i]``: bit j set when job
``J_i(t)`` has a task for worker ``W_j``; 0 when the application generated no job) and its weight
``V_i = Q_i(t) * prod_{j: J_ij = 1} P_ij`` (the terms of Eq. (2)).  A decision is a list of
applications whose jobs are pairwise interference-free (disjoint masks).

``max_weight_packing``
    Alg. 1, line 6, exactly: a maximum-weight set packing by depth-first branch and bound
    (jobs in decreasing weight; a branch is cut when its weight plus every remaining weight
    cannot beat the best found).  NP-hard in general (Lemma 8); exponential only in the number
    of jobs of positive weight, and fast for the paper's sizes (N <= 10).
``sqrt_greedy_packing``
    Alg. 2, lines 5-11: jobs in decreasing ``V_i / sqrt(|J_i|)`` (Eq. (5)), each taken when all
    its workers are still free; a ``sqrt(M)``-approximation of Eq. (2) (Lemma 12).
``greedy_packing``
    The same greedy in any given priority order (weight-greedy and random baselines).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "fill_zero_weight",
    "frame_masks",
    "greedy_packing",
    "max_weight_packing",
    "packing_value",
    "sqrt_greedy_packing",
]


def _check(weights, masks) -> tuple[list[float], list[int]]:
    w = [float(x) for x in weights]
    mk = [int(x) for x in masks]
    if len(w) != len(mk):
        raise ValueError(f"{len(w)} weights for {len(mk)} masks; expected one weight per application")
    for i, (x, b) in enumerate(zip(w, mk, strict=True)):
        if not x >= 0 or math.isinf(x):
            raise ValueError(f"weights[{i}] = {x}; expected a finite number >= 0")
        if b < 0:
            raise ValueError(f"masks[{i}] = {b}; expected a bitmask >= 0")
    return w, mk


def packing_value(weights, chosen) -> float:
    """``sum_{i in chosen} weights[i]``: the value of a decision in Eq. (2)."""
    return float(sum(float(weights[i]) for i in chosen))


def greedy_packing(order, masks) -> list[int]:
    """Take the applications in ``order``, each when its job exists and its workers are all free.

    >>> greedy_packing([1, 0, 2], [0b011, 0b110, 0b001])
    [1, 2]
    """
    used = 0
    chosen = []
    for i in order:
        m = masks[i]
        if m and not m & used:
            used |= m
            chosen.append(int(i))
    return chosen


def sqrt_greedy_packing(weights, masks, sizes=None) -> list[int]:
    """Alg. 2's decision: greedy in decreasing ``V_i / sqrt(|J_i|)`` (Eq. (5)); ties by index.

    Parameters
    ----------
    weights : sequence of float
        ``V_i = Q_i prod P_ij`` (0 for an application without a job).
    masks : sequence of int
        Worker bitmasks.
    sizes : sequence of int, optional
        ``|J_i|``; computed from the masks when omitted.

    References
    ----------
    Paper 002, Alg. 2 and Eq. (5); Lemma 12 (``OPT <= sqrt(M) * APX``).

    Examples
    --------
    Example 11: keys ``0.48 * 0.8^2 / sqrt(2) = 0.2172`` and ``0.5 * 0.9^3 / sqrt(3) = 0.2104``,
    so J_1 goes first and J_2 (sharing W_2) does not fit:

    >>> sqrt_greedy_packing([0.48 * 0.8**2, 0.5 * 0.9**3], [0b0011, 0b1110])
    [0]
    """
    w, mk = _check(weights, masks)
    size = [m.bit_count() for m in mk] if sizes is None else [int(s) for s in sizes]
    key = [x / math.sqrt(s) if s else 0.0 for x, s in zip(w, size, strict=True)]
    order = sorted(range(len(w)), key=lambda i: -key[i])  # stable: ties keep the index order
    return greedy_packing(order, mk)


def max_weight_packing(weights, masks, *, fill: bool = True) -> tuple[float, list[int]]:
    """Alg. 1's decision: interference-free jobs of maximum total weight (Eq. (2)), exactly.

    Parameters
    ----------
    weights, masks :
        As in :func:`sqrt_greedy_packing`.
    fill : bool
        Afterwards add, in index order, every job of weight 0 that still fits (an application
        whose virtual queue is empty).  The value is unchanged, so the decision is still a
        maximizer of Eq. (2); the extra jobs can only add completions.

    Returns
    -------
    value : float
        The maximum of Eq. (2).
    chosen : list of int
        Applications in the decision, sorted.

    References
    ----------
    Paper 002, Alg. 1 line 6 and Eq. (2); Lemma 8 (NP-hard).

    Examples
    --------
    Example 6: weights 0.3072 and 0.3645 on jobs sharing W_2: J_2 alone is best.

    >>> value, chosen = max_weight_packing([0.3072, 0.3645], [0b0011, 0b1110])
    >>> round(value, 4), chosen
    (0.3645, [1])
    """
    w, mk = _check(weights, masks)
    cand = sorted((i for i in range(len(w)) if w[i] > 0 and mk[i]), key=lambda i: -w[i])
    cw = [w[i] for i in cand]
    cm = [mk[i] for i in cand]
    suffix = [0.0] * (len(cand) + 1)
    for k in range(len(cand) - 1, -1, -1):
        suffix[k] = suffix[k + 1] + cw[k]
    best_val = 0.0
    best: list[int] = []
    chosen: list[int] = []
    # iterative depth-first search over (position, used workers, value), include-branch first
    stack: list[tuple[int, int, float, int]] = [(0, 0, 0.0, 0)]  # (k, used, value, depth of chosen)
    while stack:
        k, used, val, depth = stack.pop()
        del chosen[depth:]
        while k < len(cand):
            if val + suffix[k] <= best_val:
                break
            if not cm[k] & used:
                stack.append((k + 1, used, val, len(chosen)))  # the branch without cand[k]
                used |= cm[k]
                val += cw[k]
                chosen.append(cand[k])
            k += 1
        if val > best_val:
            best_val, best = val, list(chosen)
    return best_val, fill_zero_weight(best, w, mk) if fill else sorted(best)


def fill_zero_weight(chosen, weights, masks) -> list[int]:
    """``chosen`` plus, in index order, every job of weight 0 that still fits; sorted.

    The value of Eq. (2) is unchanged, so a maximizer stays one (``max_weight_packing(fill=True)``).

    >>> fill_zero_weight([0], [1.0, 0.0, 0.0], [0b01, 0b01, 0b10])
    [0, 2]
    """
    chosen = [int(i) for i in chosen]
    used = 0
    for i in chosen:
        used |= masks[i]
    for i, m in enumerate(masks):
        if m and weights[i] == 0 and i not in chosen and not m & used:
            used |= m
            chosen.append(i)
    return sorted(chosen)


def frame_masks(jobs) -> np.ndarray:
    """Worker bitmasks of job matrices (..., N, M) as int64 (M <= 62) or Python ints (object).

    >>> frame_masks([[1, 1, 0], [0, 0, 1]]).tolist()
    [3, 4]
    """
    jobs = np.asarray(jobs).astype(bool)
    m = jobs.shape[-1]
    if m <= 62:
        return jobs.astype(np.int64) @ (np.int64(1) << np.arange(m, dtype=np.int64))
    flat = jobs.reshape(-1, m)
    vals = [int.from_bytes(np.packbits(row[::-1]).tobytes(), "big") >> (-m % 8) for row in flat]
    return np.array(vals, dtype=object).reshape(jobs.shape[:-1])
