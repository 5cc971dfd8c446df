"""GADGET (paper 000, Yu et al.): ring-all-reduce DL jobs on a GPU cluster, as data.

A :class:`Cluster` is the substrate graph of Sec. IV: servers with multi-resource capacities
``C_s^r`` (Eq. (4); ``g_s^{u,r}`` of Eq. (18)), switches, and directed links with bandwidth
``e_s^{u,v}`` (Eq. (19); the bottleneck ``B_min^p`` of Eq. (8) is the smallest on a path).
Nodes ``0 .. S-1`` are the servers, ``S .. S+W-1`` the switches.

A :class:`GadgetInstance` is a cluster, a horizon ``T`` and DL jobs: arrival slot ``a_i``
(1-based, Eq. (6)), most concurrent workers ``N_i`` (Eq. (2)), per-worker resources ``l_i^r``
(Eqs. (3)-(4)), limits ``F_i^r`` (Eq. (3)), ring bandwidth ``b_i`` (Eq. (8)), per-worker
efficiency ``zeta_i`` and a non-decreasing utility ``mu_i`` of ``zeta_i * (worker-slots)``
(the DDLJS objective).  The utilities (:data:`UTILITIES`):

* ``"sigmoid"``: ``lambda_1 / (1 + exp(-lambda_2 (x - lambda_3)))``, Sec. VI-1 (not concave);
* ``"sqrt"``: ``lambda_1 sqrt(x)``, "excessive training avoidance" (C sqrt(k), Sec. IV-3);
* ``"log"``: ``lambda_1 log(1 + x)``, proportional fairness (Sec. IV-3; ``1 + x`` keeps
  ``mu(0) = 0`` finite, the paper writes ``log(.)``);
* ``"quadratic"``: ``lambda_1 x - lambda_2 x^2 / 2``, the energy example (Sec. IV-3: a value
  per iteration minus a quadratic energy cost; it stops increasing at ``x = lambda_1 /
  lambda_2``, where a scheduler gains nothing from more workers).

Generators: :func:`fat_tree_cluster` (the paper's Sec. VI-1 cluster: 50 servers in 2-5 racks,
GPUs from {1, 2, 4, 8}, server-rack links 10-100 Gbps, rack-level links 200-3200 Gbps),
:func:`k_ary_fat_tree` (the standard k-ary fat-tree of Al-Fares et al., many paths, for scale),
:func:`random_gadget` (the paper's job ranges, bursty arrivals) and :func:`gadget_preset`.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence

import numpy as np

from clusteropt.instances.arrivals import bursty_arrivals as bursty_arrivals  # also the old path's
from clusteropt.instances.base import (
    FLOAT_INT_LIMIT,
    INT_LIMIT,
    Instance,
    InstanceError,
    check_string,
    first_repeat,
    job_count,
    shown,
)

__all__ = [
    "MAX_HORIZON",
    "PRESETS",
    "UTILITIES",
    "Cluster",
    "GadgetInstance",
    "ServerPaths",
    "fat_tree_cluster",
    "gadget_preset",
    "iterations_per_slot",
    "k_ary_fat_tree",
    "random_gadget",
    "utility_value",
]

#: Most nodes (servers and switches) of a :class:`Cluster`: link keys ``tail * nodes + head`` fit int64.
MAX_NODES = 2**31

#: Largest horizon ``T`` of a :class:`GadgetInstance`: an online run visits every slot (about a
#: millisecond each for the cheapest policy), so 10**6 slots is already a run of a quarter hour or more.
MAX_HORIZON = 10**6

#: Utility kinds (module docstring) -> number of parameters they read from ``utility_params``.
UTILITIES = {"sigmoid": 3, "sqrt": 1, "log": 1, "quadratic": 2}


def utility_value(kind: str, params, x) -> np.ndarray:
    """``mu(x)`` for each job: ``params`` (I, 3) and ``x`` broadcastable to (I,) or (I, K).

    >>> utility_value("sqrt", [[2.0, 0, 0]], [[0.0, 4.0]]).tolist()
    [[0.0, 4.0]]
    >>> round(float(utility_value("sigmoid", [[10.0, 1.0, 5.0]], [5.0])[0]), 6)
    5.0
    """
    if kind not in UTILITIES:
        raise ValueError(f"unknown utility {kind!r}; expected one of {sorted(UTILITIES)}")
    p = np.asarray(params, dtype=float)
    x = np.asarray(x, dtype=float)
    extra = (slice(None),) + (None,) * max(x.ndim - 1, 0)
    l1, l2, l3 = p[:, 0][extra], p[:, 1][extra], p[:, 2][extra]
    if kind == "sigmoid":
        from scipy.special import expit  # here: scipy.special takes half a second to import

        return l1 * expit(l2 * (x - l3))  # = l1 / (1 + exp(-l2 (x - l3))), without overflow
    if kind == "sqrt":
        return l1 * np.sqrt(np.maximum(x, 0.0))
    if kind == "log":
        return l1 * np.log1p(np.maximum(x, 0.0))
    return l1 * x - 0.5 * l2 * x * x


def iterations_per_slot(model_size, workers, bandwidth, gpu_speed, t_forward, batch, t_backward, overhead,
                        slot_seconds: float = 1.0) -> np.ndarray:
    """``zeta = slot_seconds / tau``: iterations one worker makes per slot, with ``tau`` of Eq. (1).

    ``tau = d (w - 1) / w * (2 / b + 1 / G) + t^f M + t^b + gamma`` (seconds per iteration) for
    a model of ``d`` parameters (``model_size``), ``w`` workers, bandwidth ``b`` and computation
    speed ``G`` (both in parameters per second), forward time ``t^f`` per sample, batch ``M``,
    backward time ``t^b`` and overhead ``gamma``.

    >>> round(float(iterations_per_slot(1e6, 1, 1e9, 1e9, 0.001, 32, 0.05, 0.0, 60.0)), 3)
    731.707
    """
    d, w = np.asarray(model_size, dtype=float), np.asarray(workers, dtype=float)
    if (w < 1).any():
        raise ValueError("workers must be >= 1")
    for name, value in (("bandwidth", bandwidth), ("gpu_speed", gpu_speed)):
        if not (np.asarray(value, dtype=float) > 0).all():
            raise ValueError(f"{name} = {value}; expected > 0 (parameters per second)")
    tau = d * (w - 1) / w * (2.0 / np.asarray(bandwidth, float) + 1.0 / np.asarray(gpu_speed, float))
    tau = tau + np.asarray(t_forward, float) * np.asarray(batch, float) + t_backward + overhead
    if (tau <= 0).any():
        raise ValueError("Eq. (1) gives a non-positive iteration time; check the inputs")
    return slot_seconds / tau


@dataclasses.dataclass(frozen=True, eq=False)
class Cluster(Instance):
    """Servers, switches and directed links (the substrate graph of paper 000, Sec. IV).

    Parameters
    ----------
    capacity : array (S, R)
        ``C_s^r`` >= 0 of every server (nodes 0 .. S-1).
    links : int array (L, 2)
        Directed links ``[tail, head]`` over nodes ``0 .. S + n_switches - 1``; no self-loops,
        no duplicates.
    bandwidth : array (L,)
        Link capacity ``e^{u,v}`` > 0 (Gbps in the generators).
    n_switches : int
        Switch nodes ``S .. S + n_switches - 1`` (no worker resources); ``S + n_switches`` is at
        most :data:`MAX_NODES`.
    resources : tuple of str
        Distinct names of the R resource types (the paper's experiments use only ``"gpu"``).
    rack : int array (S,), optional
        A label per server (the generators' rack or pod); informational.

    Examples
    --------
    >>> c = Cluster([[4], [2]], links=[[0, 2], [2, 0], [1, 2], [2, 1]], bandwidth=[10, 10, 10, 10],
    ...             n_switches=1)
    >>> c.n_servers, c.n_nodes, c.is_tree()
    (2, 3, True)
    >>> Cluster([[4], [2]], links=[[0, 3]], bandwidth=[10], n_switches=1)
    Traceback (most recent call last):
    ...
    clusteropt.instances.base.InstanceError: links[0, 1] = 3; expected a node in [0, 3)
    """

    kind = "gpu-cluster"

    capacity: np.ndarray
    links: np.ndarray
    bandwidth: np.ndarray
    n_switches: int = 0
    resources: tuple[str, ...] = ("gpu",)
    rack: np.ndarray | None = None

    def validate(self) -> None:
        """Check names, shapes, signs, link endpoints and duplicates."""
        n_res = len(self._names("resources"))
        cap = self._array("capacity", ndim=2, shape=(None, n_res))
        if cap.shape[0] == 0:
            raise InstanceError("capacity.shape[0]", 0, "at least one server")
        self._check("capacity", cap, cap >= 0, ">= 0")
        n_switches = self._int("n_switches", low=0)
        if cap.shape[0] + n_switches > MAX_NODES:
            raise InstanceError("n_switches", n_switches, f"<= {MAX_NODES - cap.shape[0]} (at most 2**31 nodes, "
                                "servers and switches)")
        n_nodes = cap.shape[0] + n_switches
        raw = self.links
        if (isinstance(raw, np.ndarray) and raw.size == 0) or (isinstance(raw, list | tuple) and not raw):
            links = np.zeros((0, 2), dtype=np.int64)
            links.setflags(write=False)
            object.__setattr__(self, "links", links)
        else:
            links = self._array("links", dtype=np.int64, ndim=2, shape=(None, 2))
        self._check("links", links, (links >= 0) & (links < n_nodes), f"a node in [0, {n_nodes})")
        self._check("links", links, np.repeat((links[:, 0] != links[:, 1])[:, None], 2, axis=1),
                    "no self-loop (tail != head)")
        rep = first_repeat(links)
        if rep is not None:
            raise InstanceError(f"links[{rep[0]}]", links[rep[0]].tolist(),
                                f"a link listed once (links[{rep[1]}] is the same)")
        bw = self._array("bandwidth", ndim=1, shape=(links.shape[0],))
        self._check("bandwidth", bw, bw > 0, "> 0")
        if self.rack is not None:
            self._array("rack", dtype=np.int64, ndim=1, shape=(cap.shape[0],))

    @property
    def n_servers(self) -> int:
        """S, the number of servers (nodes 0 .. S-1)."""
        return int(self.capacity.shape[0])

    @property
    def n_nodes(self) -> int:
        """Servers plus switches."""
        return self.n_servers + self.n_switches

    @property
    def n_links(self) -> int:
        """Number of directed links."""
        return int(self.links.shape[0])

    def link_index(self) -> dict[tuple[int, int], int]:
        """``(tail, head) -> link position``."""
        return {(int(u), int(v)): k for k, (u, v) in enumerate(self.links.tolist())}

    def graph(self):
        """The substrate as a :class:`networkx.DiGraph` with ``bandwidth`` and ``index`` on links."""
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(range(self.n_nodes))
        for k, ((u, v), b) in enumerate(zip(self.links.tolist(), self.bandwidth.tolist(), strict=True)):
            g.add_edge(u, v, bandwidth=b, index=k)
        return g

    def is_tree(self) -> bool:
        """Every link has its reverse and the undirected graph is a tree spanning all nodes.

        Then the path between two servers is unique, which the tree form of the per-slot model
        uses (:mod:`clusteropt.models.gadget.gvne`).  Computed once per cluster (its arrays are
        read-only) and kept: every slot's model asks.
        """
        known = self.__dict__.get("_is_tree")
        if known is not None:
            return known
        import networkx as nx

        pairs = {tuple(p) for p in self.links.tolist()}
        if any((v, u) not in pairs for u, v in pairs):
            answer = False
        else:
            und = nx.Graph()
            und.add_nodes_from(range(self.n_nodes))
            und.add_edges_from(pairs)
            answer = bool(nx.is_tree(und))
        object.__setattr__(self, "_is_tree", answer)
        return answer

    def paths(self) -> ServerPaths:
        """Shortest (fewest hops) server-to-server paths as link-index lists, ``paths[s, s']``.

        A read-only mapping that computes a path on first use and keeps it (:class:`ServerPaths`):
        on a tree the unique path, by parent pointers; otherwise networkx's shortest paths from
        ``s``, found once per source.  A pair with no path is not in it (``get`` gives None).
        Servers do not forward traffic of other servers unless the topology leaves no other way
        (networkx's shortest path decides).

        >>> c = fat_tree_cluster(4, n_racks=2, seed=0)
        >>> p = c.paths()
        >>> p[0, 3], len(p), p.get((1, 1))
        ([0, 8, 11, 7], 12, None)
        """
        return ServerPaths(self)


class ServerPaths(Mapping):
    """:meth:`Cluster.paths`: fewest-hop paths ``(s, s') -> [link, ...]``, computed when asked.

    Eager all-pairs paths cost ``S^2`` lists (4 million at 2,000 servers, most never used); here
    a tree's path is two walks up to the common ancestor (parent pointers from one traversal),
    and another topology runs one networkx breadth-first search per source on first use.
    """

    def __init__(self, cluster: Cluster):
        self._n = cluster.n_servers
        self._cache: dict[tuple[int, int], list[int]] = {}
        self._tree = cluster.is_tree()
        if self._tree:
            n_nodes = cluster.n_nodes
            index = {(u, v): k for k, (u, v) in enumerate(cluster.links.tolist())}
            nbrs: list[list[int]] = [[] for _ in range(n_nodes)]
            for u, v in index:
                nbrs[u].append(v)
            root = n_nodes - 1
            self._parent = [-1] * n_nodes
            self._depth = [0] * n_nodes
            self._up = [-1] * n_nodes  # link to the parent
            self._down = [-1] * n_nodes  # link from the parent
            seen, stack = {root}, [root]
            while stack:
                u = stack.pop()
                for v in nbrs[u]:
                    if v not in seen:
                        seen.add(v)
                        self._parent[v], self._depth[v] = u, self._depth[u] + 1
                        self._up[v], self._down[v] = index[v, u], index[u, v]
                        stack.append(v)
        else:
            self._graph = cluster.graph()
            self._sources: set[int] = set()

    def _valid(self, key) -> tuple[int, int] | None:
        try:
            s, t = (int(k) for k in key)
        except (TypeError, ValueError):
            return None
        return (s, t) if 0 <= s < self._n and 0 <= t < self._n and s != t else None

    def __getitem__(self, key) -> list[int]:
        pair = self._valid(key)
        if pair is None:
            raise KeyError(key)
        if pair not in self._cache:
            if self._tree:
                self._cache[pair] = self._tree_path(*pair)
            else:
                self._search(pair[0])
        if pair not in self._cache:
            raise KeyError(key)  # no path
        return self._cache[pair]

    def _tree_path(self, a: int, b: int) -> list[int]:
        up, down = [], []
        while self._depth[a] > self._depth[b]:
            up.append(self._up[a])
            a = self._parent[a]
        while self._depth[b] > self._depth[a]:
            down.append(self._down[b])
            b = self._parent[b]
        while a != b:
            up.append(self._up[a])
            a = self._parent[a]
            down.append(self._down[b])
            b = self._parent[b]
        return up + down[::-1]

    def _search(self, s: int) -> None:
        import networkx as nx

        if s in self._sources:
            return
        self._sources.add(s)
        g = self._graph
        for t, nodes in nx.single_source_shortest_path(g, s).items():
            if t < self._n and t != s:
                self._cache[s, t] = [g[a][b]["index"] for a, b in itertools.pairwise(nodes)]

    def __iter__(self):
        for s in range(self._n):
            for t in range(self._n):
                if s != t and (s, t) in self:
                    yield s, t

    def __contains__(self, key) -> bool:
        try:
            self[key]
        except KeyError:
            return False
        return True

    def __len__(self) -> int:
        return sum(1 for _ in self)


def fat_tree_cluster(n_servers: int = 50, *, n_racks: int | None = None, gpus=(1, 2, 4, 8),
                     server_bw=(10.0, 100.0), rack_bw=(200.0, 3200.0), seed=None) -> Cluster:
    """The paper's Sec. VI-1 cluster: servers split at random into 2-5 racks under one core switch.

    Every server gets a GPU count from ``gpus`` (resource ``"gpu"``); a server and its rack
    switch are joined by a link each way with one bandwidth drawn from ``server_bw`` (Gbps); a
    rack switch and the core switch likewise with one bandwidth from ``rack_bw``.  Nodes: servers
    ``0 .. S-1``, rack switches ``S .. S+K-1``, the core switch ``S+K``.  The result is a tree.

    >>> c = fat_tree_cluster(10, n_racks=2, seed=0)
    >>> c.n_servers, c.n_switches, c.n_links, c.is_tree()
    (10, 3, 24, True)
    """
    rng = np.random.default_rng(seed)
    if n_servers < 1:
        raise ValueError(f"n_servers = {n_servers}; expected >= 1")
    k = int(rng.integers(2, 6)) if n_racks is None else int(n_racks)
    if not 1 <= k <= n_servers:
        raise ValueError(f"n_racks = {k}; expected 1 .. n_servers = {n_servers}")
    # every rack gets at least one server, the rest at random
    rack = np.concatenate([np.arange(k), rng.integers(0, k, n_servers - k)])
    rack = np.sort(rng.permutation(rack))
    cap = rng.choice(np.asarray(gpus, dtype=float), size=n_servers)[:, None]
    core = n_servers + k
    links, bw = [], []
    sbw = rng.integers(int(server_bw[0]), int(server_bw[1]) + 1, n_servers).astype(float)
    for s in range(n_servers):
        links += [[s, n_servers + rack[s]], [n_servers + rack[s], s]]
        bw += [sbw[s], sbw[s]]
    rbw = rng.integers(int(rack_bw[0]), int(rack_bw[1]) + 1, k).astype(float)
    for r in range(k):
        links += [[n_servers + r, core], [core, n_servers + r]]
        bw += [rbw[r], rbw[r]]
    return Cluster(capacity=cap, links=np.asarray(links), bandwidth=np.asarray(bw), n_switches=k + 1,
                   resources=("gpu",), rack=rack)


def k_ary_fat_tree(k: int = 4, *, gpus=(1, 2, 4, 8), host_bw: float = 100.0, fabric_bw: float = 400.0,
                   seed=None, capacity=None, resources=("gpu",)) -> Cluster:
    """The standard k-ary fat-tree (Al-Fares et al. 2008): k pods, ``k^3 / 4`` servers.

    Each pod has ``k/2`` edge and ``k/2`` aggregation switches; each edge switch serves ``k/2``
    servers and links to every aggregation switch of its pod; aggregation switch j of a pod
    links to core switches ``j k/2 .. (j+1) k/2 - 1``.  Links go both ways (``host_bw`` at the
    servers, ``fabric_bw`` elsewhere).  Server GPU counts are drawn from ``gpus``.  Not a tree:
    there are ``(k/2)^2`` shortest paths between pods.

    ``capacity`` (array ``(S, len(resources))``, ``S <= k^3 / 4``) puts ``S`` given servers on the
    first ``S`` host ports instead (pod by pod, edge switch by edge switch; ``gpus`` and ``seed``
    unused): a real cluster's nodes on a fat-tree
    (:func:`~clusteropt.instances.gadget.trace.read_alibaba_nodes`).  The fat-tree is then
    populated only as far as it is used: an edge switch without servers and the aggregation
    switches of a pod without servers are left out (they would carry no shortest path between
    servers); all ``(k/2)^2`` core switches stay.  ``Cluster.rack`` is the pod.

    >>> c = k_ary_fat_tree(4, seed=0)
    >>> c.n_servers, c.n_switches, c.n_links, c.is_tree()
    (16, 20, 96, False)
    >>> c = k_ary_fat_tree(4, capacity=[[8.0], [2.0], [4.0]])   # edge switches 0, 1 and pod 0's 2 aggregation
    >>> c.n_servers, c.n_switches, c.n_links, c.rack.tolist()   # switches, 4 core switches
    (3, 8, 22, [0, 0, 0])
    """
    if k < 2 or k % 2:
        raise ValueError(f"k = {k}; expected an even number >= 2")
    h = k // 2
    ports = k * h * h
    if capacity is None:
        if tuple(resources) != ("gpu",):
            raise ValueError(f"resources = {tuple(resources)!r} without capacity; drawn servers have GPUs only "
                             "(pass capacity for other resources)")
        cap = np.random.default_rng(seed).choice(np.asarray(gpus, dtype=float), size=ports)[:, None]
    else:
        cap = np.asarray(capacity, dtype=float)
        if cap.ndim != 2 or cap.shape[1] != len(tuple(resources)):
            raise ValueError(f"capacity has shape {cap.shape}; expected (servers, {len(tuple(resources))}) "
                             f"for resources {tuple(resources)}")
        if not 1 <= cap.shape[0] <= ports:
            raise ValueError(f"capacity has {cap.shape[0]} servers; a {k}-ary fat-tree has 1 .. {ports} host "
                             "ports")
    n_srv = cap.shape[0]
    n_edges = -(-n_srv // h)  # edge switches with servers: the first ones, pod by pod
    n_pods = -(-n_edges // h)
    edge0 = n_srv  # edge switch (pod p, j) -> edge0 + p*h + j
    agg0 = edge0 + n_edges  # aggregation switch (pod p, a) -> agg0 + p*h + a
    core0 = agg0 + n_pods * h
    links, bw = [], []

    def both(u, v, b):
        links.extend([[u, v], [v, u]])
        bw.extend([b, b])

    rack = np.zeros(n_srv, dtype=np.int64)
    for p in range(n_pods):
        for j in range(h):
            if p * h + j >= n_edges:
                break
            e = edge0 + p * h + j
            for m in range(h):
                s = (p * h + j) * h + m
                if s < n_srv:
                    rack[s] = p
                    both(s, e, host_bw)
            for a in range(h):
                both(e, agg0 + p * h + a, fabric_bw)
        for a in range(h):
            for c in range(h):
                both(agg0 + p * h + a, core0 + a * h + c, fabric_bw)
    return Cluster(capacity=cap, links=np.asarray(links), bandwidth=np.asarray(bw),
                   n_switches=n_edges + n_pods * h + h * h, resources=tuple(resources), rack=rack)


@dataclasses.dataclass(frozen=True, eq=False)
class GadgetInstance(Instance):
    """A cluster, a horizon and ring-all-reduce DL jobs (paper 000, Sec. IV).

    Parameters
    ----------
    cluster : Cluster (or its dict)
    horizon : int
        ``T`` >= 1; slots are ``1 .. T``.
    arrival : int array (I,)
        ``a_i`` in ``1 .. T`` (Eq. (6): no worker before it).
    max_workers : int array (I,)
        ``N_i`` >= 1 (Eq. (2)); ``N_i (T - a_i + 1)`` at most ``2**62``.
    per_worker : array (I, R)
        ``l_i^r`` >= 0 (Eqs. (3)-(4)), resources as in the cluster; at least one positive per job.
    limit : array (I, R)
        ``F_i^r`` >= 0 (Eq. (3)); the job's worker-slot budget is ``min_r F_i^r / l_i^r``
        over the r with ``l_i^r > 0``, at most ``2**53`` (so :attr:`budget` is exact).
    bandwidth : array (I,)
        ``b_i`` >= 0 reserved on every link a ring edge of job i crosses (Eq. (8)).
    zeta : array (I,)
        ``zeta_i`` > 0 (per-worker efficiency, e.g. iterations per slot: :func:`iterations_per_slot`).
    utility : str
        One of :data:`UTILITIES`.
    utility_params : array (I, 3)
        ``lambda_{i,1..3}`` (unused entries are ignored; use 0).
    name : str
    job_ids : sequence of str, optional
        The jobs' own names, e.g. a trace's job or pod ids (distinct, non-empty); default
        ``"0" .. "I-1"``.  Models and runs index jobs by position ``i``; ``job_ids[i]`` maps a
        position back to the trace (``run --json`` and ``solve --json`` write them).

    Examples
    --------
    >>> inst = gadget_preset("paper", jobs=5, seed=0)
    >>> inst.n_jobs, inst.cluster.n_servers, inst.horizon, inst.utility
    (5, 50, 200, 'sigmoid')
    """

    kind = "gadget"

    cluster: Cluster
    horizon: int
    arrival: np.ndarray
    max_workers: np.ndarray
    per_worker: np.ndarray
    limit: np.ndarray
    bandwidth: np.ndarray
    zeta: np.ndarray
    utility: str = "sigmoid"
    utility_params: np.ndarray | None = None
    name: str = ""
    job_ids: tuple[str, ...] | None = None

    def validate(self) -> None:
        """Check every job field against the cluster and the horizon."""
        cl: object = self.cluster  # a Cluster or, from a file, its dict
        if isinstance(cl, Mapping):
            try:
                cl = Cluster.from_dict(cl)
            except InstanceError as exc:
                raise InstanceError(f"cluster.{exc.where}", exc.value, exc.expected) from None
            object.__setattr__(self, "cluster", cl)
        if not isinstance(cl, Cluster):
            raise InstanceError("cluster", type(cl).__name__, "a Cluster or its dict")
        horizon = self._int("horizon", low=1, high=MAX_HORIZON,
                            expected=f"a slot count in 1 .. {MAX_HORIZON} (MAX_HORIZON: a run visits every slot)")
        arr = self._array("arrival", dtype=np.int64, ndim=1)
        n = arr.shape[0]
        self._check("arrival", arr, (arr >= 1) & (arr <= horizon), f"a slot in 1 .. {horizon}")
        nmax = self._array("max_workers", dtype=np.int64, ndim=1, shape=(n,))
        self._check("max_workers", nmax, nmax >= 1, ">= 1")
        slots = horizon - arr + 1  # the job's slots a_i .. T
        self._check("max_workers", nmax, nmax.astype(float) * slots <= INT_LIMIT,
                    "N_i (T - a_i + 1) <= 2**62 (the most worker-slots of the job)")
        n_res = len(cl.resources)
        pw = self._array("per_worker", ndim=2, shape=(n, n_res))
        self._check("per_worker", pw, pw >= 0, ">= 0")
        if n and not (pw > 0).any(axis=1).all():
            i = int(np.flatnonzero(~(pw > 0).any(axis=1))[0])
            raise InstanceError(f"per_worker[{i}]", pw[i].tolist(), "at least one positive resource")
        lim = self._array("limit", ndim=2, shape=(n, n_res))
        self._check("limit", lim, lim >= 0, ">= 0")
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            ratio = np.where(pw > 0, lim / np.where(pw > 0, pw, 1.0), np.inf)
        if n:  # the budget min_r F_i^r / l_i^r becomes an int64 (Eq. (3)): keep it exact
            r_min = ratio.argmin(axis=1)
            too_big = ~(ratio[np.arange(n), r_min] <= FLOAT_INT_LIMIT)
            if too_big.any():
                i = int(np.flatnonzero(too_big)[0])
                r = int(r_min[i])
                raise InstanceError(f"limit[{i}, {r}]", float(lim[i, r]), "a budget limit / per_worker <= 2**53 "
                                    f"worker-slots (per_worker[{i}, {r}] = {float(pw[i, r])!r})")
        bw = self._array("bandwidth", ndim=1, shape=(n,))
        self._check("bandwidth", bw, bw >= 0, ">= 0")
        z = self._array("zeta", ndim=1, shape=(n,))
        self._check("zeta", z, z > 0, "> 0")
        check_string("utility", self.utility, choices=UTILITIES)
        if self.utility_params is None:
            default = {"sigmoid": [1.0, 0.01, 0.0], "sqrt": [1.0, 0, 0], "log": [1.0, 0, 0],
                       "quadratic": [1.0, 0.0, 0]}[self.utility]
            object.__setattr__(self, "utility_params", np.tile(default, (n, 1)))
        par = self._array("utility_params", ndim=2, shape=(n, 3))
        if self.utility == "sigmoid":
            self._check("utility_params", par[:, :2], par[:, :2] >= 0, ">= 0 (lambda_1, lambda_2 of the sigmoid)")
        else:
            self._check("utility_params", par[:, :2], par[:, :2] >= 0, ">= 0")
        check_string("name", self.name)
        if self.job_ids is None:
            object.__setattr__(self, "job_ids", tuple(str(i) for i in range(n)))
        else:
            ids = self.job_ids
            if isinstance(ids, str | bytes) or not isinstance(ids, Sequence):
                raise InstanceError("job_ids", shown(ids), f"a list of {n} distinct job names")
            if len(ids) != n:
                raise InstanceError("job_ids", f"{len(ids)} names", f"{n} (one per job)")
            ids = tuple(check_string(f"job_ids[{i}]", v, nonempty=True) for i, v in enumerate(ids))
            rep = first_repeat(ids)
            if rep is not None:
                raise InstanceError(f"job_ids[{rep[0]}]", ids[rep[0]], f"a name distinct from job_ids[{rep[1]}]")
            object.__setattr__(self, "job_ids", ids)

    @property
    def n_jobs(self) -> int:
        """I, the number of jobs."""
        return int(self.arrival.shape[0])

    @property
    def budget(self) -> np.ndarray:
        """``min_r F_i^r / l_i^r`` over ``l_i^r > 0``, floored: the most worker-slots job i may get (Eq. (3))."""
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(self.per_worker > 0, self.limit / np.where(self.per_worker > 0, self.per_worker, 1),
                             np.inf)
        return np.floor(ratio.min(axis=1) + 1e-9).astype(np.int64)

    def utility_of(self, worker_slots) -> np.ndarray:
        """``mu_i(zeta_i * z_i)`` for worker-slot counts ``z`` of shape (I,) or (I, K)."""
        z = np.asarray(worker_slots, dtype=float)
        x = self.zeta.reshape((-1,) + (1,) * (z.ndim - 1)) * z
        return utility_value(self.utility, self.utility_params, x)

    def alone_bound(self) -> float:
        """An upper bound on any schedule's total utility: each job alone on the cluster.

        Job i can get at most ``min(budget_i, N_i (T - arrival_i + 1))`` worker-slots (Eqs. (3),
        (4): at most ``N_i`` workers a slot from its arrival to the horizon), whatever the other
        jobs do, so ``sum_i max_{0 <= z <= that} mu_i(zeta_i z)`` bounds the DDLJS objective (2)
        from above (the maximum, not the end point, because the energy utility is not monotone).
        The maximum is taken over four candidates per job, not over every ``z`` (a budget may be
        10^5 worker-slots or more): ``0`` and the cap, where a nondecreasing utility (sigmoid,
        sqrt, log: their lambdas are >= 0) peaks, and for the concave energy utility
        ``lambda_1 x - lambda_2 x^2 / 2`` the integers on either side of its vertex
        ``z = lambda_1 / (lambda_2 zeta_i)``, clipped to ``[0, cap]``.

        >>> inst = gadget_preset("tiny", jobs=3, seed=0, utility="sqrt")
        >>> cap = np.minimum(inst.budget, inst.max_workers * (inst.horizon - inst.arrival + 1))
        >>> bool(np.isclose(inst.alone_bound(), inst.utility_of(cap).sum()))  # sqrt is increasing
        True
        """
        cap = np.minimum(self.budget, self.max_workers * (self.horizon - self.arrival + 1)).astype(np.int64)
        if self.n_jobs == 0:
            return 0.0
        vertex = cap.astype(float)
        if self.utility == "quadratic":
            par = self.utility_params
            assert par is not None  # validate() fills in the defaults
            l1, l2 = par[:, 0], par[:, 1]
            with np.errstate(divide="ignore", invalid="ignore"):
                vertex = np.where(l2 > 0, l1 / (l2 * self.zeta), np.inf)
        vertex = np.minimum(vertex, cap)
        candidates = np.stack([np.zeros_like(cap), cap, np.floor(vertex), np.ceil(vertex)], axis=1)
        candidates = np.clip(candidates, 0, cap[:, None])
        return float(self.utility_of(candidates).max(axis=1).sum())



def _draw_job_params(rng: np.random.Generator, budget, utility: str, *, zeta=(50, 500),
                     bandwidth=(0.1, 5.0)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw ``zeta_i``, ``b_i`` and the utility parameters of ``len(budget)`` jobs (Sec. VI-1 ranges).

    Shared by :func:`random_gadget` and the trace readers (:mod:`clusteropt.instances.gadget.trace`);
    the draws, in this order, are those of :func:`random_gadget`: ``zeta_i`` integer in ``zeta``,
    ``b_i`` uniform in ``bandwidth`` (3 decimals), ``lambda_1`` integer in [1, 100], then for
    ``"sigmoid"`` ``lambda_2`` uniform in [0.001, 0.999] (4 decimals) and ``lambda_3`` integer in
    [300, 3000].  ``budget`` is ``F_i`` (worker-slots), used only by ``"quadratic"``
    (``lambda_2 = lambda_1 / (zeta_i F_i)``).  Returns ``(zeta, bandwidth, params (I, 3))``.

    >>> z, b, p = _draw_job_params(np.random.default_rng(0), [100.0, 200.0], "quadratic")
    >>> z.shape, b.shape, p.shape, bool(np.allclose(p[:, 1], p[:, 0] / (z * [100.0, 200.0])))
    ((2,), (2,), (2, 3), True)
    """
    f = np.asarray(budget, dtype=float)
    n_jobs = f.shape[0]
    z = rng.integers(zeta[0], zeta[1] + 1, n_jobs).astype(float)
    b = np.round(rng.uniform(bandwidth[0], bandwidth[1], n_jobs), 3)
    l1 = rng.integers(1, 101, n_jobs).astype(float)
    if utility == "sigmoid":
        params = np.column_stack([l1, np.round(rng.uniform(0.001, 0.999, n_jobs), 4),
                                  rng.integers(300, 3001, n_jobs).astype(float)])
    elif utility == "quadratic":
        params = np.column_stack([l1, l1 / (z * f), np.zeros(n_jobs)])
    else:
        params = np.column_stack([l1, np.zeros(n_jobs), np.zeros(n_jobs)])
    return z, b, params


def random_gadget(n_jobs: int = 20, *, cluster: Cluster | None = None, horizon: int = 200,
                  utility: str = "sigmoid", arrivals: str = "bursty", workers=(1, 5), limit=(1000, 6000),
                  zeta=(50, 500), bandwidth=(0.1, 5.0), seed=None, name: str = "") -> GadgetInstance:
    """Jobs with the paper's Sec. VI-1 ranges on ``cluster`` (default :func:`fat_tree_cluster`).

    Integers uniform in ``N_i`` in ``workers``, ``F_i`` in ``limit`` (on the one resource
    ``"gpu"``, one GPU per worker, so ``F_i`` is the worker-slot budget), ``zeta_i`` in ``zeta``;
    ``b_i`` uniform in ``bandwidth`` Gbps (100 Mbps - 5 Gbps).  Sigmoid parameters: ``lambda_1``
    in [1, 100], ``lambda_2`` in (0, 1), ``lambda_3`` in [300, 3000]; the other utilities take
    ``lambda_1`` in [1, 100] (and ``lambda_2 = lambda_1 / (zeta_i F_i)`` for ``"quadratic"``, so
    the utility peaks at the job's full budget).  Arrivals: ``"bursty"`` (:func:`bursty_arrivals`),
    ``"uniform"`` or ``"zero"`` (all at slot 1).  A cluster with several resources gives every
    job one unit of each per worker and ``F_i`` times that as the limit.
    """
    rng = np.random.default_rng(seed)
    if n_jobs < 1:
        raise ValueError(f"n_jobs = {n_jobs}; expected >= 1")
    if utility not in UTILITIES:
        raise ValueError(f"utility = {utility!r}; expected one of {sorted(UTILITIES)}")
    if cluster is None:
        cluster = fat_tree_cluster(seed=rng)
    if arrivals == "bursty":
        arr = bursty_arrivals(n_jobs, horizon, seed=rng)
    elif arrivals == "uniform":
        arr = np.sort(rng.integers(1, horizon + 1, n_jobs))
    elif arrivals == "zero":
        arr = np.ones(n_jobs, dtype=np.int64)
    else:
        raise ValueError(f"arrivals = {arrivals!r}; expected 'bursty', 'uniform' or 'zero'")
    n_res = len(cluster.resources)
    nmax = rng.integers(workers[0], workers[1] + 1, n_jobs)
    f = rng.integers(limit[0], limit[1] + 1, n_jobs).astype(float)
    z, b, params = _draw_job_params(rng, f, utility, zeta=zeta, bandwidth=bandwidth)
    return GadgetInstance(cluster=cluster, horizon=horizon, arrival=arr, max_workers=nmax,
                          per_worker=np.ones((n_jobs, n_res)), limit=np.tile(f[:, None], (1, n_res)),
                          bandwidth=b, zeta=z, utility=utility, utility_params=params, name=name)


#: Preset names of :func:`gadget_preset`.
PRESETS = ("paper", "small", "tiny")


def gadget_preset(preset: str = "paper", *, n_jobs: int | None = None, jobs: int | None = None, seed=None,
                  utility: str = "sigmoid", horizon: int | None = None) -> GadgetInstance:
    """Named settings with ``n_jobs`` jobs (default 20; ``jobs=`` is the same, as in the CLI's ``--jobs``).

    ``"paper"``
        Sec. VI-1: T = 200, a 50-server fat-tree cluster (:func:`fat_tree_cluster`), ``n_jobs``
        jobs with the paper's ranges and bursty arrivals.
    ``"small"``
        T = 20, 8 servers in 2 racks: for exact per-slot ILPs and notebooks.
    ``"tiny"``
        T = 4, 4 servers in 2 racks, arrivals uniform, budgets 2-12 worker-slots: small enough
        for the offline DDLJS MILP.
    """
    jobs = job_count(n_jobs, jobs, 20)
    rng = np.random.default_rng(seed)
    if horizon is not None and horizon < 1:
        raise ValueError(f"horizon = {horizon}; expected >= 1 (or None for the preset's)")
    if preset == "paper":
        cluster = fat_tree_cluster(50, seed=rng)
        return random_gadget(jobs, cluster=cluster, horizon=horizon or 200, utility=utility, seed=rng,
                             name=f"paper-{jobs}")
    if preset == "small":
        cluster = fat_tree_cluster(8, n_racks=2, seed=rng)
        return random_gadget(jobs, cluster=cluster, horizon=horizon or 20, utility=utility, seed=rng,
                             name=f"small-{jobs}")
    if preset == "tiny":
        cluster = fat_tree_cluster(4, n_racks=2, gpus=(1, 2, 4), seed=rng)
        return random_gadget(jobs, cluster=cluster, horizon=horizon or 4, utility=utility, arrivals="uniform",
                             limit=(2, 12), seed=rng, name=f"tiny-{jobs}")
    raise ValueError(f"unknown preset {preset!r}; expected one of {PRESETS}")
