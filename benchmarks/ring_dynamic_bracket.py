"""Ring partitioning (paper 004): OPT_dyn bracketed where the exact DP cannot run.

For every instance of the recorded ``ring-ratio`` (n = 8..64, 4 servers) and ``ring-ratio-exact``
(n = 6..12, 3 servers) experiments, rebuilt from its recorded parameters and seed (and checked
against the recorded request count and window bound, so it is the very instance the policies ran
on):

- ``window``: the window lower bound on OPT_dyn (``dynamic_window_bound``; the experiments record it);
- ``cut``: the DP over cut sets (``dynamic_cut_bound``), another lower bound, for ``n <= --cut-max-n``
  (default 16: ``2^n`` states); beyond it, with ``--cut-block B``, its relaxation separated into
  arcs of ``B`` edges (``dynamic_cut_bound(..., block=B)``: weaker, ``2^B`` states per arc);
- ``lp``: the cut-set LP's certified bound (``clusteropt.models.ring.cut.dynamic_cut_lp_bound``: the
  LP solved by HiGHS in pieces of (by default) 500 compressed requests, its window-row duals evaluated as a
  Lagrangian of the whole LP by ``clusteropt.verify.ring.cut_lagrangian_bound``), a lower bound at
  any n, for ``n <= --lp-max-n`` (default 32; its time per instance is the column ``LP s``);
  without the LP's min-move rows unless ``--lp-min-move`` (they cost HiGHS several times the
  time: ``python -m benchmarks.ring_cut_lp`` measures both forms); ``--lp-patterns`` limits it
  to some patterns, ``--lp-chunk`` and ``--lp-overlap`` set the pieces, ``--lp-sweeps`` how they
  are joined (default one sweep of block coordinate ascent, each piece priced by the requests
  outside it; 0: independent pieces);
- ``move_lp``: the move LP's certified bound (``clusteropt.models.ring.move.dynamic_move_lp_bound``:
  the cut-set LP with process moves and run-end rows, solved whole), for ``n <= --move-lp-max-n``
  (default 16; 0: never);
- ``lb = max(window, cut, lp, move_lp)``;
- ``arc``: the moving-arcs upper bound (``dynamic_arc_bound``: the best offline solution that
  keeps every server on one arc of k processes and may rotate or relabel the arcs before any
  request), whose schedule is replayed by ``check_ring_run`` at capacity k;
- ``swap_arc``: the swap-neighbourhood search started from the arc bound's schedule
  (``clusteropt.algorithms.ring.swap_search.dynamic_swap_search``: rounds of an exact DP over the
  schedule's swaps of two processes, then over re-timings of its labellings, until a round gains
  nothing), at most ``arc``;
- ``swap``: the better of ``swap_arc`` and the same search started from the arc bound with the
  static optimum's placement among its candidates (``dynamic_swap_bound``; the placement is the
  static MILP's, ``ring_static_optimum`` re-solved here with a limit of ``--static-time-limit``
  seconds, its incumbent used if it is not proved); ``swap_start`` says which start won; both
  schedules are replayed by ``check_ring_run`` at capacity k;
- ``ub = min(swap, OPT_static)`` (OPT_static when the experiment's MILP proved it).

So ``lb <= OPT_dyn <= ub``, and each policy's ALG / OPT_dyn lies in ``[ALG / ub, ALG / lb]``; the
policies' costs are read from the recorded ``results.csv`` (not re-run).  Where the DP gives OPT_dyn
(``ring-ratio-exact``), ``arc / OPT_dyn`` shows how close the upper bound comes.  The time of
each bound is recorded (the DPs list their states in the same call; the LP's time is its pieces'
build and hand-off, HiGHS's runs and the certificate together, HiGHS's alone in the JSON as
``lp_solve_seconds``).

Run ``python -m benchmarks.ring_dynamic_bracket`` (writes ``benchmarks/results/``) or ``--quick``
(n <= 12 only, the cut-set DP to n = 12, the LP and the move LP to n = 6, print only).  ``--reuse
FILE`` takes the cut-set DP and LP bounds of the instances an earlier run's JSON already holds
(same LP options; each instance matched by experiment, cell seed, pattern, n and its window
bound) and computes the rest, so a new column or a larger ``--lp-max-n`` does not redo hours of
LPs; the report names the file, its creation time and code version, and marks every reused bound
(``cut_reused``, ``lp_reused``; the move LP's values too, ``move_lp_reused``).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.algorithms.ring.offline import dynamic_arc_bound, dynamic_cut_bound, dynamic_window_bound
from clusteropt.algorithms.ring.swap_search import dynamic_swap_search
from clusteropt.experiments.ring import INSTANCE_KEYS, ring_instance
from clusteropt.instances.ring import RingInstance
from clusteropt.models.ring.cut import CHUNK, IPM_OPTIONS, OVERLAP, SWEEPS, dynamic_cut_lp_bound
from clusteropt.models.ring.move import dynamic_move_lp_bound
from clusteropt.models.ring.offline import ring_static_optimum
from clusteropt.verify import check_ring_run

log = logging.getLogger(__name__)

NAME = "ring_dynamic_bracket"
RECORDS = Path(__file__).resolve().parent / "results" / "experiments"
EXPERIMENTS = ("ring-ratio-exact", "ring-ratio")
POLICIES = ("dynamic", "dynamic-wfa", "dynamic-soft", "static", "greedy", "never", "static-best")
_REL = 1e-9


def recorded_instances(table: pd.DataFrame) -> pd.DataFrame:
    """One row per recorded instance of a ring experiment's ``results.csv`` (its parameters, seed
    and the recorded bounds), from which :func:`clusteropt.experiments.ring.ring_instance` rebuilds it."""
    keys = [k for k in INSTANCE_KEYS if k in table.columns]
    first = table.drop_duplicates(["cell_seed", *keys])
    return first[[*keys, "seed", "cell_seed", "n_requests", "opt_static", "static_denominator",
                  "opt_dynamic_lb", "opt_dynamic", "dynamic_denominator"]]


def rebuild(experiment: str, r: pd.Series) -> tuple[RingInstance, float]:
    """The instance of a row of :func:`recorded_instances` and its window bound, after checking both
    against the record (its request count and ``opt_dynamic_lb``): the very instance the policies ran on."""
    inst = ring_instance({k: r[k] for k in INSTANCE_KEYS if k in r.index}, int(r.cell_seed))
    if inst.n_requests != int(r.n_requests):
        raise RuntimeError(f"{experiment} n={r.n} {r.pattern} seed={r.seed}: rebuilt {inst.n_requests} "
                           f"requests, recorded {r.n_requests}: not the recorded instance")
    window = dynamic_window_bound(inst).value
    if abs(window - float(r.opt_dynamic_lb)) > _REL * max(1.0, window):
        raise RuntimeError(f"{experiment} n={r.n} {r.pattern} seed={r.seed}: window bound {window}, recorded "
                           f"{r.opt_dynamic_lb}: not the recorded instance")
    return inst, window


#: The parameters two runs must share for :func:`reused_bounds` to take the earlier one's lower bounds.
REUSE_KEYS = ("cut_block", "lp_chunk", "lp_overlap", "lp_options", "lp_sweeps", "lp_min_move")


def reused_bounds(path: Path, parameters: dict) -> tuple[dict, dict]:
    """The cut-set DP and LP bounds of an earlier run's JSON, keyed by ``(experiment, cell_seed,
    pattern, n)``, and a note naming the file; refused when a parameter of :data:`REUSE_KEYS` differs."""
    import json

    old = json.loads(Path(path).read_text())
    for key in REUSE_KEYS:
        if old["parameters"].get(key) != parameters[key]:
            raise SystemExit(f"--reuse {path}: parameter {key} = {old['parameters'].get(key)!r} there, "
                             f"{parameters[key]!r} here; expected the same")
    table = {(b["experiment"], int(b["cell_seed"]), b["pattern"], int(b["n"])): b for b in old["instances"]}
    return table, {"file": str(path), "created": old["created"], "code_version": old["code_version"]}


def _replayed(inst: RingInstance, sol, name: str, at_most: float) -> None:
    """Replay ``sol`` by ``check_ring_run`` at capacity k: feasible, its value recomputed, at most ``at_most``."""
    check = check_ring_run(inst, sol, augmentation=1.0)
    check.raise_if_infeasible()
    if abs(check.value - sol.value) > _REL * max(1.0, sol.value) or sol.value > at_most + _REL:
        raise RuntimeError(f"{name} {sol.value} replays to {check.value} (expected at most {at_most})")


def _bounds(experiment: str, rows: pd.DataFrame, cut_max_n: int, cut_block: int | None, lp_max_n: int,
            lp_options: dict, reuse: dict, lp_patterns: list[str] | None = None,
            static_time_limit: float = 60.0, move_lp_max_n: int = 0) -> list[dict]:
    out = []
    for _, r in rows.iterrows():
        inst, window = rebuild(experiment, r)
        old = reuse.get((experiment, int(r.cell_seed), r.pattern, int(r.n)))
        if old is not None and abs(float(old["window"]) - window) > _REL * max(1.0, window):
            raise RuntimeError(f"--reuse: {experiment} n={r.n} {r.pattern} seed={r.seed}: window bound "
                               f"{old['window']} there, {window} here: not the same instance")
        cut, cut_seconds, block = None, None, None
        cut_reused = lp_reused = False
        if old is not None and old["cut"] is not None and (inst.n <= cut_max_n or cut_block):
            cut, cut_seconds, block, cut_reused = old["cut"], old["cut_seconds"], old["cut_block"], True
        elif inst.n <= cut_max_n or cut_block:
            block = None if inst.n <= cut_max_n else cut_block
            t0 = time.perf_counter()
            cut = dynamic_cut_bound(inst, block=block, max_edges=max(cut_max_n, cut_block or 0))
            cut_seconds = time.perf_counter() - t0
        lp, lp_seconds, lp_solve = None, None, None
        if old is not None and old["lp"] is not None and inst.n <= lp_max_n:
            lp, lp_seconds, lp_solve, lp_reused = old["lp"], old["lp_seconds"], old["lp_solve_seconds"], True
        elif inst.n <= lp_max_n and (lp_patterns is None or r.pattern in lp_patterns):
            t0 = time.perf_counter()
            lp_bound = dynamic_cut_lp_bound(inst, **lp_options)
            lp, lp_seconds, lp_solve = lp_bound.value, time.perf_counter() - t0, lp_bound.solve_seconds
        move_lp, move_lp_seconds, move_lp_reused = None, None, False
        if old is not None and old.get("move_lp") is not None and inst.n <= move_lp_max_n:
            move_lp, move_lp_seconds, move_lp_reused = old["move_lp"], old["move_lp_seconds"], True
        elif inst.n <= move_lp_max_n:
            t0 = time.perf_counter()
            move_lp = dynamic_move_lp_bound(inst).value
            move_lp_seconds = time.perf_counter() - t0
        lb = max([window, *(b for b in (cut, lp, move_lp) if b is not None)])
        start = time.perf_counter()
        arc = dynamic_arc_bound(inst)
        seconds = time.perf_counter() - start
        _replayed(inst, arc, "arc bound", np.inf)
        start = time.perf_counter()
        swap_arc = dynamic_swap_search(inst, arc)
        swap_seconds = time.perf_counter() - start
        start = time.perf_counter()
        static_sol = ring_static_optimum(inst, time_limit=static_time_limit)
        static_seconds = time.perf_counter() - start
        if (static_sol.proven_optimal and r.static_denominator == "milp"
                and abs(float(static_sol.value) - float(r.opt_static)) > 1e-6 * max(1.0, float(r.opt_static))):
            raise RuntimeError(f"{experiment} n={r.n} {r.pattern} seed={r.seed}: static MILP {static_sol.value}, "
                               f"recorded OPT_static {r.opt_static}")
        swap, swap_start, swap_static_seconds = swap_arc, "arc", None
        if static_sol.value is not None:  # the second start of dynamic_swap_bound, kept apart to time it
            start = time.perf_counter()
            other = dynamic_swap_search(inst, dynamic_arc_bound(inst, extra=static_sol.placement()))
            swap_static_seconds = time.perf_counter() - start
            if other.value < swap_arc.value - _REL:
                swap, swap_start = other, "arc+extra"
            _replayed(inst, other, "swap search from the static optimum", arc.value)
        else:
            log.warning("%s n=%s %s seed=%s: the static MILP found no placement in %s s: swap from the arc bound "
                        "only", experiment, r.n, r.pattern, r.seed, static_time_limit)
        _replayed(inst, swap_arc, "swap search", arc.value)
        static = float(r.opt_static) if r.static_denominator == "milp" else np.inf
        exact = float(r.opt_dynamic) if r.dynamic_denominator == "dp" else None
        ub = min(swap.value, static)
        if exact is not None and not (lb <= exact * (1 + _REL) + _REL and exact <= swap.value * (1 + _REL) + _REL):
            raise RuntimeError(f"{experiment} n={r.n} {r.pattern} seed={r.seed}: lb {lb}, OPT_dyn {exact}, "
                               f"swap {swap.value} out of order")
        if lb > ub * (1 + _REL) + _REL:
            raise RuntimeError(f"{experiment} n={r.n} {r.pattern} seed={r.seed}: lb {lb} above ub {ub}")
        out.append({"experiment": experiment, "pattern": r.pattern, "n": int(r.n), "servers": int(r.servers),
                    "seed": int(r.seed), "cell_seed": int(r.cell_seed), "n_requests": int(r.n_requests),
                    "window": window, "cut": cut, "cut_block": block, "cut_seconds": cut_seconds, "lp": lp,
                    "lp_seconds": lp_seconds, "lp_solve_seconds": lp_solve, "lb": lb, "cut_reused": cut_reused,
                    "lp_reused": lp_reused, "move_lp": move_lp, "move_lp_seconds": move_lp_seconds,
                    "move_lp_reused": move_lp_reused,
                    "arc": arc.value, "swap_arc": swap_arc.value, "swap": swap.value, "swap_start": swap_start,
                    "swap_rounds": list(swap.rounds), "static_placement_value": static_sol.value,
                    "static_placement_proved": bool(static_sol.proven_optimal), "static_seconds": static_seconds,
                    "swap_static_seconds": swap_static_seconds,
                    "opt_static": None if np.isinf(static) else static,
                    "ub": ub, "opt_dynamic": exact, "arc_moves": int(arc.migrations.shape[0]),
                    "swap_moves": int(swap.migrations.shape[0]), "arc_seconds": seconds,
                    "swap_seconds": swap_seconds})
    return out


def fmt(x: float | None) -> str:
    """Two decimals, or empty for a missing or infinite value (a table cell)."""
    return "" if x is None or not np.isfinite(x) else f"{x:.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = parser(NAME, __doc__,
                "n <= 12 only, the cut-set DP to n = 12, the LP and the move LP to n = 6, print only")
    ap.add_argument("--cut-max-n", type=int, default=None,
                    help="run the cut-set DP up to this n (default 16; --quick 12; 0: never)")
    ap.add_argument("--lp-max-n", type=int, default=None,
                    help="certify the cut-set LP's bound up to this n (default 32; --quick 6; 0: never)")
    ap.add_argument("--lp-chunk", type=int, default=CHUNK,
                    help=f"compressed requests per piece of the cut-set LP (default {CHUNK})")
    ap.add_argument("--lp-overlap", type=int, default=OVERLAP,
                    help=f"compressed requests solved on each side of a piece (default {OVERLAP})")
    ap.add_argument("--lp-sweeps", type=int, default=SWEEPS,
                    help=f"sweeps joining the LP's pieces (default {SWEEPS}; 0: independent pieces)")
    ap.add_argument("--lp-min-move", action="store_true",
                    help="the cut-set LP with its min-move rows (tighter, several times slower)")
    ap.add_argument("--cut-block", type=int, default=None,
                    help="beyond --cut-max-n, the cut-set DP separated into arcs of this many edges")
    ap.add_argument("--lp-patterns", default=None,
                    help="solve the LP only on these patterns (comma separated; default all; reused bounds stay)")
    ap.add_argument("--move-lp-max-n", type=int, default=None,
                    help="certify the move LP's bound up to this n (default 16; --quick 6; 0: never)")
    ap.add_argument("--static-time-limit", type=float, default=60.0,
                    help="seconds for the static MILP whose placement starts the second swap search (default 60)")
    ap.add_argument("--reuse", type=Path, default=None,
                    help="take the cut-set DP and LP bounds an earlier run's JSON holds (same LP options)")
    args = ap.parse_args(argv)
    cut_max_n = args.cut_max_n if args.cut_max_n is not None else (12 if args.quick else 16)
    lp_max_n = args.lp_max_n if args.lp_max_n is not None else (6 if args.quick else 32)
    start = time.perf_counter()
    report = header(NAME, ("numpy",))
    report["records"] = {}
    move_lp_max_n = args.move_lp_max_n if args.move_lp_max_n is not None else (6 if args.quick else 16)
    report["parameters"] = {"move_lp_max_n": move_lp_max_n, "cut_max_n": cut_max_n, "cut_block": args.cut_block,
                            "lp_max_n": lp_max_n,
                            "lp_chunk": args.lp_chunk, "lp_overlap": args.lp_overlap, "lp_options": IPM_OPTIONS,
                            "lp_sweeps": args.lp_sweeps, "lp_min_move": bool(args.lp_min_move),
                            "lp_patterns": args.lp_patterns.split(",") if args.lp_patterns else None,
                            "static_time_limit": args.static_time_limit, "quick": bool(args.quick)}
    reuse, report["reused"] = ({}, None) if args.reuse is None else reused_bounds(args.reuse, report["parameters"])
    bounds: list[dict] = []
    tables = {}
    for experiment in EXPERIMENTS:
        table = pd.read_csv(RECORDS / experiment / "results.csv")
        table = table[table.status == "ok"]
        if args.quick:
            table = table[table.n <= 12]
        tables[experiment] = table
        report["records"][experiment] = {"file": f"benchmarks/results/experiments/{experiment}/results.csv",
                                         "code_version": sorted(table.code_version.unique().tolist())}
        rows = recorded_instances(table)
        bounds += _bounds(experiment, rows, cut_max_n, args.cut_block, lp_max_n,
                          {"min_move": args.lp_min_move, "chunk": args.lp_chunk, "overlap": args.lp_overlap,
                           "sweeps": args.lp_sweeps}, reuse, report["parameters"]["lp_patterns"],
                          args.static_time_limit, move_lp_max_n)
        print(f"{experiment}: {len(rows)} instances bounded", flush=True)
    b = pd.DataFrame(bounds)
    report["instances"] = bounds
    # per policy and instance: the bracket [ALG / ub, ALG / lb] of ALG / OPT_dyn
    merged = []
    for experiment, table in tables.items():
        m = table.merge(b[b.experiment == experiment][["cell_seed", "pattern", "n", "lb", "ub", "arc", "swap"]],
                        on=["cell_seed", "pattern", "n"], validate="many_to_one")
        m["experiment"] = experiment
        merged.append(m)
    m = pd.concat(merged)
    m = m.assign(ratio_ub=m.total / m.ub, ratio_lb=m.total / m.lb)
    brackets = m.groupby(["experiment", "pattern", "n", "policy"], sort=True).agg(
        alg=("total", "mean"), ratio_ub=("ratio_ub", "mean"), ratio_lb=("ratio_lb", "mean"),
        ratio_exact=("ratio_dynamic", "mean"), cells=("total", "size")).reset_index()
    report["brackets"] = brackets.to_dict(orient="records")
    gaps = b.assign(ub_over_lb=b.ub / b.lb, arc_over_static=b.arc / b.opt_static,
                    arc_over_opt=b.arc / b.opt_dynamic, lb_over_opt=b.lb / b.opt_dynamic,
                    swap_over_opt=b.swap / b.opt_dynamic, swap_over_arc=b.swap / b.arc)
    gaps = gaps.groupby(["experiment", "pattern", "n"], sort=True).agg(
        window=("window", "mean"), cut=("cut", "mean"), lp=("lp", "mean"), move_lp=("move_lp", "mean"),
        move_lp_seconds_median=("move_lp_seconds", "median"), lb=("lb", "mean"), arc=("arc", "mean"),
        swap_arc=("swap_arc", "mean"), swap=("swap", "mean"),
        static_start_wins=("swap_start", lambda x: int((x == "arc+extra").sum())),
        swap_over_opt=("swap_over_opt", "mean"), swap_over_opt_max=("swap_over_opt", "max"),
        swap_over_arc=("swap_over_arc", "mean"), swap_seconds_median=("swap_seconds", "median"),
        swap_seconds_max=("swap_seconds", "max"),
        opt_static=("opt_static", "mean"), ub=("ub", "mean"),
        opt_dynamic=("opt_dynamic", "mean"), ub_over_lb=("ub_over_lb", "mean"),
        arc_over_static=("arc_over_static", "mean"), arc_over_opt=("arc_over_opt", "mean"),
        arc_over_opt_max=("arc_over_opt", "max"), arc_seconds_median=("arc_seconds", "median"),
        arc_seconds_max=("arc_seconds", "max"), cut_seconds_median=("cut_seconds", "median"),
        lp_seconds_median=("lp_seconds", "median"), lb_over_opt=("lb_over_opt", "mean"),
        instances=("lb", "size")).reset_index()
    report["gaps"] = gaps.to_dict(orient="records")
    lines = [f"# {NAME}", "", f"Machine: {report['machine']['platform']}, {report['machine']['cpu_count']} cores; "
             f"created {report['created']}. Instances and policy costs from "
             + ", ".join(f"`{v['file']}` ({', '.join(v['code_version'])})" for v in report["records"].values())
             + ".", "", "## OPT_dyn's bracket per (pattern, n), mean over seeds", "",
             "`window` window lower bound, `cut` the DP over cut sets (a lower bound; n <= "
             f"{cut_max_n}"
             + (f", beyond it separated into arcs of {args.cut_block} edges" if args.cut_block else "")
             + f"), `lp` the cut-set LP's certified bound (n <= {lp_max_n}"
             + (f", patterns {', '.join(report['parameters']['lp_patterns'])} unless reused"
                if report["parameters"]["lp_patterns"] else "")
             + f"; pieces of {args.lp_chunk}, overlap "
             f"{args.lp_overlap}, " + (f"{args.lp_sweeps} sweep{'s' if args.lp_sweeps != 1 else ''}"
                                       if args.lp_sweeps else "independent pieces") + "; "
             + ("with" if args.lp_min_move else "without")
             + f" its min-move rows), `move lp` the move LP's certified bound (n <= {move_lp_max_n}), "
             "`lb = max(window, cut, lp, move lp)` "
             "(the mean of each instance's largest), `arc` moving-arcs upper bound, `swap arc` the "
             "swap-neighbourhood search from the arc bound's schedule (an upper bound, at most `arc`), `swap` "
             "the better of it and the search from the arc bound with the static optimum's placement among its "
             "candidates (`static wins`: instances where that start is better), "
             "`ub = min(swap, OPT_static)`; `lb / OPT_dyn`, `arc / OPT_dyn` and `swap / OPT_dyn` where the DP "
             "over labellings gives OPT_dyn."
             + ("" if report["reused"] is None else
                f" The cut-set DP bounds of {sum(x['cut_reused'] for x in bounds)} instances and the LP bounds of "
                f"{sum(x['lp_reused'] for x in bounds)} (move LP: {sum(x['move_lp_reused'] for x in bounds)}) "
                "are taken "
                f"from `{report['reused']['file']}` (created {report['reused']['created']}, code version "
                f"{report['reused']['code_version']}; `--reuse`), their times are that run's."),
             "", "<a id=\"gaps\"></a>", "",
             "| experiment | pattern | n | window | cut | lp | move lp | lb | OPT_dyn | arc | swap arc | swap | "
             "static wins | OPT_static | ub / lb | "
             "lb / OPT_dyn | arc / OPT_static | arc / OPT_dyn (mean, max) | swap / OPT_dyn (mean, max) | "
             "swap / arc | arc DP s (median, max) | swap s (median, max) | cut DP s (median) | LP s (median) | "
             "move LP s (median) |",
             "|---|---|---:|" + "---:|" * 22]
    for g in gaps.itertuples():
        lines.append(f"| {g.experiment} | {g.pattern} | {g.n} | {g.window:.1f} | {fmt(g.cut)} | {fmt(g.lp)} | "
                     f"{fmt(g.move_lp)} | "
                     f"{g.lb:.1f} | "
                     f"{fmt(g.opt_dynamic)} | {g.arc:.1f} | {g.swap_arc:.1f} | {g.swap:.1f} | "
                     f"{g.static_start_wins} of {g.instances} | {fmt(g.opt_static)} | "
                     f"{g.ub_over_lb:.2f} | {fmt(g.lb_over_opt)} | {fmt(g.arc_over_static)} | "
                     f"{fmt(g.arc_over_opt)}, {fmt(g.arc_over_opt_max)} | "
                     f"{fmt(g.swap_over_opt)}, {fmt(g.swap_over_opt_max)} | {g.swap_over_arc:.2f} | "
                     f"{g.arc_seconds_median:.2f}, {g.arc_seconds_max:.2f} | "
                     f"{g.swap_seconds_median:.2f}, {g.swap_seconds_max:.2f} | {fmt(g.cut_seconds_median)} | "
                     f"{fmt(g.lp_seconds_median)} | {fmt(g.move_lp_seconds_median)} |")
    lines += ["", "## ALG / OPT_dyn in [ALG / ub, ALG / lb], mean over seeds (`ring-ratio`)", "",
              "Each cell: `ALG / ub - ALG / lb` (the exact ratio, where the DP runs, is in `ring-ratio-exact`).",
              "", "<a id=\"brackets\"></a>", ""]
    rr = brackets[brackets.experiment == "ring-ratio"]
    policies = [p for p in POLICIES if p in set(rr.policy)]
    lines += ["| pattern | n | " + " | ".join(policies) + " |", "|---|---:|" + "---|" * len(policies)]
    for (pattern, n), g in rr.groupby(["pattern", "n"], sort=True):
        cell = {r.policy: f"{r.ratio_ub:.2f} - {r.ratio_lb:.2f}" for r in g.itertuples()}
        lines.append(f"| {pattern} | {n} | " + " | ".join(cell.get(p, "") for p in policies) + " |")
    lines.append("")
    finish(NAME, report, lambda _: "\n".join(lines) + "\n", output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
