"""The numba kernel behind ``clusteropt.models.gadget.colgen._min_plus`` (imported on first use)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def min_plus(f, g):
    """``colgen._min_plus`` cell by cell: ``h[j, c] = min_{b < m} f[j, c - b] + g[j, b]``, ``m`` one
    past the last column where ``g`` is finite in some row (1 when there is none).

    For every cell the candidates are tried from the largest ``b`` down and a strict ``<`` keeps
    the first, as the reference's one shifted comparison per ``b`` does; the sums are the same
    floating-point additions, so ``h`` and ``best`` equal the reference's.
    """
    J, width = f.shape
    m = 1
    for b in range(width - 1, 0, -1):
        found = False
        for j in range(J):
            if np.isfinite(g[j, b]):
                found = True
                break
        if found:
            m = b + 1
            break
    h = np.full((J, width), np.inf)
    best = np.zeros((J, width), dtype=np.int16)
    for j in range(J):
        for b in range(m - 1, -1, -1):
            gb = g[j, b]
            for c in range(b, width):
                cand = f[j, c - b] + gb
                if cand < h[j, c]:
                    h[j, c] = cand
                    best[j, c] = b
    return h, best
