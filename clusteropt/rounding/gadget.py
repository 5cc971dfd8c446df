"""Paper 000 (GADGET), Alg. 2 (LP-RS-MDE): LP ring selection, then randomized ring embedding.

:func:`select_rings` (Alg. 2 line 3, Lemma 7)
    From the LP relaxation of problem (12) (``chi``, ``rho``), each job with ``rho_i > 0`` keeps
    the one ring size ``kappa_i`` with the largest ``pi_{i,kappa} chi_{i,kappa}`` over the sizes
    with ``chi_{i,kappa} > 0``.  A job has at most ``Gamma = max_i ceil(q_i)`` sizes, so the kept
    value is at least ``1/Gamma`` of the LP's (Lemma 7).
:func:`draw_mappings` (Alg. 2 lines 7-8)
    One draw of the randomized embedding: job i takes mapping ``omega_i^k`` with probability
    ``varphi_i^k`` (the first whose cumulative weight exceeds a uniform draw), and is rejected
    with probability ``1 - sum_k varphi_i^k``.
:func:`round_paper` (Alg. 2 lines 7-9, Theorem 8; ``lp_rs_mde(..., rounding="paper")``)
    Up to ``u_b`` draws until one gains at least ``alpha`` times the LP value with every node load
    within ``beta^r`` times its capacity and every link within ``gamma`` times
    (:func:`theorem8_constants`).  Its result may exceed capacities; it says by how much
    (:func:`load_ratios` and :func:`overload` measure any allocation the same way).
:func:`round_safe` (the default, ``rounding="safe"``)
    Never exceeds a capacity: jobs in random order draw a mapping as above and keep it only if
    it is a valid ring (Eq. (9)) and fits what is left; jobs left out draw again (``passes``);
    the best of ``samples`` such roundings is kept, and (with ``fill``) :func:`greedy_slot` then
    gives the capacity still idle to jobs without workers.
:func:`lp_rs_mde`
    Alg. 2 end to end for one :class:`~clusteropt.models.gadget.gvne.SlotProblem`, with either
    rounding and with or without the fill.  On tree clusters
    with HiGHS its two LPs are built as matrices (:mod:`clusteropt.models.gadget.matrix`, the very
    same LPs as the Pyomo models, tested row by row); ``builder="pyomo"`` builds the Pyomo models.
:func:`resolve_routes`
    How :func:`lp_rs_mde` solves its two LPs: the paper's order (the augmented LP then its
    decomposition, the full selection LP) or the fast route (column generation, the certified
    capacity relaxation), the same LP optima.  The default ``"auto"`` takes the paper's route on
    clusters below :data:`AUTO_SERVERS` servers and the fast one from there on, where it applies
    (``python -m benchmarks.gadget_route`` measured the choice).

The rounding functions take ``rng`` (a Generator, a seed or None) and touch no global state.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from types import MappingProxyType
from typing import Any

import numpy as np
import pyomo.environ as pyo

from clusteropt.algorithms.gadget.greedy import greedy_slot
from clusteropt.algorithms.gadget.placement import Residual
from clusteropt.decisions.gadget import Mapping, SlotAllocation

__all__ = ["AUTO_SERVERS", "BUILDERS", "EMBED_HIGHS_OPTIONS", "EMBED_ROUTES", "FAST_ROUTE", "PAPER_ROUTE",
           "ROUNDINGS", "SELECT_HIGHS_OPTIONS", "SELECT_ROUTES", "PaperRounding", "RingSelection", "SafeRounding",
           "capacity_obstacle", "colgen_obstacle", "draw_mappings", "load_ratios", "lp_rs_mde",
           "mappings_allocation", "overload", "positive_gain", "resolve_routes", "round_paper", "round_safe",
           "select_from_chi", "select_rings", "slot_gain", "theorem8_constants"]

log = logging.getLogger(__name__)

#: HiGHS options for the ring-selection LP (the LP relaxation of (12)-(19), tree form): primal
#: simplex.  Measured by ``python -m benchmarks.gadget_lp_methods`` (``benchmarks/results/
#: gadget_lp_methods.md``: ``paper`` preset, sqrt utility, 100 jobs, the problems of slots 60 / 110 /
#: 160 with no earlier allocation, 24 / 54 / 78 jobs, 7.8k-25k columns; median of 3 on 2 busy
#: cores): primal simplex 0.13 / 0.83 / 1.12 s, dual simplex (HiGHS's default) 0.13 / 3.30 /
#: 5.83 s, interior point with crossover 0.10 / 0.54 / 1.22 s (as fast here, and faster from a few
#: hundred servers on: :data:`SELECT_ALGORITHMS`).
SELECT_HIGHS_OPTIONS = MappingProxyType({"solver": "simplex", "simplex_strategy": 4})
#: HiGHS options for the augmented LP (Alg. 2 line 4, tree form): dual simplex with presolve
#: (HiGHS's default).  Same benchmark and slots (20k-56k columns): 0.51 / 3.17 / 4.60 s; without
#: presolve 0.67 / 1.85 / 8.68 s (faster on one slot, about 2x slower on the largest); interior
#: point 0.95 / 3.57 / 7.15 s; primal simplex 1.86 / 7.64 / 18.79 s.
EMBED_HIGHS_OPTIONS = MappingProxyType({"solver": "simplex", "simplex_strategy": 1})
#: ``builder`` values of :func:`lp_rs_mde` and :func:`select_rings`.
BUILDERS = ("auto", "matrix", "pyomo")
#: ``rounding`` values of :func:`lp_rs_mde`: :func:`round_safe` (default) or :func:`round_paper`.
ROUNDINGS = ("safe", "paper")
#: How Alg. 2 lines 4-6 are solved: ``"lp"`` builds the augmented LP and decomposes its solution
#: (the paper's order), ``"colgen"`` generates the valid mappings directly
#: (:mod:`clusteropt.models.gadget.colgen`; tree clusters, HiGHS; the same LP optimum);
#: ``"auto"`` (the default) lets :func:`resolve_routes` choose one of them.
EMBED_ROUTES = ("auto", "lp", "colgen")
#: How the ring-selection LP is solved: ``"full"`` as built; ``"capacity"`` first without its link
#: and ring-crossing rows (:func:`clusteropt.models.gadget.matrix.capacity_relaxation`), whose
#: solution, extended at the smallest values the rows allow, is checked against the full LP
#: (a feasible extension has the relaxation's value, so it is optimal); the full LP is solved only
#: when the check fails (recorded as ``select_certified``); ``"auto"`` (the default) lets
#: :func:`resolve_routes` choose.
SELECT_ROUTES = ("auto", "full", "capacity")
#: The route ``"auto"`` resolves to on clusters below :data:`AUTO_SERVERS` servers and wherever the
#: fast route cannot run: ``(embed_route, select_route)`` in the paper's order (Alg. 2 lines 3-6).
PAPER_ROUTE = ("lp", "full")
#: The route ``"auto"`` resolves to from :data:`AUTO_SERVERS` servers on, where it applies (a tree
#: cluster, HiGHS, the array-built tree form of the selection LP): column generation and the certified
#: capacity relaxation, the same LP optima as :data:`PAPER_ROUTE` (:func:`resolve_routes`).
FAST_ROUTE = ("colgen", "capacity")
#: Servers from which ``"auto"`` takes :data:`FAST_ROUTE`.  Measured by ``python -m
#: benchmarks.gadget_route`` (``benchmarks/results/gadget_route.md``: one slot, sqrt utility, CPU
#: seconds of the whole slot): on the tiny and small presets (4 and 8 servers, 20 jobs) the paper's
#: route takes 0.016 and 0.048 s, the fast one 0.016 and 0.038 s, so the paper's is kept there; with
#: 100 jobs the paper's route takes 2.8x the fast one's CPU at 16 servers (0.335 s against 0.120 s),
#: 11.7x at 50 (the paper's cluster: 7.39 s against 0.63 s), 64x at 100 and 200 servers (59 s and
#: 110 s against 0.92 s and 1.73 s); at 400 servers the fast route takes 2.9 s.
AUTO_SERVERS = 16
#: HiGHS's algorithm for the ring-selection LP (Alg. 2 line 3): primal simplex
#: (:data:`SELECT_HIGHS_OPTIONS`, the default) or the interior-point method with crossover (a vertex
#: as well; faster from a few hundred servers on, ``python -m benchmarks.gadget_servers``).
SELECT_ALGORITHMS = MappingProxyType({"simplex": SELECT_HIGHS_OPTIONS,
                                      "ipm": MappingProxyType({"solver": "ipm", "run_crossover": "on"})})

Decomposition = dict[int, list[tuple[float, Mapping]]]


@dataclasses.dataclass(frozen=True)
class RingSelection:
    """Lemma 7's choice: ``kappa`` (job -> ring size), the LP value of problem (12) and the value
    kept, ``sum_i pi[i, kappa_i] chi[i, kappa_i]`` (at least ``lp_value / Gamma``).
    """

    kappa: dict[int, int]
    lp_value: float
    selected_value: float


def select_from_chi(problem, chi: dict[tuple[int, int], float], *,
                    tol: float = 1e-7) -> tuple[dict[int, int], float]:
    """Lemma 7 on given LP values ``chi[(i, kappa)]``: ``(kappa, kept value)``.

    A job whose sizes all have ``chi <= tol`` (``rho_i = 0``) gets no ring.  Ties (most often
    several sizes gaining 0 under a sigmoid far below its inflection) go to the larger size.

    >>> from types import SimpleNamespace
    >>> p = SimpleNamespace(jobs=np.array([3]), pi=(np.array([1.0, 1.5, 1.8]),))
    >>> select_from_chi(p, {(3, 1): 0.0, (3, 2): 0.5, (3, 3): 0.4})
    ({3: 2}, 0.75)
    """
    kappa, kept = {}, 0.0
    for i, pi in zip(problem.jobs.tolist(), problem.pi, strict=True):
        best = None
        for k in range(1, len(pi) + 1):
            c = float(chi.get((i, k), 0.0))
            if c > tol and (best is None or pi[k - 1] * c >= best[1] - 1e-12):
                best = (k, float(pi[k - 1]) * c)
        if best is not None:
            kappa[int(i)] = best[0]
            kept += best[1]
    return kappa, kept


def select_rings(problem, *, form: str = "auto", solver: str | None = None,
                 builder: str = "auto") -> tuple[RingSelection, Any]:
    """Alg. 2 line 3: solve the LP relaxation of (12) (:func:`build_gvne` with ``relax=True``) and
    apply :func:`select_from_chi`.  Returns the selection and the solver's result.

    ``builder``: ``"matrix"`` builds the LP's arrays directly
    (:func:`clusteropt.models.gadget.matrix.build_gvne_matrix`; tree form, HiGHS), ``"pyomo"``
    the Pyomo model, ``"auto"`` the matrix where it applies.  Same LP, same HiGHS input.
    """
    sel, res, _ = _select(problem, form, solver, builder)
    return sel, res


def use_matrix(problem, form: str, solver: str | None, builder: str) -> bool:
    """Whether the matrix fast path builds this slot's LPs (tree form, HiGHS)."""
    if builder not in BUILDERS:
        raise ValueError(f"builder = {builder!r}; expected one of {BUILDERS}")
    if builder == "pyomo":
        return False
    ok = solver in (None, "highs") and (form == "tree" or (form == "auto" and problem.inst.cluster.is_tree()))
    if builder == "matrix" and not ok:
        raise ValueError(f"builder='matrix' builds the tree form for HiGHS only (form = {form!r}, solver = "
                         f"{solver!r}, tree cluster: {problem.inst.cluster.is_tree()}); "
                         "use builder='pyomo' or 'auto'")
    return ok


def colgen_obstacle(cluster, *, solver: str | None = None, embed_form: str = "auto") -> str | None:
    """Why ``embed_route="colgen"`` cannot run here (None: it can).

    Column generation prices placements on a tree (:mod:`clusteropt.models.gadget.colgen`), solves
    its master with HiGHS, and is the augmented LP's tree form.
    """
    if not cluster.is_tree():
        return "it prices placements on a tree cluster (Cluster.is_tree() is False)"
    if solver not in (None, "highs"):
        return f"its master LP is solved by HiGHS, not by solver = {solver!r}"
    if embed_form not in ("auto", "tree"):
        return f"it solves the augmented LP's tree form, not embed_form = {embed_form!r}"
    return None


def capacity_obstacle(cluster, *, solver: str | None = None, form: str = "auto",
                      builder: str = "auto") -> str | None:
    """Why ``select_route="capacity"`` (or ``select_classes=True``) cannot run here (None: it can):
    both need the array-built selection LP (tree cluster, HiGHS, the tree form, builder not Pyomo).
    """
    if not cluster.is_tree():
        return "it needs the array-built selection LP of a tree cluster (Cluster.is_tree() is False)"
    if solver not in (None, "highs"):
        return f"it needs the array-built selection LP, solved by HiGHS, not by solver = {solver!r}"
    if form not in ("auto", "tree"):
        return f"it needs the array-built selection LP in the tree form, not form = {form!r}"
    if builder == "pyomo":
        return "it needs the array-built selection LP, not builder = 'pyomo'"
    return None


def resolve_routes(cluster, *, embed_route: str = "auto", select_route: str = "auto", solver: str | None = None,
                   form: str = "auto", embed_form: str = "auto", builder: str = "auto") -> tuple[str, str]:
    """The named ``(embed_route, select_route)`` LP-RS-MDE runs on ``cluster`` (Alg. 2 lines 3-6).

    A named route is checked and returned.  ``"auto"`` resolves each of the two on its own: the
    fast one (:data:`FAST_ROUTE`: ``"colgen"``, ``"capacity"``) on a cluster of at least
    :data:`AUTO_SERVERS` servers where it applies, else the paper's (:data:`PAPER_ROUTE`:
    ``"lp"``, ``"full"``).  A ``builder`` named (``"matrix"`` or ``"pyomo"``: build these LPs so)
    keeps the paper's route, whose LPs it builds.  Both routes reach the same LP optima: the
    capacity route's selection is certified optimal for the full selection LP (or that LP is
    solved), and column generation solves the augmented LP itself.  Where an LP has several optima
    the routes may stop at different vertices, so a run may keep other ring sizes or draw other
    mappings; name the route to repeat a run made with it.

    The choice: ``python -m benchmarks.gadget_route`` (``benchmarks/results/gadget_route.md``) times
    one slot of every route.  Below :data:`AUTO_SERVERS` servers (the tiny and small presets) all
    four take under 0.05 s CPU, so the paper's route costs nothing worth saving; with 100 jobs the
    fast route takes 1/2.8 of the paper's CPU at 16 servers, 1/11.7 at 50 (the paper's cluster)
    and 1/64 at 100 and at 200, and it is the one route that stays within a few seconds at 400
    servers (2.9 s CPU).  The selection LP's optimum and, for the same ring sizes, the augmented
    LP's agree across the routes there to 1e-6.

    Parameters
    ----------
    cluster : Cluster
        The cluster the slots are solved on (with ``quotient=True`` the quotient tree).
    embed_route, select_route : str
        :data:`EMBED_ROUTES`, :data:`SELECT_ROUTES` (``"auto"``: choose).
    solver, form, embed_form, builder
        As in :func:`lp_rs_mde`: what the routes must run with.

    Returns
    -------
    tuple of str
        ``(embed_route, select_route)``, both named.

    Raises
    ------
    ValueError
        For an unknown name, or a named route that cannot run here, with the reason
        (:func:`colgen_obstacle`, :func:`capacity_obstacle`).

    >>> from clusteropt.instances.gadget.instance import gadget_preset
    >>> resolve_routes(gadget_preset("small", seed=0).cluster)
    ('lp', 'full')
    >>> resolve_routes(gadget_preset("paper", seed=0).cluster)
    ('colgen', 'capacity')
    >>> resolve_routes(gadget_preset("paper", seed=0).cluster, solver="scip")
    ('lp', 'full')
    """
    if embed_route not in EMBED_ROUTES:
        raise ValueError(f"embed_route = {embed_route!r}; expected one of {EMBED_ROUTES}")
    if select_route not in SELECT_ROUTES:
        raise ValueError(f"select_route = {select_route!r}; expected one of {SELECT_ROUTES}")
    if builder not in BUILDERS:
        raise ValueError(f"builder = {builder!r}; expected one of {BUILDERS}")
    large = cluster.n_servers >= AUTO_SERVERS and builder == "auto"
    embed_no = colgen_obstacle(cluster, solver=solver, embed_form=embed_form)
    select_no = capacity_obstacle(cluster, solver=solver, form=form, builder=builder)
    if embed_route == "colgen" and embed_no is not None:
        raise ValueError(f"embed_route = 'colgen' cannot run here: {embed_no}; use embed_route = 'lp' or 'auto'")
    if select_route == "capacity" and select_no is not None:
        raise ValueError(f"select_route = 'capacity' cannot run here: {select_no}; use select_route = 'full' or "
                         "'auto'")
    if embed_route == "auto":
        embed_route = FAST_ROUTE[0] if large and embed_no is None else PAPER_ROUTE[0]
    if select_route == "auto":
        select_route = FAST_ROUTE[1] if large and select_no is None else PAPER_ROUTE[1]
    return embed_route, select_route


def _select(problem, form: str, solver: str | None, builder: str, warm=None, options=SELECT_HIGHS_OPTIONS,
            classes: bool = False, route: str = "full", record: dict | None = None):
    """:func:`select_rings` plus the build time: ``(selection, result, build_seconds)``; ``warm``:
    a :class:`~clusteropt.solvers.direct.WarmHighs` for the matrix route (None: cold).  ``route``:
    :data:`SELECT_ROUTES`; ``record`` receives ``select_certified`` (and the relaxation's time and
    violation) for the ``"capacity"`` route.
    """
    t0 = time.perf_counter()
    if use_matrix(problem, form, solver, builder):
        from clusteropt.models.gadget.matrix import (
            build_gvne_matrix,
            capacity_relaxation,
            certify_extension,
            extend_capacity_solution,
            solve_matrix,
        )

        lp = build_gvne_matrix(problem, classes=classes)
        t1 = time.perf_counter()
        if route == "capacity":
            sub = capacity_relaxation(lp)
            res, x_sub = solve_matrix(sub, options=options, warm=warm)  # raises unless optimal
            assert x_sub is not None
            ok, violation = certify_extension(lp, extend_capacity_solution(problem, lp, sub, x_sub))
            if record is not None:
                record.update({"select_certified": ok, "select_violation": violation,
                               "select_relaxation_s": res.solve_seconds})
            if ok:
                kappa, kept = select_from_chi(problem, sub.values_by_key(x_sub, "chi"))
                assert res.objective is not None
                return RingSelection(kappa, float(res.objective), kept), res, t1 - t0
            log.info("slot %d: the capacity relaxation's solution violates the full LP by %.3g; solving it",
                     problem.t, violation)
            warm = None  # the held model is the relaxation's
        res, x = solve_matrix(lp, options=options, warm=warm)  # raises unless optimal
        chi = lp.values_by_key(x, "chi")
    else:
        from clusteropt.models.gadget.gvne import build_gvne

        if classes or route != "full":
            raise ValueError("select_classes = True and select_route = 'capacity' need the array-built "
                             "selection LP (tree cluster, HiGHS, builder 'auto' or 'matrix')")
        model = build_gvne(problem, form=form, relax=True)
        t1 = time.perf_counter()
        # raises unless optimal: a ring selection from a failed LP means nothing
        res = _solve_lp(model, solver, options)
        chi = {key: float(pyo.value(v, exception=False) or 0.0) for key, v in model.chi.items()}
    kappa, kept = select_from_chi(problem, chi)
    assert res.objective is not None  # optimal: both solves raise otherwise
    return RingSelection(kappa, float(res.objective), kept), res, t1 - t0


def _solve_lp(model, solver: str | None, options=None):
    """HiGHS through its matrix (:func:`clusteropt.solvers.direct.solve_highs_direct`: these
    models are solved once, and the persistent interface's hand-off cost more than the solve)
    with the HiGHS ``options``, any other solver through :func:`clusteropt.solvers.solve`.
    Raises unless optimal.
    """
    if solver in (None, "highs"):
        from clusteropt.solvers.direct import solve_highs_direct

        return solve_highs_direct(model, options=options)
    from clusteropt.solvers import solve

    return solve(model, solver)


def positive_gain(problem):
    """``problem`` restricted to the jobs some ring size gains utility for.

    A job gaining nothing (a sigmoid far below its inflection: ``pi`` underflows; a quadratic
    past its peak) adds nothing to the LP of (12) or to the augmented LP, where it could only
    take capacity, so leaving it out changes neither optimum; the greedy fill still places it.
    Gains below ``1e-12`` times the largest utility scale count as 0, as in :func:`greedy_slot`.
    """
    scale = float(np.abs(problem.inst.utility_params[:, 0]).max(initial=1.0))
    keep = [j for j, pi in enumerate(problem.pi) if pi.size and float(pi.max()) > 1e-12 * scale]
    if len(keep) == problem.jobs.size:
        return problem
    return dataclasses.replace(problem, jobs=problem.jobs[keep], kmax=problem.kmax[keep],
                               pi=tuple(problem.pi[j] for j in keep))


def slot_gain(problem, alloc: SlotAllocation) -> float:
    """Utility gained in the slot (Eq. (12)): ``pi[i, k]`` for every job with ``k`` workers."""
    w = np.asarray(alloc.workers).sum(axis=1)
    gain = 0.0
    for i, pi in zip(problem.jobs.tolist(), problem.pi, strict=True):
        k = int(w[i])
        if k:
            if k > len(pi):
                raise ValueError(f"job {i} has {k} workers; at most {len(pi)} (q_i) are possible")
            gain += float(pi[k - 1])
    return gain


def _gain_of(problem, chosen: dict[int, Mapping]) -> float:
    pos = {int(i): j for j, i in enumerate(problem.jobs.tolist())}
    return sum(float(problem.pi[pos[i]][mp.size - 1]) for i, mp in chosen.items())


def draw_mappings(decomposition: Decomposition, rng=None) -> dict[int, Mapping]:
    """One randomized embedding: per job (ascending), a uniform ``U``; the first mapping whose
    cumulative weight exceeds ``U``, or nothing (probability ``1 - sum_k varphi_i^k``).

    >>> from clusteropt.decisions.gadget import Mapping
    >>> d = {0: [(0.5, Mapping(0, ((1, 2),), None))], 1: []}
    >>> [sorted(draw_mappings(d, rng=s)) for s in range(3)]  # U = 0.64, 0.51, 0.26
    [[], [], [0]]
    >>> sum(0 in draw_mappings(d, rng=s) for s in range(1000))  # about half
    484
    """
    rng = np.random.default_rng(rng)
    out = {}
    for i in sorted(decomposition):
        u = rng.random()
        acc = 0.0
        for phi, mp in decomposition[i]:
            acc += phi
            if u < acc:
                out[i] = mp
                break
    return out


def theorem8_constants(problem, decomposition: Decomposition, *, epsilon: float | None = None):
    """``(beta, gamma, epsilon)`` of Theorem 8 for this slot's decomposition.

    ``beta^r = 1 + epsilon sqrt(2 Delta^r(V_s) ln |V_s|)``, ``gamma = 1 + epsilon sqrt(2 Delta(E_s)
    ln |E_s|)``, ``Delta^r(V_s) = max_u sum_i (C^r_max(i, u) / d^r_max(i, u))^2`` over the jobs with
    ``d^r_max(i, u) > 0``, and ``Delta(E_s)`` the same over links.  ``d_max`` is the largest single
    demand of job i there (one worker's ``l_i^r``; ``b_i`` on a link) and ``C_max`` the largest
    load one of its mappings in the decomposition puts there (the mappings the rounding can
    draw).  The paper does not say what ``epsilon`` is nor the base of the logarithm
    (that part of the text is not recoverable from our copy of the paper); we take the natural
    logarithm and, unless given, ``epsilon`` = the largest ratio of one job's load to the
    capacity it loads (the ratio a Hoeffding bound scales with).  Both are documented guesses.
    The LP may use, fractionally, a mapping that alone exceeds a capacity; then this default
    ``epsilon`` exceeds 1 and the (beta, gamma) test accepts almost any draw: pass ``epsilon``
    to make it bite.
    """
    inst = problem.inst
    cl = inst.cluster
    n_s, n_r, n_l = cl.n_servers, len(cl.resources), cl.n_links
    node_sq = np.zeros((n_s, n_r))
    link_sq = np.zeros(n_l)
    ratio = 0.0
    for i, maps in decomposition.items():
        if not maps:
            continue
        pw, b = inst.per_worker[i], float(inst.bandwidth[i])
        cmax_n = np.max([mp.node_load(pw, n_s) for _, mp in maps], axis=0)
        cmax_l = np.max([mp.link_load(b, n_l) for _, mp in maps], axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            node_sq += np.where((pw[None, :] > 0) & (cmax_n > 0), (cmax_n / np.where(pw > 0, pw, 1)) ** 2, 0.0)
            if b > 0:
                link_sq += np.where(cmax_l > 0, (cmax_l / b) ** 2, 0.0)
            ratio = max(ratio, float(np.nanmax(np.where(cl.capacity > 0, cmax_n / cl.capacity, 0.0))),
                        float(np.nanmax(np.where(cl.bandwidth > 0, cmax_l / cl.bandwidth, 0.0), initial=0.0)))
    eps = ratio if epsilon is None else float(epsilon)
    beta = 1.0 + eps * np.sqrt(2.0 * node_sq.max(axis=0) * math.log(max(n_s, 2)))
    gamma = 1.0 + eps * math.sqrt(2.0 * float(link_sq.max(initial=0.0)) * math.log(max(n_l, 2)))
    return beta, gamma, eps


@dataclasses.dataclass(frozen=True)
class PaperRounding:
    """The outcome of :func:`round_paper`.

    ``chosen``: job -> mapping of the kept draw; ``value``: its gain (Eq. (12)); ``rounds``: draws
    made; ``accepted``: whether it passed the (alpha, beta, gamma) test (else the last draw is
    kept); ``node_ratio`` (S, R) and ``link_ratio`` (L,): load over capacity; ``violations``:
    how many server-resource pairs and links exceed their capacity; ``epsilon``: Theorem 8's
    epsilon that made ``beta`` and ``gamma`` (:func:`theorem8_constants`).
    """

    chosen: dict[int, Mapping]
    value: float
    rounds: int
    accepted: bool
    alpha: float
    beta: np.ndarray
    gamma: float
    node_ratio: np.ndarray
    link_ratio: np.ndarray
    epsilon: float = float("nan")

    @property
    def violations(self) -> int:
        """Server-resource pairs and links loaded beyond capacity (1e-9 slack)."""
        return int((self.node_ratio > 1 + 1e-9).sum() + (self.link_ratio > 1 + 1e-9).sum())


def _loads(inst, chosen: dict[int, Mapping]):
    cl = inst.cluster
    node = np.zeros(cl.capacity.shape)
    link = np.zeros(cl.n_links)
    for i, mp in chosen.items():
        node += mp.node_load(inst.per_worker[i], cl.n_servers)
        link += mp.link_load(float(inst.bandwidth[i]), cl.n_links)
    return _over(node, cl.capacity), _over(link, cl.bandwidth)


def _over(load: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """``load / capacity``; a load on a capacity of 0 is ``inf``, no load on it 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(capacity > 0, load / np.where(capacity > 0, capacity, 1), np.where(load > 0, np.inf, 0))


def load_ratios(inst, alloc: SlotAllocation) -> tuple[np.ndarray, np.ndarray]:
    """Load over capacity of one slot's allocation: ``(node (S, R), link (L,))``.

    Node load ``sum_i l_i^r y_is`` (Eq. (4)), link load ``b_i`` for every time a link is on job
    i's ring paths (Eq. (19)); a load on a capacity of 0 is ``inf``.  Read from the allocation
    alone, as :func:`clusteropt.verify.check_gadget_allocation` does.
    """
    cl = inst.cluster
    w = np.asarray(alloc.workers, dtype=float)
    node = w.T @ np.asarray(inst.per_worker, dtype=float)
    link = np.zeros(cl.n_links)
    for i, ring in alloc.rings.items():
        for p in ring.paths:
            np.add.at(link, list(p), float(inst.bandwidth[i]))
    return _over(node, cl.capacity), _over(link, cl.bandwidth)


def overload(inst, alloc: SlotAllocation, *, tol: float = 1e-9) -> tuple[int, float]:
    """``(violations, max_load_ratio)`` of one slot: the server-resource pairs and links loaded
    beyond capacity (ratio above ``1 + tol``) and the largest load / capacity (0 when idle).

    >>> from clusteropt.instances.gadget.instance import gadget_preset
    >>> inst = gadget_preset("tiny", jobs=2, seed=0)
    >>> alloc = SlotAllocation.empty(2, 4)
    >>> alloc.workers[0, 0] = int(inst.cluster.capacity[0, 0]) * 2
    >>> overload(inst, alloc)
    (1, 2.0)
    """
    nr, lr = load_ratios(inst, alloc)
    count = int((nr > 1 + tol).sum() + (lr > 1 + tol).sum())
    worst = max(float(nr.max(initial=0.0)), float(lr.max(initial=0.0)))
    return count, worst


def mappings_allocation(inst, chosen: dict[int, Mapping]) -> SlotAllocation:
    """The :class:`SlotAllocation` of chosen mappings (job -> ``omega_i^k``): their workers and rings."""
    alloc = SlotAllocation.empty(inst.n_jobs, inst.cluster.n_servers)
    for i, mp in chosen.items():
        for s, n in mp.workers:
            alloc.workers[i, s] = n
        if mp.ring is not None:
            alloc.rings[i] = mp.ring
    return alloc


def round_paper(problem, decomposition: Decomposition, lp_value: float, *, rng=None, rounds: int = 100,
                alpha: float = 1 / 3, epsilon: float | None = None) -> PaperRounding:
    """Alg. 2 lines 7-9: draw until a draw gains ``>= alpha * lp_value`` with loads within
    ``beta^r`` / ``gamma`` times capacity, at most ``rounds`` (``u_b``) draws.

    The reference implementation uses 100 rounds; the paper leaves ``u_b`` open.  A result that
    was not accepted keeps the last draw and says so; either may exceed capacities (the
    ratios are in the result).
    """
    if rounds < 1:
        raise ValueError(f"rounds = {rounds}; expected >= 1 (u_b)")
    rng = np.random.default_rng(rng)
    beta, gamma, eps = theorem8_constants(problem, decomposition, epsilon=epsilon)
    chosen, nr, lr, value = {}, None, None, 0.0
    for n in range(1, rounds + 1):
        chosen = draw_mappings(decomposition, rng)
        value = _gain_of(problem, chosen)
        nr, lr = _loads(problem.inst, chosen)
        ok = (value >= alpha * lp_value - 1e-9 and bool(np.all(nr <= beta[None, :] + 1e-9))
              and bool(np.all(lr <= gamma + 1e-9)))
        if ok:
            return PaperRounding(chosen, value, n, True, alpha, beta, gamma, nr, lr, eps)
    assert nr is not None and lr is not None  # rounds >= 1: at least one draw
    return PaperRounding(chosen, value, rounds, False, alpha, beta, gamma, nr, lr, eps)


@dataclasses.dataclass
class SafeRounding:
    """The outcome of :func:`round_safe`: the allocation (feasible by construction), its gain,
    the gain of the drawn part alone (before the fill) and the samples drawn.
    """

    allocation: SlotAllocation
    value: float
    drawn_value: float
    samples: int


def _fits(res: Residual, mp: Mapping, pw, b: float, tol: float = 1e-9) -> bool:
    if not mp.valid:
        return False
    for s, n in mp.workers:
        if np.any(res.server[s] < n * pw - tol):
            return False
    if mp.ring is not None:
        need = mp.link_load(b, res.link.size)
        if np.any(res.link < need - tol):
            return False
    return True


def round_safe(problem, decomposition: Decomposition, *, rng=None, samples: int = 8, passes: int = 5,
               fill: bool = True, paths=None) -> SafeRounding:
    """The default rounding: never exceeds a capacity (module docstring).

    Per sample: jobs in a random order draw a mapping (:func:`draw_mappings`' rule) and keep it
    when it is a valid ring and fits what is left; the jobs left without one draw again, up to
    ``passes`` more times.  The sample with the largest gain is kept; with ``fill``,
    :func:`greedy_slot` then places jobs still without workers into what is idle.
    """
    if samples < 1 or passes < 0:
        raise ValueError(f"samples = {samples}, passes = {passes}; expected samples >= 1 and passes >= 0")
    rng = np.random.default_rng(rng)
    inst = problem.inst
    cl = inst.cluster
    paths = cl.paths() if paths is None else paths
    jobs = np.array(sorted(i for i, maps in decomposition.items() if maps), dtype=np.int64)
    best: tuple[float, dict[int, Mapping]] | None = None
    for _ in range(samples):
        res = Residual.full(cl, paths)
        chosen: dict[int, Mapping] = {}
        todo = rng.permutation(jobs).tolist()
        for _ in range(passes + 1):
            left = []
            for i in todo:
                pw, b = inst.per_worker[i], float(inst.bandwidth[i])
                mp = draw_mappings({i: decomposition[i]}, rng).get(i)
                if mp is not None and _fits(res, mp, pw, b):
                    res.take(dict(mp.workers), pw, mp.ring, b)
                    chosen[i] = mp
                else:
                    left.append(i)
            todo = left
            if not todo:
                break
        value = _gain_of(problem, chosen)
        if best is None or value > best[0] + 1e-12:
            best = (value, chosen)
    drawn_value, chosen = best if best is not None else (0.0, {})
    alloc = mappings_allocation(inst, chosen)
    if fill:
        alloc, _ = greedy_slot(problem, start=alloc, paths=paths)
    return SafeRounding(alloc, slot_gain(problem, alloc), drawn_value, samples)


def lp_rs_mde(problem, *, rng=None, form: str = "auto", embed_form: str = "auto", solver: str | None = None,
              rounding: str = "safe", samples: int = 8, passes: int = 5, rounds: int = 100, alpha: float = 1 / 3,
              epsilon: float | None = None, fill: bool = True, paths=None, builder: str = "auto",
              warm: dict[str, Any] | None = None, embed_route: str = "auto",
              select_algorithm: str = "simplex", select_classes: bool = False, select_route: str = "auto"
              ) -> tuple[SlotAllocation, dict[str, Any]]:
    """Alg. 2 for one slot: ring selection (Lemma 7), the augmented LP with those sizes
    (:func:`build_embedding_lp`), its decomposition and a rounding.  Returns the allocation and
    timings / values for the record.

    ``rounding="safe"`` (default): :func:`round_safe` with ``samples`` and ``passes``; never
    exceeds a capacity.  ``rounding="paper"``: Alg. 2 lines 7-9 as written, :func:`round_paper`
    with ``u_b = rounds``, ``alpha`` and Theorem 8's ``epsilon``, tested against the augmented
    LP's value (the expected gain of one draw); the kept draw may overload servers and links,
    and the info says by how much.  A drawn mapping whose ring visits a server twice
    (:attr:`Mapping.valid` False; only the extended-graph form on non-tree clusters makes them)
    cannot be a ring of Eq. (9): that job gets no workers from the draw (``invalid_dropped``).
    ``fill``: then :func:`greedy_slot` gives what is still idle to jobs without workers (the
    scheduler's work-conserving fill; ``False`` is Alg. 2 alone).  A fill never loads a server or
    link beyond capacity, nor one the paper rounding already overloaded.

    Both LPs hold only the jobs that gain something (:func:`positive_gain`; same optima).
    With ``solver`` None or ``"highs"`` they go to HiGHS through their matrices, with the
    algorithm chosen per LP (:data:`SELECT_HIGHS_OPTIONS`, :data:`EMBED_HIGHS_OPTIONS`).

    ``form``: the G-VNE form of the ring-selection LP; ``embed_form``: the augmented LP's form.
    ``builder``: ``"matrix"`` builds both LPs (tree form, HiGHS) as arrays with
    :mod:`clusteropt.models.gadget.matrix` (the very same LPs as the Pyomo models; HiGHS gets the
    same input, so the result is the same), ``"pyomo"`` builds the Pyomo models users inspect and
    export, ``"auto"`` (default) the matrix where it applies (tree cluster, HiGHS), else Pyomo.
    ``warm``: ``{"select": WarmHighs, "embed": WarmHighs}`` kept by the caller across an online
    run's slots (:class:`~clusteropt.solvers.direct.WarmHighs`): a matrix-route LP with the
    previous slot's structure is then re-solved from its basis after changing costs and bounds
    (same optimal value; where the LP has several optima the point may differ).  None (default):
    every LP is built and solved afresh, as before.

    ``embed_route`` and ``select_route``: ``"auto"`` (the defaults) resolve by
    :func:`resolve_routes` from the cluster: the paper's route (``"lp"``, ``"full"``) below
    :data:`AUTO_SERVERS` servers, wherever the fast one cannot run and with a ``builder`` named,
    column generation and the
    certified capacity relaxation (``"colgen"``, ``"capacity"``) from there on (the same LP optima;
    measured by ``python -m benchmarks.gadget_route``, ``benchmarks/results/gadget_route.md``).  The
    info records the resolved names (``embed_route``, ``select_route``) and what was asked
    (``route_requested``, ``"<embed_route>/<select_route>"``, e.g. ``"auto/auto"``); a named route
    that cannot run here raises :class:`ValueError`.

    ``embed_route="lp"`` solves the augmented LP (line 4) and decomposes its solution
    (lines 5-6); ``"colgen"`` (tree clusters, HiGHS) solves the same LP over the valid mappings by column
    generation (:func:`clusteropt.models.gadget.colgen.solve_embedding_colgen`), whose optimal weights
    are the decomposition.  Same augmented LP value; where that LP has several optimal
    decompositions the two routes may draw different mappings.  With ``"colgen"`` the info also has
    ``colgen_rounds``, ``colgen_columns``, ``pricing_s`` and ``colgen_bound``; ``builder`` is then
    ``"colgen"``, ``build_s`` the column hand-off (``addCols``), ``handoff_s`` 0 and ``solve_s`` the
    master's runs plus pricing.

    ``select_algorithm``: HiGHS's algorithm for the ring-selection LP (:data:`SELECT_ALGORITHMS`):
    ``"simplex"`` (default) or ``"ipm"`` (interior point with crossover).  Both return an optimal
    vertex; where the LP has several, Lemma 7 may keep other ring sizes.  Not with ``warm`` (a warm
    re-solve starts the simplex from a basis).

    ``select_classes``: solve the ring-selection LP over classes of interchangeable servers
    (:func:`clusteropt.models.gadget.matrix.build_gvne_matrix` with ``classes=True``; the array
    route only): the same LP value, from an optimum that treats the servers of a class alike, so
    Lemma 7 may keep other ring sizes than the full LP's vertex.

    ``select_route``: :data:`SELECT_ROUTES` (with ``warm`` and ``"capacity"``, the held selection model is then the
    relaxation's, and a full LP after a failed certificate is solved cold).  With ``"capacity"`` the
    info has ``select_certified`` (whether the relaxation's solution was certified optimal for the
    full LP), ``select_violation`` (its extension's largest relative violation of the full LP) and
    ``select_relaxation_s``.

    Info keys: ``select_s`` (ring selection in all), ``select_build_s``, ``select_handoff_s``,
    ``select_solve_s`` (its build, hand-off to HiGHS, HiGHS's run); ``build_s``, ``handoff_s``,
    ``solve_s`` (the same for the augmented LP); ``decompose_s``, ``round_s``, ``seconds``;
    ``select_builder``, ``builder`` (``"matrix"`` or ``"pyomo"``: what built each LP) and the values:
    ``lp_value`` (the LP relaxation of (12): an upper bound on the slot's optimum),
    ``selected_value`` (Lemma 7's kept part), ``augmented_value``, ``drawn_value`` (the rounding's
    gain, before the fill), ``objective`` (the slot's gain, after it), ``fill_gain`` (their
    difference), ``rounding``, ``capacity_violations`` and ``max_load_ratio`` (:func:`overload` of
    the allocation returned); with ``rounding="paper"`` also ``accepted``, ``draws`` (made),
    ``beta``, ``gamma``, ``epsilon`` and ``invalid_dropped``; ``select_warm`` and ``embed_warm``
    (whether each LP started from a held basis), ``select_start`` and ``embed_start`` (``"warm"``:
    the same structure, costs and bounds changed; ``"mapped"``: a new structure started from the
    held basis matched by name; ``"cold"``).
    """
    from clusteropt.models.gadget.embedding import build_embedding_lp, decompose_embedding

    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding = {rounding!r}; expected one of {ROUNDINGS}")
    if select_algorithm not in SELECT_ALGORITHMS:
        raise ValueError(f"select_algorithm = {select_algorithm!r}; expected one of {tuple(SELECT_ALGORITHMS)}")
    if select_algorithm != "simplex" and warm is not None:
        raise ValueError(f"select_algorithm = {select_algorithm!r} with warm re-solves: a warm re-solve starts "
                         "the simplex from the held basis; use select_algorithm = 'simplex'")
    inst = problem.inst
    requested = f"{embed_route}/{select_route}"
    embed_route, select_route = resolve_routes(inst.cluster, embed_route=embed_route, select_route=select_route,
                                               solver=solver, form=form, embed_form=embed_form, builder=builder)
    info: dict[str, Any] = {"jobs": int(problem.jobs.size), "embed_route": embed_route,
                            "select_algorithm": select_algorithm, "select_classes": bool(select_classes),
                            "select_route": select_route, "route_requested": requested}
    if problem.jobs.size == 0:
        info.update({"rounding": rounding, "capacity_violations": 0, "max_load_ratio": 0.0, "fill_gain": 0.0,
                     "objective": 0.0})
        return SlotAllocation.empty(inst.n_jobs, inst.cluster.n_servers), info
    paths = inst.cluster.paths() if paths is None else paths
    t0 = time.perf_counter()
    gaining = positive_gain(problem)
    info["lp_jobs"] = int(gaining.jobs.size)
    if gaining.jobs.size:
        sel, res1, select_build = _select(gaining, form, solver, builder,
                                          warm=None if warm is None else warm["select"],
                                          options=SELECT_ALGORITHMS[select_algorithm], classes=select_classes,
                                          route=select_route, record=info)
        select_builder = "matrix" if res1.backend == "matrix" else "pyomo"
    else:
        sel, res1, select_build, select_builder = RingSelection({}, 0.0, 0.0), None, 0.0, None
    t1 = time.perf_counter()
    matrix = use_matrix(problem, embed_form, solver, builder)
    model = lp = colgen = None
    if sel.kappa and embed_route == "colgen":
        from clusteropt.models.gadget.colgen import solve_embedding_colgen

        colgen = solve_embedding_colgen(gaining, sel.kappa, paths=paths)  # raises unless converged
    elif sel.kappa:
        if matrix:
            from clusteropt.models.gadget.matrix import build_embedding_matrix

            lp = build_embedding_matrix(gaining, sel.kappa)
        else:
            model = build_embedding_lp(gaining, sel.kappa, form=embed_form)
    t2 = time.perf_counter()
    if colgen is not None:
        res2, t3, decomposition = colgen.result, t2, colgen.decomposition
        info.update({"colgen_rounds": colgen.rounds, "colgen_columns": colgen.columns,
                     "pricing_s": colgen.pricing_seconds, "colgen_bound": colgen.bound})
    elif lp is not None:
        from clusteropt.models.gadget.matrix import EmbeddingSolution, solve_matrix

        res2, x = solve_matrix(lp, options=EMBED_HIGHS_OPTIONS,  # raises unless optimal
                               warm=None if warm is None else warm["embed"])
        t3 = time.perf_counter()
        decomposition = decompose_embedding(gaining, EmbeddingSolution(lp, x), paths=paths)
    elif model is not None:
        res2 = _solve_lp(model, solver, EMBED_HIGHS_OPTIONS)  # raises unless optimal
        t3 = time.perf_counter()
        decomposition = decompose_embedding(gaining, model, paths=paths)
    else:
        t3, res2, decomposition = t2, None, {}
    if colgen is not None:
        aug_value, solve2, handoff2 = colgen.value, colgen.solve_seconds + colgen.pricing_seconds, 0.0
    elif res2 is not None:
        assert res2.objective is not None  # optimal: both solves raise otherwise
        aug_value, solve2, handoff2 = float(res2.objective), res2.solve_seconds, res2.build_seconds
    else:
        aug_value, solve2, handoff2 = 0.0, 0.0, 0.0
    t4 = time.perf_counter()
    if rounding == "safe":
        rounded = round_safe(problem, decomposition, rng=rng, samples=samples, passes=passes, fill=fill,
                             paths=paths)
        alloc, value, drawn_value = rounded.allocation, rounded.value, rounded.drawn_value
    else:
        paper = round_paper(problem, decomposition, aug_value, rng=rng, rounds=rounds, alpha=alpha,
                            epsilon=epsilon)
        chosen = {i: mp for i, mp in paper.chosen.items() if mp.valid}
        alloc = mappings_allocation(inst, chosen)
        drawn_value = _gain_of(problem, chosen)
        if fill:
            alloc, _ = greedy_slot(problem, start=alloc, paths=paths)
        value = slot_gain(problem, alloc)
        info.update({"accepted": paper.accepted, "draws": paper.rounds, "beta": [float(b) for b in paper.beta],
                     "gamma": float(paper.gamma), "epsilon": float(paper.epsilon),
                     "invalid_dropped": len(paper.chosen) - len(chosen)})
    t5 = time.perf_counter()
    violations, worst = overload(inst, alloc)
    info.update({
        "rounding": rounding, "capacity_violations": violations, "max_load_ratio": worst,
        "fill_gain": value - drawn_value if fill else 0.0,
        "objective": value, "drawn_value": drawn_value, "lp_value": sel.lp_value,
        "selected_value": sel.selected_value, "augmented_value": aug_value,
        "select_builder": select_builder, "builder": "matrix" if matrix else "pyomo",
        "select_s": t1 - t0, "select_build_s": select_build,
        "select_handoff_s": res1.build_seconds if res1 is not None else 0.0,
        "select_solve_s": res1.solve_seconds if res1 is not None else 0.0,
        "build_s": t2 - t1, "handoff_s": handoff2, "solve_s": solve2, "decompose_s": t4 - t3, "round_s": t5 - t4,
        "seconds": t5 - t0,
        "select_warm": bool(res1 is not None and res1.raw.get("warm")),
        "embed_warm": bool(res2 is not None and res2.raw.get("warm")),
        "select_start": "cold" if res1 is None else res1.raw.get("warm_kind", "cold"),
        "embed_start": "cold" if res2 is None else res2.raw.get("warm_kind", "cold"),
    })
    if colgen is not None:  # its own split: column hand-off, master runs plus pricing
        info.update({"builder": "colgen", "build_s": colgen.build_seconds})
    return alloc, info

