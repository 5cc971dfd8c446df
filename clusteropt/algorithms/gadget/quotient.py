"""A fat-tree as a tree: GADGET's tree routes on a k-ary fat-tree, and the lift of their rings back.

The tree form of the per-slot model (:mod:`clusteropt.models.gadget.gvne`), its array builder and the
column generation of Alg. 2 (:mod:`clusteropt.models.gadget.colgen`) need a tree: one path between two
servers. A k-ary fat-tree (:func:`clusteropt.instances.gadget.instance.k_ary_fat_tree`, Al-Fares et al. 2008)
has ``(k/2)^2`` shortest paths between pods, and the general-topology LP
(:mod:`clusteropt.models.gadget.extended`) has ``kappa |S| |E|`` arc variables per job, servers times
links (``benchmarks/gadget_fattree`` sets the two side by side). This module puts the tree routes on a
fat-tree.

**The quotient tree** (:func:`quotient_tree`). Group the switches (:func:`fat_tree_groups`: every edge
switch alone, the aggregation switches of one pod together, all core switches together; servers stay
themselves), make every group one node, and merge the links between two groups into one link per
direction whose bandwidth is the sum of theirs. For a fat-tree the result is a tree: server - edge
switch - pod - core.

**Exact for the LP** (a choice of ours, proved here; the paper has no fat-tree route). Let the links
of every merged group have one bandwidth (``k_ary_fat_tree``: ``host_bw`` at the servers,
``fabric_bw`` elsewhere) and the slot start from free links (GADGET decides every slot afresh). (a)
Any splittable routing on the fat-tree, with every node replaced by its group, is a routing on the
quotient that loads each merged link with the sum of its members' loads, so within the merged
bandwidth (a walk that is not the tree path, e.g. up to the core and back into the same pod, only
loads more than the tree path does): the quotient's optimum is at least the fat-tree's. (b)
Conversely, route a quotient solution by even splits: an edge switch sends its upward traffic
``1/(k/2)`` to each aggregation switch of its pod, each of those sends its share ``1/(k/2)`` to each
of its core switches, and downward traffic comes back the mirrored way. Then every fat-tree link
carries ``1/m`` of its merged link's load (``m`` its members), within its own bandwidth. So the
ring-selection and augmented LPs on the quotient have the optimum of the splittable LPs on the
fat-tree. For the integral problem the paper routes every ring edge on one path (Eq. (7)); (a) still
holds, so the quotient's ILP bounds the fat-tree's from above.

**The lift** (:func:`lift_allocation`): an allocation on the quotient keeps its workers and ring
orders; each ring edge, a sequence of groups on the quotient, gets a path of the fat-tree through the
members of these groups, ``b_i`` reserved on it. First greedily: jobs in order of decreasing ``b_i``
(then index), each ring edge on its widest path (the largest least residual bandwidth, by a
layer-by-layer dynamic program). The merged capacities only bound the members' in sum, so a ring edge
may find every member path too full (the parallel links' residuals fragmented). Then the whole slot is
assigned again by a small MILP (``scipy.optimize.milp``, HiGHS): one binary per ring edge and
candidate path, one per job (kept or not), ``sum_p x = y_i`` for every ring edge of job i, every link
within its bandwidth, maximizing the kept jobs' ``weight`` (the slot's utility gain of each job, from
the caller). A job the MILP cannot keep is dropped from the slot: its workers and ring removed and the
job listed in the result, so the caller records it (never hidden). Requirement: ``b_i`` at most the
bandwidth of every member link a merged link has (:func:`check_bandwidths`; otherwise the merged link
admits a ring edge no member can carry). What is kept passes :mod:`clusteropt.verify.gadget` on the
fat-tree; the tests check it there.

Examples
--------
>>> from clusteropt.instances.gadget.instance import k_ary_fat_tree
>>> fat = k_ary_fat_tree(4, seed=0)
>>> q = quotient_tree(fat, fat_tree_groups(fat))
>>> q.tree.n_servers, q.tree.n_switches, q.tree.is_tree(), q.uniform
(16, 13, True, True)
>>> sorted(set(q.tree.bandwidth.tolist()))   # host links, edge - pod (2 x 400), pod - core (4 x 400)
[100.0, 800.0, 1600.0]
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

from clusteropt.decisions.gadget import Ring, SlotAllocation
from clusteropt.instances.gadget.instance import Cluster

__all__ = ["LiftResult", "QuotientTree", "check_bandwidths", "fat_tree_groups", "lift_allocation", "quotient_tree"]

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, eq=False)
class QuotientTree:
    """A cluster, its quotient tree and the correspondence (module docstring).

    Attributes
    ----------
    cluster : Cluster
        The original substrate (e.g. a fat-tree).
    tree : Cluster
        The quotient: servers ``0 .. S-1`` as in ``cluster``, one switch per group, merged links.
    node_group : int array (V,)
        Quotient node of every node of ``cluster``.
    members : tuple of int arrays
        ``members[e]``: the links of ``cluster`` merged into quotient link ``e``.
    uniform : bool
        Every quotient link's members have one bandwidth (the LP exactness condition).
    """

    cluster: Cluster
    tree: Cluster
    node_group: np.ndarray
    members: tuple[np.ndarray, ...]
    uniform: bool


def fat_tree_groups(cluster: Cluster) -> np.ndarray:
    """The switch groups of a fat-tree (or a leaf-spine), as one label per node of ``cluster``.

    Read from the links, not from node numbers: every server has one neighbour, its edge switch;
    edge switches are those neighbours (each its own group); a switch linked to edge switches is an
    aggregation switch, grouped with those linked to the same set of edge switches (one pod);
    every other switch is a core switch, all in one group.  Servers get labels ``0 .. S-1``,
    groups ``S, S+1, ..`` in order of their smallest node.  Raises ``ValueError`` naming the node
    when a server has other than one neighbour or a server is linked to a server.

    >>> from clusteropt.instances.gadget.instance import k_ary_fat_tree
    >>> g = fat_tree_groups(k_ary_fat_tree(4, seed=0))
    >>> g[16:24].tolist(), g[24:32].tolist(), g[32:].tolist()   # edge, aggregation, core switches
    ([16, 17, 18, 19, 20, 21, 22, 23], [24, 24, 25, 25, 26, 26, 27, 27], [28, 28, 28, 28])
    """
    n_srv, n_nodes = cluster.n_servers, cluster.n_nodes
    nbrs: list[set[int]] = [set() for _ in range(n_nodes)]
    for u, v in cluster.links.tolist():
        nbrs[u].add(v)
        nbrs[v].add(u)
    edge: set[int] = set()
    for s in range(n_srv):
        if len(nbrs[s]) != 1:
            raise ValueError(f"server {s} is linked to {len(nbrs[s])} nodes; a fat-tree server has one, its "
                             "edge switch")
        (e,) = nbrs[s]
        if e < n_srv:
            raise ValueError(f"server {s} is linked to server {e}; a fat-tree server is linked to a switch")
        edge.add(e)
    key: dict[int, tuple] = {}
    for w in range(n_srv, n_nodes):
        if w in edge:
            key[w] = ("edge", w)
        else:
            below = tuple(sorted(nbrs[w] & edge))
            key[w] = ("agg", below) if below else ("core",)
    out = np.arange(n_nodes, dtype=np.int64)
    label: dict[tuple, int] = {}
    for w in range(n_srv, n_nodes):
        out[w] = label.setdefault(key[w], n_srv + len(label))
    return out


def quotient_tree(cluster: Cluster, groups) -> QuotientTree:
    """Merge the switches of each group and the links between two groups (module docstring).

    Parameters
    ----------
    cluster : Cluster
    groups : int array (V,)
        A label per node: servers ``0 .. S-1`` must be labelled ``0 .. S-1`` (each itself), switch
        groups ``S, S+1, ..`` without gaps (as :func:`fat_tree_groups` returns them).

    Raises ``ValueError`` when the labels do not have that shape, when a link joins two switches of
    one group, or when the quotient is not a tree.
    """
    g = np.asarray(groups, dtype=np.int64)
    n_srv, n_nodes = cluster.n_servers, cluster.n_nodes
    if g.shape != (n_nodes,):
        raise ValueError(f"groups has shape {g.shape}; expected ({n_nodes},), a label per node")
    if not np.array_equal(g[:n_srv], np.arange(n_srv)):
        bad = int(np.flatnonzero(g[:n_srv] != np.arange(n_srv))[0])
        raise ValueError(f"groups[{bad}] = {g[bad]}; expected {bad} (servers keep their own labels)")
    switch_labels = np.unique(g[n_srv:])
    if switch_labels.size and not np.array_equal(switch_labels, np.arange(n_srv, n_srv + switch_labels.size)):
        raise ValueError(f"switch groups are labelled {switch_labels.tolist()[:5]}...; expected {n_srv}, "
                         f"{n_srv + 1}, .. without gaps")
    tail, head = g[cluster.links[:, 0]], g[cluster.links[:, 1]]
    inside = np.flatnonzero(tail == head)
    if inside.size:
        k = int(inside[0])
        u, v = cluster.links[k].tolist()
        raise ValueError(f"links[{k}] = ({u}, {v}) joins two switches of group {int(tail[k])}; a group's "
                         "switches must not be linked to each other")
    pair = tail * (n_srv + switch_labels.size) + head
    keys, inverse = np.unique(pair, return_inverse=True)
    bandwidth = np.bincount(inverse, weights=cluster.bandwidth, minlength=keys.size)
    links = np.stack([keys // (n_srv + switch_labels.size), keys % (n_srv + switch_labels.size)], axis=1)
    order = np.argsort(inverse, kind="stable")
    members = tuple(np.split(order, np.cumsum(np.bincount(inverse, minlength=keys.size))[:-1]))
    uniform = all(np.ptp(cluster.bandwidth[m]) <= 1e-9 * max(1.0, float(cluster.bandwidth[m].max()))
                  for m in members)
    tree = Cluster(capacity=cluster.capacity, links=links, bandwidth=bandwidth, n_switches=int(switch_labels.size),
                   resources=cluster.resources, rack=cluster.rack)
    if not tree.is_tree():
        raise ValueError("the quotient of the cluster by these groups is not a tree (a fat-tree's groups: "
                         "fat_tree_groups)")
    return QuotientTree(cluster, tree, g, members, bool(uniform))


def check_bandwidths(q: QuotientTree, bandwidth) -> None:
    """Raise ``ValueError`` naming the first job whose ``b_i`` exceeds a member link of a merged
    link (module docstring: the quotient would admit a ring edge that no member can carry).

    >>> from clusteropt.instances.gadget.instance import k_ary_fat_tree
    >>> fat = k_ary_fat_tree(4, fabric_bw=50, seed=0)
    >>> check_bandwidths(quotient_tree(fat, fat_tree_groups(fat)), [40, 60])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: bandwidth[1] = 60; expected at most 50, the bandwidth of link 4 of the cluster, ...
    """
    b = np.asarray(bandwidth, dtype=float)
    if b.size == 0:
        return
    worst = int(np.argmax(b))
    for e, m in enumerate(q.members):
        if m.size >= 2:
            low = int(m[np.argmin(q.cluster.bandwidth[m])])
            if b[worst] > q.cluster.bandwidth[low] + 1e-9:
                i = int(np.flatnonzero(b > q.cluster.bandwidth[low] + 1e-9)[0])
                raise ValueError(f"bandwidth[{i}] = {b[i]:g}; expected at most {q.cluster.bandwidth[low]:g}, the "
                                 f"bandwidth of link {low} of the cluster, one of {m.size} parallel links merged "
                                 f"into link {e} of the quotient tree")


@dataclasses.dataclass
class LiftResult:
    """:func:`lift_allocation`'s result: the allocation on the original cluster, the jobs it
    dropped (no path assignment could keep them), whether the greedy sufficed or the MILP ran
    (``method``: ``"greedy"``, ``"milp"``, or ``"milp-incumbent"`` when the MILP stopped at its
    time limit and its incumbent was kept: it may drop jobs an optimum would keep) and the seconds
    it took.
    """

    allocation: SlotAllocation
    dropped: list[int]
    method: str
    seconds: float


def lift_allocation(q: QuotientTree, alloc: SlotAllocation, bandwidth, *, weight=None, tol: float = 1e-9,
                    time_limit: float = 60.0) -> LiftResult:
    """Route every ring of ``alloc`` (on ``q.tree``) on the original cluster (module docstring).

    Parameters
    ----------
    q : QuotientTree
    alloc : SlotAllocation
        Workers and rings on the quotient tree (ring paths are quotient link indices).
    bandwidth : array (I,)
        ``b_i`` of every job.
    weight : array (I,), optional
        What keeping job i is worth to the MILP (default 1 each); the caller passes the slot's
        utility gain of each job.
    tol : float
        Slack of the bandwidth comparison.
    time_limit : float
        Seconds for the MILP; it keeps its incumbent if stopped, and raises ``RuntimeError`` if it
        has none.

    Returns
    -------
    LiftResult
        Workers as in ``alloc`` except for dropped jobs (none of theirs), rings with paths of
        ``q.cluster``'s links.
    """
    import time

    start = time.perf_counter()
    cl = q.cluster
    b = np.asarray(bandwidth, dtype=float)
    mtail = [cl.links[m, 0].tolist() for m in q.members]
    mhead = [cl.links[m, 1].tolist() for m in q.members]
    mlink = [m.tolist() for m in q.members]
    order = sorted(alloc.rings, key=lambda j: (-b[j], j))
    residual = cl.bandwidth.astype(float).copy()
    rings: dict[int, Ring] = {}
    for i in order:
        ring = alloc.rings[i]
        paths: list[tuple[int, ...]] = []
        for k, qpath in enumerate(ring.paths):
            path = _widest(qpath, ring.servers[k], residual, mtail, mhead, mlink, b[i] - tol)
            if path is None:
                break
            residual[list(path)] -= b[i]
            paths.append(path)
        if len(paths) < len(ring.paths):
            break
        rings[i] = Ring(ring.servers, tuple(paths))
    method = "greedy"
    if len(rings) < len(order):
        method = "milp"
        w = np.ones(b.size) if weight is None else np.asarray(weight, dtype=float)
        rings, optimal = _assign_milp(q, alloc, b, w, mtail, mhead, mlink, order, tol, time_limit)
        method = "milp" if optimal else "milp-incumbent"
    workers = np.array(alloc.workers, copy=True)
    dropped = sorted(int(i) for i in order if i not in rings)
    workers[dropped] = 0
    if dropped:
        log.warning("quotient lift: %d job(s) have no fat-tree paths with their bandwidth left and are dropped "
                    "from the slot: %s", len(dropped), dropped[:10])
    return LiftResult(SlotAllocation(workers, rings), dropped, method, time.perf_counter() - start)


def _candidates(qpath, source: int, mtail, mhead, mlink) -> list[tuple[int, ...]]:
    """Every path of the original cluster along quotient path ``qpath`` from ``source``."""
    partial: list[tuple[int, tuple[int, ...]]] = [(source, ())]
    for e in qpath:
        out: dict[int, list[tuple[int, int]]] = {}
        for u, v, link in zip(mtail[e], mhead[e], mlink[e], strict=True):
            out.setdefault(u, []).append((v, link))
        partial = [(v, (*p, link)) for node, p in partial for v, link in out.get(node, ())]
    return [p for _, p in partial]


def _assign_milp(q, alloc, b, weight, mtail, mhead, mlink, order, tol,
                 time_limit) -> tuple[dict[int, Ring], bool]:
    """The path assignment MILP of the module docstring: the kept jobs' rings, and whether it was
    proved optimal (False: stopped at ``time_limit`` with an incumbent).
    """
    import scipy.sparse as sp
    from scipy.optimize import Bounds, LinearConstraint, milp

    n_links = q.cluster.n_links
    cols_job, cols_edge, cols_path = [], [], []  # per path column: job position, (job, ring edge), path
    for j, i in enumerate(order):
        ring = alloc.rings[i]
        for k, qpath in enumerate(ring.paths):
            for p in _candidates(qpath, ring.servers[k], mtail, mhead, mlink):
                cols_job.append(j)
                cols_edge.append((j, k))
                cols_path.append(p)
    n_y, n_x = len(order), len(cols_path)
    edge_ids = {e: r for r, e in enumerate(dict.fromkeys(cols_edge))}
    # rows: sum_p x[edge] - y[job] = 0 for every ring edge; sum b_i x over a link's paths <= bandwidth
    rows, cols, vals = [], [], []
    for c, e in enumerate(cols_edge):
        rows.append(edge_ids[e])
        cols.append(n_y + c)
        vals.append(1.0)
    for (j, _k), r in edge_ids.items():
        rows.append(r)
        cols.append(j)
        vals.append(-1.0)
    n_eq = len(edge_ids)
    for c, p in enumerate(cols_path):
        for link in p:
            rows.append(n_eq + link)
            cols.append(n_y + c)
            vals.append(float(b[order[cols_job[c]]]))
    a = sp.csr_array((vals, (rows, cols)), shape=(n_eq + n_links, n_y + n_x))
    upper = np.concatenate([np.zeros(n_eq), q.cluster.bandwidth + tol])
    lower = np.concatenate([np.zeros(n_eq), np.full(n_links, -np.inf)])
    cost = np.concatenate([-weight[order] - 1e-6, np.zeros(n_x)])  # every job worth keeping, even at gain 0
    res = milp(cost, constraints=LinearConstraint(a, lower, upper), integrality=np.ones(n_y + n_x),
               bounds=Bounds(0, 1), options={"time_limit": time_limit})
    if res.x is None:
        raise RuntimeError(f"quotient lift: the path assignment MILP found no solution ({res.message})")
    if res.status != 0:
        log.warning("quotient lift: the path assignment MILP stopped early (%s); keeping its incumbent",
                    res.message)
    x = np.round(res.x).astype(bool)
    rings: dict[int, Ring] = {}
    chosen: dict[tuple[int, int], tuple[int, ...]] = {}
    for c in np.flatnonzero(x[n_y:]).tolist():
        chosen[cols_edge[c]] = cols_path[c]
    for j, i in enumerate(order):
        if x[j]:
            ring = alloc.rings[i]
            rings[i] = Ring(ring.servers, tuple(chosen[j, k] for k in range(len(ring.paths))))
    return rings, res.status == 0


def _widest(qpath, source: int, residual: np.ndarray, mtail, mhead, mlink, need: float):
    """The widest path of the original cluster along quotient path ``qpath`` from ``source``, or
    None when its least residual is below ``need``.
    """
    best = {source: (np.inf, -1, -1)}  # node -> (width, link in, previous node)
    back = []
    for e in qpath:
        nxt: dict[int, tuple[float, int, int]] = {}
        for u, v, link in zip(mtail[e], mhead[e], mlink[e], strict=True):
            at = best.get(u)
            if at is None:
                continue
            width = min(at[0], residual[link])
            if width >= need and (v not in nxt or width > nxt[v][0]):
                nxt[v] = (width, link, u)
        if not nxt:
            return None
        back.append(nxt)
        best = nxt
    (node,) = best  # the quotient path ends at a server, which is its own group
    path = []
    for layer in reversed(back):
        _, link, node = layer[node]
        path.append(link)
    return tuple(reversed(path))
