"""Compiled hot path of the ring policies: the HST line MTS, the per-request drivers, the follower (numba).

Why compiled, and why numba.  ``DynamicRing.serve`` with the paper's MTS spends its time in
:class:`~clusteropt.algorithms.ring.mts.hst.EntropicHSTLine`: a few dozen scalar float operations
and two short loops over the ``O(log L)`` levels of the random 2-HST per request.  That work is
sequential (each request changes the state the next one sees) and branchy, so numpy cannot
vectorise it across requests, and in Python it costs about 20 us a request.  numba compiles the
same scalar code to machine code (``cache=True``: compiled once per machine, about 10 s, then
loaded from ``__pycache__``).  The interval chains are independent given the shift, but the
driver needs every cut after every request (the communication cost reads the placement), so one
compiled loop over the requests that serves all intervals is the simpler and faster design.

What is compiled (:mod:`clusteropt.algorithms.ring._numba_kernels`, one function per reference
function, named in its docstring):

* :func:`serve_block` (``DynamicRing.serve_block``, policies ``dynamic`` and ``dynamic-mix``): every
  interval's MTS (:meth:`EntropicHSTLine.serve` with ``method="exact"`` at full depth, line for
  line: the work function, the exact flow of ``_flow_pair``, the earth mover distance, the
  CDF-coupling quantile; for ``"mix"`` also the work function algorithm and the lazy follower,
  whose coins are drawn beforehand from its own generator), ``DynamicRing._move_cut`` and
  ``RingAssignment.assign_one``; it returns the block's net migrations per step in the order
  :class:`~clusteropt.algorithms.ring.state.RingAssignment` logs them.
* :func:`follow_block` (``FollowRing.serve_block``, policy ``follow``): the experts are independent
  of the follower, so each serves the block first on its own path; the compiled loop replays
  their migrations, pays each request, updates the weights (the lazy follower, as above) and
  moves the placement with the followed expert; a switch or a growth of the scale (rare) is
  handed back to the Python methods that do it.

``never`` and ``static-best`` count their cut requests with numpy (their ``serve_block``).  The arithmetic is
the reference's, operation for operation (no ``fastmath``; ``log`` and ``exp`` are the C library's,
as in CPython), so a compiled run equals the pure-Python one bit for bit:
``tests/algorithms/test_ring_compiled.py`` checks logs, costs and every internal state on random,
adversarial and ``alpha != 1`` runs.  numba therefore does not shape a result and is not among the
versions :mod:`clusteropt.provenance` records.  The pure-Python ``serve`` stays the reference, and
the only path for the other policies (``dynamic-wfa``, ``dynamic-soft``, ``greedy``, ``static``,
``component`` run at 0.5-2 us a request in Python) and for ``EntropicHSTLine`` options the driver
does not build (``method="proximal"``, cut ``levels``).

When it runs.  By default (:func:`clusteropt.jit.mode` ``"auto"``) a block runs compiled when it has at least
:data:`JIT_MIN_REQUESTS` requests or the kernels are loaded already, so a small run does not pay
the 0.55 s of loading numba; ``CLUSTEROPT_JIT=1`` always compiles, ``CLUSTEROPT_JIT=0`` serves every
request one by one on the reference (nothing else changes; the results are the same).

>>> from clusteropt.instances.ring import RingInstance
>>> from clusteropt.algorithms.ring.dynamic import DynamicRing
>>> inst = RingInstance(n=12, servers=3, requests=[3, 3, 3, 3, 7, 7, 7, 7])
>>> fast, ref = DynamicRing(), DynamicRing()
>>> fast.start(inst, 0); ref.start(inst, 0)
>>> fast.serve_block(0, inst.requests)
True
>>> ref.state_.serve_all(0, inst.requests.tolist(), ref.serve)
>>> fast.state_.migrations().tolist() == ref.state_.migrations().tolist(), fast.costs() == ref.costs()
(True, True)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from clusteropt.jit import enabled, mode
from clusteropt.jit import use_compiled as _use_compiled

__all__ = ["FOLLOW_COINS", "JIT_MIN_REQUESTS", "HSTPack", "MixPack", "enabled", "follow_block", "mode",
           "serve_block", "use_compiled"]


#: In the default mode, a block of fewer requests runs on the reference while the kernels are not
#: loaded yet: importing numba and loading the cached kernels costs about 0.55 s of CPU, what the
#: reference spends on some 30,000 requests of ``dynamic`` (``benchmarks/results/ring_online.md``).
JIT_MIN_REQUESTS = 20_000

_KERNELS = "clusteropt.algorithms.ring._numba_kernels"


def use_compiled(size: int) -> bool:
    """Whether a block of ``size`` requests runs compiled (:func:`clusteropt.jit.use_compiled` with
    :data:`JIT_MIN_REQUESTS`): mode ``"on"``, or ``"auto"`` with ``size >= JIT_MIN_REQUESTS`` or the
    kernels loaded already.
    """
    return _use_compiled(size, JIT_MIN_REQUESTS, _KERNELS)


# integer and float counters of one HST MTS, by column
_POS, _REQ, _HIT, _MOVE = range(4)
_FHIT, _FSERV, _FMOVE = range(3)


class HSTPack:
    """The state of ``m`` :class:`EntropicHSTLine` (same ``N``, ``depth`` and ``alpha``) as flat arrays.

    :meth:`pack` copies the objects' state in, :meth:`unpack` writes it back, so the objects stay
    the authority between blocks (inspection, :meth:`~EntropicHSTLine.distribution`, a later
    per-request ``serve``).
    """

    def __init__(self, mts: list):
        first = mts[0]
        self.m = m = len(mts)
        self.N = N = int(first.n_states_)
        self.depth = depth = int(first.depth_)
        self.alpha = float(first.alpha_)
        self.hit = float(first._hit)
        self.integral = isinstance(first.alpha_, int)
        self.th = np.zeros((m, depth, N))
        self.de = np.zeros((m, depth, N))
        self.al = np.zeros((m, depth, N))
        self.sib = np.full((m, depth, N), -1, dtype=np.int64)
        self.cnt = np.zeros((m, depth), dtype=np.int64)
        self.base = np.zeros((m, depth), dtype=np.int64)
        self.shift = np.zeros(m, dtype=np.int64)
        self.u = np.zeros(m)
        self.ints = np.zeros((m, 4), dtype=np.int64)
        self.fl = np.zeros((m, 3))
        self.w = np.zeros((m, N))
        for j, obj in enumerate(mts):
            if (obj.n_states_, obj.depth_, obj.alpha_) != (first.n_states_, first.depth_, first.alpha_):
                raise ValueError(f"mts[{j}]: every packed MTS needs the same states, depth and alpha")
            self.shift[j] = obj.shift_
            self.u[j] = obj.u_
            for i in range(depth):
                c = len(obj._delta[i])
                self.cnt[j, i] = c
                self.base[j, i] = obj._base[i]
                self.de[j, i, :c] = obj._delta[i]
                self.al[j, i, :c] = obj._alpha[i]
                if i < depth - 1:
                    self.sib[j, i, :c] = obj._sib[i]
        self.mts = mts

    def pack(self) -> None:
        """Copy the objects' mutable state (conditionals, work function, counters) in."""
        for j, obj in enumerate(self.mts):
            for i in range(self.depth):
                self.th[j, i, : self.cnt[j, i]] = obj._theta[i]
            self.w[j] = obj._w
            self.ints[j] = (obj.position_, obj.requests_, obj.hit_cost_, obj.move_cost_)
            self.fl[j] = (obj.frac_hit_, obj.frac_service_, obj.frac_move_)

    def unpack(self) -> None:
        """Write the mutable state back into the objects (ints as ints, as the reference keeps them)."""
        for j, obj in enumerate(self.mts):
            obj._theta = [self.th[j, i, : self.cnt[j, i]].tolist() for i in range(self.depth)]
            w = self.w[j]
            obj._w = w.astype(np.int64).tolist() if self.integral else w.tolist()
            obj.position_, obj.requests_, obj.hit_cost_, obj.move_cost_ = (int(v) for v in self.ints[j])
            obj.frac_hit_, obj.frac_service_, obj.frac_move_ = (float(v) for v in self.fl[j])


class MixPack:
    """The state of ``m`` :class:`~clusteropt.algorithms.ring.mts.mix.CombinedLine` of ``("hst", "wfa")``.

    The HST experts go in an :class:`HSTPack`; the WFA experts, the combinations' own counters and
    work functions and their followers (cumulative costs, weights, expert followed, switches) in
    arrays here.  The switching coins are drawn before a block from each follower's generator
    (at most two per request the interval sees) and, after it, the generator is set back and
    advanced by the coins used, so it stands where the reference's would.
    """

    def __init__(self, mts: list):
        for j, obj in enumerate(mts):
            names = tuple(type(x).name for x in obj.experts_)
            if names != ("hst", "wfa"):
                raise ValueError(f"mts[{j}] combines {names}; the compiled path knows ('hst', 'wfa')")
        self.mts = mts
        self.m = m = len(mts)
        self.hst = HSTPack([obj.experts_[0] for obj in mts])
        N = self.hst.N
        self.integral = isinstance(mts[0].alpha_, int)
        self.eta = float(mts[0].eta_)
        if any(obj.eta_ != mts[0].eta_ for obj in mts):
            raise ValueError("every packed combined MTS needs the same learning rate")
        self.cw = np.zeros((m, N))
        self.cints = np.zeros((m, 4), dtype=np.int64)
        self.ww = np.zeros((m, N))
        self.wints = np.zeros((m, 4), dtype=np.int64)
        self.fcost = np.zeros((m, 2))
        self.fp = np.zeros((m, 2))
        self.fint = np.zeros((m, 2), dtype=np.int64)
        self.coins = np.zeros((m, 1))
        self.cused = np.zeros(m, dtype=np.int64)
        self._states: list = []

    def pack(self, hits: np.ndarray) -> None:
        """Copy the state in and draw ``2 hits[j] + 1`` coins for interval ``j``'s follower."""
        self.hst.pack()
        self.coins = np.zeros((self.m, 2 * int(hits.max(initial=0)) + 1))
        self._states = []
        for j, obj in enumerate(self.mts):
            wfa, fol = obj.experts_[1], obj._follow
            self.cw[j] = obj._w
            self.cints[j] = (obj.position_, obj.requests_, obj.hit_cost_, obj.move_cost_)
            self.ww[j] = wfa._w
            self.wints[j] = (wfa.position_, wfa.requests_, wfa.hit_cost_, wfa.move_cost_)
            self.fcost[j] = fol.costs
            self.fp[j] = fol._p
            self.fint[j] = (fol.following, fol.switches)
            bits = fol.coins.bit_generator
            self._states.append(bits.state)
            self.coins[j, : 2 * int(hits[j]) + 1] = fol.coins.random(2 * int(hits[j]) + 1)
        self.cused[:] = 0

    def unpack(self) -> None:
        """Write the state back; set each follower's generator to where the coins used leave it."""
        self.hst.unpack()
        as_int = int if self.integral else float
        for j, obj in enumerate(self.mts):
            wfa, fol = obj.experts_[1], obj._follow
            obj._w = [as_int(v) for v in self.cw[j].tolist()]
            obj.position_, obj.requests_, obj.hit_cost_, obj.move_cost_ = (int(v) for v in self.cints[j])
            wfa._w = [as_int(v) for v in self.ww[j].tolist()]
            wfa.position_, wfa.requests_, wfa.hit_cost_, wfa.move_cost_ = (int(v) for v in self.wints[j])
            fol.costs[:] = [as_int(v) for v in self.fcost[j].tolist()]  # in place: expert_costs_ is this list
            fol._p = self.fp[j].tolist()
            fol.following, fol.switches = (int(v) for v in self.fint[j])
            fol.coins.bit_generator.state = self._states[j]
            if self.cused[j]:
                fol.coins.random(int(self.cused[j]))

    def kernel_args(self) -> tuple:
        """The arrays :func:`serve_block` hands the kernel, after the HST ones."""
        return (self.cw, self.cints, self.ww, self.wints, self.fcost, self.fp, self.fint, self.eta, self.coins,
                self.cused)


def _no_mix() -> tuple:
    i2, f2 = np.zeros((1, 1), dtype=np.int64), np.zeros((1, 1))
    return f2, i2, f2, i2, f2, f2, i2, 0.0, f2, np.zeros(1, dtype=np.int64)


def serve_block(requests: np.ndarray, t0: int, so: np.ndarray, load: np.ndarray, cover_n: np.ndarray,
                cover_j: np.ndarray, cover_x: np.ndarray, cuts: np.ndarray, B: np.ndarray, perm: np.ndarray,
                pack: HSTPack | MixPack | None, counters: np.ndarray) -> np.ndarray:
    """Serve ``requests`` (indices ``t0, t0 + 1, ...``) with the dynamic algorithm; return the migrations.

    ``so`` / ``load`` (the placement), ``cuts`` / ``B`` (the cut positions and slice boundaries)
    and ``counters`` (``[communication, moving, moved]``) are updated in place, and so is the
    objects' state behind ``pack`` (``None`` when there is one interval and nothing to decide).
    ``cover_n[e]`` intervals contain edge ``e``: interval ``cover_j[e, c]`` as its state
    ``cover_x[e, c]``.  Returns the block's net migrations as ``(M, 3)`` rows ``[request index,
    process, to server]``, each step's sorted by process.
    """
    from clusteropt.algorithms.ring import _numba_kernels as k

    req = np.ascontiguousarray(requests, dtype=np.int64)
    if pack is None:
        return k.dynamic_block_static(req, int(t0), so, counters)
    if isinstance(pack, MixPack):
        hits = np.zeros(pack.m, dtype=np.int64)
        for c in range(cover_j.shape[1]):
            on = cover_n[req] > c
            hits += np.bincount(cover_j[req[on], c], minlength=pack.m)
        pack.pack(hits)
        kind, hst, mix = 1, pack.hst, pack.kernel_args()
    else:
        pack.pack()
        kind, hst, mix = 0, pack, _no_mix()
    kernel: Any = k.dynamic_block  # numba's dispatcher types no signature
    try:
        rows = kernel(req, int(t0), so, load, cover_n, cover_j, cover_x, cuts, B, perm, kind,
                      hst.th, hst.de, hst.al, hst.sib, hst.cnt, hst.base, hst.shift, hst.u, hst.ints,
                      hst.fl, hst.w, hst.depth, hst.N, hst.hit, hst.alpha, *mix, counters)
    finally:
        pack.unpack()
    return rows


#: Switching coins drawn at a time by :func:`follow_block` (at most two a request are used).
FOLLOW_COINS = 4096


def _like(values, template) -> list:
    """``values`` as ints when every entry of ``template`` is an int (the reference keeps int costs so)."""
    as_int = all(isinstance(v, int) for v in template)
    return [int(v) if as_int else float(v) for v in values.tolist()]


def follow_block(algo, requests: np.ndarray, t0: int, placements: np.ndarray, logs: list) -> None:
    """The follower's part of ``FollowRing.serve_block``: the experts have served the block already.

    ``placements[i]`` is expert ``i``'s placement before the block and ``logs[i]`` its block's
    migrations.  The compiled loop runs until the block ends or an event needs the Python side
    (a switch, a growth of the scale, coins to draw); the follower's state is written back into
    ``algo`` before each event is handled and read again after it.
    """
    from clusteropt.algorithms.ring import _numba_kernels as k

    req = np.ascontiguousarray(requests, dtype=np.int64)
    state = algo.state_
    m = len(algo.experts_)
    P = np.array(placements, dtype=np.int64)
    sizes = [len(rows) for rows in logs]
    rows = np.concatenate([np.asarray(r, dtype=np.int64).reshape(-1, 3) for r in logs])
    end = np.cumsum(sizes).astype(np.int64)
    ptr = end - np.asarray(sizes, dtype=np.int64)
    out = np.zeros((max(1, int(end[-1])), 3), dtype=np.int64)
    nout = np.zeros(1, dtype=np.int64)
    counters = np.zeros(2, dtype=np.int64)
    last = np.zeros(m + 1)
    kernel: Any = k.follow_block
    r = 0
    recorded = 0  # rows of ``out`` already in the log
    while True:
        fol = algo._follow
        coins_state = fol.coins.bit_generator.state
        coins = fol.coins.random(FOLLOW_COINS)
        used = np.zeros(1, dtype=np.int64)
        fcost, tcost = np.array(fol.costs, dtype=float), np.array(algo._costs, dtype=float)
        fp, fint = np.array(fol._p, dtype=float), np.array([fol.following, fol.switches], dtype=np.int64)
        counters[:] = 0
        check = algo.scale == "adaptive" and algo.scale_ < algo.diameter_
        sigma = np.asarray(algo._sigma, dtype=np.int64)
        r_end, event = kernel(req, int(t0), r, state.server_of, state.load, P, rows, ptr, end, sigma, fcost, tcost,
                              fp, fint, float(fol.eta), coins, used, float(algo.alpha_), float(algo.scale_), check,
                              counters, out, nout, last)
        # write the state back (the coins: set back, then advanced by those used)
        fol.coins.bit_generator.state = coins_state
        if used[0]:
            fol.coins.random(int(used[0]))
        fol.costs[:] = _like(fcost, fol.costs)
        algo._costs[:] = _like(tcost, algo._costs)
        fol._p = fp.tolist()
        fol.following, fol.switches = int(fint[0]), int(fint[1])
        algo.hits_ += int(counters[0])
        done = int(nout[0])
        if r_end > r:  # requests r .. r_end - 1 are served completely
            state.record_block(t0 + r_end - 1, out[recorded:done], done - recorded, reason="follow")
            recorded = done
        if event == 0:
            return
        if event == 3:
            r = r_end
            continue
        # the rest of request r_end, as FollowRing.serve does it
        state.now = t0 + r_end
        step = last[:m].tolist()
        switch_cost = 0.0
        if event == 1:
            algo._relabel(P)
            switch_cost = algo.alpha_ * algo._sync(switched=True, placements=P)
        elif last[m]:
            algo._sync(switched=False, placements=P)
        if algo.scale == "adaptive" and algo.scale_ < algo.diameter_:
            big = max(max(step) - 1.0, switch_cost)
            if big > algo.scale_:
                algo._restart(big, P)
        state.end_step()
        r = r_end + 1
        if r >= req.size:
            return


def _check_math() -> bool:
    """``log`` / ``exp`` in compiled code equal CPython's on a few values (the bit-for-bit premise)."""
    from clusteropt.algorithms.ring import _numba_kernels as k

    xs = np.array([1e-300, 0.1, 0.5, 1.0, 1.5, 2.0 / 3.0, 7.25, 1e6])
    return all(k.log_exp(x) == math.log(x) + math.exp(-x) for x in xs.tolist())
