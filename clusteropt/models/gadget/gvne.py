"""Paper 000 (GADGET, Yu et al.): the per-slot G-VNE problem (10) as the ILP (12)-(19).

Every slot, Alg. 1 (temporal greedy) solves problem (10): allocate workers of the active jobs
``I[t]`` (arrived, budget left; Alg. 1 line 3) to maximize the utility gained this slot, subject to
(2), (4)-(9) at t and (11).  Sec. V-C rewrites it as a generalized virtual network embedding
(G-VNE): job i picks one ring size ``kappa`` in ``Q_i = {1 .. ceil(q_i)}`` (``chi[i, kappa]``,
Eq. (13)) and embeds that ``kappa``-ring: every ring node ``a`` on one server (``varrho``, Eq. (14))
and every ring edge ``a -> a+1`` as a unit flow over the links (``theta``, Eq. (15)).  ``pi[i,
kappa] = mu_i(zeta_i (z_{i,t-1} + kappa)) - mu_i(zeta_i z_{i,t-1})`` is the utility gained (Eq. (12)).

:class:`SlotProblem`
    The data of one slot: active jobs, worker-slots so far, the bound ``q_i`` and ``pi``.
    ``q_i`` (:func:`worker_bound`) is the optimum of (10) for job i alone with (2), (4) and (11)
    relaxed to continuous workers: ``min(N_i, budget_i - z_{i,t-1}, sum_s min_r C_s^r / l_i^r)``,
    an upper bound on its workers in any feasible allocation.

:func:`build_gvne` with ``form="flow"``
    (12)-(19) as written, on any topology.  The node and edge loads ``h`` (16) and ``o`` (17) are
    Pyomo Expressions (named as in the paper) rather than variables.  Two choices the paper leaves
    open, made explicit: workers sit on servers only (switches have no ``g_s^{u,r}``), and the
    ring condition (9) (each server of a multi-server job on exactly one ring cycle, entered and
    left once) is the linear row ``ring_once[i, kappa, u]``: the ring nodes on server u form one
    run (at most ``chi[i, kappa]`` runs end on u, counted by ``depart``), while ring-edge paths
    may pass through u (Eq. (7) allows it).

:func:`build_gvne` with ``form="tree"``
    The same problem when the substrate is a tree (:meth:`Cluster.is_tree`; the paper's fat-tree
    of Sec. VI is one).  Paths are unique, and a ring that visits its servers in depth-first order
    crosses each tree link once in each direction when the job has servers on both sides of it,
    and never otherwise; no ring can use less bandwidth on any link.  So no routing variables are
    needed: ``y[i, s]`` workers (``sum_s y = sum_kappa kappa chi``), ``x[i, s]`` server used (Eq. (5)),
    and per tree link (child c below parent) ``inside[i, c]`` (a server below c), ``outside[i, c]``
    (a server elsewhere) and ``span[i, c] >= inside + outside - 1``, which carries ``b_i`` on both
    directions of the link (Eqs. (8), (19)).  ``outside`` is defined by ``|S| outside[i, c] >=
    xsum[i] - xbelow[i, c]`` with the running sums ``xbelow[i, c] = x[i, c] + sum_{d child of c}
    xbelow[i, d]`` (the servers of i below c) and ``xsum[i]`` (all of them): the same feasible set in
    the other variables as writing the sum over the servers outside c into each row (the sums are
    fixed by equalities; substitute them back), so the same optimum, with ``O(|C|)`` instead of
    ``O(|C| |S|)`` nonzeros per job.  Same optimum as the flow form (tested), with 3.9-4.8x
    fewer variables at the paper's scale with 15-167 active jobs (``benchmarks/gadget_slot``); with
    only a few active jobs the flow form can be the smaller one.

``relax=True`` gives the LP relaxation (used by LP ring selection, Lemma 7).  Read an integral
solution back with :func:`allocation_from_solution` (:func:`tree_allocation` for the tree form's
workers, also from the array route of :mod:`clusteropt.models.gadget.matrix`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pyomo.environ as pyo

from clusteropt.decisions.gadget import Ring, SlotAllocation
from clusteropt.instances.gadget.instance import Cluster, GadgetInstance
from clusteropt.models.registry import ModelSpec, register_model

__all__ = [
    "SlotProblem",
    "TreeLayout",
    "allocation_from_solution",
    "build_gvne",
    "slot_problem",
    "tree_allocation",
    "tree_layout",
    "worker_bound",
]


def worker_bound(inst: GadgetInstance, z_prev, jobs) -> np.ndarray:
    """``q_i`` for ``jobs``: the workers job i could get alone with (2), (4), (11) relaxed.

    ``min(N_i, budget_i - z_{i,t-1}, sum_s min_r C_s^r / l_i^r)`` (the last over r with
    ``l_i^r > 0``), floored at 0.  Any feasible allocation gives job i at most ``floor(q_i)``
    workers, so ``Q_i = {1 .. ceil(q_i)}`` loses nothing (Sec. V-C).

    >>> from clusteropt.instances.gadget.instance import gadget_preset
    >>> inst = gadget_preset("small", jobs=3, seed=0)
    >>> worker_bound(inst, np.zeros(3), [0, 1, 2]).tolist() == inst.max_workers.tolist()
    True
    """
    jobs = np.asarray(jobs, dtype=np.int64)
    z_prev = np.asarray(z_prev, dtype=float)
    pw = inst.per_worker[jobs]  # (J, R)
    cap = inst.cluster.capacity  # (S, R)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_server = np.where(pw[:, None, :] > 0, cap[None, :, :] / np.where(pw > 0, pw, 1)[:, None, :], np.inf)
    fit = per_server.min(axis=2).sum(axis=1)
    q = np.minimum(np.minimum(inst.max_workers[jobs], inst.budget[jobs] - z_prev[jobs]), fit)
    return np.maximum(q, 0.0)


@dataclasses.dataclass(frozen=True)
class SlotProblem:
    """One slot of Alg. 1: problem (10) as data.

    Attributes
    ----------
    inst : GadgetInstance
    t : int
        The slot (1-based).
    jobs : int array (J,)
        ``I[t]``: arrived (``a_i <= t``) with budget left (Alg. 1 line 3) and ``q_i >= 1``.
    z_prev : array (I,)
        ``z_{i,t-1}``, worker-slots every job had before t.
    kmax : int array (J,)
        ``ceil(q_i)`` but at most ``floor(q_i)`` (workers are integers): the ring sizes tried.
    pi : list of arrays
        ``pi[j][kappa - 1]``: utility gained by job ``jobs[j]`` with a ``kappa``-ring (Eq. (12)).
    """

    inst: GadgetInstance
    t: int
    jobs: np.ndarray
    z_prev: np.ndarray
    kmax: np.ndarray
    pi: tuple[np.ndarray, ...]

    @property
    def n_rings(self) -> int:
        """Number of ``(job, kappa)`` pairs."""
        return int(self.kmax.sum())


def slot_problem(inst: GadgetInstance, t: int, z_prev=None) -> SlotProblem:
    """The :class:`SlotProblem` of slot ``t`` given worker-slots ``z_prev`` (default all 0).

    >>> from clusteropt.instances.gadget.instance import gadget_preset
    >>> p = slot_problem(gadget_preset("small", jobs=4, seed=1), t=20)
    >>> len(p.jobs) <= 4, all(len(v) == k for v, k in zip(p.pi, p.kmax))
    (True, True)
    """
    if not 1 <= t <= inst.horizon:
        raise ValueError(f"t = {t}; expected a slot in 1 .. {inst.horizon}")
    z_prev = np.zeros(inst.n_jobs) if z_prev is None else np.asarray(z_prev, dtype=float)
    if z_prev.shape != (inst.n_jobs,):
        raise ValueError(f"z_prev has shape {z_prev.shape}; expected ({inst.n_jobs},)")
    cand = np.flatnonzero((inst.arrival <= t) & (z_prev < inst.budget))
    q = worker_bound(inst, z_prev, cand)
    kmax = np.floor(q + 1e-9).astype(np.int64)
    keep = kmax >= 1
    jobs, kmax = cand[keep], kmax[keep]
    pi = []
    for i, k in zip(jobs.tolist(), kmax.tolist(), strict=True):
        z = z_prev[i] + np.arange(0, k + 1)
        u = inst.utility_of(np.broadcast_to(z, (inst.n_jobs, k + 1)))[i]
        pi.append(u[1:] - u[0])
    return SlotProblem(inst, int(t), jobs, z_prev, kmax, tuple(pi))


@dataclasses.dataclass(frozen=True)
class TreeLayout:
    """A tree substrate rooted at a switch: per non-root node its parent link pair and the servers
    below it, plus the depth-first order of the servers (the ring order of the tree form).
    """

    root: int
    parent: dict[int, int]
    up: dict[int, int]  # child -> link index child -> parent
    down: dict[int, int]  # child -> link index parent -> child
    below: dict[int, tuple[int, ...]]  # node -> servers in its subtree
    children: dict[int, tuple[int, ...]]
    dfs_order: tuple[int, ...]


def tree_layout(cluster: Cluster) -> TreeLayout:
    """Root the tree at its highest-degree switch (a server if there is none).

    >>> from clusteropt.instances.gadget.instance import fat_tree_cluster
    >>> lay = tree_layout(fat_tree_cluster(6, n_racks=2, seed=0))
    >>> sorted(lay.dfs_order) == list(range(6)), len(lay.parent)
    (True, 8)

    The layout is made once per cluster (its arrays are read-only) and kept on it: every slot's
    model of an online run asks for it.
    """
    known = cluster.__dict__.get("_tree_layout")
    if known is not None:
        return known
    layout = _tree_layout(cluster)
    object.__setattr__(cluster, "_tree_layout", layout)
    return layout


def _tree_layout(cluster: Cluster) -> TreeLayout:
    import networkx as nx

    if not cluster.is_tree():
        raise ValueError("the cluster is not a tree (use form='flow')")
    und = nx.Graph()
    und.add_nodes_from(range(cluster.n_nodes))
    und.add_edges_from(map(tuple, cluster.links.tolist()))
    switches = range(cluster.n_servers, cluster.n_nodes)
    root = max(switches, key=lambda n: (und.degree(n), -n)) if cluster.n_switches else 0
    idx = cluster.link_index()
    parent, up, down = {}, {}, {}
    children: dict[int, list[int]] = {n: [] for n in und}
    order = list(nx.dfs_preorder_nodes(und, root))
    for p, c in nx.dfs_edges(und, root):
        parent[c] = p
        up[c], down[c] = idx[c, p], idx[p, c]
        children[p].append(c)
    below: dict[int, tuple[int, ...]] = {}
    for n in reversed(order):
        own = (n,) if n < cluster.n_servers else ()
        below[n] = own + tuple(s for c in children[n] for s in below[c])
    dfs = tuple(n for n in order if n < cluster.n_servers)
    return TreeLayout(root, parent, up, down, below, {n: tuple(c) for n, c in children.items()}, dfs)


def build_gvne(problem: SlotProblem, *, form: str = "auto", relax: bool = False) -> pyo.ConcreteModel:
    """The G-VNE ILP (12)-(19) of one slot, or its LP relaxation (``relax=True``).

    Parameters
    ----------
    problem : SlotProblem
    form : {"auto", "flow", "tree"}
        ``"flow"``: (12)-(19) with routing variables, any topology; ``"tree"``: no routing
        variables, tree substrates only (module docstring); ``"auto"``: tree when the cluster is
        one.
    relax : bool
        Continuous variables in [0, 1] (and ``y`` >= 0) instead of binaries / integers.

    Returns
    -------
    pyomo.environ.ConcreteModel
        Maximization objective ``eq12``; ``model.form`` says which form was built.

    Examples
    --------
    >>> from clusteropt.instances.gadget.instance import gadget_preset
    >>> p = slot_problem(gadget_preset("small", jobs=3, seed=0), t=20)
    >>> m = build_gvne(p)
    >>> m.form, m.chi.is_indexed()
    ('tree', True)
    """
    tree = problem.inst.cluster.is_tree()
    if form == "auto":
        form = "tree" if tree else "flow"
    if form == "tree":
        if not tree:
            raise ValueError("form='tree' needs a tree substrate (Cluster.is_tree() is False); use form='flow'")
        return _build_tree(problem, relax)
    if form == "flow":
        return _build_flow(problem, relax)
    raise ValueError(f"form = {form!r}; expected 'auto', 'flow' or 'tree'")


def _common(m: pyo.ConcreteModel, problem: SlotProblem, relax: bool) -> None:
    """Sets, ``chi``, ``rho``, the objective (12) and row (13), shared by both forms."""
    inst = problem.inst
    cl = inst.cluster
    binary = pyo.UnitInterval if relax else pyo.Binary
    m.I = pyo.Set(initialize=problem.jobs.tolist(), doc="I[t]: active jobs (Alg. 1 line 3)")
    m.K = pyo.Set(dimen=2, initialize=[(i, k) for i, km in zip(problem.jobs.tolist(), problem.kmax.tolist(),
                                                                  strict=True) for k in range(1, km + 1)],
                  doc="(i, kappa), kappa in Q_i = {1 .. q_i}")
    m.S = pyo.Set(initialize=range(cl.n_servers), doc="servers (substrate nodes with resources)")
    m.R = pyo.Set(initialize=range(len(cl.resources)), doc="resource types r")
    m.L = pyo.Set(initialize=range(cl.n_links), doc="directed links (u, v) of E_s")
    pi = {(i, k): float(v[k - 1]) for i, v in zip(problem.jobs.tolist(), problem.pi, strict=True)
          for k in range(1, len(v) + 1)}
    m.pi = pyo.Param(m.K, initialize=pi, doc="pi[i, kappa]: utility gained with a kappa-ring (Eq. (12))")
    m.chi = pyo.Var(m.K, domain=binary, doc="chi[i, kappa]: job i runs a kappa-ring (Eq. (13))")
    m.rho = pyo.Var(m.I, domain=binary, doc="rho[i]: job i is embedded (Eq. (13))")
    m.eq13 = pyo.Constraint(m.I, rule=lambda m, i: sum(m.chi[i, k] for k in _kappas(m, i)) == m.rho[i],
                            doc="(13) at most one ring size per job")
    m.eq12 = pyo.Objective(expr=sum(m.pi[i, k] * m.chi[i, k] for i, k in m.K), sense=pyo.maximize,
                           doc="(12) utility gained this slot")
    m.t = problem.t


def _le(lhs, bound):
    """``lhs <= bound``, or no row when no job is active (an empty sum is the number 0)."""
    return pyo.Constraint.Skip if isinstance(lhs, int | float) else lhs <= float(bound)


def _kappas(m, i):
    return [k for (j, k) in m.K if j == i]


def _build_flow(problem: SlotProblem, relax: bool) -> pyo.ConcreteModel:
    inst = problem.inst
    cl = inst.cluster
    m = pyo.ConcreteModel(name=f"gvne-flow-t{problem.t}")
    m.form = "flow"
    _common(m, problem, relax)
    binary = pyo.UnitInterval if relax else pyo.Binary
    m.V = pyo.Set(initialize=range(cl.n_nodes), doc="V_s: substrate nodes (servers, then switches)")
    m.KA = pyo.Set(dimen=3, initialize=[(i, k, a) for i, k in m.K for a in range(k)],
                   doc="ring nodes a of each kappa-ring")
    m.KE = pyo.Set(dimen=3, initialize=[(i, k, a) for i, k in m.K if k >= 2 for a in range(k)],
                   doc="ring edges a -> (a + 1) mod kappa")
    m.varrho = pyo.Var(m.KA, m.S, domain=binary, doc="varrho[i, kappa, a, u]: ring node a on server u (Eq. (14))")
    m.theta = pyo.Var(m.KE, m.L, domain=binary, doc="theta[i, kappa, a, (u, v)]: ring edge a routed over link "
                                                    "(u, v) (Eq. (15))")
    m.eq14 = pyo.Constraint(m.KA, rule=lambda m, i, k, a: sum(m.varrho[i, k, a, u] for u in m.S) == m.chi[i, k],
                            doc="(14) each ring node on one server")
    out_links: list[list[int]] = [[] for _ in range(cl.n_nodes)]
    in_links: list[list[int]] = [[] for _ in range(cl.n_nodes)]
    for e, (u, v) in enumerate(cl.links.tolist()):
        out_links[u].append(e)
        in_links[v].append(e)
    n_srv = cl.n_servers

    def eq15(m, i, k, a, u):
        lhs = sum(m.theta[i, k, a, e] for e in out_links[u]) - sum(m.theta[i, k, a, e] for e in in_links[u])
        if u >= n_srv:
            return lhs == 0
        return lhs == m.varrho[i, k, a, u] - m.varrho[i, k, (a + 1) % k, u]

    m.eq15 = pyo.Constraint(m.KE, m.V, rule=eq15, doc="(15) unit flow of each ring edge between its end nodes")
    # (9): the ring's nodes on one server form one run, so the ring enters and leaves each server
    # once.  depart >= varrho[a, u] - varrho[a + 1, u] counts the runs ending on u (lower bounds
    # suffice: depart appears nowhere else); a path merely passing through u is not a departure.
    m.RD = pyo.Set(dimen=4, initialize=[(i, k, a, u) for i, k in m.K if k >= 3 for a in range(k)
                                        for u in range(n_srv)])
    m.depart = pyo.Var(m.RD, domain=pyo.NonNegativeReals,
                       doc="depart[i, kappa, a, u]: ring node a is the last of a run on server u")
    m.depart_def = pyo.Constraint(m.RD, rule=lambda m, i, k, a, u: m.depart[i, k, a, u] >= m.varrho[
        i, k, a, u] - m.varrho[i, k, (a + 1) % k, u], doc="a run on u ends at ring node a")
    m.ring_once = pyo.Constraint(
        [(i, k, u) for i, k in m.K if k >= 3 for u in range(n_srv)],
        rule=lambda m, i, k, u: sum(m.depart[i, k, a, u] for a in range(k)) <= m.chi[i, k],
        doc="(9) the ring leaves each server at most once: one cycle through the job's servers")
    pw, bw = inst.per_worker, inst.bandwidth
    m.h = pyo.Expression(m.I, m.S, m.R, rule=lambda m, i, u, r: sum(
        float(pw[i, r]) * m.varrho[i, k, a, u] for k in _kappas(m, i) for a in range(k)),
        doc="(16) h_i^{u,r}: type-r load of job i on server u")
    m.o = pyo.Expression(m.I, m.L, rule=lambda m, i, e: sum(
        float(bw[i]) * m.theta[i, k, a, e] for k in _kappas(m, i) if k >= 2 for a in range(k)),
        doc="(17) o_i^{u,v}: bandwidth of job i on link (u, v)")
    cap = cl.capacity
    m.eq18 = pyo.Constraint(m.S, m.R, rule=lambda m, u, r: _le(sum(m.h[i, u, r] for i in m.I), cap[u, r]),
                            doc="(18) node capacity g_s^{u,r}")
    m.eq19 = pyo.Constraint(m.L, rule=lambda m, e: _le(sum(m.o[i, e] for i in m.I), cl.bandwidth[e]),
                            doc="(19) link capacity e_s^{u,v}")
    return m


def _build_tree(problem: SlotProblem, relax: bool) -> pyo.ConcreteModel:
    inst = problem.inst
    cl = inst.cluster
    lay = tree_layout(cl)
    m = pyo.ConcreteModel(name=f"gvne-tree-t{problem.t}")
    m.form = "tree"
    m.layout = lay
    _common(m, problem, relax)
    binary = pyo.UnitInterval if relax else pyo.Binary
    jobs = problem.jobs.tolist()
    kmax = dict(zip(jobs, problem.kmax.tolist(), strict=True))
    pw, cap = inst.per_worker, cl.capacity
    # Eq. (5): at most min(N_i, C_s^r / l_i^r, q_i) workers of job i on server s
    ub = {}
    for i in jobs:
        with np.errstate(divide="ignore", invalid="ignore"):
            fit = np.where(pw[i] > 0, cap / np.where(pw[i] > 0, pw[i], 1), np.inf).min(axis=1)
        for s in range(cl.n_servers):
            ub[i, s] = int(min(kmax[i], np.floor(fit[s] + 1e-9)))
    m.y = pyo.Var(m.I, m.S, domain=pyo.NonNegativeReals if relax else pyo.NonNegativeIntegers,
                  bounds=lambda m, i, s: (0, ub[i, s]), doc="y[i, s]: workers of job i on server s")
    m.x = pyo.Var(m.I, m.S, domain=binary, doc="x[i, s]: job i uses server s (Eq. (5))")
    m.C = pyo.Set(initialize=sorted(lay.parent), doc="tree links: every node below the root (child c, parent)")
    m.inside = pyo.Var(m.I, m.C, domain=binary, doc="a server of job i below c")
    m.outside = pyo.Var(m.I, m.C, domain=binary, doc="a server of job i not below c")
    m.span = pyo.Var(m.I, m.C, domain=binary, doc="job i's ring crosses the link above c (once each way)")
    m.ring_size = pyo.Constraint(m.I, rule=lambda m, i: sum(m.y[i, s] for s in m.S) == sum(
        k * m.chi[i, k] for k in _kappas(m, i)), doc="(13)-(14) the chosen ring's kappa nodes are placed")
    m.eq5 = pyo.Constraint(m.I, m.S, rule=lambda m, i, s: m.y[i, s] <= ub[i, s] * m.x[i, s],
                           doc="(5) workers only on used servers")
    m.used = pyo.Constraint(m.I, m.S, rule=lambda m, i, s: m.x[i, s] <= m.y[i, s],
                            doc="a used server hosts a worker")
    n_srv = cl.n_servers

    # Only lower bounds are needed: a spurious inside / outside / span of 1 can only use
    # bandwidth, never gain utility, so an optimum never needs them above their definition.
    m.inside_srv = pyo.Constraint(
        [(i, c) for i in jobs for c in lay.parent if c < n_srv],
        rule=lambda m, i, c: m.inside[i, c] >= m.x[i, c], doc="a server's own x")
    m.inside_up = pyo.Constraint(
        [(i, c, d) for i in jobs for c in lay.parent for d in lay.children[c]],
        rule=lambda m, i, c, d: m.inside[i, c] >= m.inside[i, d], doc="inside >= inside of every child")
    # outside[i, c] >= (servers of i not below c) / |S|, through the running sums xbelow (servers
    # below c) and xsum (all): linear in the tree's size where the sum itself has |S| terms per c
    m.xbelow = pyo.Var(m.I, m.C, domain=pyo.NonNegativeReals, doc="servers of job i below c: sum x[i, s]")
    m.xsum = pyo.Var(m.I, domain=pyo.NonNegativeReals, doc="servers of job i: sum_s x[i, s]")

    def _own_and_children(m, i, c):
        return (m.x[i, c] if c < n_srv else 0) + sum(m.xbelow[i, d] for d in lay.children[c])

    m.xbelow_def = pyo.Constraint(m.I, m.C, rule=lambda m, i, c: m.xbelow[i, c] == _own_and_children(m, i, c),
                                  doc="xbelow: the server's own x plus its children's")
    m.xsum_def = pyo.Constraint(m.I, rule=lambda m, i: m.xsum[i] == _own_and_children(m, i, lay.root),
                                doc="xsum: the root's own x plus its children's")
    m.outside_def = pyo.Constraint(m.I, m.C, rule=lambda m, i, c: n_srv * m.outside[i, c] >= m.xsum[i] - m.xbelow[
        i, c], doc="outside = 1 if a server elsewhere")
    m.span_def = pyo.Constraint(m.I, m.C, doc="(9) ring crosses the link above c iff servers on both sides",
                                rule=lambda m, i, c: m.span[i, c] >= m.inside[i, c] + m.outside[i, c] - 1)
    m.eq18 = pyo.Constraint(m.S, m.R, rule=lambda m, s, r: _le(sum(
        float(pw[i, r]) * m.y[i, s] for i in m.I), cap[s, r]), doc="(16), (18) node capacity g_s^{u,r}")
    bw = inst.bandwidth
    link_cap = {c: min(float(cl.bandwidth[lay.up[c]]), float(cl.bandwidth[lay.down[c]])) for c in lay.parent}
    m.eq19 = pyo.Constraint(m.C, rule=lambda m, c: _le(sum(float(bw[i]) * m.span[i, c] for i in m.I),
                                                       link_cap[c]),
                            doc="(17), (19) link capacity e_s^{u,v}, both directions of the link above c")
    return m


def allocation_from_solution(problem: SlotProblem, model: pyo.ConcreteModel, *, tol: float = 1e-6,
                             paths=None) -> SlotAllocation:
    """Read an integral solution of :func:`build_gvne` into a :class:`SlotAllocation`.

    ``paths`` (tree form): the cluster's :meth:`Cluster.paths`, computed when not given; pass
    them when reading slot after slot.

    Raises ``ValueError`` if a variable the allocation depends on is fractional beyond ``tol``.
    """
    inst = problem.inst
    cl = inst.cluster
    alloc = SlotAllocation.empty(inst.n_jobs, cl.n_servers)

    def val(v):
        x = pyo.value(v, exception=False)
        x = 0.0 if x is None else float(x)
        if abs(x - round(x)) > tol:
            raise ValueError(f"{v.name} = {x}: the solution is fractional; round it first (clusteropt.rounding)")
        return round(x)

    if model.form == "tree":
        y = np.array([[val(model.y[i, s]) for s in range(cl.n_servers)] for i in problem.jobs.tolist()],
                     dtype=np.int64).reshape(problem.jobs.size, cl.n_servers)
        return tree_allocation(problem, y, model.layout, paths=paths)
    for i, k in model.K:
        if val(model.chi[i, k]) != 1:
            continue
        where = []
        for a in range(k):
            on = [u for u in range(cl.n_servers) if val(model.varrho[i, k, a, u]) == 1]
            where.append(on[0])
        for u in where:
            alloc.workers[i, u] += 1
        # ring order: rotate so that a server's run does not wrap around, then collapse runs
        start = next((a for a in range(k) if where[a] != where[a - 1]), 0)
        seq = where[start:] + where[:start]
        servers = [u for n, u in enumerate(seq) if n == 0 or u != seq[n - 1]]
        if len(servers) < 2:
            continue
        edges = [a for a in range(k) if where[a] != where[(a + 1) % k]]
        edges = sorted(edges, key=lambda a: (a - start) % k)
        flows = {a: {e for e in range(cl.n_links) if val(model.theta[i, k, a, e]) == 1} for a in edges}
        ring_paths = tuple(_walk(cl, where[a], where[(a + 1) % k], flows[a]) for a in edges)
        alloc.rings[i] = Ring(tuple(servers), ring_paths)
    return alloc


def tree_allocation(problem: SlotProblem, workers, layout: TreeLayout, *, paths=None) -> SlotAllocation:
    """The allocation of an integral tree-form solution: ``workers[j, s]`` = ``y[i, s]`` of the
    ``j``-th active job (``problem.jobs[j]``); each job with two or more servers gets the ring
    through its servers in the layout's depth-first order, over the tree paths, which crosses
    each link once each way exactly when the job has servers on both sides (module docstring,
    ``form="tree"``).  Shared by the Pyomo and the array routes.
    """
    cl = problem.inst.cluster
    alloc = SlotAllocation.empty(problem.inst.n_jobs, cl.n_servers)
    paths = cl.paths() if paths is None else paths
    w = np.asarray(workers, dtype=np.int64).reshape(problem.jobs.size, cl.n_servers)
    for j, i in enumerate(problem.jobs.tolist()):
        alloc.workers[i] = w[j]
        used = [s for s in layout.dfs_order if w[j, s] > 0]
        if len(used) >= 2:
            alloc.rings[i] = Ring(tuple(used), tuple(tuple(paths[used[k], used[(k + 1) % len(used)]])
                                                     for k in range(len(used))))
    return alloc


def _walk(cl: Cluster, src: int, dst: int, links: set[int]) -> tuple[int, ...]:
    """A simple path from src to dst over ``links`` (a unit flow's support; skips circulations)."""
    out: dict[int, list[int]] = {}
    for e in sorted(links):
        out.setdefault(int(cl.links[e, 0]), []).append(e)
    stack: list[tuple[int, tuple[int, ...]]] = [(src, ())]
    seen = {src}
    while stack:
        node, path = stack.pop()
        if node == dst:
            return path
        for e in out.get(node, []):
            nxt = int(cl.links[e, 1])
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, (*path, e)))
    raise ValueError(f"the flow of a ring edge has no path from node {src} to node {dst}")


def _gvne_builder(inst: GadgetInstance, relax: bool = False, slot: int | None = None, form: str = "auto"):
    """Registry builder: slot ``slot`` (default the last) with no earlier allocation (z = 0)."""
    return build_gvne(slot_problem(inst, inst.horizon if slot is None else int(slot)), form=form, relax=relax)


register_model(ModelSpec(
    "gvne", "gadget", _gvne_builder, "pyomo",
    "paper 000 (12)-(19): per-slot G-VNE ILP of problem (10) (slot --slot, no earlier allocation; tree form "
    "on tree clusters)", array_builder="clusteropt.models.gadget.matrix:gvne_model_arrays"))
