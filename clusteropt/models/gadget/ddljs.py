"""Paper 000 (GADGET, Yu et al.): the offline problem DDLJS as an exact MILP, for small instances.

Problem DDLJS (Sec. IV-3) schedules every job over all slots ``1 .. T`` at once, with the arrivals
known (the offline planning version the paper calls NP-hard, Sec. V): maximize
``sum_i mu_i(zeta_i Z_i)``, ``Z_i = sum_t sum_s y_is[t]``, subject to (2)-(9).  Its optimum is the
OPT of the competitive ratio of Theorems 6 and 10, so on instances small enough for a MILP solver
(``gadget_preset("tiny")``) it measures how far the online schedulers are from the best possible.

Variables and rows, all per slot ``t`` unless cumulative:

``y[i, s, t]``, ``x[i, s, t]``
    Workers of job i on server s (integer) and "job i uses server s" (binary).  ``eq5``:
    ``y <= x min{N_i, C_s^r / l_i^r, F_i^r / l_i^r}`` (Eq. (5), the three bounds floored since
    ``y`` is an integer); ``used``: ``x <= y`` (a used server hosts a worker, so ``x`` is exactly
    ``[y > 0]`` and the ring rows below see the true server set).  ``eq6``: ``y = 0`` before the
    arrival ``a_i`` (Eq. (6)); ``eq2``: ``sum_s y <= N_i`` (Eq. (2)); ``eq4``: server capacity
    ``sum_i l_i^r y <= C_s^r`` (Eq. (4)); ``eq3``: the cumulative limit
    ``sum_t sum_s l_i^r y <= F_i^r`` for every r with ``l_i^r > 0`` (Eq. (3)).
``Z[i]``
    Worker-slots ``z_{i,T}`` (``z_def``), an integer in ``0 .. Zmax_i`` with
    ``Zmax_i = min(budget_i, (T - a_i + 1) min(N_i, budget_i, sum_s fit_is))`` (``budget_i =
    floor(min_r F_i^r / l_i^r)``, ``fit_is`` the workers of job i server s holds alone).
Objective ``ddljs``: ``sum_i mu_i(zeta_i Z_i)``, exact at every integer ``Z_i``.
    The values ``mu_i(zeta_i m)``, ``m = 0 .. Zmax_i``, come from
    :meth:`GadgetInstance.utility_of` itself, so the MILP agrees with the instance (and with the
    checker) wherever it is evaluated, including ``log`` (``lambda_1 log(1 + x)``, finite at 0).
    ``utility_form="onehot"``: binaries ``w[i, m]`` pick the value of ``Z_i`` (``onehot``:
    ``sum_m w = 1``, ``z_onehot``: ``Z_i = sum_m m w``) and the objective is ``sum_m mu_i(zeta_i m)
    w[i, m]``: exact for any utility, needed for the sigmoid, which is not concave (Sec. IV-3 asks
    for concave ``mu_i``, yet the experiments of Sec. VI-1 use this sigmoid).
    ``utility_form="chords"``: a free ``U[i] <= mu(m) + (mu(m+1) - mu(m)) (Z - m)`` for every
    ``m`` (``chord``), no binaries; exact at integer ``Z`` when the values are concave in ``m``
    (then the smallest chord at an integer ``Z`` is the one through it, and the maximization
    drives ``U`` up to it).  ``"sqrt"``, ``"log"`` and ``"quadratic"`` (``lambda_1 x - lambda_2
    x^2 / 2`` with ``lambda_2 >= 0``, concave everywhere, also past its peak) are concave;
    ``"chords"`` refuses values that are not.  ``"auto"``: chords for those three, one-hot for
    the sigmoid.
Ring condition (9) and bandwidth (8), ``form="tree"`` (default on a tree, :meth:`Cluster.is_tree`)
    The linear form of :func:`clusteropt.models.gadget.gvne.build_gvne`'s tree form, per slot: per tree
    link (child ``c`` below its parent) ``inside[i, c, t]`` (a server of job i below c),
    ``outside[i, c, t]`` (one elsewhere) and ``span[i, c, t] >= inside + outside - 1``;
    ``eq8``: ``sum_i b_i span <= min(e^{c->p}, e^{p->c})``.  A ring visiting the job's servers in
    depth-first order crosses each tree link once in each direction iff the job has servers on
    both sides and never otherwise; any ring through those servers crosses such a link at least
    once each way, so this ring is the cheapest on every link at once and is the one read back.
    ``inside`` is bounded below by the node's own ``x`` (a server) and by ``inside`` of its
    children; ``outside[c]`` by ``outside`` of its parent, ``x`` of its parent (a server) and
    ``inside`` of its siblings.  The recursion covers servers at inner nodes too (a tree without
    switches).  Only these lower bounds are written, and that is exact also over many slots:
    ``inside``, ``outside`` and ``span`` appear nowhere else but on the left of the bandwidth rows
    ``eq8`` with coefficient ``b_i >= 0``, and the objective depends on ``y`` alone.  So from any
    feasible point, setting them to their definitions (the OR / OR / AND of the ``x`` they
    describe, which satisfy every lower-bound row) keeps it feasible with the same objective;
    and the rows of one slot never mention another slot, so a spurious 1 in slot t can only
    waste bandwidth in slot t, never help (3) or the objective.  The projection onto ``y`` is
    exactly the set of DDLJS-feasible ``y`` (per link bandwidth as in (19), which implies the
    bottleneck form (8)).
Ring condition (9) and bandwidth (8), ``form="flow"`` (any topology)
    The ring sizes vary with ``y``, so rather than one ring copy per size (the one-hot
    ``chi[i, kappa]`` of (13)-(15): ``K (K + 1) / 2`` ring nodes per job and slot for sizes up to
    ``K``, and an edge flow for each) the ring is modelled on its servers, one node per server:
    positions ``a = 0 .. M_i - 1`` (``M_i`` the most servers job i can use in a slot),
    ``varrho[i, a, u, t]`` = server u holds position a (Eq. (14)),
    ``pos[i, a, t] = sum_u varrho`` (position a is occupied), ``pos_prefix``: occupied positions
    are ``0 .. m - 1``, ``x_link``: ``sum_a varrho[i, a, u, t] = x[i, u, t]`` (a used server
    holds exactly one position: it is on the ring once, the degree-two condition of (9)).  Ring
    edge a goes from position a to position a + 1, or back to position 0 from the last one: a
    unit flow ``theta[i, a, (u, v), t]`` (Eq. (15)) with net supply ``varrho[a, u] -
    varrho[a + 1, u] - ret[a, u]`` at every server and 0 at switches, where ``ret[i, a, u, t]
    >= 0``, ``ret <= varrho[i, 0, u, t]`` and ``sum_u ret = pos[a] - pos[a + 1]`` (``ret_def``):
    the demand of the closing edge sits exactly on position 0's server, without a product of
    variables.  With one server the closing edge starts and ends there and needs no flow.
    ``eq8``: ``sum_i b_i sum_a theta[i, a, e, t] <= e^{u,v}`` per directed link (Eqs. (8), (17),
    (19)).  ``first``: position 0 holds the job's lowest-numbered server (rotating a ring changes
    neither its links nor its workers; this only removes symmetric copies).  Exact: a solution
    gives a cyclic order of distinct servers and, for each ring edge, a unit flow whose support
    contains a path using no link more often than the flow does; conversely a DDLJS ring (rotated
    to start at its lowest server, each walk shortened to a simple path, which loads no link
    more) is a solution.  Paths may pass through servers, as Eq. (7)'s ``P_ss'`` allows.

``relax=True`` gives the LP relaxation (an upper bound on the optimum).  Read an integral
solution back with :func:`schedule_from_solution`; :func:`ddljs_optimum` builds, solves (HiGHS by
default, ``mip_gap=0``) and reads back in one call.  The size grows like ``I T (S + tree links)``
(tree) or ``I T M_i (S + L)`` (flow) plus ``sum_i Zmax_i`` for a one-hot objective: meant for
``gadget_preset("tiny")``, a few jobs over a few slots.  Utility values below the solver's
tolerances (a sigmoid far below its inflection: ``gadget_preset("tiny", utility="sigmoid")``
gives values near 1e-70) are not told apart: the optimum is then optimal only up to them.
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np
import pyomo.environ as pyo

from clusteropt.decisions.gadget import GadgetSchedule, Ring, SlotAllocation
from clusteropt.instances.gadget.instance import GadgetInstance
from clusteropt.models.gadget.gvne import tree_layout
from clusteropt.models.registry import ModelSpec, register_model
from clusteropt.models.size import check_model_size

__all__ = ["build_ddljs", "ddljs_optimum", "schedule_from_solution"]

log = logging.getLogger(__name__)

#: Utilities whose form is concave for every allowed parameter (``lambda_1, lambda_2 >= 0``).
CONCAVE_UTILITIES = ("sqrt", "log", "quadratic")


@dataclasses.dataclass(frozen=True)
class _Data:
    """The numbers both forms share (module docstring)."""

    ub: np.ndarray  # (I, S) int: the bound of Eq. (5)
    kmax: np.ndarray  # (I,) int: most workers of job i in one slot
    zmax: np.ndarray  # (I,) int: most worker-slots of job i over the horizon
    values: tuple[np.ndarray, ...]  # mu_i(zeta_i m), m = 0 .. max(zmax_i, 1)
    ring: tuple[tuple[int, int], ...]  # (i, t) where job i may use two or more servers


def _data(inst: GadgetInstance) -> _Data:
    cl = inst.cluster
    pw = np.asarray(inst.per_worker, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        per = np.where(pw[:, None, :] > 0, cl.capacity[None, :, :] / np.where(pw > 0, pw, 1)[:, None, :], np.inf)
    fit = np.floor(per.min(axis=2) + 1e-9)  # (I, S), finite: every job has some l_i^r > 0
    budget = inst.budget.astype(float)
    ub = np.minimum(np.minimum(fit, inst.max_workers[:, None].astype(float)), budget[:, None]).astype(np.int64)
    ub = np.maximum(ub, 0)
    kmax = np.minimum(np.minimum(inst.max_workers, inst.budget), ub.sum(axis=1)).astype(np.int64)
    kmax = np.maximum(kmax, 0)
    slots = inst.horizon - inst.arrival + 1
    zmax = np.maximum(np.minimum(inst.budget, slots * kmax), 0).astype(np.int64)
    values = []
    for i in range(inst.n_jobs):
        grid = np.zeros((inst.n_jobs, int(max(zmax[i], 1)) + 1))
        grid[i] = np.arange(grid.shape[1])
        values.append(np.asarray(inst.utility_of(grid)[i], dtype=float))
    n_fit = (ub >= 1).sum(axis=1)
    ring = tuple((i, t) for i in range(inst.n_jobs) if kmax[i] >= 2 and n_fit[i] >= 2
                 for t in range(int(inst.arrival[i]), inst.horizon + 1))
    return _Data(ub, kmax, zmax, tuple(values), ring)


def build_ddljs(inst: GadgetInstance, *, form: str = "auto", relax: bool = False,
                utility_form: str = "auto") -> pyo.ConcreteModel:
    """Problem DDLJS over slots ``1 .. T`` as a MILP (module docstring), or its LP relaxation.

    Parameters
    ----------
    inst : GadgetInstance
    form : {"auto", "tree", "flow"}
        Linear form of the ring condition (9) and the bandwidth rows (8): ``"tree"`` (no routing
        variables; tree clusters only), ``"flow"`` (ring positions and unit flows; any
        topology), ``"auto"``: tree when :meth:`Cluster.is_tree`.
    relax : bool
        Continuous variables (binaries in [0, 1]) instead of integers: the LP relaxation.
    utility_form : {"auto", "onehot", "chords"}
        Linearization of ``mu_i``: one-hot over the values of ``Z_i`` (any utility) or the chords
        of a concave one; ``"auto"``: chords for sqrt / log / quadratic, one-hot for the sigmoid.

    Returns
    -------
    pyomo.environ.ConcreteModel
        Maximization objective ``ddljs``; ``model.form`` and ``model.utility_form`` say what was
        built.

    Raises
    ------
    ValueError
        Unknown ``form`` or ``utility_form``, ``form="tree"`` on a cluster that is not a tree,
        ``utility_form="chords"`` on utility values that are not concave.

    Examples
    --------
    >>> from clusteropt.instances.gadget.instance import gadget_preset
    >>> m = build_ddljs(gadget_preset("tiny", jobs=3, seed=0, utility="sqrt"))
    >>> m.form, m.utility_form, len(m.T), m.y.is_indexed()
    ('tree', 'chords', 4, True)
    """
    tree = inst.cluster.is_tree()
    if form == "auto":
        form = "tree" if tree else "flow"
    if form not in ("tree", "flow"):
        raise ValueError(f"form = {form!r}; expected 'auto', 'tree' or 'flow'")
    if form == "tree" and not tree:
        raise ValueError("form='tree' needs a tree cluster (Cluster.is_tree() is False); use form='flow'")
    if utility_form == "auto":
        utility_form = "chords" if inst.utility in CONCAVE_UTILITIES else "onehot"
    if utility_form not in ("onehot", "chords"):
        raise ValueError(f"utility_form = {utility_form!r}; expected 'auto', 'onehot' or 'chords'")
    n_y = inst.n_jobs * inst.cluster.n_servers * inst.horizon
    check_model_size("ddljs", 2 * n_y, f"{inst.n_jobs} jobs x {inst.cluster.n_servers} servers x {inst.horizon} "
                     "slots, y and x alone; the ring variables come on top",
                     advice="DDLJS is the exact offline optimum of small instances; use a shorter horizon "
                            "or fewer jobs.")
    data = _data(inst)  # the utility tables: after the size check, they grow with the budgets
    if utility_form == "chords":
        for i, v in enumerate(data.values):
            d2 = np.diff(v, 2)
            scale = max(1.0, float(np.abs(v).max()))
            if d2.size and d2.max() > 1e-9 * scale:
                raise ValueError(f"utility_form='chords' needs concave utility values; job {i} "
                                 f"({inst.utility}) is not concave in its worker-slots: use 'onehot'")
    m = pyo.ConcreteModel(name=f"ddljs-{form}")
    m.form = form
    m.utility_form = utility_form
    _core(m, inst, data, relax)
    _objective(m, inst, data, relax, utility_form)
    if form == "tree":
        _tree_rings(m, inst, data, relax)
    else:
        _flow_rings(m, inst, data, relax)
    return m


def _le(lhs, bound):
    """``lhs <= bound``, or no row when ``lhs`` has no variable (an empty sum is the number 0)."""
    return pyo.Constraint.Skip if isinstance(lhs, int | float) else lhs <= float(bound)


def _core(m: pyo.ConcreteModel, inst: GadgetInstance, data: _Data, relax: bool) -> None:
    """Sets, ``y``, ``x``, ``Z`` and rows (2)-(6)."""
    cl = inst.cluster
    n_jobs, n_srv, horizon = inst.n_jobs, cl.n_servers, inst.horizon
    arrival = inst.arrival.tolist()
    binary = pyo.UnitInterval if relax else pyo.Binary
    pw, lim, cap = inst.per_worker, inst.limit, cl.capacity
    m.I = pyo.Set(initialize=range(n_jobs), doc="jobs i")
    m.S = pyo.Set(initialize=range(n_srv), doc="servers s (substrate nodes with resources)")
    m.T = pyo.Set(initialize=range(1, horizon + 1), doc="slots t = 1 .. T")
    m.R = pyo.Set(initialize=range(len(cl.resources)), doc="resource types r")
    m.IT = pyo.Set(dimen=2, initialize=[(i, t) for i in range(n_jobs) for t in range(arrival[i], horizon + 1)],
                   doc="(i, t) with t >= a_i: job i may run in slot t")
    m.y = pyo.Var(m.I, m.S, m.T, domain=pyo.NonNegativeReals if relax else pyo.NonNegativeIntegers,
                  bounds=lambda m, i, s, t: (0, int(data.ub[i, s])), doc="y_is[t]: workers of job i on server s")
    m.x = pyo.Var(m.I, m.S, m.T, domain=binary, doc="x_is[t]: job i uses server s in slot t (Eq. (5))")
    m.eq2 = pyo.Constraint(m.IT, rule=lambda m, i, t: sum(m.y[i, s, t] for s in m.S) <= int(inst.max_workers[i]),
                           doc="(2) at most N_i workers per slot")
    m.eq3 = pyo.Constraint(
        [(i, r) for i in range(n_jobs) for r in range(len(cl.resources)) if pw[i, r] > 0],
        rule=lambda m, i, r: float(pw[i, r]) * sum(m.y[i, s, t] for s in m.S for t in m.T) <= float(lim[i, r]),
        doc="(3) cumulative type-r use at most F_i^r")
    m.eq4 = pyo.Constraint(m.S, m.R, m.T, rule=lambda m, s, r, t: _le(sum(
        float(pw[i, r]) * m.y[i, s, t] for i in m.I if pw[i, r] > 0), cap[s, r]),
        doc="(4) server capacity C_s^r")
    m.eq5 = pyo.Constraint(m.I, m.S, m.T, doc="(5) y <= x min{N_i, C_s^r / l_i^r, F_i^r / l_i^r} (floored)",
                           rule=lambda m, i, s, t: m.y[i, s, t] <= int(data.ub[i, s]) * m.x[i, s, t])
    m.used = pyo.Constraint(m.I, m.S, m.T, rule=lambda m, i, s, t: m.x[i, s, t] <= m.y[i, s, t],
                            doc="x_is[t] = 1 only on a server hosting a worker (x = [y > 0] with (5))")
    m.eq6 = pyo.Constraint([(i, s, t) for i in range(n_jobs) for s in range(n_srv) for t in range(1, arrival[i])],
                           rule=lambda m, i, s, t: m.y[i, s, t] == 0, doc="(6) no worker before arrival a_i")
    m.Z = pyo.Var(m.I, domain=pyo.NonNegativeReals if relax else pyo.NonNegativeIntegers,
                  bounds=lambda m, i: (0, int(data.zmax[i])), doc="Z_i = z_{i,T}: worker-slots of job i (DDLJS)")
    m.z_def = pyo.Constraint(m.I, rule=lambda m, i: m.Z[i] == sum(m.y[i, s, t] for s in m.S for t in m.T),
                             doc="Z_i = sum_t sum_s y_is[t] (DDLJS objective's argument)")


def _objective(m: pyo.ConcreteModel, inst: GadgetInstance, data: _Data, relax: bool, utility_form: str) -> None:
    """``sum_i mu_i(zeta_i Z_i)``, exact at integer ``Z_i`` (module docstring)."""
    values = data.values
    if utility_form == "onehot":
        m.M = pyo.Set(dimen=2, doc="(i, m): the values Z_i may take",
                      initialize=[(i, k) for i in range(inst.n_jobs) for k in range(int(data.zmax[i]) + 1)])
        m.w = pyo.Var(m.M, domain=pyo.UnitInterval if relax else pyo.Binary, doc="w[i, m] = 1 iff Z_i = m")
        m.onehot = pyo.Constraint(m.I, rule=lambda m, i: sum(m.w[i, k] for k in range(int(data.zmax[i]) + 1)) == 1,
                                  doc="one value of Z_i")
        m.z_onehot = pyo.Constraint(m.I, rule=lambda m, i: m.Z[i] == sum(
            k * m.w[i, k] for k in range(1, int(data.zmax[i]) + 1)), doc="Z_i = sum_m m w[i, m]")
        m.ddljs = pyo.Objective(expr=sum(float(values[i][k]) * m.w[i, k] for i, k in m.M), sense=pyo.maximize,
                                doc="DDLJS: sum_i mu_i(zeta_i Z_i) = sum_i sum_m mu_i(zeta_i m) w[i, m]")
        return
    lo = {i: float(v[: int(data.zmax[i]) + 1].min()) for i, v in enumerate(values)}
    hi = {i: float(v[: int(data.zmax[i]) + 1].max()) for i, v in enumerate(values)}
    m.U = pyo.Var(m.I, bounds=lambda m, i: (lo[i], hi[i]), doc="U_i = mu_i(zeta_i Z_i) at the optimum")
    m.CH = pyo.Set(dimen=2, doc="(i, m): chord of mu_i between m and m + 1",
                   initialize=[(i, k) for i in range(inst.n_jobs) for k in range(max(int(data.zmax[i]), 1))])
    m.chord = pyo.Constraint(m.CH, rule=lambda m, i, k: m.U[i] <= float(values[i][k]) + float(
        values[i][k + 1] - values[i][k]) * (m.Z[i] - k), doc="U_i below every chord of the concave mu_i")
    m.ddljs = pyo.Objective(expr=sum(m.U[i] for i in m.I), sense=pyo.maximize,
                            doc="DDLJS: sum_i mu_i(zeta_i Z_i) (chord envelope, exact at integer Z_i)")


def _tree_rings(m: pyo.ConcreteModel, inst: GadgetInstance, data: _Data, relax: bool) -> None:
    """(8)-(9) on a tree: ``inside`` / ``outside`` / ``span`` per tree link and slot."""
    cl = inst.cluster
    lay = tree_layout(cl)
    m.layout = lay
    n_srv = cl.n_servers
    binary = pyo.UnitInterval if relax else pyo.Binary
    m.C = pyo.Set(initialize=sorted(lay.parent), doc="tree links: the link pair above every non-root node c")
    m.P = pyo.Set(dimen=2, initialize=list(data.ring), doc="(i, t) where job i may use two or more servers")
    pct = [(i, c, t) for i, t in data.ring for c in sorted(lay.parent)]
    m.PC = pyo.Set(dimen=3, initialize=pct, doc="(i, c, t)")
    m.inside = pyo.Var(m.PC, domain=binary, doc="a server of job i below c in slot t")
    m.outside = pyo.Var(m.PC, domain=binary, doc="a server of job i not below c in slot t")
    m.span = pyo.Var(m.PC, domain=binary, doc="job i's ring crosses the link above c, once each way (Eq. (9))")
    m.inside_srv = pyo.Constraint([(i, c, t) for i, c, t in pct if c < n_srv], doc="inside >= a server's own x",
                                  rule=lambda m, i, c, t: m.inside[i, c, t] >= m.x[i, c, t])
    m.inside_up = pyo.Constraint([(i, c, t, d) for i, c, t in pct for d in lay.children[c]],
                                 rule=lambda m, i, c, t, d: m.inside[i, c, t] >= m.inside[i, d, t],
                                 doc="inside >= inside of every child")
    root = lay.root
    m.outside_up = pyo.Constraint([(i, c, t) for i, c, t in pct if lay.parent[c] != root],
                                  rule=lambda m, i, c, t: m.outside[i, c, t] >= m.outside[i, lay.parent[c], t],
                                  doc="outside >= outside of the parent")
    m.outside_par = pyo.Constraint([(i, c, t) for i, c, t in pct if lay.parent[c] < n_srv],
                                   rule=lambda m, i, c, t: m.outside[i, c, t] >= m.x[i, lay.parent[c], t],
                                   doc="outside >= x of the parent (a server)")
    sibling = [(i, c, t, d) for i, c, t in pct for d in lay.children[lay.parent[c]] if d != c]
    m.outside_sib = pyo.Constraint(sibling, rule=lambda m, i, c, t, d: m.outside[i, c, t] >= m.inside[i, d, t],
                                   doc="outside >= inside of every sibling")
    m.span_def = pyo.Constraint(m.PC, rule=lambda m, i, c, t: m.span[i, c, t] >= m.inside[i, c, t]
                                + m.outside[i, c, t] - 1, doc="(9) ring crosses the link above c iff servers on "
                                                              "both sides (depth-first ring)")
    bw = inst.bandwidth
    link_cap = {c: min(float(cl.bandwidth[lay.up[c]]), float(cl.bandwidth[lay.down[c]])) for c in lay.parent}
    by_slot: dict[int, list[int]] = {}
    for i, t in data.ring:
        by_slot.setdefault(t, []).append(i)
    m.eq8 = pyo.Constraint(m.C, m.T, rule=lambda m, c, t: _le(sum(
        float(bw[i]) * m.span[i, c, t] for i in by_slot.get(t, []) if bw[i] > 0), link_cap[c]),
        doc="(8), (19) bandwidth b_i on both directions of the link above c")


def _flow_rings(m: pyo.ConcreteModel, inst: GadgetInstance, data: _Data, relax: bool) -> None:
    """(8)-(9) on any topology: ring positions ``varrho`` and unit flows ``theta`` per slot."""
    cl = inst.cluster
    n_srv = cl.n_servers
    binary = pyo.UnitInterval if relax else pyo.Binary
    fit = {i: [s for s in range(n_srv) if data.ub[i, s] >= 1] for i in range(inst.n_jobs)}
    npos = {i: int(min(data.kmax[i], len(fit[i]))) for i in range(inst.n_jobs)}
    m.positions = npos
    m.P = pyo.Set(dimen=2, initialize=list(data.ring), doc="(i, t) where job i may use two or more servers")
    pa = [(i, a, t) for i, t in data.ring for a in range(npos[i])]
    pau = [(i, a, u, t) for i, a, t in pa for u in fit[i]]
    m.PA = pyo.Set(dimen=3, initialize=pa, doc="(i, a, t): ring position a of job i in slot t")
    m.PAU = pyo.Set(dimen=4, initialize=pau, doc="(i, a, u, t): position a on server u (u fits a worker)")
    m.PAE = pyo.Set(dimen=4, initialize=[(i, a, e, t) for i, a, t in pa for e in range(cl.n_links)],
                    doc="(i, a, e, t): ring edge a (position a -> next) over link e")
    m.varrho = pyo.Var(m.PAU, domain=binary, doc="varrho[i, a, u, t]: ring position a on server u (Eq. (14))")
    m.pos = pyo.Var(m.PA, domain=binary, doc="ring position a is occupied")
    m.theta = pyo.Var(m.PAE, domain=binary, doc="theta[i, a, (u, v), t]: ring edge a over link (u, v) (Eq. (15))")
    m.ret = pyo.Var(m.PAU, bounds=(0, 1), doc="ret[i, a, u, t] = 1: ring edge a closes the ring at server u")

    fit_set = {i: set(v) for i, v in fit.items()}

    def vr(m, i, a, u, t):
        return m.varrho[i, a, u, t] if a < npos[i] and u in fit_set[i] else 0

    m.pos_def = pyo.Constraint(m.PA, rule=lambda m, i, a, t: m.pos[i, a, t] == sum(
        m.varrho[i, a, u, t] for u in fit[i]), doc="(14) an occupied position is on one server")
    m.pos_prefix = pyo.Constraint([(i, a, t) for i, a, t in pa if a >= 1],
                                  rule=lambda m, i, a, t: m.pos[i, a, t] <= m.pos[i, a - 1, t],
                                  doc="occupied positions are 0 .. m - 1")
    m.x_link = pyo.Constraint([(i, u, t) for i, t in data.ring for u in fit[i]], rule=lambda m, i, u, t: sum(
        m.varrho[i, a, u, t] for a in range(npos[i])) == m.x[i, u, t],
        doc="(9) a used server is on the ring exactly once")
    m.first = pyo.Constraint([(i, a, u, t) for i, a, u, t in pau if a >= 1], rule=lambda m, i, a, u, t: (
        m.varrho[i, a, u, t] <= sum(m.varrho[i, 0, v, t] for v in fit[i] if v < u)) if u > fit[i][0] else (
        m.varrho[i, a, u, t] == 0), doc="symmetry: position 0 holds the job's lowest server")
    m.ret_cap = pyo.Constraint(m.PAU, rule=lambda m, i, a, u, t: m.ret[i, a, u, t] <= m.varrho[i, 0, u, t],
                               doc="the closing edge ends at position 0's server")
    m.ret_def = pyo.Constraint(m.PA, rule=lambda m, i, a, t: sum(m.ret[i, a, u, t] for u in fit[i]) == m.pos[
        i, a, t] - (m.pos[i, a + 1, t] if a + 1 < npos[i] else 0), doc="ring edge a closes the ring iff a is last")
    out_links: list[list[int]] = [[] for _ in range(cl.n_nodes)]
    in_links: list[list[int]] = [[] for _ in range(cl.n_nodes)]
    for e, (u, v) in enumerate(cl.links.tolist()):
        out_links[u].append(e)
        in_links[v].append(e)

    def eq15(m, i, a, node, t):
        lhs = sum(m.theta[i, a, e, t] for e in out_links[node]) - sum(m.theta[i, a, e, t] for e in in_links[node])
        if node >= n_srv or node not in fit_set[i]:
            return pyo.Constraint.Skip if isinstance(lhs, int) else lhs == 0
        return lhs == vr(m, i, a, node, t) - vr(m, i, a + 1, node, t) - m.ret[i, a, node, t]

    m.V = pyo.Set(initialize=range(cl.n_nodes), doc="V_s: substrate nodes (servers, then switches)")
    m.eq15 = pyo.Constraint(m.PA, m.V, rule=lambda m, i, a, t, node: eq15(m, i, a, node, t),
                            doc="(15) unit flow of ring edge a from its position's server to the next one's")
    bw = inst.bandwidth
    by_slot: dict[int, list[tuple[int, int]]] = {}
    for i, a, t in pa:
        if bw[i] > 0:
            by_slot.setdefault(t, []).append((i, a))
    m.L = pyo.Set(initialize=range(cl.n_links), doc="directed links (u, v)")
    m.eq8 = pyo.Constraint(m.L, m.T, rule=lambda m, e, t: _le(sum(
        float(bw[i]) * m.theta[i, a, e, t] for i, a in by_slot.get(t, [])), cl.bandwidth[e]),
        doc="(8), (17), (19) link bandwidth e^{u,v}")


def _value(v, tol: float) -> int:
    x = pyo.value(v, exception=False)
    if x is None:
        raise ValueError(f"{v.name} has no value: solve the model first")
    x = float(x)
    if abs(x - round(x)) > tol:
        raise ValueError(f"{v.name} = {x}: the solution is fractional (an LP relaxation?); expected integers")
    return round(x)


def schedule_from_solution(inst: GadgetInstance, model: pyo.ConcreteModel, *, tol: float = 1e-6) -> GadgetSchedule:
    """Read an integral solution of :func:`build_ddljs` into a :class:`GadgetSchedule`.

    Workers are ``y[i, s, t]``, and ``x[i, s, t]`` must be integral and equal ``[y > 0]``.  Rings
    of jobs on two or more servers: tree form, the servers in depth-first order
    (:func:`clusteropt.models.gadget.gvne.tree_layout`) joined by the tree's unique paths
    (:meth:`Cluster.paths`); with ``y`` and ``x`` integral the lower-bound rows force ``span = 1``
    on every link that ring crosses, so even a relaxed point whose ``y`` and ``x`` happen to be
    integral reads as a feasible schedule.  Flow form: the servers in the order of their ring
    positions ``varrho``, each ring edge routed on a path inside the support of its flow
    ``theta`` (both checked integral).

    Raises
    ------
    ValueError
        A value is fractional beyond ``tol`` or missing (the model was not solved), the model
        does not match ``inst``, or (flow form) the positions disagree with the workers.
    """
    cl = inst.cluster
    n_jobs, n_srv = inst.n_jobs, cl.n_servers
    if (len(model.I), len(model.S), len(model.T)) != (n_jobs, n_srv, inst.horizon):
        raise ValueError(f"the model has {len(model.I)} jobs, {len(model.S)} servers and {len(model.T)} slots; "
                         f"the instance {n_jobs}, {n_srv} and {inst.horizon}")
    slots = []
    paths = cl.paths() if model.form == "tree" else None
    ring_pairs = set(model.P)
    for t in range(1, inst.horizon + 1):
        alloc = SlotAllocation.empty(n_jobs, n_srv)
        for i in range(n_jobs):
            for s in range(n_srv):
                alloc.workers[i, s] = _value(model.y[i, s, t], tol)
                if _value(model.x[i, s, t], tol) != (alloc.workers[i, s] > 0):
                    raise ValueError(f"x[{i}, {s}, {t}] disagrees with y[{i}, {s}, {t}] = {alloc.workers[i, s]}")
        for i in range(n_jobs):
            on = np.flatnonzero(alloc.workers[i]).tolist()
            if len(on) < 2:
                continue
            if (i, t) not in ring_pairs:
                raise ValueError(f"slot {t}: job {i} is on servers {on} but the model has no ring for it")
            if model.form == "tree":
                assert paths is not None  # computed above for the tree form
                order = [s for s in model.layout.dfs_order if alloc.workers[i, s] > 0]
                alloc.rings[i] = Ring(tuple(order), tuple(tuple(paths[order[k], order[(k + 1) % len(order)]])
                                                          for k in range(len(order))))
            else:
                alloc.rings[i] = _flow_ring(inst, model, i, t, on, tol)
        slots.append(alloc)
    return GadgetSchedule(slots)


def _flow_ring(inst: GadgetInstance, model: pyo.ConcreteModel, i: int, t: int, on: list[int], tol: float) -> Ring:
    """Job i's ring in slot t from the positions ``varrho`` and the flows ``theta``."""
    cl = inst.cluster
    order = []
    for a in range(model.positions[i]):
        here = [u for u in range(cl.n_servers)
                if (i, a, u, t) in model.PAU and _value(model.varrho[i, a, u, t], tol)]
        if len(here) > 1:
            raise ValueError(f"slot {t}, job {i}: ring position {a} on servers {here}")
        order += here
    if sorted(order) != on or len(order) != len(set(order)):
        raise ValueError(f"slot {t}, job {i}: ring positions on servers {order}, workers on servers {on}")
    ring_paths = []
    for a, u in enumerate(order):
        support = [e for e in range(cl.n_links) if _value(model.theta[i, a, e, t], tol)]
        ring_paths.append(_path(cl, u, order[(a + 1) % len(order)], support))
    return Ring(tuple(order), tuple(ring_paths))


def _path(cl, src: int, dst: int, support: list[int]) -> tuple[int, ...]:
    """A simple path (link indices) from ``src`` to ``dst`` over ``support``, by breadth-first search."""
    prev: dict[int, int | None] = {src: None}
    frontier = [src]
    while frontier and dst not in prev:
        nxt = []
        for node in frontier:
            for e in support:
                tail, head = int(cl.links[e, 0]), int(cl.links[e, 1])
                if tail == node and head not in prev:
                    prev[head] = e
                    nxt.append(head)
        frontier = nxt
    if dst not in prev:
        raise ValueError(f"the flow of a ring edge has no path from node {src} to node {dst}")
    out = []
    node = dst
    while (link := prev[node]) is not None:
        out.append(link)
        node = int(cl.links[link, 0])
    return tuple(reversed(out))


def ddljs_optimum(inst: GadgetInstance, *, form: str = "auto", solver: str | None = None,
                  time_limit: float | None = None, mip_gap: float | None = 0.0):
    """Solve DDLJS exactly: ``(value, schedule, result)``.

    ``value`` is the total utility of ``schedule`` recomputed with
    :meth:`GadgetInstance.utility_of` (equal to ``result.objective`` up to the solver's
    tolerances); ``result`` the :class:`~clusteropt.solvers.SolveResult`.  ``mip_gap`` defaults to
    0 (HiGHS would otherwise stop at a relative gap of 1e-4: not an optimum to compare online
    schedulers with).  A solve that stops with an incumbent but without proving optimality (time
    limit) still returns it: ``result.termination`` is then not ``OPTIMAL``, ``result.bound`` is
    the proven upper bound, and a warning is logged; check ``result.is_optimal`` before calling
    ``value`` the optimum.

    Raises
    ------
    RuntimeError
        The solver stopped without any solution.

    Examples
    --------
    >>> from clusteropt.instances.gadget.instance import Cluster, GadgetInstance
    >>> c = Cluster([[2], [1]], links=[[0, 2], [2, 0], [1, 2], [2, 1]], bandwidth=[5, 5, 5, 5], n_switches=1)
    >>> inst = GadgetInstance(c, horizon=2, arrival=[1, 2], max_workers=[3, 1], per_worker=[[1], [1]],
    ...                       limit=[[4], [1]], bandwidth=[1.0, 1.0], zeta=[1.0, 1.0], utility="sqrt",
    ...                       utility_params=[[1.0, 0, 0], [2.0, 0, 0]])
    >>> value, schedule, result = ddljs_optimum(inst)
    >>> round(value, 6), schedule.worker_slots().tolist(), result.termination.name   # sqrt(4) + 2 sqrt(1)
    (4.0, [4, 1], 'OPTIMAL')
    """
    model = build_ddljs(inst, form=form)
    from clusteropt.solvers import solve  # here, not at the top: clusteropt.solvers imports the models

    res = solve(model, solver, time_limit=time_limit, mip_gap=mip_gap, raise_on_nonoptimal=False)
    if not res.has_solution:
        raise RuntimeError(f"DDLJS ({model.form} form) stopped with {res.termination.name} and no solution")
    if not res.is_optimal:
        log.warning("DDLJS stopped with %s (objective %s, bound %s, gap %s): returning the incumbent",
                    res.termination.name, res.objective, res.bound, res.gap)
    schedule = schedule_from_solution(inst, model)
    value = float(np.asarray(inst.utility_of(schedule.worker_slots()), dtype=float).sum())
    return value, schedule, res


def _ddljs_builder(inst: GadgetInstance, relax: bool = False, form: str = "auto", utility_form: str = "auto"):
    """Registry builder: :func:`build_ddljs`."""
    return build_ddljs(inst, form=form, relax=relax, utility_form=utility_form)


register_model(ModelSpec(
    "ddljs", "gadget", _ddljs_builder, "pyomo",
    "paper 000 DDLJS (2)-(9): the offline problem over all slots as an exact MILP (tree form on tree "
    "clusters, ring positions and flows otherwise; small instances)"))
