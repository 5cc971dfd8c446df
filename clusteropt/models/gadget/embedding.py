"""Paper 000 (GADGET), Alg. 2 line 4: the augmented LP that embeds rings of fixed sizes, and its
decomposition into valid mappings (Alg. 2 lines 5-6).

After LP ring selection (Lemma 7, :func:`clusteropt.rounding.gadget.select_rings`) every active
job i has one ring size ``kappa_i``.  The augmented LP embeds each job's ``kappa_i``-ring
fractionally (``x[i]`` in [0, 1] is the fraction embedded) and its solution must be a convex
combination of *valid mappings* ``omega_i^k`` with weights ``varphi_i^k`` (``sum_k varphi_i^k =
x[i]``) whose node and link loads add up to the LP's.  The paper borrows the construction from
Rost and Schmid's extended graph ([5, Formulation 2]); :mod:`clusteropt.models.gadget.extended`
restores it and documents the reconstruction.  Two forms, one contract:

``form="extended"`` (:mod:`clusteropt.models.gadget.extended`)
    Rost and Schmid's extended graph specialised to rings, on any topology.
``form="tree"`` (this module)
    Tree substrates (:meth:`Cluster.is_tree`; the paper's fat-tree of Sec. VI).  Paths are unique
    and a ring in depth-first order crosses the link above tree node c once each way exactly
    when the job has workers both inside and outside c's subtree (the tree form of
    :mod:`clusteropt.models.gadget.gvne`).  A mapping is therefore fixed by its worker counts, and
    everything it loads is a function of *how many workers each subtree holds*.  The LP keeps,
    per job and tree node n, the distribution ``lam[i, n, k]`` of "subtree n holds k workers",
    and ties a node to its children by a chain of pairwise joint distributions: at node p with
    parts (its own workers if p is a server, then its children) ``P_1 .. P_m``,
    ``mu[i, p, j, a, b]`` is the mass of "parts before j hold a workers and part j holds b".
    The factor graph of these distributions is a tree (a chain inside every node, joined along
    the substrate tree), so every LP solution is a convex combination of integral ones
    (the local polytope of a tree-structured model is exact), and :func:`decompose_embedding`
    peels them off top-down.  No routing variables; ``O(kappa_i^2)`` variables per tree link.

The contract both forms meet (the rounding relies on it):

* ``m.form``; ``m.kappa`` (dict job -> ring size); Sets ``m.I`` (jobs), ``m.S``, ``m.R``, ``m.L``;
* ``m.x[i]`` in [0, 1], the fraction of job i embedded (``rho_i`` of Eq. (13) with ``chi`` fixed);
* objective ``m.eq12``: maximize ``sum_i pi[i, kappa_i] x[i]`` (Eq. (12));
* Expressions ``m.h[i, s, r]`` (Eq. (16)) and ``m.o[i, e]`` (Eq. (17)), job i's type-r load on
  server s and bandwidth on directed link e;
* rows ``m.eq18[s, r]`` (node capacity, Eq. (18)) and ``m.eq19[e]`` (link capacity, Eq. (19)).
"""

from __future__ import annotations

import logging

import numpy as np
import pyomo.environ as pyo

from clusteropt.decisions.gadget import Mapping
from clusteropt.models.gadget.gvne import SlotProblem, tree_layout
from clusteropt.models.gadget.trees import TreeJob, check_kappa, tree_mapping
from clusteropt.models.gadget.trees import server_fit as server_fit  # the old path's (models.gadget_embedding)

__all__ = ["build_embedding_lp", "decompose_embedding"]

log = logging.getLogger(__name__)



def build_embedding_lp(problem: SlotProblem, kappa, *, form: str = "auto") -> pyo.ConcreteModel:
    """The augmented LP of Alg. 2 line 4 for the jobs of ``kappa`` with their ring sizes fixed.

    Parameters
    ----------
    problem : SlotProblem
    kappa : dict
        ``{job: kappa_i}`` for the jobs to embed (a subset of ``problem.jobs``).
    form : {"auto", "tree", "extended"}
        ``"auto"`` is ``"tree"`` on tree clusters, else ``"extended"`` (module docstring).

    Examples
    --------
    >>> from clusteropt.instances.gadget.instance import gadget_preset
    >>> from clusteropt.models.gadget.gvne import slot_problem
    >>> p = slot_problem(gadget_preset("small", jobs=3, seed=0), t=20)
    >>> m = build_embedding_lp(p, {int(i): int(k) for i, k in zip(p.jobs, p.kmax)})
    >>> m.form, sorted(m.kappa) == sorted(p.jobs.tolist())
    ('tree', True)
    """
    kappa = check_kappa(problem, kappa)
    tree = problem.inst.cluster.is_tree()
    if form == "auto":
        form = "tree" if tree else "extended"
    if form == "tree":
        if not tree:
            raise ValueError("form='tree' needs a tree substrate (Cluster.is_tree() is False); use 'extended'")
        return _build_tree(problem, kappa)
    if form == "extended":
        from clusteropt.models.gadget.extended import build_extended_lp

        return build_extended_lp(problem, kappa)
    raise ValueError(f"form = {form!r}; expected 'auto', 'tree' or 'extended'")



def _build_tree(problem: SlotProblem, kappa: dict[int, int]) -> pyo.ConcreteModel:
    inst = problem.inst
    cl = inst.cluster
    lay = tree_layout(cl)
    m = pyo.ConcreteModel(name=f"embedding-tree-t{problem.t}")
    m.form = "tree"
    m.layout = lay
    m.kappa = dict(kappa)
    jobs = sorted(kappa)
    pos = {int(i): j for j, i in enumerate(problem.jobs.tolist())}
    m.I = pyo.Set(initialize=jobs, doc="jobs to embed, each with its ring size fixed (Alg. 2 line 3)")
    m.S = pyo.Set(initialize=range(cl.n_servers), doc="servers")
    m.R = pyo.Set(initialize=range(len(cl.resources)), doc="resource types r")
    m.L = pyo.Set(initialize=range(cl.n_links), doc="directed links of E_s")
    m.x = pyo.Var(m.I, bounds=(0, 1), doc="x[i]: fraction of job i's kappa_i-ring embedded (rho_i, Eq. (13))")
    m.eq12 = pyo.Objective(expr=sum(float(problem.pi[pos[i]][kappa[i] - 1]) * m.x[i] for i in jobs),
                           sense=pyo.maximize, doc="(12) utility gained with the selected ring sizes")
    m.jobs_ = {}
    lam_keys: list[tuple] = []
    own_keys: list[tuple] = []
    mu_keys: list[tuple] = []
    row_keys = []
    row_terms = {}
    for i in jobs:
        tj = TreeJob(problem, lay, i, kappa[i])
        m.jobs_[i] = tj
        if not tj.feasible:
            m.x[i].fix(0.0)
            log.info("slot %d: job %d cannot hold %d workers anywhere; x fixed at 0", problem.t, i, kappa[i])
            continue
        for key in tj.names:
            (lam_keys if key[0] == "lam" else own_keys if key[0] == "own" else mu_keys).append((i, *key[1:]))
        for key, terms, rhs in tj.rows:
            row_keys.append((i, *key))
            row_terms[(i, *key)] = (tj, terms, rhs)
    m.lam = pyo.Var(lam_keys, bounds=(0, 1), doc="lam[i, n, k]: mass of 'the subtree of node n holds k workers'")
    m.omega = pyo.Var(own_keys, bounds=(0, 1), doc="omega[i, s, k]: mass of 'server s holds k workers' (Eq. (14))")
    m.mu = pyo.Var(mu_keys, bounds=(0, 1), doc="mu[i, p, j, a, b]: mass of 'parts of node p before j hold a "
                                                "workers, part j holds b'")

    def var(tj, v):
        key = tj.names[v]
        return (m.lam if key[0] == "lam" else m.omega if key[0] == "own" else m.mu)[(tj.i, *key[1:])]

    def row(m, *key):
        tj, terms, rhs = row_terms[key]
        lhs = sum(w * var(tj, v) for v, w in terms)
        return lhs == (m.x[tj.i] if rhs == "x" else 0.0)

    m.consistency = pyo.Constraint(row_keys, rule=row, doc="each node's distribution is the sum of its parts' "
                                                          "(chain rows); the root holds kappa_i with mass x[i]")
    pw, bw = inst.per_worker, inst.bandwidth
    m.h = pyo.Expression(m.I, m.S, m.R, rule=lambda m, i, s, r: sum(
        float(pw[i, r]) * b * m.omega[i, s, b] for b in range(1, m.jobs_[i].own_cap[s] + 1))
        if m.jobs_[i].feasible else 0.0, doc="(16) h_i^{s,r}: type-r load of job i on server s")
    crossing = {}
    for c in lay.parent:
        crossing[lay.up[c]] = c
        crossing[lay.down[c]] = c

    def o(m, i, e):
        tj = m.jobs_[i]
        c = crossing.get(e)
        if not tj.feasible or c is None or tj.k < 2:
            return 0.0
        return float(bw[i]) * sum(m.lam[i, c, b] for b in range(1, min(tj.cap[c], tj.k - 1) + 1))

    m.o = pyo.Expression(m.I, m.L, rule=o, doc="(17) o_i^e: b_i when job i's ring crosses tree link e, i.e. the "
                                               "subtree below e holds between 1 and kappa_i - 1 workers")
    cap = cl.capacity
    m.eq18 = pyo.Constraint(m.S, m.R, rule=lambda m, s, r: _le(sum(m.h[i, s, r] for i in m.I), cap[s, r]),
                            doc="(18) node capacity g_s^{u,r}")
    m.eq19 = pyo.Constraint(m.L, rule=lambda m, e: _le(sum(m.o[i, e] for i in m.I), cl.bandwidth[e]),
                            doc="(19) link capacity e_s^{u,v}")
    return m


def _le(lhs, bound):
    """``lhs <= bound``, or no row when nothing can load it."""
    if isinstance(lhs, int | float):
        return pyo.Constraint.Skip
    return lhs <= float(bound)


def decompose_embedding(problem: SlotProblem, model: pyo.ConcreteModel, *, tol: float = 1e-6,
                        paths=None) -> dict[int, list[tuple[float, Mapping]]]:
    """Alg. 2 lines 5-6: per job, ``[(varphi_i^k, omega_i^k), ...]`` from a solved augmented LP.

    The weights add up to ``x[i]`` and the mappings' loads, weighted, to the LP's ``h`` and ``o``
    (up to ``tol`` per job; anything left is logged as lost).  ``paths``: the cluster's
    :meth:`Cluster.paths` (tree form), computed when not given.
    """
    if model.form == "extended":
        from clusteropt.models.gadget.extended import decompose_extended

        return decompose_extended(problem, model, tol=tol)
    if model.form != "tree":
        raise ValueError(f"model.form = {model.form!r}; expected a model of build_embedding_lp")
    cl = problem.inst.cluster
    paths = cl.paths() if paths is None else paths
    lay = model.layout
    out: dict[int, list[tuple[float, Mapping]]] = {}
    for i in sorted(model.kappa):
        tj = model.jobs_[i]
        x = pyo.value(model.x[i], exception=False)
        if x is None:
            raise ValueError(f"x[{i}] has no value: solve the model before decomposing it")
        x = float(x)
        out[i] = []
        if not tj.feasible or x <= tol:
            continue
        res = np.zeros(len(tj.names))
        for v, key in enumerate(tj.names):
            comp = model.lam if key[0] == "lam" else model.omega if key[0] == "own" else model.mu
            res[v] = max(0.0, float(pyo.value(comp[(i, *key[1:])], exception=False) or 0.0))
        left = x
        while left > tol:
            used: list[int] = []
            counts: dict[int, int] = {}
            if not _select(tj, lay, lay.root, tj.k, res, used, counts, eps=tol * 1e-3):
                break
            phi = min(left, float(res[used].min()))
            if phi <= 0:
                break
            res[used] -= phi
            left -= phi
            out[i].append((phi, tree_mapping(i, counts, lay, paths)))
        if left > tol:
            log.warning("slot %d: job %d: %.3g of x = %.6g not decomposed (numerical residue)",
                        problem.t, i, left, x)
    return out


def _select(tj: TreeJob, lay, p: int, total: int, res: np.ndarray, used: list[int], counts: dict[int, int],
            *, eps: float) -> bool:
    """Choose, top-down, a positive-mass way for node p's parts to hold ``total`` workers."""
    parts = tj.parts[p]
    if not parts:  # a switch with no server below it holds nothing
        return total == 0
    want = total
    picks: list[tuple[str, int, int]] = []
    for j in range(len(parts) - 1, 0, -1):
        best, best_v = None, eps
        for b in range(min(want, tj.part_cap(*parts[j])) + 1):
            v = tj.index.get(("mu", p, j, want - b, b))
            if v is not None and res[v] > best_v:
                best, best_v = (v, b), res[v]
        if best is None:
            return False
        used.append(best[0])
        picks.append((*parts[j], best[1]))
        want -= best[1]
    picks.append((*parts[0], want))
    for kind, c, b in picks:
        v = tj.part_var(kind, c, b)
        if v is None or res[v] <= eps:
            return False
        used.append(v)
        if kind == "own":
            if b:
                counts[c] = b
        elif not _select(tj, lay, c, b, res, used, counts, eps=eps):  # b = 0 too: keeps the residual an
            return False                                               # LP point (its loads are 0 anyway)
    return True


