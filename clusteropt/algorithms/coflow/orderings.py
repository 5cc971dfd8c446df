"""Coflow orderings: the paper's primal-dual, LP completion times, and the usual baselines.

Every function returns an *order*: a permutation of coflow indices, highest priority first.
They work on the concurrent-open-shop view of an instance: ``loads[j, i]``, the units of coflow
j through port i (``CoflowInstance.loads()``; inputs then outputs), weights and releases.

References
----------
Ahmadi, Khuller, Purohit, Yang, "On Scheduling Coflows" (IPCO 2017; Algorithmica 2020): the
talk's slides, "Primal Dual Algorithm Sketch"; the exact steps are restored in
``docs/algorithms/coflow.md`` B6.  Sincronia (Agarwal et al., SIGCOMM 2018), BSSI: the same page, B9.
Varys (Chowdhury, Zhong, Stoica, SIGCOMM 2014), smallest effective bottleneck first: B9.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = [
    "PrimalDualResult",
    "fifo_order",
    "lp_order",
    "primal_dual_order",
    "sebf_order",
    "sincronia_order",
    "size_order",
]


def _inputs(loads, weight, release=None):
    loads = np.asarray(loads, dtype=np.float64)
    if loads.ndim != 2:
        raise ValueError(f"loads.ndim = {loads.ndim}; expected 2 (coflows x ports)")
    n = loads.shape[0]
    weight = np.asarray(weight, dtype=np.float64)
    if weight.shape != (n,):
        raise ValueError(f"weight.shape = {weight.shape}; expected ({n},)")
    if (loads < 0).any() or (weight < 0).any():
        raise ValueError("loads and weights must be >= 0")
    if release is None:
        release = np.zeros(n)
    release = np.asarray(release, dtype=np.float64)
    if release.shape != (n,):
        raise ValueError(f"release.shape = {release.shape}; expected ({n},)")
    return loads, weight, release


@dataclasses.dataclass(frozen=True)
class PrimalDualResult:
    """The primal-dual ordering and the dual solution it built.

    Attributes
    ----------
    order : int array (n,)
        Coflow indices, first to last.
    dual_objective : float
        ``sum alpha_{mu,j} (r_j + L_{mu,j}) + sum beta_{mu,S} f_mu(S)``: a feasible dual of the
        concurrent-open-shop LP, hence a lower bound on its optimum (weak duality).
    alpha_steps, beta_steps : int
        How many positions were filled by each branch (release / load).
    """

    order: np.ndarray
    dual_objective: float
    alpha_steps: int
    beta_steps: int


def primal_dual_order(loads, weight, release=None, *, kappa: float = 0.5) -> PrimalDualResult:
    """Primal-dual ordering with release times, PD(kappa), filling positions from last to first.

    At each step, with J the coflows not yet placed: mu is the most loaded port
    (``argmax_i L_i(J)``, lowest index on ties) and j-hat the latest-released coflow in J.  If
    ``r_jhat > kappa * L_mu(J)``, j-hat goes last and its dual ``alpha_{mu,jhat}`` takes its
    remaining weight; otherwise ``beta_{mu,J}`` rises by ``theta = min_j wbar_j / L_{mu,j}``
    over J with ``L_{mu,j} > 0``, the minimizer (lowest index on ties) goes last, and every
    remaining weight drops by ``theta * L_{mu,j}``.  Coflows without load are placed first.

    Without release times the first branch never fires and this is Mastrolilli et al.'s
    2-approximation for concurrent open shop, which is Sincronia's BSSI.

    **On arrivals spread over time it is FIFO.**  While the release branch fires, the coflows left
    are those released up to some time t (it removes the latest-released first), so
    ``r_jhat`` is about t and ``L_mu(J)`` about ``rho t``, with rho the busiest port's offered load
    per slot over ``[0, t]``.  The branch fires when ``t > kappa rho t``, i.e. whenever
    ``rho < 1 / kappa`` (2 for ``kappa = 1/2``): on any workload a switch can keep up with
    (rho at most about 1) PD(kappa) orders the coflows by release time, FIFO, except where a burst
    makes a prefix locally heavier than ``1 / kappa``.  Measured on trace-like coflows
    (``tests/algorithms/test_coflow.py``, 300 coflows on 40 ports, seed 1): at offered load
    0.5-1.5 PD(1/2) puts 94-98% of the coflows where FIFO does, and at load 3 half of them.
    This is the slides' algorithm for the objective it bounds, weighted completion time counted
    from slot 0, where release order costs little (each coflow completes after its release
    anyway) and the ratio 5 holds.  For coflow completion time counted from release (CCT), FIFO
    is what it is: big coflows block small ones in a busy period.  ``kappa`` trades the two
    branches (``kappa = 2``: far from FIFO), with the ratio proved for ``1/2`` only.  The
    release-aware alternative is to re-plan online on the remaining demand of the coflows present
    (:func:`clusteropt.algorithms.coflow.online.online_greedy_schedule`, ``run --online``): there
    every coflow is released, the branch never fires, and the order is BSSI on what is left.

    Parameters
    ----------
    loads : array (n, M)
        ``L_{i,j}`` as ``loads[j, i]``.
    weight : array (n,)
    release : array (n,), optional
        Default: all zero.
    kappa : float
        The release test's threshold; ``1/2`` balances the two branches and gives the ratios 5
        (coflows, with the schedulers here) and 3 (concurrent open shop) with release times, 4
        and 2 without (docs/algorithms/coflow.md B6).

    Returns
    -------
    PrimalDualResult

    References
    ----------
    Slides, "Primal Dual Algorithm Sketch"; docs/algorithms/coflow.md B6 (exact steps [I], ratios [R]).

    Examples
    --------
    >>> res = primal_dual_order([[2, 0], [1, 1], [0, 3]], [1.0, 1.0, 1.0])
    >>> res.order.tolist()
    [1, 0, 2]
    """
    loads, weight, release = _inputs(loads, weight, release)
    if not (kappa > 0 and np.isfinite(kappa)):
        raise ValueError(f"kappa = {kappa!r}; expected a positive number")
    n = loads.shape[0]
    alive = np.ones(n, dtype=bool)
    port_load = loads.sum(axis=0)  # L_i(J)
    wbar = weight.copy()
    order = np.empty(n, dtype=np.int64)
    dual, n_alpha, n_beta = 0.0, 0, 0
    empty = np.flatnonzero(loads.sum(axis=1) == 0)
    alive[empty] = False
    pos = n - 1
    for _ in range(n - empty.size):
        mu = int(np.argmax(port_load))
        col = loads[:, mu]
        cand = np.flatnonzero(alive)
        jhat = int(cand[np.argmax(release[cand])])
        if release[jhat] > kappa * port_load[mu]:
            chosen = jhat
            dual += wbar[jhat] * (release[jhat] + col[jhat])
            n_alpha += 1
        else:
            on = cand[col[cand] > 0]
            ratios = wbar[on] / col[on]
            k = int(np.argmin(ratios))
            theta, chosen = float(ratios[k]), int(on[k])
            lj = col[cand]
            dual += theta * 0.5 * (float(lj @ lj) + float(lj.sum()) ** 2)
            wbar[cand] -= theta * lj
            wbar[chosen] = 0.0
            np.maximum(wbar, 0.0, out=wbar)  # rounding noise only; theta is the minimum ratio
            n_beta += 1
        order[pos] = chosen
        pos -= 1
        alive[chosen] = False
        port_load -= loads[chosen]
    order[: empty.size] = empty
    return PrimalDualResult(order=order, dual_objective=dual, alpha_steps=n_alpha, beta_steps=n_beta)


def sincronia_order(loads, weight) -> np.ndarray:
    """Sincronia's BSSI: bottleneck port b, place last the coflow minimizing ``w'_j / L_{b,j}``,
    rescale the weights, repeat.  It is :func:`primal_dual_order` without release times (docs/algorithms/coflow.md
    B6, B9: the public Sincronia code is this loop), so it is computed by it.
    """
    loads, weight, _ = _inputs(loads, weight)
    return primal_dual_order(loads, weight, None).order


def lp_order(completion) -> np.ndarray:
    """Coflows by non-decreasing LP completion time ``C-bar_j`` (ties by index): the slides' step 1
    ("use LP ... to find an ordering"), with the same ratios as the primal-dual order (B6).
    """
    completion = np.asarray(completion, dtype=np.float64)
    if completion.ndim != 1 or not np.isfinite(completion).all():
        raise ValueError("completion must be a 1-d array of finite LP completion times")
    return np.argsort(completion, kind="stable")


def sebf_order(loads, weight=None, release=None, *, weighted: bool = False) -> np.ndarray:
    """Varys's smallest effective bottleneck first, static: ``Gamma_j = max_i L_{i,j}`` (the
    coflow's completion time alone on the switch, unit port rates), smallest first; with
    ``weighted``, ``Gamma_j / w_j`` (a common heuristic).  Ties: earlier release, then index.
    Varys recomputes Gamma on the remaining demand at every arrival and completion; this static
    variant sorts once, and the schedulers serve released coflows in this order.
    """
    loads = np.asarray(loads, dtype=np.float64)
    n = loads.shape[0]
    gamma = loads.max(axis=1) if loads.shape[1] else np.zeros(n)
    if weighted:
        w = np.asarray(weight, dtype=np.float64)
        gamma = np.where(w > 0, gamma / np.where(w > 0, w, 1.0), np.inf)
    release = np.zeros(n) if release is None else np.asarray(release, dtype=np.float64)
    return np.lexsort((np.arange(n), release, gamma))


def fifo_order(release, ids=None) -> np.ndarray:
    """First in, first out: by release slot, then by id (the trace's arrival order)."""
    release = np.asarray(release)
    ids = np.arange(release.shape[0]) if ids is None else np.asarray(ids)
    return np.lexsort((ids, release))


def size_order(total_units, *, largest_first: bool = False) -> np.ndarray:
    """Smallest (or largest) total size first; ties by index."""
    total = np.asarray(total_units, dtype=np.float64)
    key = -total if largest_first else total
    return np.lexsort((np.arange(total.shape[0]), key))
