"""Paper 000 (GADGET), Alg. 2: the two LPs of LP-RS-MDE built directly as sparse matrices.

Every slot, LP-RS-MDE (Alg. 2) solves two LPs: the LP relaxation of the G-VNE ILP (12)-(19) for
ring selection (Alg. 2 line 3, Lemma 7; :func:`clusteropt.models.gadget.gvne.build_gvne` with
``relax=True``) and the augmented LP with the ring sizes fixed (Alg. 2 line 4;
:func:`clusteropt.models.gadget.embedding.build_embedding_lp`).  Those Pyomo models are what
users inspect and export; building them and compiling them to a matrix took about as long as
HiGHS's solve at the paper's scale.  This module builds **the very same two LPs** (tree form
only) directly as numpy / scipy arrays, in the order Pyomo's
:class:`~pyomo.repn.plugins.standard_form.LinearStandardFormCompiler` gives them:

* the same columns in the same order (variable components in the order the compiler first meets
  them: objective, then rows in declaration order; inside a component its index order; columns
  with no nonzero and fixed variables dropped), with the same bounds and objective coefficients;
* the same rows in the same order (constraints in declaration order, each written as the
  compiler writes it: ``lhs - rhs`` with the constant moved to the bound, zero coefficients
  dropped, rows with no variable left out);
* names: :meth:`MatrixLP.col_names` and :meth:`MatrixLP.row_names` give the Pyomo names
  (``chi[3,2]``, ``consistency[3,chain_in,52,1,0]``, ``eq18[4,0]``).

``tests/models/test_gadget_matrix.py`` checks that, row by row and coefficient by coefficient,
against the compiled Pyomo models.  Since HiGHS then gets identical input, both routes return
the same solution.  The general forms (``build_gvne(form="flow")``, the extended-graph augmented
LP) stay Pyomo-only.

:func:`build_gvne_matrix`
    The LP relaxation of (12)-(19), tree form: objective (12), rows (13) (``eq13``,
    ``ring_size``), (5) (``eq5``, ``used``), the link-crossing rows of (9) (``inside_srv``,
    ``inside_up``, ``xbelow_def``, ``xsum_def``, ``outside_def``, ``span_def``), (16)+(18)
    (``eq18``) and (17)+(19) (``eq19``).
:func:`build_embedding_matrix`
    The augmented LP of Alg. 2 line 4, tree form: objective (12) with ``kappa_i`` fixed, the
    consistency rows of the subtree distributions, (16)+(18) (``eq18``) and (17)+(19) (``eq19``).
    The per-job bookkeeping (:class:`clusteropt.models.gadget.trees.TreeJob`) is the Pyomo
    builder's own, computed once per distinct (ring size, per-server fit) and shared by the jobs
    that have it.
:func:`allocation_from_matrix`
    Read an integral solution of ``build_gvne_matrix(problem, relax=False)`` (the exact slot
    ILP) into the slot's allocation.
:func:`solve_matrix`
    Hand the arrays to HiGHS (:func:`clusteropt.solvers.direct.run_highs`, any HiGHS options)
    and return a :class:`~clusteropt.solvers.result.SolveResult` plus the column values.
:class:`EmbeddingSolution`
    A solved augmented LP as :func:`~clusteropt.models.gadget.embedding.decompose_embedding`
    reads it: ``x[i]``, ``lam[i, n, k]``, ``omega[i, s, k]``, ``mu[i, p, j, a, b]`` by the Pyomo
    index tuples, ``form``, ``layout``, ``kappa``, ``jobs_``; the decomposition (Alg. 2 lines
    5-6) runs on it unchanged.

References
----------
Yu et al., GADGET (paper 000): problem (10), the G-VNE ILP (12)-(19), Lemma 7, Alg. 2 (LP-RS-MDE).
"""

from __future__ import annotations

import copy
import itertools
import logging
import math
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp

from clusteropt.models.gadget.gvne import SlotProblem, slot_problem, tree_layout
from clusteropt.models.gadget.trees import TreeJob, check_kappa, preorder, server_fit
from clusteropt.models.matrix import Assembler, Block, MatrixLP, NoArrayForm
from clusteropt.models.matrix import solve_matrix as solve_matrix  # the old path's (models.gadget_matrix)

__all__ = ["EmbeddingSolution", "allocation_from_matrix", "build_embedding_matrix", "build_gvne_matrix",
           "capacity_relaxation", "certify_extension", "extend_capacity_solution", "gvne_model_arrays",
           "server_classes"]

log = logging.getLogger(__name__)

_INF = math.inf


def _fits(problem: SlotProblem) -> np.ndarray:
    """``min_r C_s^r / l_i^r`` (inf where ``l_i^r = 0``) per active job and server, as the Pyomo
    tree builder computes it (Eq. (5)).
    """
    pw = problem.inst.per_worker[problem.jobs]  # (J, R)
    cap = problem.inst.cluster.capacity  # (S, R)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(pw[:, None, :] > 0, cap[None, :, :] / np.where(pw > 0, pw, 1)[:, None, :], np.inf)
    return ratio.min(axis=2)


def server_classes(cluster, layout=None) -> np.ndarray:
    """``rep[s]``: the representative (smallest index) of server s's class of interchangeable servers.

    Servers are interchangeable when they are leaves of the tree under the same parent, with the same
    capacity row and the same bandwidth on their link both ways: swapping two of them maps the
    cluster onto itself with every datum of problem (10).  Every other server is its own class.

    >>> from clusteropt.instances.gadget.instance import fat_tree_cluster
    >>> c = fat_tree_cluster(6, n_racks=2, gpus=(8,), server_bw=(100, 100), seed=0)
    >>> server_classes(c).tolist(), c.rack.tolist()   # one class per rack
    ([0, 0, 2, 2, 2, 2], [0, 0, 1, 1, 1, 1])
    """
    lay = tree_layout(cluster) if layout is None else layout
    n_s = cluster.n_servers
    rep = np.arange(n_s)
    seen: dict[tuple, int] = {}
    idx = cluster.link_index()
    for s in range(n_s):
        if s == lay.root or lay.children[s]:
            continue
        p = lay.parent[s]
        key = (p, tuple(cluster.capacity[s].tolist()), float(cluster.bandwidth[idx[s, p]]),
               float(cluster.bandwidth[idx[p, s]]))
        rep[s] = seen.setdefault(key, s)
    return rep


def build_gvne_matrix(problem: SlotProblem, *, relax: bool = True, classes: bool = False) -> MatrixLP:
    """The LP relaxation of the G-VNE ILP (12)-(19), tree form, as arrays: the model of
    ``build_gvne(problem, form="tree", relax=True)`` (module docstring).  With ``relax=False``
    the ILP itself, ``build_gvne(problem, form="tree")``: the same arrays with integer columns
    (``chi``, ``rho``, ``x``, ``inside``, ``outside``, ``span`` binary by their bounds, ``y``
    integer; the running sums ``xbelow`` and ``xsum`` continuous, as they are sums of ``x``), as
    the exact slot solver of :class:`clusteropt.online.gadget.Gadget` uses it.

    Columns (Pyomo order): ``chi[i, kappa]`` (Eq. (13)), ``rho[i]`` (Eq. (13)), ``y[i, s]``,
    ``x[i, s]`` (Eq. (5)), ``inside[i, c]``, ``xbelow[i, c]``, ``xsum[i]``, ``outside[i, c]``,
    ``span[i, c]`` (Eq. (9)).  Rows: ``eq13``, ``ring_size``, ``eq5``, ``used``, ``inside_srv``,
    ``inside_up``, ``xbelow_def``, ``xsum_def``, ``outside_def``, ``span_def``, ``eq18`` (Eqs.
    (16), (18)), ``eq19`` (Eqs. (17), (19)).

    ``classes=True`` (LP relaxation only): the LP over classes of interchangeable servers
    (:func:`server_classes`): one copy of every per-server variable and row for each class, its
    representative's, with the class's size as the coefficient where the rows sum over servers
    (``ring_size``, ``xbelow_def`` of the parent).  The same optimal value, because the LP is
    invariant under swapping two servers of a class (with their variables and rows): averaging any
    optimal solution over all such swaps gives an optimal solution whose copies agree within every
    class, which is a solution of the class LP with the same objective, and every solution of the
    class LP, copied to the class's servers, is one of the full LP.  ``chi`` (all Lemma 7 reads) is
    that symmetric solution's; the other members' variables are not columns (``values`` gives NaN;
    ``meta["rep"]`` says whose copy they share).  Tested against the full LP.

    Examples
    --------
    >>> from clusteropt.instances.gadget.instance import gadget_preset
    >>> from clusteropt.models.gadget.gvne import slot_problem
    >>> lp = build_gvne_matrix(slot_problem(gadget_preset("small", jobs=3, seed=0), t=20))
    >>> lp.col_names()[:2], lp.row_names()[0], lp.maximize
    (['chi[0,1]', 'chi[1,1]'], 'eq13[0]', True)
    """
    inst = problem.inst
    cl = inst.cluster
    if not cl.is_tree():
        raise ValueError("the matrix builder needs a tree substrate (Cluster.is_tree() is False); "
                         "use build_gvne(form='flow')")
    lay = tree_layout(cl)
    jobs = problem.jobs.astype(np.int64)
    kmax = problem.kmax.astype(np.int64)
    n_j, n_s, n_r = jobs.size, cl.n_servers, len(cl.resources)
    tree_c = np.array(sorted(lay.parent), dtype=np.int64)  # m.C
    n_c = tree_c.size
    cpos = {int(c): q for q, c in enumerate(tree_c.tolist())}
    # columns: chi, rho, y, x, inside, outside, span (the compiler meets them in this order)
    k_job = np.repeat(np.arange(n_j), kmax)
    k_kappa = np.concatenate([np.arange(1, k + 1) for k in kmax.tolist()]) if n_j else np.zeros(0, np.int64)
    n_k = k_job.size
    o_chi, o_rho = 0, n_k
    o_y = o_rho + n_j
    o_x = o_y + n_j * n_s
    o_in = o_x + n_j * n_s
    o_xb = o_in + n_j * n_c
    o_xs = o_xb + n_j * n_c
    o_out = o_xs + n_j
    o_span = o_out + n_j * n_c
    n_cols = o_span + n_j * n_c
    js = np.arange(n_j)[:, None]
    y_col = o_y + js * n_s + np.arange(n_s)[None, :]  # (J, S)
    x_col = o_x + js * n_s + np.arange(n_s)[None, :]
    in_col = o_in + js * n_c + np.arange(n_c)[None, :]  # (J, C)
    xb_col = o_xb + js * n_c + np.arange(n_c)[None, :]
    xs_col = o_xs + np.arange(n_j)
    out_col = o_out + js * n_c + np.arange(n_c)[None, :]
    span_col = o_span + js * n_c + np.arange(n_c)[None, :]
    with np.errstate(invalid="ignore"):
        ub = np.minimum(kmax[:, None].astype(float), np.floor(_fits(problem) + 1e-9))  # Eq. (5) bound of y
    cost = np.zeros(n_cols)
    cost[o_chi:o_rho] = np.concatenate([np.asarray(pi, dtype=float) for pi in problem.pi]) if n_j else 0.0
    col_lower = np.zeros(n_cols)
    col_upper = np.ones(n_cols)
    col_upper[o_y:o_x] = ub.ravel()
    col_upper[o_xb:o_out] = _INF
    asm = Assembler(n_cols)
    jl, kl = jobs.tolist(), k_kappa.tolist()
    ones_j = np.ones(n_j)

    # (13): sum_kappa chi[i, kappa] - rho[i] == 0
    asm.add("eq13", n_j, lambda: [(i,) for i in jl],
            (np.concatenate([k_job, np.arange(n_j)]),
             np.concatenate([o_chi + np.arange(n_k), o_rho + np.arange(n_j)]),
             np.concatenate([np.ones(n_k), -ones_j])), 0.0, 0.0)
    # (13)-(14): sum_s y[i, s] - sum_kappa kappa chi[i, kappa] == 0
    asm.add("ring_size", n_j, lambda: [(i,) for i in jl],
            (np.concatenate([np.repeat(np.arange(n_j), n_s), k_job]),
             np.concatenate([y_col.ravel(), o_chi + np.arange(n_k)]),
             np.concatenate([np.ones(n_j * n_s), -k_kappa.astype(float)])), 0.0, 0.0)
    js_rows = np.arange(n_j * n_s)
    # (5): y[i, s] - ub[i, s] x[i, s] <= 0
    asm.add("eq5", n_j * n_s, lambda: [(i, s) for i in jl for s in range(n_s)],
            (np.concatenate([js_rows, js_rows]), np.concatenate([y_col.ravel(), x_col.ravel()]),
             np.concatenate([np.ones(n_j * n_s), -ub.ravel()])), -_INF, 0.0)
    # x[i, s] - y[i, s] <= 0
    asm.add("used", n_j * n_s, lambda: [(i, s) for i in jl for s in range(n_s)],
            (np.concatenate([js_rows, js_rows]), np.concatenate([x_col.ravel(), y_col.ravel()]),
             np.concatenate([np.ones(n_j * n_s), -np.ones(n_j * n_s)])), -_INF, 0.0)
    # x[i, c] - inside[i, c] <= 0, servers c below the root in the layout's order
    srv_c = np.array([c for c in lay.parent if c < n_s], dtype=np.int64)
    srv_q = np.array([cpos[int(c)] for c in srv_c.tolist()], dtype=np.int64)
    n_rows = n_j * srv_c.size
    rr = np.arange(n_rows)
    asm.add("inside_srv", n_rows, lambda: [(i, c) for i in jl for c in srv_c.tolist()],
            (np.concatenate([rr, rr]), np.concatenate([x_col[:, srv_c].ravel(), in_col[:, srv_q].ravel()]),
             np.concatenate([np.ones(n_rows), -np.ones(n_rows)])), -_INF, 0.0)
    # inside[i, d] - inside[i, c] <= 0 for every child d of c
    pairs = [(c, d) for c in lay.parent for d in lay.children[c]]
    pc = np.array([cpos[c] for c, _ in pairs], dtype=np.int64)
    pd = np.array([cpos[d] for _, d in pairs], dtype=np.int64)
    n_rows = n_j * len(pairs)
    rr = np.arange(n_rows)
    asm.add("inside_up", n_rows, lambda: [(i, c, d) for i in jl for c, d in pairs],
            (np.concatenate([rr, rr]), np.concatenate([in_col[:, pd].ravel(), in_col[:, pc].ravel()]),
             np.concatenate([np.ones(n_rows), -np.ones(n_rows)])), -_INF, 0.0)
    # xbelow[i, c] - x[i, c] (c a server) - sum_{d child of c} xbelow[i, d] == 0
    rr = np.arange(n_j * n_c)
    own_q = np.array([q for q, c in enumerate(tree_c.tolist()) if c < n_s], dtype=np.int64)
    own_s = tree_c[own_q]
    r_own = (js * n_c + own_q[None, :]).ravel()
    r_kid = (js * n_c + pc[None, :]).ravel()
    asm.add("xbelow_def", n_j * n_c, lambda: [(i, c) for i in jl for c in tree_c.tolist()],
            (np.concatenate([rr, r_own, r_kid]),
             np.concatenate([xb_col.ravel(), x_col[:, own_s].ravel(), xb_col[:, pd].ravel()]),
             np.concatenate([np.ones(n_j * n_c), -np.ones(r_own.size), -np.ones(r_kid.size)])), 0.0, 0.0)
    # xsum[i] - x[i, root] (the root a server) - sum_{d child of the root} xbelow[i, d] == 0
    top = np.array([cpos[d] for d in lay.children[lay.root]], dtype=np.int64)
    root_x = x_col[:, [lay.root]] if lay.root < n_s else np.zeros((n_j, 0), dtype=np.int64)
    jr = np.arange(n_j)
    asm.add("xsum_def", n_j, lambda: [(i,) for i in jl],
            (np.concatenate([jr, np.repeat(jr, root_x.shape[1]), np.repeat(jr, top.size)]),
             np.concatenate([xs_col, root_x.ravel(), xb_col[:, top].ravel()]),
             np.concatenate([np.ones(n_j), -np.ones(root_x.size), -np.ones(n_j * top.size)])), 0.0, 0.0)
    # xsum[i] - xbelow[i, c] - |S| outside[i, c] <= 0
    asm.add("outside_def", n_j * n_c, lambda: [(i, c) for i in jl for c in tree_c.tolist()],
            (np.concatenate([rr, rr, rr]),
             np.concatenate([np.repeat(xs_col, n_c), xb_col.ravel(), out_col.ravel()]),
             np.concatenate([np.ones(n_j * n_c), -np.ones(n_j * n_c), np.full(n_j * n_c, -float(n_s))])),
            -_INF, 0.0)
    # inside[i, c] + outside[i, c] - span[i, c] <= 1
    asm.add("span_def", n_j * n_c, lambda: [(i, c) for i in jl for c in tree_c.tolist()],
            (np.concatenate([rr, rr, rr]), np.concatenate([in_col.ravel(), out_col.ravel(), span_col.ravel()]),
             np.concatenate([np.ones(2 * n_j * n_c), -np.ones(n_j * n_c)])), -_INF, 1.0)
    # (16), (18): sum_i l_i^r y[i, s] <= C_s^r
    pw = inst.per_worker[jobs]  # (J, R)
    r18 = (np.arange(n_s)[None, :, None] * n_r + np.arange(n_r)[None, None, :]) * np.ones((n_j, 1, 1), np.int64)
    c18 = np.broadcast_to(y_col[:, :, None], (n_j, n_s, n_r))
    v18 = np.broadcast_to(pw[:, None, :], (n_j, n_s, n_r))
    asm.add("eq18", n_s * n_r, lambda: [(s, r) for s in range(n_s) for r in range(n_r)],
            (r18.ravel(), c18.ravel(), v18.ravel().astype(float)), -_INF, cl.capacity.ravel().astype(float))
    # (17), (19): sum_i b_i span[i, c] <= min(e_s(c, parent), e_s(parent, c))
    link_cap = np.array([min(float(cl.bandwidth[lay.up[c]]), float(cl.bandwidth[lay.down[c]]))
                         for c in tree_c.tolist()])
    bw = inst.bandwidth[jobs].astype(float)
    asm.add("eq19", n_c, lambda: [(c,) for c in tree_c.tolist()],
            (np.tile(np.arange(n_c), n_j), span_col.ravel(), np.repeat(bw, n_c)), -_INF, link_cap)

    def grid(*axes):
        return lambda: list(itertools.product(*axes))

    spec = [("chi", slice(o_chi, o_rho), lambda: [(jl[j], k) for j, k in zip(k_job.tolist(), kl, strict=True)]),
            ("rho", slice(o_rho, o_y), lambda: [(i,) for i in jl]),
            ("y", slice(o_y, o_x), grid(jl, range(n_s))),
            ("x", slice(o_x, o_in), grid(jl, range(n_s))),
            ("inside", slice(o_in, o_xb), grid(jl, tree_c.tolist())),
            ("xbelow", slice(o_xb, o_xs), grid(jl, tree_c.tolist())),
            ("xsum", slice(o_xs, o_out), lambda: [(i,) for i in jl]),
            ("outside", slice(o_out, o_span), grid(jl, tree_c.tolist())),
            ("span", slice(o_span, n_cols), grid(jl, tree_c.tolist()))]
    col_map = row_drop = None
    meta: dict = {"layout": lay}
    if classes:
        if not relax:
            raise ValueError("classes=True folds the LP relaxation; the ILP has no symmetric optimum to fold to")
        rep = server_classes(cl, lay)
        meta["rep"] = rep
        col_map, row_drop = _fold_classes(rep, n_j, n_s, n_r, tree_c, cpos, srv_c, pairs, asm,
                                          {"y": o_y, "x": o_x, "inside": o_in, "xbelow": o_xb, "outside": o_out,
                                           "span": o_span}, n_cols)
    cost, lo, hi, a, rlo, rhi, cblocks, rblocks = asm.finish(cost, col_lower, col_upper,
                                                             np.zeros(n_cols, dtype=bool), spec, col_map=col_map,
                                                             row_drop=row_drop)
    return MatrixLP(f"gvne-tree-t{problem.t}" + ("-classes" if classes else ""), True, cost, lo, hi, a, rlo, rhi,
                    cblocks, rblocks, "tree", meta,
                    None if relax else _integer_columns(cost.size, cblocks, ("xbelow", "xsum")))


GVNE_INDEX_NAMES = {"chi": ("K.0", "K.1"), "rho": ("I",), "y": ("I", "S"), "x": ("I", "S"), "inside": ("I", "C"),
                    "outside": ("I", "C"), "span": ("I", "C"), "xbelow": ("I", "C"), "xsum": ("I",)}
"""The index sets of the tree form's variables, as the Pyomo model names them (tested)."""


def gvne_model_arrays(inst, relax: bool = False, slot: int | None = None, form: str = "auto") -> MatrixLP:
    """The registered model ``gvne`` (slot ``slot``, no earlier allocation) as arrays:
    :func:`build_gvne_matrix` with the Pyomo model's index names and value shapes, what ``clusteropt
    solve / export --model gvne`` hand to the solver.  The tree form only: a flow-form model (a
    cluster that is no tree, or ``form="flow"``) raises :class:`~clusteropt.models.matrix.NoArrayForm`.
    """
    if form not in ("auto", "flow", "tree"):
        raise ValueError(f"form = {form!r}; expected 'auto', 'flow' or 'tree'")
    if form == "flow" or not inst.cluster.is_tree():
        raise NoArrayForm("the G-VNE arrays are the tree form and this model is the flow form (a cluster that "
                          "is no tree, or form='flow'): build the Pyomo model (arrays=False; CLI: --form model "
                          "or auto)")
    lp = build_gvne_matrix(slot_problem(inst, inst.horizon if slot is None else int(slot)), relax=relax)
    lp.index_names.update(GVNE_INDEX_NAMES)
    size = {b.name: b.positions.size for b in lp.col_blocks}
    n_j = size["rho"]
    n_c = size["inside"] // n_j if n_j else len(tree_layout(inst.cluster).parent)
    lp.shapes.update({"y": (n_j, inst.cluster.n_servers), "x": (n_j, inst.cluster.n_servers),
                      **dict.fromkeys(("inside", "outside", "span", "xbelow"), (n_j, n_c))})
    return lp


def capacity_relaxation(lp: MatrixLP) -> MatrixLP:
    """The ring-selection LP with only its ``chi``, ``rho``, ``y`` columns and rows (13), ``ring_size``
    and (16)+(18): every link and ring-crossing row of (9), (19) dropped.

    A relaxation of :func:`build_gvne_matrix`'s LP (``lp``, either with or without ``classes``):
    its optimum is at least the LP's, and equal to it when its solution extends to a feasible point
    of ``lp`` (:func:`extend_capacity_solution`, :func:`certify_extension`), because the objective
    reads ``chi`` only.  ``J (S + kappa)`` columns instead of about ``6 J S``.

    Examples
    --------
    >>> from clusteropt.instances.gadget.instance import gadget_preset
    >>> from clusteropt.models.gadget.gvne import slot_problem
    >>> lp = build_gvne_matrix(slot_problem(gadget_preset("small", jobs=3, seed=0), t=20))
    >>> sub = capacity_relaxation(lp)
    >>> [b.name for b in sub.col_blocks], [b.name for b in sub.row_blocks]
    (['chi', 'rho', 'y'], ['eq13', 'ring_size', 'eq18'])
    """
    keep_cols = ("chi", "rho", "y")
    keep_rows = ("eq13", "ring_size", "eq18")
    cblocks = [b for b in lp.col_blocks if b.name in keep_cols]
    rblocks = [b for b in lp.row_blocks if b.name in keep_rows]
    cols = np.sort(np.concatenate([b.positions[b.positions >= 0] for b in cblocks]))
    rows = np.sort(np.concatenate([b.positions[b.positions >= 0] for b in rblocks]))
    inv_c = np.full(lp.n_cols, -1)
    inv_c[cols] = np.arange(cols.size)
    inv_r = np.full(lp.n_rows, -1)
    inv_r[rows] = np.arange(rows.size)
    a = sp.csc_array(sp.csr_array(lp.a)[rows][:, cols])
    outside = sp.csr_array(lp.a)[rows].nnz - a.nnz
    if outside:
        raise ValueError(f"capacity_relaxation: {outside} nonzeros of the kept rows lie in dropped columns")

    def remap(blocks, inv):
        return tuple(Block(b.name, np.where(b.positions >= 0, inv[np.maximum(b.positions, 0)], -1), b.make_keys)
                     for b in blocks)

    return MatrixLP(lp.name + "-capacity", lp.maximize, lp.cost[cols], lp.col_lower[cols], lp.col_upper[cols], a,
                    lp.row_lower[rows], lp.row_upper[rows], remap(cblocks, inv_c), remap(rblocks, inv_r), lp.form,
                    dict(lp.meta))


def extend_capacity_solution(problem: SlotProblem, lp: MatrixLP, sub: MatrixLP, x_sub) -> np.ndarray:
    """A point of ``lp`` from a solution of ``sub = capacity_relaxation(lp)``: ``chi``, ``rho``,
    ``y`` as given, and the rest at the smallest values its rows allow: ``x = y / ub`` (Eq. (5)),
    ``inside`` the largest ``x`` below a node, ``xbelow`` / ``xsum`` the sums,
    ``outside = (xsum - xbelow) / |S|`` and ``span = max(0, inside + outside - 1)``.  Whether it is
    feasible (the link rows (19)) is for :func:`certify_extension` to say.
    """
    cl = problem.inst.cluster
    lay = lp.meta["layout"]
    n_j, n_s = problem.jobs.size, cl.n_servers
    tree_c = sorted(lay.parent)
    sub_vals = sub.values(x_sub)
    y = np.nan_to_num(sub_vals["y"]).reshape(n_j, n_s)
    ub = np.nan_to_num(sub.values(sub.col_upper)["y"]).reshape(n_j, n_s)  # Eq. (5)'s bound, as the LP has it
    rep = lp.meta.get("rep")
    if rep is not None:  # members share their representative's copy
        y, ub = y[:, rep], ub[:, rep]
    with np.errstate(invalid="ignore", divide="ignore"):
        x = np.where(ub > 0, np.minimum(y / np.where(ub > 0, ub, 1.0), 1.0), 0.0)
    n_nodes = cl.n_nodes
    inside = np.zeros((n_j, n_nodes))
    below = np.zeros((n_j, n_nodes))
    for node in reversed(preorder(lay)):
        own = x[:, node] if node < n_s else np.zeros(n_j)
        kids = list(lay.children[node])
        inside[:, node] = np.maximum(own, inside[:, kids].max(axis=1)) if kids else own
        below[:, node] = own + (below[:, kids].sum(axis=1) if kids else 0.0)
    xsum = below[:, lay.root]
    tc = np.asarray(tree_c, dtype=np.int64)
    outside = np.clip((xsum[:, None] - below[:, tc]) / n_s, 0.0, 1.0)
    span = np.maximum(0.0, inside[:, tc] + outside - 1.0)
    full = {"chi": sub_vals["chi"], "rho": sub_vals["rho"], "y": y.ravel(), "x": x.ravel(),
            "inside": inside[:, tc].ravel(), "xbelow": below[:, tc].ravel(), "xsum": xsum,
            "outside": outside.ravel(), "span": span.ravel()}
    out = np.zeros(lp.n_cols)
    for b in lp.col_blocks:
        on = b.positions >= 0
        out[b.positions[on]] = np.nan_to_num(np.asarray(full[b.name], dtype=float))[on]
    return out


def certify_extension(lp: MatrixLP, x, *, tol: float = 1e-7) -> tuple[bool, float]:
    """Whether ``x`` is a feasible point of ``lp`` (every row and column bound, up to ``tol``
    relative to ``max(1, |bound|)``), and its largest relative violation.
    """
    x = np.asarray(x, dtype=float)
    act = lp.a @ x

    def worst(excess, ref):
        rel = excess / np.maximum(1.0, np.abs(ref))
        return float(rel.max()) if rel.size else 0.0

    lo = np.isfinite(lp.row_lower)
    hi = np.isfinite(lp.row_upper)
    upper = np.where(np.isfinite(lp.col_upper), lp.col_upper, 1.0)
    viol = max(worst(lp.row_lower[lo] - act[lo], lp.row_lower[lo]),
               worst(act[hi] - lp.row_upper[hi], lp.row_upper[hi]),
               worst(lp.col_lower - x, lp.col_lower), worst(x - lp.col_upper, upper))
    return viol <= tol, max(viol, 0.0)


def _fold_classes(rep, n_j, n_s, n_r, tree_c, cpos, srv_c, pairs, asm, offsets, n_cols):
    """Column map and dropped rows of :func:`build_gvne_matrix`'s ``classes=True`` (pre-finish
    numbering): every member's column goes to its representative's, every member's own row is left
    out (after the merge it repeats the representative's).
    """
    member = np.flatnonzero(rep != np.arange(n_s))  # servers that are not their class's representative
    col_map = np.arange(n_cols)
    js = np.arange(n_j)[:, None]
    for name in ("y", "x"):
        o = offsets[name]
        col_map[(o + js * n_s + member[None, :]).ravel()] = (o + js * n_s + rep[member][None, :]).ravel()
    n_c = tree_c.size
    q_member = np.array([cpos[int(s)] for s in member.tolist()], dtype=np.int64)
    q_rep = np.array([cpos[int(rep[s])] for s in member.tolist()], dtype=np.int64)
    for name in ("inside", "xbelow", "outside", "span"):
        o = offsets[name]
        col_map[(o + js * n_c + q_member[None, :]).ravel()] = (o + js * n_c + q_rep[None, :]).ravel()
    is_member = np.zeros(max(n_s, int(tree_c.max()) + 1 if tree_c.size else 0) + 1, dtype=bool)
    is_member[member] = True
    per_block = {
        "eq5": np.tile(is_member[:n_s], n_j), "used": np.tile(is_member[:n_s], n_j),
        "inside_srv": np.tile(is_member[srv_c], n_j),
        "inside_up": np.tile(is_member[np.array([d for _, d in pairs], dtype=np.int64)], n_j),
        "xbelow_def": np.tile(is_member[tree_c], n_j), "outside_def": np.tile(is_member[tree_c], n_j),
        "span_def": np.tile(is_member[tree_c], n_j), "eq18": np.repeat(is_member[:n_s], n_r),
        "eq19": is_member[tree_c],
    }
    drop = []
    for name, count, _ in asm.row_blocks:
        mask = per_block.get(name)
        drop.append(np.zeros(count, dtype=bool) if mask is None else mask)
    return col_map, np.concatenate(drop) if drop else np.zeros(0, dtype=bool)


def _integer_columns(n_cols: int, blocks, continuous) -> np.ndarray:
    """Integer flags of an ILP's kept columns: all but the components named in ``continuous``."""
    out = np.ones(n_cols, dtype=bool)
    for b in blocks:
        if b.name in continuous:
            out[b.positions[b.positions >= 0]] = False
    return out


_KINDS = ("lam", "own", "mu")  # TreeJob's variable kinds; "own" is the Pyomo component omega
_COMPONENT = {"lam": "lam", "own": "omega", "mu": "mu"}


class _Template:
    """One job's part of the augmented tree LP as arrays, shared by the jobs with the same ring
    size and per-server fits (the bookkeeping is :class:`TreeJob`'s, so the rows are the Pyomo
    builder's).
    """

    def __init__(self, tj: TreeJob):
        self.tj = tj
        self.feasible = tj.feasible
        if not tj.feasible:
            return
        names = tj.names
        kind = np.array([_KINDS.index(key[0]) for key in names], dtype=np.int64)
        self.kind = kind
        self.count = np.bincount(kind, minlength=3)
        rank = np.zeros(kind.size, dtype=np.int64)
        for q in range(3):
            on = kind == q
            rank[on] = np.arange(int(on.sum()))
        self.rank = rank
        r, v, w = [], [], []
        for n, (_key, terms, _rhs) in enumerate(tj.rows):
            for var, coef in terms:
                r.append(n)
                v.append(var)
                w.append(coef)
        self.r = np.array(r, dtype=np.int64)
        self.v = np.array(v, dtype=np.int64)
        self.w = np.array(w, dtype=float)
        # the kinds in the order the compiler first meets them in these rows (the column order)
        seen = kind[self.v]
        self.first_kinds = [int(q) for q in seen[np.sort(np.unique(seen, return_index=True)[1])]]
        self.row_x = np.array([n for n, (_k, _t, rhs) in enumerate(tj.rows) if rhs == "x"], dtype=np.int64)
        self.n_rows = len(tj.rows)
        self.row_keys = [key for key, _t, _r in tj.rows]
        # (16): omega[s, b] with b >= 1 loads server s with b workers
        own = [(q, key[1], key[2]) for q, key in enumerate(names) if key[0] == "own" and key[2] >= 1]
        self.own_var = np.array([q for q, _, _ in own], dtype=np.int64)
        self.own_srv = np.array([s for _, s, _ in own], dtype=np.int64)
        self.own_b = np.array([b for _, _, b in own], dtype=float)
        # (17): lam[c, b] with 1 <= b <= kappa - 1: the ring crosses the link above c
        lam = [(q, key[1]) for q, key in enumerate(names)
               if key[0] == "lam" and tj.k >= 2 and 1 <= key[2] <= min(tj.cap[key[1]], tj.k - 1)]
        self.lam_var = np.array([q for q, _ in lam], dtype=np.int64)
        self.lam_node = np.array([c for _, c in lam], dtype=np.int64)


class _JobValues(Mapping):
    """``comp[(i, *key)]`` -> the column value of job i's variable ``(kind, *key)``."""

    def __init__(self, kind: str, tjs: dict, vals: dict):
        self._kind, self._tjs, self._vals = kind, tjs, vals

    def __getitem__(self, key):
        i = key[0]
        return float(self._vals[i][self._tjs[i].index[(self._kind, *key[1:])]])

    def __iter__(self):
        for i, tj in self._tjs.items():
            if tj.feasible:
                for key in tj.names:
                    if key[0] == self._kind:
                        yield (i, *key[1:])

    def __len__(self):
        return sum(1 for _ in self)


class EmbeddingSolution:
    """A solved augmented LP, read like the solved Pyomo model of :func:`build_embedding_lp`
    (what :func:`~clusteropt.models.gadget.embedding.decompose_embedding` needs): ``form``,
    ``layout``, ``kappa``, ``jobs_`` and the values ``x[i]``, ``lam[i, n, k]``, ``omega[i, s, k]``,
    ``mu[i, p, j, a, b]`` by their Pyomo index tuples (plain floats).
    """

    def __init__(self, lp: MatrixLP, col_value):
        meta = lp.meta
        x = np.asarray(col_value, dtype=float)
        self.form = "tree"
        self.layout = meta["layout"]
        self.kappa = dict(meta["kappa"])
        self.jobs_ = meta["jobs_"]
        xb = next(b for b in lp.col_blocks if b.name == "x")
        self.x = {i: (float(x[p]) if p >= 0 else 0.0) for i, p in zip(meta["job_list"], xb.positions.tolist(),
                                                                      strict=True)}
        vals = {i: x[cols] for i, cols in meta["job_cols"].items()}
        self.lam = _JobValues("lam", self.jobs_, vals)
        self.omega = _JobValues("own", self.jobs_, vals)
        self.mu = _JobValues("mu", self.jobs_, vals)


def build_embedding_matrix(problem: SlotProblem, kappa) -> MatrixLP:
    """The augmented LP of Alg. 2 line 4, tree form, as arrays: the model of
    ``build_embedding_lp(problem, kappa, form="tree")`` (module docstring).

    Columns (Pyomo order): ``x[i]`` (``rho_i`` of Eq. (13)), then ``mu``, ``lam`` and ``omega``
    (Eq. (14)) in the order the compiler first meets them in the rows (on the fat-trees of
    Sec. VI: this order).
    Rows: ``consistency`` (the subtree distributions), ``eq18`` (Eqs. (16), (18)), ``eq19``
    (Eqs. (17), (19)).  A job that cannot hold its ``kappa_i`` workers has ``x`` fixed at 0 in
    the Pyomo model: here it has no column.

    Examples
    --------
    >>> from clusteropt.instances.gadget.instance import gadget_preset
    >>> from clusteropt.models.gadget.gvne import slot_problem
    >>> p = slot_problem(gadget_preset("small", jobs=3, seed=0), t=20)
    >>> lp = build_embedding_matrix(p, {int(i): int(k) for i, k in zip(p.jobs, p.kmax)})
    >>> lp.col_names()[:4], lp.row_names()[0]
    (['x[0]', 'x[1]', 'x[2]', 'mu[0,8,1,0,0]'], 'consistency[0,chain_in,8,1,0]')
    """
    kappa = check_kappa(problem, kappa)
    inst = problem.inst
    cl = inst.cluster
    if not cl.is_tree():
        raise ValueError("the matrix builder needs a tree substrate (Cluster.is_tree() is False); "
                         "use build_embedding_lp(form='extended')")
    lay = tree_layout(cl)
    n_s, n_r = cl.n_servers, len(cl.resources)
    jobs = sorted(kappa)
    pos = {int(i): j for j, i in enumerate(problem.jobs.tolist())}
    templates: dict[tuple, _Template] = {}
    tjs: dict[int, TreeJob] = {}
    job_t: list[_Template] = []
    for i in jobs:
        k = kappa[i]
        sig = (k, tuple(np.minimum(server_fit(problem, i), k).tolist()))
        tmpl = templates.get(sig)
        if tmpl is None:
            tmpl = templates[sig] = _Template(TreeJob(problem, lay, i, k))
        tj = copy.copy(tmpl.tj)
        tj.i = i
        tjs[i] = tj
        job_t.append(tmpl)
        if not tmpl.feasible:
            log.info("slot %d: job %d cannot hold %d workers anywhere; x fixed at 0", problem.t, i, k)
    feas = [j for j, t in enumerate(job_t) if t.feasible]
    # the compiler meets x in the objective, then the other components in the rows' term order
    order: list[int] = []
    for j in feas:
        order += [q for q in job_t[j].first_kinds if q not in order]
        if len(order) == 3:
            break
    order += [q for q in (1, 0, 2) if q not in order]  # met only in eq18 (omega), eq19 (lam), or nowhere
    n_x = len(jobs)
    counts = np.array([job_t[j].count if job_t[j].feasible else np.zeros(3, np.int64) for j in range(n_x)]
                      ).reshape(n_x, 3)
    totals = counts.sum(axis=0)
    start = np.zeros(3, dtype=np.int64)
    acc = n_x
    for q in order:
        start[q] = acc
        acc += totals[q]
    n_cols = int(acc)
    job_off = np.cumsum(counts, axis=0) - counts  # (J, 3): the job's first index inside each component
    cost = np.zeros(n_cols)
    cost[:n_x] = [float(problem.pi[pos[i]][kappa[i] - 1]) for i in jobs]
    col_fixed = np.zeros(n_cols, dtype=bool)
    col_fixed[:n_x] = [not t.feasible for t in job_t]
    asm = Assembler(n_cols)
    # consistency rows, job by job; root rows "= x[i]" get -x[i]
    cr, cc, cv, row_keys, job_cols = [], [], [], [], {}
    base = 0
    crossing = {}
    for c in lay.parent:
        crossing[c] = (lay.up[c], lay.down[c])
    r18, c18, v18, r19, c19, v19 = [], [], [], [], [], []
    pw_all, bw_all = inst.per_worker, inst.bandwidth
    for j in feas:
        t, i = job_t[j], jobs[j]
        cols = start[t.kind] + job_off[j, t.kind] + t.rank
        job_cols[i] = cols
        cr += [t.r + base, t.row_x + base]
        cc += [cols[t.v], np.full(t.row_x.size, j, dtype=np.int64)]
        cv += [t.w, -np.ones(t.row_x.size)]
        row_keys.append((i, t))
        base += t.n_rows
        pw = pw_all[i].astype(float)
        r18.append((t.own_srv[:, None] * n_r + np.arange(n_r)[None, :]).ravel())
        c18.append(np.repeat(cols[t.own_var], n_r))
        v18.append((pw[None, :] * t.own_b[:, None]).ravel())
        if t.lam_var.size:
            links = np.array([crossing[int(c)] for c in t.lam_node.tolist()], dtype=np.int64)  # (n, 2)
            r19.append(links.ravel())
            c19.append(np.repeat(cols[t.lam_var], 2))
            v19.append(np.full(2 * t.lam_var.size, float(bw_all[i])))

    def consistency_keys():
        return [(i, *key) for i, t in row_keys for key in t.row_keys]

    def cat(parts, dtype):
        return np.concatenate(parts) if parts else np.zeros(0, dtype)

    asm.add("consistency", base, consistency_keys, (cat(cr, np.int64), cat(cc, np.int64), cat(cv, float)),
            0.0, 0.0)
    asm.add("eq18", n_s * n_r, lambda: [(s, r) for s in range(n_s) for r in range(n_r)],
            (cat(r18, np.int64), cat(c18, np.int64), cat(v18, float)), -_INF, cl.capacity.ravel().astype(float))
    asm.add("eq19", cl.n_links, lambda: [(e,) for e in range(cl.n_links)],
            (cat(r19, np.int64), cat(c19, np.int64), cat(v19, float)), -_INF, cl.bandwidth.astype(float))

    def kind_keys(q):
        name = _KINDS[q]
        return lambda: [(i, *key[1:]) for i in jobs if tjs[i].feasible for key in tjs[i].names if key[0] == name]

    spec = [("x", slice(0, n_x), lambda: [(i,) for i in jobs])]
    spec += [(_COMPONENT[_KINDS[q]], slice(int(start[q]), int(start[q] + totals[q])), kind_keys(q)) for q in order]
    cost, lo, hi, a, rlo, rhi, cblocks, rblocks = asm.finish(cost, np.zeros(n_cols), np.ones(n_cols), col_fixed,
                                                             spec)
    # map every job's variables to their final columns (no feasible job's column is dropped: all are in rows)
    remap = np.full(n_cols, -1, dtype=np.int64)
    for b, (_name, sl, _keys) in zip(cblocks, spec, strict=True):
        remap[sl] = b.positions
    meta = {"layout": lay, "kappa": kappa, "jobs_": tjs, "job_list": jobs,
            "job_cols": {i: remap[cols] for i, cols in job_cols.items()}}
    return MatrixLP(f"embedding-tree-t{problem.t}", True, cost, lo, hi, a, rlo, rhi, cblocks, rblocks, "tree",
                    meta)


def allocation_from_matrix(problem: SlotProblem, lp: MatrixLP, x, *, tol: float = 1e-6, paths=None):
    """Read an integral solution ``x`` of :func:`build_gvne_matrix` into a ``SlotAllocation``,
    as :func:`~clusteropt.models.gadget.gvne.allocation_from_solution` reads the Pyomo model.

    Raises ``ValueError`` when a ``y`` is fractional beyond ``tol`` (naming it).
    """
    from clusteropt.models.gadget.gvne import tree_allocation

    y = lp.values(x)["y"].reshape(problem.jobs.size, problem.inst.cluster.n_servers)
    y = np.nan_to_num(y, nan=0.0)  # a y in no row (it fits nowhere) is not a column: 0 workers
    off = np.abs(y - np.round(y)) > tol
    if off.any():
        j, s = (int(v) for v in np.argwhere(off)[0])
        raise ValueError(f"y[{int(problem.jobs[j])},{s}] = {y[j, s]}: the solution is fractional; round it first "
                         "(clusteropt.rounding)")
    return tree_allocation(problem, np.round(y).astype(np.int64), lp.meta["layout"], paths=paths)


