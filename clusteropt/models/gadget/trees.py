"""Paper 000 (GADGET), Alg. 2 line 4: the per-job subtree bookkeeping of the augmented tree LP.

The augmented LP of LP-RS-MDE on a tree substrate (:mod:`clusteropt.models.gadget.embedding`,
``form="tree"``) keeps, per job i and tree node n, the distribution ``lam[i, n, k]`` of "subtree n
holds k of job i's ``kappa_i`` workers", tied to the node's parts (its own workers if n is a
server, then its children) by chains of pairwise joint distributions ``mu[i, p, j, a, b]``.
:class:`TreeJob` numbers those variables and writes those rows once per job; the Pyomo builder
(:mod:`~clusteropt.models.gadget.embedding`), the array builder
(:mod:`~clusteropt.models.gadget.matrix`) and column generation
(:mod:`~clusteropt.models.gadget.colgen`) all read the same bookkeeping, so the three routes build
the same LP.  :func:`check_kappa` and :func:`server_fit` are the checks and fits every augmented
LP (tree or extended graph, :mod:`~clusteropt.models.gadget.extended`) starts from.

References
----------
Yu et al., GADGET (paper 000): Alg. 2 (LP-RS-MDE), the G-VNE ILP (12)-(19).
"""

from __future__ import annotations

import numpy as np

from clusteropt.decisions.gadget import Mapping, Ring
from clusteropt.models.gadget.gvne import SlotProblem

__all__ = ["TreeJob", "check_kappa", "preorder", "server_fit", "tree_mapping", "tree_parts"]


def check_kappa(problem: SlotProblem, kappa) -> dict[int, int]:
    """``kappa`` as ``{job: ring size}``, every job active in ``problem`` and every size in
    ``1 .. kmax`` of that job; ``ValueError`` naming the job otherwise.
    """
    kmax = dict(zip(problem.jobs.tolist(), problem.kmax.tolist(), strict=True))
    out = {}
    for i, k in dict(kappa).items():
        if not float(k).is_integer():
            raise ValueError(f"kappa[{i}] = {k}; expected an integer ring size")
        if int(i) not in kmax:
            raise ValueError(f"kappa[{i}]: job {i} is not active in slot {problem.t} "
                             f"(active: {sorted(kmax)})")
        if not 1 <= int(k) <= kmax[int(i)]:
            raise ValueError(f"kappa[{i}] = {k}; expected a ring size in 1 .. {kmax[int(i)]} for job {i} (q_i)")
        out[int(i)] = int(k)
    return out


def server_fit(problem: SlotProblem, i: int) -> np.ndarray:
    """Workers of job i one server can hold alone: ``floor(min_r C_s^r / l_i^r)`` per server."""
    pw = problem.inst.per_worker[i]
    cap = problem.inst.cluster.capacity
    with np.errstate(divide="ignore", invalid="ignore"):
        fit = np.where(pw > 0, cap / np.where(pw > 0, pw, 1), np.inf).min(axis=1)
    return np.floor(np.minimum(fit, 1e9) + 1e-9).astype(np.int64)


def preorder(lay) -> list[int]:
    """The tree layout's nodes in depth-first preorder from the root (children in layout order)."""
    out, stack = [], [lay.root]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(lay.children[n]))
    return out


def tree_parts(lay, n_servers: int, p: int) -> list[tuple[str, int]]:
    """The parts of node p in chain order: its own workers (a server), then its children."""
    own = [("own", p)] if p < n_servers else []
    return own + [("sub", c) for c in lay.children[p]]


class TreeJob:
    """Index bookkeeping of one job's tree LP: variables as flat numbers, rows as term lists."""

    def __init__(self, problem: SlotProblem, lay, i: int, k: int):
        cl = problem.inst.cluster
        n_srv = cl.n_servers
        fit = np.minimum(server_fit(problem, i), k)
        self.i, self.k = i, k
        self.names: list[tuple] = []  # variable keys: ("lam", n, c), ("own", s, c), ("mu", p, j, a, b)
        self.index: dict[tuple, int] = {}
        self.rows: list[tuple[tuple, list[tuple[int, float]], str]] = []  # (key, terms, "x" if = x else "0")
        cap: dict[int, int] = {}
        own_cap = {s: int(fit[s]) for s in range(n_srv)}
        for n in reversed(preorder(lay)):
            total = sum(own_cap[n] if kind == "own" else cap[c] for kind, c in tree_parts(lay, n_srv, n))
            cap[n] = min(k, total)
        self.cap, self.own_cap = cap, own_cap
        self.feasible = cap[lay.root] >= k
        if not self.feasible:
            return
        self.parts = {}
        for n in preorder(lay):
            parts = tree_parts(lay, n_srv, n)
            self.parts[n] = parts
            # the distribution of every part
            for kind, c in parts:
                if kind == "own":
                    for b in range(own_cap[c] + 1):
                        self._var(("own", c, b))
                else:
                    for b in range(cap[c] + 1):
                        self._var(("lam", c, b))
        for n in preorder(lay):
            self._chain(n, lay.root)

    def _var(self, key) -> int:
        if key not in self.index:
            self.index[key] = len(self.names)
            self.names.append(key)
        return self.index[key]

    def part_var(self, kind: str, c: int, b: int) -> int | None:
        """The variable of "part (kind, c) holds b workers", or None when the part cannot hold b."""
        return self.index.get(("own" if kind == "own" else "lam", c, b))

    def held_part_var(self, kind: str, c: int, b: int) -> int:
        """:meth:`part_var` for ``b <= part_cap(kind, c)``: that variable always exists."""
        return self.index["own" if kind == "own" else "lam", c, b]

    def part_cap(self, kind: str, c: int) -> int:
        """Most workers of this job part (kind, c) can hold: a server's fit, a subtree's capacity."""
        return self.own_cap[c] if kind == "own" else self.cap[c]

    def _chain(self, p: int, root: int) -> None:
        """Rows tying node p's distribution to its parts (module docstring)."""
        parts, k = self.parts[p], self.k
        is_root = p == root
        if not parts:
            return
        # prev[a]: terms of P_{j-1}[a] ("parts before j hold a")
        kind, c = parts[0]
        acc = self.part_cap(kind, c)
        prev = {a: [(self.held_part_var(kind, c, a), 1.0)] for a in range(acc + 1)}
        for j in range(1, len(parts)):
            kind, c = parts[j]
            bcap = self.part_cap(kind, c)
            last = is_root and j == len(parts) - 1
            new_acc = min(k, acc + bcap)
            cur: dict[int, list[tuple[int, float]]] = {a: [] for a in range(new_acc + 1)}
            by_a: dict[int, list[tuple[int, float]]] = {a: [] for a in range(acc + 1)}
            by_b: dict[int, list[tuple[int, float]]] = {b: [] for b in range(bcap + 1)}
            for a in range(acc + 1):
                for b in range(bcap + 1):
                    if a + b > k or (last and a + b != k):
                        continue
                    v = self._var(("mu", p, j, a, b))
                    cur[a + b].append((v, 1.0))
                    by_a[a].append((v, 1.0))
                    by_b[b].append((v, 1.0))
            for a, terms in by_a.items():  # sum_b mu[j, a, b] = P_{j-1}[a]
                self.rows.append((("chain_in", p, j, a), terms + [(v, -w) for v, w in prev[a]], "0"))
            for b, terms in by_b.items():  # sum_a mu[j, a, b] = part_j[b]
                self.rows.append((("chain_part", p, j, b), [*terms, (self.held_part_var(kind, c, b), -1.0)], "0"))
            prev, acc = cur, new_acc
        if is_root:  # the whole tree holds the kappa workers with mass x, nothing else
            for a, terms in prev.items():
                if terms:
                    self.rows.append((("root", p, 0, a), terms, "x" if a == k else "0"))
        else:  # lam[p, a] = P_m[a]
            for a in range(self.cap[p] + 1):
                terms = prev.get(a, [])
                self.rows.append((("subtree", p, 0, a), [(self.index["lam", p, a], -1.0), *terms], "0"))


def tree_mapping(i: int, counts: dict[int, int], lay, paths) -> Mapping:
    """Job i's valid mapping for its worker ``counts`` per server: the servers in the layout's DFS order
    form the ring (tree form of Eq. (9)), each ring edge routed on ``paths``; no ring on one server.
    """
    servers = [s for s in lay.dfs_order if counts.get(s, 0) > 0]
    workers = tuple(sorted((s, counts[s]) for s in servers))
    if len(servers) < 2:
        return Mapping(i, workers, None)
    ring = Ring(tuple(servers), tuple(tuple(paths[servers[q], servers[(q + 1) % len(servers)]])
                                      for q in range(len(servers))))
    return Mapping(i, workers, ring)
