"""Ring partitioning (paper 004): how close each bound on OPT_dyn comes to it, where the exact DP runs.

``python -m benchmarks.ring_dynamic_bracket`` brackets OPT_dyn at n = 16..64 on 4 servers, where
no exact method runs here, so it cannot say which end of a bracket is loose.  This benchmark
measures every bound against the exact OPT_dyn on the largest shapes the DP over labellings reaches
(``dynamic_opt_value``: a distance transform over the ``l^n`` labellings, so ``n = 16`` on 2
servers, ``k = 8``, with the ``ring-ratio`` experiment's 256 requests per process), with more
servers at smaller n:

- upper bounds: ``arc`` (``dynamic_arc_bound``, every server one arc), ``swap_arc``
  (``dynamic_swap_search`` from the arc bound's schedule) and ``swap`` (``dynamic_swap_bound``: the
  better of ``swap_arc`` and the search from the arc bound with the static optimum's placement,
  ``static_opt_bruteforce``, among its candidates), each replayed by ``check_ring_run`` at
  capacity k;
- lower bounds: ``window`` (``dynamic_window_bound``), ``cut`` (the DP over cut sets,
  ``dynamic_cut_bound``), ``lp`` (the cut-set LP's certified bound, ``dynamic_cut_lp_bound``, as the
  bracket runs it: pieces of 500, one sweep, without its min-move rows), ``move_lp`` (the move LP,
  ``clusteropt.models.ring.move.dynamic_move_lp_bound``: the cut-set LP with process moves and
  run-end rows, solved whole, its duals certified).

Instances are the ``ring-ratio`` experiment's kind (``clusteropt.experiments.ring.ring_instance``:
hot arcs a quarter of a server wide, the moving hot spot one edge per ``4 k`` requests) with the
seed given directly (``--seeds``, default 0..4).  Per (shape, pattern) the report gives each
bound's mean, min and max ratio to OPT_dyn, and the median time of each.

Run ``python -m benchmarks.ring_bound_quality`` (shapes ``8x4x256``, ``12x3x64``, ``16x2x256`` as
``n x servers x requests per process``; writes ``benchmarks/results/``), ``--shapes 16x2x64`` to
choose, or ``--quick`` (``8x4x16`` and ``8x2x16``, seed 0, two patterns, print only).
"""

from __future__ import annotations

import time

import pandas as pd

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.algorithms.ring.offline import (
    dynamic_arc_bound,
    dynamic_cut_bound,
    dynamic_opt_value,
    dynamic_window_bound,
    static_opt_bruteforce,
)
from clusteropt.algorithms.ring.swap_search import dynamic_swap_search
from clusteropt.experiments.ring import ring_instance
from clusteropt.models.ring.cut import dynamic_cut_lp_bound
from clusteropt.models.ring.move import dynamic_move_lp_bound
from clusteropt.verify import check_ring_run

NAME = "ring_bound_quality"
PATTERNS = ("uniform", "hotspot", "moving-hotspot", "phases", "zipf")
SHAPES = "8x4x256,12x3x64,16x2x256"
BOUNDS = ("window", "cut", "lp", "move_lp", "arc", "swap_arc", "swap")
_REL = 1e-9


def _shapes(text: str) -> list[tuple[int, int, float]]:
    out = []
    for part in text.split(","):
        try:
            n, servers, rpp = part.split("x")
            out.append((int(n), int(servers), float(rpp)))
        except ValueError as err:
            raise SystemExit(f"--shapes: {part!r}; expected n x servers x requests per process, e.g. 16x2x256") \
                from err
    return out


def measure(n: int, servers: int, rpp: float, pattern: str, seed: int) -> dict:
    """Every bound of one instance, its exact OPT_dyn and their times; raises when they are out of order."""
    inst = ring_instance({"n": n, "servers": servers, "requests_per_process": rpp, "pattern": pattern,
                          "hot_width": 0.25, "step_k": 4}, seed)
    row: dict = {"n": n, "servers": servers, "k": n // servers, "requests_per_process": rpp, "pattern": pattern,
                 "seed": seed, "n_requests": inst.n_requests}
    t0 = time.perf_counter()
    opt = dynamic_opt_value(inst)
    row["opt_seconds"] = time.perf_counter() - t0
    row["opt_dynamic"] = opt
    t0 = time.perf_counter()
    row["window"] = dynamic_window_bound(inst).value
    row["window_seconds"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    row["cut"] = float(dynamic_cut_bound(inst))
    row["cut_seconds"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    row["lp"] = dynamic_cut_lp_bound(inst, min_move=False).value
    row["lp_seconds"] = time.perf_counter() - t0
    move = dynamic_move_lp_bound(inst)
    row["move_lp"] = move.value
    row["move_lp_seconds"] = move.build_seconds + move.solve_seconds + move.certify_seconds
    t0 = time.perf_counter()
    arc = dynamic_arc_bound(inst)
    row["arc_seconds"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    swap_arc = dynamic_swap_search(inst, arc)
    row["swap_arc_seconds"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    row["opt_static"], placement = static_opt_bruteforce(inst)
    from_static = dynamic_swap_search(inst, dynamic_arc_bound(inst, extra=placement))
    # dynamic_swap_bound(inst, extra=placement): both starts, the better kept (ties: the arc bound's)
    swap = from_static if from_static.value < swap_arc.value - _REL else swap_arc
    row["swap_seconds"] = row["swap_arc_seconds"] + time.perf_counter() - t0
    row["arc"], row["swap_arc"], row["swap"] = arc.value, swap_arc.value, swap.value
    row["swap_start"] = "arc+extra" if swap is from_static else "arc"
    row["swap_rounds"] = len(swap.rounds) - 1
    for name, sol in (("arc", arc), ("swap_arc", swap_arc), ("swap from the static optimum", from_static)):
        check = check_ring_run(inst, sol, augmentation=1.0)
        check.raise_if_infeasible()
        if abs(check.value - sol.value) > _REL * max(1.0, sol.value):
            raise RuntimeError(f"{name} bound {sol.value} replays to {check.value}")
    tol = _REL * max(1.0, opt)
    lower = max(row["window"], row["cut"], row["lp"], row["move_lp"])
    if (lower > opt + tol or swap.value < opt - tol or swap.value > arc.value + tol
            or from_static.value > row["opt_static"] + tol):
        raise RuntimeError(f"n={n} servers={servers} {pattern} seed={seed}: bounds out of order around OPT_dyn "
                           f"{opt}: {[(b, row[b]) for b in BOUNDS]}")
    return row


def main(argv: list[str] | None = None) -> int:
    ap = parser(NAME, __doc__, "8x4x16 and 8x2x16, seed 0, uniform and moving hot spot, print only")
    ap.add_argument("--shapes", default=None, help=f"n x servers x requests per process, comma separated "
                                                      f"(default {SHAPES})")
    ap.add_argument("--seeds", default=None, help="seeds, comma separated (default 0,1,2,3,4)")
    ap.add_argument("--patterns", default=None, help=f"request patterns (default {','.join(PATTERNS)})")
    args = ap.parse_args(argv)
    shapes = _shapes(args.shapes or ("8x4x16,8x2x16" if args.quick else SHAPES))
    seeds = [int(s) for s in (args.seeds or ("0" if args.quick else "0,1,2,3,4")).split(",")]
    patterns = (args.patterns.split(",") if args.patterns else
                ["uniform", "moving-hotspot"] if args.quick else list(PATTERNS))
    bad = sorted(set(patterns) - set(PATTERNS))
    if bad:
        raise SystemExit(f"--patterns: {bad}; expected some of {', '.join(PATTERNS)}")
    start = time.perf_counter()
    report = header(NAME, ("numpy", "highspy"))
    report["parameters"] = {"shapes": [list(s) for s in shapes], "seeds": seeds, "patterns": patterns,
                            "hot_width": 0.25, "step_k": 4, "lp": {"min_move": False}, "quick": bool(args.quick)}
    rows = []
    for n, servers, rpp in shapes:
        for pattern in patterns:
            for seed in seeds:
                rows.append(measure(n, servers, rpp, pattern, seed))
            print(f"n={n} servers={servers} {pattern}: {len(seeds)} instances", flush=True)
    report["instances"] = rows
    t = pd.DataFrame(rows)
    for b in BOUNDS:
        t[f"{b}_ratio"] = t[b] / t.opt_dynamic
    agg = {f"{b}_{s}": (f"{b}_ratio", s) for b in BOUNDS for s in ("mean", "min", "max")}
    agg.update({f"{b}_seconds": (f"{b}_seconds", "median") for b in ("opt", *BOUNDS)})
    g = t.groupby(["n", "servers", "k", "requests_per_process", "pattern"], sort=True).agg(
        opt_dynamic=("opt_dynamic", "mean"), instances=("seed", "size"), **agg).reset_index()
    report["summary"] = g.to_dict(orient="records")

    def table(_: dict) -> str:
        lines = [f"# {NAME}", "", f"Machine: {report['machine']['platform']}, {report['machine']['cpu_count']} "
                 f"cores; created {report['created']}; code version {report['code_version']}.", "",
                 "## Each bound over OPT_dyn (exact, the DP over labellings), mean (min-max) over seeds", "",
                 f"Seeds {', '.join(map(str, seeds))}; lower bounds `window`, `cut` (DP over cut sets), `lp` "
                 "(cut-set LP, pieces of 500, one sweep, no min-move rows), `move_lp` (the move LP: process moves "
                 "and run-end rows, whole); upper bounds `arc` (moving arcs), "
                 "`swap_arc` (swap-neighbourhood search from the arc bound) and `swap` (the better of it and the "
                 "search from the arc bound with the static optimum's placement; `swap s` is both searches and "
                 "the static optimum). Times: median seconds per instance.",
                 "", "<a id=\"quality\"></a>", "",
                 "| n | servers | k | requests / process | pattern | OPT_dyn | window | cut | lp | move_lp | "
                 "arc | swap_arc | swap | OPT s | cut s | LP s | move LP s | arc s | swap s |",
                 "|" + "---:|" * 4 + "---|" + "---:|" * 14]
        for r in g.itertuples():
            cells = [f"{getattr(r, b + '_mean'):.3f} ({getattr(r, b + '_min'):.2f}-{getattr(r, b + '_max'):.2f})"
                     for b in BOUNDS]
            secs = [f"{getattr(r, s + '_seconds'):.2f}" for s in ("opt", "cut", "lp", "move_lp", "arc", "swap")]
            lines.append(f"| {r.n} | {r.servers} | {r.k} | {r.requests_per_process:g} | {r.pattern} | "
                         f"{r.opt_dynamic:.1f} | " + " | ".join(cells) + " | " + " | ".join(secs) + " |")
        return "\n".join(lines) + "\n"

    finish(NAME, report, table, output_dir(args), start)
    if args.quick:
        print(table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
