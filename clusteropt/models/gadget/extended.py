"""Paper 000 (GADGET), Alg. 2 line 4 on any topology: Rost and Schmid's extended-graph LP
("Formulation 2" of [5]) specialised to rings of fixed sizes, and its decomposition (line 6).

Reconstruction, tagged by source: the paper only names the "augmented LP ... that binds multiple
copies of a reduced version of Problem (12)"; the extended graph and the decomposition are Rost
and Schmid's [R], their specialisation to rings (below) is ours [I] (part C10 of the
reconstruction).  Constraint numbers ``(8)``-``(18)`` are the reconstruction's, listed below;
``Eq. (n)`` are the paper's.

The LP.  Job i (ring size ``kappa = kappa_i``) has ring nodes ``a_0 .. a_{kappa-1}`` and ring
edges ``a_j -> a_{j+1 mod kappa}``.  Root ``a_0``, target ``a_h`` with ``h = kappa // 2``; branch 1
is ``a_0 -> a_1 -> .. -> a_h`` (ring edges ``0 .. h-1``), branch 2 is ``a_0 -> a_{kappa-1} -> ..
-> a_h`` (ring edges ``kappa-1 .. h``, walked against their direction).  Per job:

* ``x[i]`` in [0, 1], the fraction embedded; ``y[i, u]``: ``a_0`` on server u, ``sum_u y = x``
  (row ``eq8``; for ``kappa = 1`` that is the whole model of the job);
* ``s[i, u, w]``: ``a_0`` on u *and* ``a_h`` on w, ``sum_w s[i, u, w] = y[i, u]`` (``eq9``); it
  is the source flow of copy w of *both* branches at u, which is (9) and (10);
* one copy of every branch layer per target location w: ``f[i, b, l, w, e]`` routes ring edge
  ``l`` of branch b over directed link e (in branch 2 the flow walks e backwards, so ``e`` is
  always the link the ring edge's traffic uses), ``g[i, b, q, w, u]`` puts the q-th inner node of
  branch b on server u (the arc from layer q-1 to layer q at u: co-location is this arc, with no
  link), ``z[i, w]``: ``a_h`` on w, the only exit of copy w, in both branches;
* conservation ``flow[i, b, l, w, n]`` at every layer node (servers and switches), which is
  (11)-(14); both branches leave copy w's sources with ``s[., w]`` and end at w, so both start at
  the same server and end at the same server;
* loads: ``h[i, s, r] = l_i^r (y + z + sum g)`` on s ((16), Eq. (16)) and ``o[i, e] = b_i sum f``
  over all layers and copies ((17), Eq. (17)); ``eq18`` / ``eq19`` are (18), Eqs. (18)-(19).

Workers sit on servers only; switches only route (links through servers are allowed, as in the
flow form of :func:`clusteropt.models.gadget.gvne.build_gvne`).  Our choices [I], all valid for the
per-slot ILP with the ring sizes fixed (so the LP still bounds it; the tests check it):

* a server that cannot hold one worker of job i (``floor(min_r C_s^r / l_i^r) = 0``) is no
  location of job i, and a link with ``bandwidth_e < b_i`` carries none of its ring edges;
* ``ring_once[i, s]`` (``kappa >= 3``; ``ring_once=True``): the ring edges of job i leave server
  s at most ``x[i]`` times in all, the flow form's reading of Eq. (9);
* per-server worker caps ``c_s = floor(min_r C_s^r / l_i^r)`` are left to the capacity rows
  ``eq18``, as in [5], except for what ``fix_runs=True`` (default) removes: in a ring that fits,
  each server's workers are one run of at most ``c_s`` consecutive ring nodes, so the root and the
  target share a server only if ``c_s >= h + 1``, and an inner node sits on the target's server
  only if ``c_s`` covers the run from it to the target (``s`` and ``g`` variables left out);
* ``run_cap=True`` (off by default) adds ``cap[i, s]``: workers of i on s <= ``c_s`` times the
  ring edges leaving s, for servers with ``c_s < kappa_i``.  Valid, and a much tighter bound when
  links are scarce at the servers, but it bounds flows from below, so the LP pays for it with
  circulations (out of s and back) that no mapping contains: the decomposition then misses part
  of ``o`` (logged).  Use it for the bound only.

Weakness (measured, and provable).  With ``fix_runs=False`` (Formulation 2 as is) every mapping
can be replaced by single-server mappings with the same node loads and no link ("folding": mass
``phi n_s / kappa`` of "all kappa on s" for every server s), so the link rows never bind and the
optimum equals that of the plain flow LP (docs/algorithms/ring-embedding-lp.md, "The plain flow LP is weak"): the
extended
graph alone does not help, because co-location is free and the per-server caps are only
aggregate.  ``fix_runs`` forbids folding onto a server with ``c_s <= h`` but still allows "all but
one worker on one server"; a row that asks for links (``run_cap``) is met with circulations.
Measured on
``k_ary_fat_tree(4)``, 1-2 GPUs per server, 6 jobs of 2-5 workers, ``b_i`` 40-120 against links of
100 / 150 (6 seeds), LP / ILP-with-the-same-ring-sizes: plain flow LP = Formulation 2 as is
1.00-4.08, default 1.00-2.39 (4 of 6 at 1.00), ``run_cap`` 1.00 (all 6); with 1-8 GPUs all 1.00
(4 seeds).  The decomposed mass on rings that visit a server twice was 0 everywhere, but 33-89 %
of it sat on mappings that overfill a server (default; 17-67 % with ``run_cap``, 0-28 % with 1-8
GPUs).  On the thin-spine leaf-spine of the tests every variant has the same optimum, 1.00-2.93x
the ILP's (and positive where the ILP's is 0), with all of its mass overfull: each ring packed
into one rack.  A rounding must expect overfull mappings.

Size per job with ``kappa >= 2``, ``A`` its servers (normally all ``S``), ``E_i`` its links,
``V`` the nodes: ``kappa |A| |E_i|`` arc variables ``f``, at most ``(kappa - 2) |A|^2``
inner-node variables ``g`` and ``|A|^2 + 2 |A| + 1`` others; ``kappa |A| |V|`` conservation
rows, ``|A| + 1`` root rows and at most ``|A|`` ``ring_once`` rows; plus ``|S| |R| + |L|`` shared.
On ``k_ary_fat_tree(4)`` (16 servers, 36 nodes, 96 links) a 5-ring is 7,680 arc variables and
2,880 conservation rows.  Measured (shared 2-core machine, busy): 5 / 8 / 10 jobs of 2-5 workers
give 27k / 39k / 53k variables and 11k / 15k / 19k rows, built in 0.4 / 0.4 / 0.8 s; HiGHS takes
0.2 / 0.5 / 8.6 s (degenerate) and Pyomo's hand-over another 1.2-2.6 s; the decomposition
0.03-0.2 s.

:func:`decompose_extended` peels the solution into ``(varphi, Mapping)`` per job
(docs/algorithms/ring-embedding-lp.md C10,
"Decomposition into valid mappings"): pick the root location u with the most residual flow, the
copy w with the most residual ``s[u, w]``, a depth-first path of residual-positive arcs through
branch 1 of copy w, then through branch 2 of the same copy (both end at w), ``varphi`` the least
residual of everything used (``x``, ``y``, ``s``, ``z``, ``g``, ``f``), subtract, repeat until
``x`` is used up to ``tol``.  Each round zeroes a variable, so it ends; the weights add up to
``x[i]`` and the weighted mapping loads to ``h`` and ``o`` (flow left in circulations is logged).
"""

from __future__ import annotations

import logging

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression

from clusteropt.decisions.gadget import Mapping, Ring
from clusteropt.models.gadget.gvne import SlotProblem
from clusteropt.models.gadget.trees import check_kappa, server_fit

__all__ = ["build_extended_lp", "decompose_extended"]

log = logging.getLogger(__name__)


class _Job:
    """Index bookkeeping of one job's extended graph (module docstring).

    ``A``: its servers (locations); ``E``: its links; ``layers[b]`` / ``inner[b]``: ring edges /
    inner nodes of branch b (1 or 2); ``out[b][n]``: ``(e, next node)`` of the arcs leaving layer
    node n in branch b's direction (branch 2 walks links backwards); ``into[b][n]`` likewise.
    """

    def __init__(self, problem: SlotProblem, i: int, k: int, fix_runs: bool = True):
        inst = problem.inst
        cl = inst.cluster
        self.fit = server_fit(problem, i)  # workers one server holds
        self.i, self.k, self.h = i, k, k // 2
        self.A = tuple(s for s in range(cl.n_servers) if self.fit[s] >= 1)
        self.is_loc = np.zeros(cl.n_nodes, dtype=bool)
        self.is_loc[list(self.A)] = True
        b = float(inst.bandwidth[i])
        self.E = tuple(int(e) for e in np.flatnonzero(cl.bandwidth >= b - 1e-9)) if k >= 2 else ()
        self.layers = {1: self.h, 2: k - self.h} if k >= 2 else {}
        self.inner = {1: self.h - 1, 2: k - self.h - 1} if k >= 2 else {}
        links = cl.links
        fw_out: list[list[tuple[int, int]]] = [[] for _ in range(cl.n_nodes)]
        fw_in: list[list[tuple[int, int]]] = [[] for _ in range(cl.n_nodes)]
        for e in self.E:
            u, v = int(links[e, 0]), int(links[e, 1])
            fw_out[u].append((e, v))
            fw_in[v].append((e, u))
        self.out = {1: fw_out, 2: fw_in}  # branch 2: arc e = (u, v) is walked from v to u
        self.into = {1: fw_in, 2: fw_out}
        self.fix_runs = fix_runs

    def s_ok(self, u: int, w: int) -> bool:
        """Root and target may share server u: the run there holds a_0 .. a_h (h + 1 nodes)."""
        return u != w or not self.fix_runs or self.fit[u] >= self.h + 1

    def g_ok(self, b: int, q: int, w: int, u: int) -> bool:
        """Inner node q of branch b may sit on the target's server w: the run there reaches a_h."""
        if u != w or not self.fix_runs:
            return True
        need = self.h - q + 1 if b == 1 else min(self.k - self.h - q + 1, q + self.h + 1)
        return self.fit[w] >= need


def build_extended_lp(problem: SlotProblem, kappa: dict[int, int], *, ring_once: bool = True,
                      fix_runs: bool = True, run_cap: bool = False) -> pyo.ConcreteModel:
    """The augmented LP of Alg. 2 line 4 on any topology: the jobs of ``kappa`` with their ring
    sizes fixed, each embedded fractionally over Rost and Schmid's extended graph (module docstring).

    Parameters
    ----------
    problem : SlotProblem
    kappa : dict
        ``{job: kappa_i}`` for the jobs to embed, a subset of ``problem.jobs``, each size in
        ``1 .. kmax`` of the job (``ValueError`` naming the job otherwise).
    ring_once : bool
        Add the rows ``ring_once[i, s]`` (module docstring).
    fix_runs : bool
        Leave out the root / inner-node variables on the target's server that no ring fitting
        the servers can use (module docstring).  ``False`` gives Formulation 2 as it is, whose
        optimum never needs a link.
    run_cap : bool
        Add the rows ``cap[i, s]`` (module docstring): a tighter bound, but the decomposition then
        misses part of ``o``.

    Returns
    -------
    pyomo.environ.ConcreteModel
        ``form = "extended"``, ``kappa``; Sets ``I``, ``S``, ``R``, ``L``, ``V``; ``x[i]`` in [0, 1];
        objective ``eq12``; Expressions ``h[i, s, r]``, ``o[i, e]``; rows ``eq18[s, r]``,
        ``eq19[e]``; the flow variables ``y``, ``s``, ``z``, ``g``, ``f`` and rows ``eq8``,
        ``eq9``, ``flow`` (and ``ring_once``, ``cap``); ``jobs_``, the per-job index bookkeeping
        :func:`decompose_extended` reads.

    Examples
    --------
    >>> from clusteropt.instances.gadget.instance import k_ary_fat_tree, random_gadget
    >>> from clusteropt.models.gadget.gvne import slot_problem
    >>> inst = random_gadget(2, cluster=k_ary_fat_tree(4, seed=0), horizon=2, arrivals="zero", seed=0)
    >>> p = slot_problem(inst, 1)
    >>> m = build_extended_lp(p, {int(i): 2 for i in p.jobs})
    >>> m.form, len(m.x), len(m.f) == 2 * 2 * 16 * 96
    ('extended', 2, True)
    """
    kappa = check_kappa(problem, kappa)
    inst = problem.inst
    cl = inst.cluster
    jobs = sorted(kappa)
    pos = {int(i): j for j, i in enumerate(problem.jobs.tolist())}
    J = {i: _Job(problem, i, kappa[i], fix_runs) for i in jobs}

    m = pyo.ConcreteModel(name=f"embedding-extended-t{problem.t}")
    m.form = "extended"
    m.kappa = dict(kappa)
    m.jobs_ = J
    m.I = pyo.Set(initialize=jobs, doc="jobs to embed, each with its ring size kappa_i fixed (Alg. 2 line 3)")
    m.S = pyo.Set(initialize=range(cl.n_servers), doc="servers (the only ring-node locations)")
    m.R = pyo.Set(initialize=range(len(cl.resources)), doc="resource types r")
    m.L = pyo.Set(initialize=range(cl.n_links), doc="directed links (u, v) of E_s")
    m.V = pyo.Set(initialize=range(cl.n_nodes), doc="substrate nodes (servers, then switches): layer nodes")

    ring = [i for i in jobs if J[i].k >= 2]
    m.x = pyo.Var(m.I, bounds=(0, 1), doc="x[i]: fraction of job i's kappa_i-ring embedded (rho_i, Eq. (13); "
                                          "x_r of (8))")
    m.y = pyo.Var([(i, u) for i in jobs for u in J[i].A], domain=pyo.NonNegativeReals,
                  doc="y[i, u]: root a_0 of job i on server u (Eq. (14); f+(root, u) of (8))")
    m.s = pyo.Var([(i, u, w) for i in ring for u in J[i].A for w in J[i].A if J[i].s_ok(u, w)],
                  domain=pyo.NonNegativeReals,
                  doc="s[i, u, w]: a_0 on u and target a_h on w; source flow of copy w of both branches at u "
                      "((9)-(10))")
    m.z = pyo.Var([(i, w) for i in ring for w in J[i].A], domain=pyo.NonNegativeReals,
                  doc="z[i, w]: target a_h on server w, the exit of copy w of both branches ((13))")
    m.g = pyo.Var([(i, b, q, w, u) for i in ring for b in (1, 2) for q in range(1, J[i].inner[b] + 1)
                   for w in J[i].A for u in J[i].A if J[i].g_ok(b, q, w, u)], domain=pyo.NonNegativeReals,
                  doc="g[i, b, q, w, u]: q-th inner node of branch b on server u in copy w (inter-layer arc; "
                      "(12), (16))")
    m.f = pyo.Var([(i, b, layer, w, e) for i in ring for b in (1, 2) for layer in range(J[i].layers[b])
                   for w in J[i].A for e in J[i].E], domain=pyo.NonNegativeReals,
                  doc="f[i, b, l, w, e]: ring edge of layer l of branch b routed over link e in copy w "
                      "(layer arc; Eq. (15); (12), (17))")

    pi = {i: float(problem.pi[pos[i]][kappa[i] - 1]) for i in jobs}
    m.eq12 = pyo.Objective(expr=LinearExpression([MonomialTermExpression((pi[i], m.x[i])) for i in jobs]),
                           sense=pyo.maximize, doc="(12) utility gained with the selected ring sizes")

    def neg(v):
        return MonomialTermExpression((-1.0, v))

    m.eq8 = pyo.Constraint(m.I, rule=lambda m, i: LinearExpression(
        [m.y[i, u] for u in J[i].A] + [neg(m.x[i])]) == 0, doc="(8) the root is placed with mass x[i] (Eq. (14))")
    m.eq9 = pyo.Constraint([(i, u) for i in ring for u in J[i].A], rule=lambda m, i, u: LinearExpression(
        [m.s[i, u, w] for w in J[i].A if J[i].s_ok(u, w)] + [neg(m.y[i, u])]) == 0,
        doc="(9)-(10) root on u splits over the target copies w; both branches take s[i, u, w]")

    def flow(m, i, b, layer, w, n):
        jb = J[i]
        last = jb.layers[b] - 1
        terms = [m.f[i, b, layer, w, e] for e, _ in jb.into[b][n]]
        terms += [neg(m.f[i, b, layer, w, e]) for e, _ in jb.out[b][n]]
        if jb.is_loc[n]:
            if layer == 0 and jb.s_ok(n, w):
                terms.append(m.s[i, n, w])
            elif layer > 0 and jb.g_ok(b, layer, w, n):
                terms.append(m.g[i, b, layer, w, n])
            if layer < last:
                if jb.g_ok(b, layer + 1, w, n):
                    terms.append(neg(m.g[i, b, layer + 1, w, n]))
            elif n == w:
                terms.append(neg(m.z[i, w]))
        return LinearExpression(terms) == 0 if terms else pyo.Constraint.Skip

    m.flow = pyo.Constraint([(i, b, layer, w, n) for i in ring for b in (1, 2) for layer in range(J[i].layers[b])
                             for w in J[i].A for n in range(cl.n_nodes)], rule=flow,
                            doc="(11)-(14) flow conservation at every layer node of copy w (Eq. (15)): in from "
                                "the source (layer 0) or the previous layer, out to the next layer or, in the "
                                "last layer, to the sink at w only")

    # ring edges leaving node n, all layers and copies: links with tail n in either branch
    def leaving(i, n):
        jb = J[i]
        return [m.f[i, b, layer, w, e] for b in (1, 2) for layer in range(jb.layers[b]) for w in jb.A
                for e, _ in jb.out[1][n]]

    if ring_once:
        m.ring_once = pyo.Constraint(
            [(i, u) for i in ring if J[i].k >= 3 for u in range(cl.n_servers) if J[i].out[1][u]],
            rule=lambda m, i, u: LinearExpression([*leaving(i, u), neg(m.x[i])]) <= 0,
            doc="(9) of the paper, as in the flow form: the ring leaves each server at most once")
    if run_cap:
        def cap_row(m, i, u):
            jb = J[i]
            here = [m.y[i, u], m.z[i, u]] + [m.g[i, b, q, w, u] for b in (1, 2) for q in range(1, jb.inner[b] + 1)
                                             for w in jb.A if jb.g_ok(b, q, w, u)]
            return LinearExpression(here + [MonomialTermExpression((-float(jb.fit[u]), v))
                                            for v in leaving(i, u)]) <= 0

        m.cap = pyo.Constraint([(i, u) for i in ring for u in J[i].A if J[i].fit[u] < J[i].k], rule=cap_row,
                               doc="Eqs. (4)-(5): workers of i on u <= floor(C_u / l_i) times the ring edges "
                                   "leaving u (u cannot hold the whole ring)")

    pw, bw = inst.per_worker, inst.bandwidth

    def h(m, i, u, r):
        jb = J[i]
        if not jb.is_loc[u] or pw[i, r] == 0:
            return 0.0
        terms = [m.y[i, u]]
        if jb.k >= 2:
            terms += [m.z[i, u]] + [m.g[i, b, q, w, u] for b in (1, 2) for q in range(1, jb.inner[b] + 1)
                                    for w in jb.A if jb.g_ok(b, q, w, u)]
        return float(pw[i, r]) * LinearExpression(terms)

    m.h = pyo.Expression(m.I, m.S, m.R, rule=h, doc="(16), Eq. (16) h_i^{u,r}: type-r load of job i on server u "
                                                    "(root, target and inner nodes placed there)")
    on_link: dict[tuple[int, int], list] = {}
    for i in ring:
        jb = J[i]
        for b in (1, 2):
            for layer in range(jb.layers[b]):
                for w in jb.A:
                    for e in jb.E:
                        on_link.setdefault((i, e), []).append(m.f[i, b, layer, w, e])
    m.o = pyo.Expression(m.I, m.L, rule=lambda m, i, e: float(bw[i]) * LinearExpression(on_link[i, e])
                         if (i, e) in on_link else 0.0,
                         doc="(17), Eq. (17) o_i^{u,v}: b_i per ring edge of job i routed over link (u, v), all "
                             "layers and copies")
    capacity = cl.capacity
    m.eq18 = pyo.Constraint(m.S, m.R, rule=lambda m, u, r: _le(
        sum(m.h[i, u, r] for i in m.I), capacity[u, r], any(J[i].is_loc[u] and pw[i, r] > 0 for i in jobs)),
        doc="(18), Eq. (18): node capacity g_s^{u,r}")
    m.eq19 = pyo.Constraint(m.L, rule=lambda m, e: _le(
        sum(m.o[i, e] for i in m.I), cl.bandwidth[e], any((i, e) in on_link and bw[i] > 0 for i in jobs)),
        doc="(18), Eq. (19): link capacity e_s^{u,v}")
    return m


def _le(lhs, bound, loaded: bool):
    """``lhs <= bound``, or no row when no job can load it."""
    return lhs <= float(bound) if loaded else pyo.Constraint.Skip


def _values(var, keys) -> np.ndarray:
    """Values of ``var[key]`` for ``keys``; unset, absent or negative noise as 0."""
    out = np.fromiter(((var[k].value or 0.0) if k in var else 0.0 for k in keys), dtype=float, count=len(keys))
    return np.maximum(out, 0.0)


class _Residual:
    """One job's solution as arrays, decreased as mappings are peeled off.

    ``y[a]``, ``s[a, c]``, ``z[c]`` over positions in ``A`` (root a, target copy c);
    ``g[b][q, c, a]`` (q from 1); ``f[b][l, c, p]`` over positions p in ``E``.
    """

    def __init__(self, m: pyo.ConcreteModel, jb: _Job):
        i, A, E = jb.i, jb.A, jb.E
        nA, nE = len(A), len(E)
        self.x = float(max(m.x[i].value or 0.0, 0.0))
        self.y = _values(m.y, [(i, u) for u in A])
        self.s = self.z = None
        self.g, self.f = {}, {}
        if jb.k >= 2:
            self.s = _values(m.s, [(i, u, w) for u in A for w in A]).reshape(nA, nA)
            self.z = _values(m.z, [(i, w) for w in A])
            for b in (1, 2):
                nq, nl = jb.inner[b], jb.layers[b]
                g = _values(m.g, [(i, b, q, w, u) for q in range(1, nq + 1) for w in A for u in A])
                self.g[b] = np.concatenate([np.zeros(nA * nA), g]).reshape(nq + 1, nA, nA)
                self.f[b] = _values(m.f, [(i, b, layer, w, e) for layer in range(nl) for w in A
                                          for e in E]).reshape(nl, nA, nE)


def _branch_walk(jb: _Job, res: _Residual, b: int, c: int, u: int, eps: float, apos: dict[int, int],
                 epos: dict[int, int]):
    """A path of residual-positive arcs through branch b of copy c (target ``A[c]``) from root u.

    Depth-first, larger residuals first, each layer node visited once (so no circulation).
    Returns ``(nodes, links, g_keys, f_keys)``: the server of inner node q (q = 1 .. inner),
    the links walked in every layer in walking order, and the array keys used; None if stuck.
    """
    w = jb.A[c]
    last = jb.layers[b] - 1
    f, g = res.f[b], res.g[b]
    start = (0, u)
    parent: dict[tuple[int, int], tuple | None] = {start: None}
    stack = [start]
    goal = None
    while stack:
        state = stack.pop()
        layer, n = state
        if layer == last and n == w:
            goal = state
            break
        moves = []
        if layer < last and jb.is_loc[n]:
            val = g[layer + 1, c, apos[n]]
            if val > eps and (layer + 1, n) not in parent:
                moves.append((val, (layer + 1, n), ("g", layer + 1, n)))
        for e, succ in jb.out[b][n]:
            val = f[layer, c, epos[e]]
            if val > eps and (layer, succ) not in parent:
                moves.append((val, (layer, succ), ("f", layer, e)))
        moves.sort(key=lambda t: t[0])
        for _, nxt, move in moves:  # the largest residual is popped first
            if nxt not in parent:
                parent[nxt] = (state, move)
                stack.append(nxt)
    if goal is None:
        return None
    nodes = [u] + [0] * jb.inner[b]
    links: list[list[int]] = [[] for _ in range(last + 1)]
    g_keys, f_keys = [], []
    state = goal
    while (step := parent[state]) is not None:
        prev, (kind, layer, item) = step
        if kind == "g":
            nodes[layer] = item
            g_keys.append((layer, c, apos[item]))
        else:
            links[layer].append(item)
            f_keys.append((layer, c, epos[item]))
        state = prev
    for layer_links in links:
        layer_links.reverse()
    return nodes, links, g_keys, f_keys


def _mapping(jb: _Job, where: list[int], paths: list[tuple[int, ...]]) -> Mapping:
    """The :class:`Mapping` of ring nodes on ``where`` with ring edge j over ``paths[j]``."""
    k = jb.k
    counts: dict[int, int] = {}
    for u in where:
        counts[u] = counts.get(u, 0) + 1
    workers = tuple(sorted(counts.items()))
    if len(counts) < 2:
        return Mapping(jb.i, workers, None)
    start = next(a for a in range(k) if where[a] != where[a - 1])  # a run does not wrap around
    servers, ring_paths = [], []
    for n in range(k):
        a = (start + n) % k
        if n == 0 or where[a] != where[a - 1]:
            servers.append(where[a])
        if where[a] != where[(a + 1) % k]:
            ring_paths.append(paths[a])
    return Mapping(jb.i, workers, Ring(tuple(servers), tuple(ring_paths)))


def decompose_extended(problem: SlotProblem, model: pyo.ConcreteModel, *,
                       tol: float = 1e-6) -> dict[int, list[tuple[float, Mapping]]]:
    """Alg. 2 lines 5-6: per job, ``[(varphi_i^k, omega_i^k), ...]`` from a solved
    :func:`build_extended_lp` (Rost and Schmid's decomposition, module docstring).

    The weights add up to ``x[i]`` and the weighted mappings' loads (``Mapping.node_load`` /
    ``link_load``) to the LP's ``h`` and ``o``, up to ``tol`` per job; what is left (a stuck
    path, flow in circulations) is logged.  A mapping whose ring visits a server twice is kept
    (``Mapping.valid`` is False for it).

    Examples
    --------
    >>> from clusteropt.instances.gadget.instance import k_ary_fat_tree, random_gadget
    >>> from clusteropt.models.gadget.gvne import slot_problem
    >>> from clusteropt.solvers import solve
    >>> inst = random_gadget(2, cluster=k_ary_fat_tree(4, gpus=(1,), seed=0), horizon=2, arrivals="zero",
    ...                      seed=0)
    >>> p = slot_problem(inst, 1)
    >>> m = build_extended_lp(p, {int(i): 2 for i in p.jobs})
    >>> _ = solve(m)
    >>> dec = decompose_extended(p, m)
    >>> all(abs(sum(phi for phi, _ in dec[i]) - m.x[i].value) < 1e-6 for i in dec)
    True
    """
    if getattr(model, "form", None) != "extended":
        raise ValueError(f"model.form = {getattr(model, 'form', None)!r}; expected a model of build_extended_lp")
    eps = tol * 1e-3
    out: dict[int, list[tuple[float, Mapping]]] = {}
    for i in sorted(model.kappa):
        jb: _Job = model.jobs_[i]
        res = _Residual(model, jb)
        out[i] = _decompose_job(problem, jb, res, tol, eps)
    return out


def _decompose_job(problem: SlotProblem, jb: _Job, res: _Residual, tol: float, eps: float):
    i, k, A = jb.i, jb.k, jb.A
    x0 = res.x
    mappings: list[tuple[float, Mapping]] = []
    stuck = 0.0
    if k == 1:
        while res.x > tol:
            a = int(np.argmax(res.y))
            phi = min(res.x, float(res.y[a]))
            if phi <= eps:
                break
            res.x -= phi
            res.y[a] -= phi
            mappings.append((phi, Mapping(i, ((A[a], 1),), None)))
    else:
        assert res.s is not None and res.z is not None  # k >= 2: _Residual read s and z
        apos = {u: a for a, u in enumerate(A)}
        epos = {e: p for p, e in enumerate(jb.E)}
        while res.x > tol:
            a = int(np.argmax(res.y))
            if res.y[a] <= eps:
                break
            c = int(np.argmax(res.s[a]))
            if res.s[a, c] <= eps:  # numerical residue: y without s
                stuck += res.y[a]
                res.y[a] = 0.0
                continue
            walks = [_branch_walk(jb, res, b, c, A[a], eps, apos, epos) for b in (1, 2)]
            if walks[0] is None or walks[1] is None:  # numerical residue: s without a path
                phi = float(min(res.s[a, c], res.y[a], res.x))
                stuck += phi
                res.s[a, c] -= phi
                res.y[a] -= phi
                res.x -= phi
                continue
            phi = min(res.x, float(res.y[a]), float(res.s[a, c]), float(res.z[c]))
            for b, (_, _, g_keys, f_keys) in zip((1, 2), walks, strict=True):
                for key in g_keys:
                    phi = min(phi, float(res.g[b][key]))
                for key in f_keys:
                    phi = min(phi, float(res.f[b][key]))
            res.x -= phi
            res.y[a] -= phi
            res.s[a, c] -= phi
            res.z[c] -= phi
            for b, (_, _, g_keys, f_keys) in zip((1, 2), walks, strict=True):
                for key in g_keys:
                    res.g[b][key] -= phi
                for key in f_keys:
                    res.f[b][key] -= phi
            # ring node of every branch position, ring edge of every layer
            where = [0] * k
            paths: list[tuple[int, ...]] = [()] * k
            where[0], where[jb.h] = A[a], A[c]
            nodes1, links1, _, _ = walks[0]
            for q in range(1, jb.inner[1] + 1):
                where[q] = nodes1[q]
            for layer, walk in enumerate(links1):
                paths[layer] = tuple(walk)
            nodes2, links2, _, _ = walks[1]
            for q in range(1, jb.inner[2] + 1):
                where[k - q] = nodes2[q]
            for layer, walk in enumerate(links2):  # walked against the ring edge: reverse
                paths[k - 1 - layer] = tuple(reversed(walk))
            mappings.append((phi, _mapping(jb, where, paths)))
        left_flow = sum(float(res.f[b].sum()) for b in (1, 2))
        if left_flow > tol:
            log.warning("slot %d: job %d: link flow %.3g (ring edges x links) left in circulations after the "
                        "decomposition; the mappings' link loads miss %.3g Gbps of o", problem.t, i, left_flow,
                        left_flow * float(problem.inst.bandwidth[i]))
    lost = res.x + stuck
    if lost > tol:
        log.warning("slot %d: job %d: %.3g of x = %.6g not decomposed (numerical residue)", problem.t, i, lost, x0)
    elif lost > 0:
        log.debug("slot %d: job %d: %.3g of x = %.6g left (below tol)", problem.t, i, lost, x0)
    return mappings
