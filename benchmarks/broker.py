"""mlBroker (paper 003) at Sec. 6.1's scale: problem (10) per slot, whole runs, P_f (9), MILP (8): time and cost.

On ``broker_preset("paper")`` (R = 15 data centers, K = 4 resources, T = 50, 100 jobs), seeds 0, 1, 2,
and on the ``small`` and ``tiny`` presets (where the offline MILP (8) solves to optimality):

* (a) the regularized one-slot problem (10) along A_fractional's run (its ``v(t - 1)`` is its own
  fractional ``v``), both price forms (``tight``: convex hull of Eq. (7), the library's default;
  ``bigm``: the paper's rows (8c)-(8e)): per slot the CVXPY model build, CVXPY's
  canonicalization and Clarabel's solve, and SCS on a few slots of the same run (same ``v(t - 1)``)
  against Clarabel's objective.  A_fractional's run is the one inside mlBroker's (mlBroker = A_fractional,
  then A_round of its ``y~, s~``; the fractional side never sees the rounding), so the times and
  A_fractional's cost (mlBroker's ``fractional_C1 .. C4``) come from the mlBroker runs; on the small and
  tiny presets a stand-alone A_fractional run is checked to cost the same.
* (b) whole T-slot runs: mlBroker (A_round; IR and GR roundings; big-M price rows) and the Sec. 6.3
  baselines Local, Central, OASiS, every schedule checked by
  :func:`clusteropt.verify.check_broker_schedule`, whose recomputed total is what is reported.
* (c) the offline P_f (9) (``build_broker_milp(relax=True)`` and HiGHS through its matrix, as
  :func:`~clusteropt.models.broker.optimum.broker_lp_bound` does) in both forms: Pyomo build, hand-off, solve;
  and the MILP (8) by :func:`~clusteropt.models.broker.optimum.broker_offline_optimum` (paper scale: under a
  time limit, full run only).

Quality: A_fractional / P_f of the same form (Fig. 5's ratio), mlBroker / P_f tight (the strongest
lower bound we have) and / the MILP, and mlBroker's savings against each baseline.

Run ``python -m benchmarks.broker`` (writes ``benchmarks/results/``) or ``--quick`` (small preset).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections import Counter

import numpy as np

import clusteropt.models.broker.regularized as broker_models
from benchmarks._report import header, machine_info, output_dir, parser, write_results
from clusteropt.instances.broker import broker_preset
from clusteropt.models.broker.milp import build_broker_milp
from clusteropt.models.broker.optimum import broker_offline_optimum
from clusteropt.online import run_online
from clusteropt.online.broker import make_policy
from clusteropt.solvers import solve
from clusteropt.solvers.direct import solve_highs_direct
from clusteropt.verify import check_broker_schedule

NAME = "broker"
FULL = {
    "cases": [{"preset": "paper", "seeds": [0, 1, 2], "milp_seeds": [0], "milp_time_limit": 300.0},
              {"preset": "small", "seeds": [0, 1, 2], "milp_seeds": [0, 1, 2], "milp_time_limit": 120.0},
              {"preset": "tiny", "seeds": [0, 1, 2], "milp_seeds": [0, 1, 2], "milp_time_limit": 120.0}],
    "timing": {"preset": "paper", "seed": 0, "scs_slots": [10, 25, 40]},
    "standalone_afractional": ["small", "tiny"],
}
QUICK = {
    "cases": [{"preset": "small", "seeds": [0], "milp_seeds": [0], "milp_time_limit": 60.0}],
    "timing": {"preset": "small", "seed": 0, "scs_slots": [3, 6]},
    "standalone_afractional": ["small"],
}
#: (label, policy, options) of every integral run.
POLICIES = (("local", "local", {}), ("central", "central", {}), ("oasis", "oasis", {}),
            ("mlbroker", "mlbroker", {}), ("mlbroker-ir", "mlbroker", {"rounding": "ir"}),
            ("mlbroker-gr", "mlbroker", {"rounding": "gr"}),
            ("mlbroker-bigm", "mlbroker", {"price_form": "bigm"}))
BASELINES = ("local", "central", "oasis")
FORMS = ("tight", "bigm")
BARS = {"slot_median_s": 2.0, "run_s": 180.0, "pf_s": 120.0}
COSTS = ("C1", "C2", "C3", "C4")


@contextlib.contextmanager
def timed_builds(keep_slots=()):
    """Time every ``build_broker_regularized`` call (A_fractional looks it up at each call); keep
    ``prev_v`` of the slots in ``keep_slots``.  Yields the list of ``{"t", "seconds"[, "prev_v"]}``."""
    original = broker_models.build_broker_regularized
    records: list[dict] = []

    def wrapper(inst, t, prev_v=None, **kw):
        t0 = time.perf_counter()
        model = original(inst, t, prev_v, **kw)
        rec = {"t": int(t), "seconds": time.perf_counter() - t0}
        if t in keep_slots:
            rec["prev_v"] = np.array(prev_v, dtype=float)
        records.append(rec)
        return model

    broker_models.build_broker_regularized = wrapper
    try:
        yield records
    finally:
        broker_models.build_broker_regularized = original


def _stats(values) -> dict:
    a = np.asarray(values, dtype=float)
    return {"median": float(np.median(a)), "p90": float(np.quantile(a, 0.9)), "max": float(a.max()),
            "sum": float(a.sum())}


def _slot_times(slot_info: list[dict], builds: list[dict]) -> tuple[dict, list[dict]]:
    """Per slot with a solve of (10): model build, CVXPY canonicalization, solver time."""
    rows = [d for d in slot_info if "solve_seconds" in d]
    if len(rows) != len(builds):
        raise AssertionError(f"{len(rows)} solved slots but {len(builds)} builds of (10)")
    per_slot = []
    for d, b in zip(rows, builds, strict=True):
        if d["slot"] != b["t"]:
            raise AssertionError(f"slot {d['slot']} recorded against a build of slot {b['t']}")
        per_slot.append({"slot": d["slot"], "jobs": d["jobs"], "status": d["status"],
                         "objective": d["objective"], "attempts": int(d.get("attempts", 1)),
                         "model_build_s": b["seconds"],
                         "canonicalize_s": d["build_seconds"] - b["seconds"], "solve_s": d["solve_seconds"],
                         "round_s": d.get("round_seconds")})
    total = [r["model_build_s"] + r["canonicalize_s"] + r["solve_s"] for r in per_slot]
    summary = {"slots": len(per_slot), "median_jobs": float(np.median([r["jobs"] for r in per_slot])),
               "statuses": dict(Counter(r["status"] for r in per_slot)),
               "attempts": {str(k): v for k, v in sorted(Counter(r["attempts"] for r in per_slot).items())},
               "model_build_s": _stats([r["model_build_s"] for r in per_slot]),
               "canonicalize_s": _stats([r["canonicalize_s"] for r in per_slot]),
               "solve_s": _stats([r["solve_s"] for r in per_slot]),
               "slot_s": _stats(total)}
    if per_slot and per_slot[0]["round_s"] is not None:
        summary["round_s"] = _stats([r["round_s"] for r in per_slot])
    return summary, per_slot


def run_policy(inst, label: str, name: str, options: dict, keep_slots=(), keep_per_slot=False) -> dict:
    with timed_builds(keep_slots) as builds:
        t0 = time.perf_counter()
        run = run_online(make_policy(name, **options), inst, horizon=inst.horizon, seed=0)
        wall = time.perf_counter() - t0
    out = {"policy": label, "options": options, "wall_s": wall, "run_total_cost": run.total_cost}
    if name == "afractional":
        out["costs"] = run.cost_totals()
        out["total_cost"] = run.total_cost
    else:
        check = check_broker_schedule(inst, run.schedule)
        if not check.ok:
            raise AssertionError(f"{label}: {check.violations[:3]}")
        out["total_cost"] = float(check.total_cost)
        out["costs"] = {**check.cost_totals(), "total": float(check.total_cost)}
        out["run_vs_check_rel_diff"] = abs(run.total_cost - check.total_cost) / max(1.0, abs(check.total_cost))
    if builds:
        summary, per_slot = _slot_times(run.slot_info, builds)
        out["slot_times"] = summary
        if keep_per_slot:
            out["per_slot"] = per_slot
        out["kept_prev_v"] = {b["t"]: b["prev_v"] for b in builds if "prev_v" in b}
        if "fractional_C1" in run.slot_info[-1]:
            frac = {c: math.fsum(d[f"fractional_{c}"] for d in run.slot_info) for c in COSTS}
            frac["total"] = math.fsum(frac.values())
            out["fractional"] = frac
    print(f"  {label}: total {out['total_cost']:.6g}, {wall:.1f} s", flush=True)
    return out


def offline_lp(inst, price_form: str) -> dict:
    """P_f (9) as :func:`broker_lp_bound` solves it, with the Pyomo build timed apart."""
    t0 = time.perf_counter()
    model = build_broker_milp(inst, price_form=price_form, relax=True)
    t1 = time.perf_counter()
    res = solve_highs_direct(model, raise_on_nonoptimal=False)
    wall = time.perf_counter() - t0
    if not res.is_optimal:
        raise AssertionError(f"P_f ({price_form}) ended {res.termination.name}")
    out = {"value": float(res.objective), "build_s": t1 - t0, "handoff_s": res.build_seconds,
           "solve_s": res.solve_seconds, "wall_s": wall}
    print(f"  P_f {price_form}: {out['value']:.6g}, {wall:.1f} s", flush=True)
    return out


def offline_milp(inst, time_limit: float) -> dict:
    t0 = time.perf_counter()
    try:
        value, schedule, res = broker_offline_optimum(inst, time_limit=time_limit)
    except RuntimeError as exc:
        print(f"  MILP: {exc}", flush=True)
        return {"status": "no solution", "message": str(exc), "wall_s": time.perf_counter() - t0,
                "time_limit": time_limit}
    wall = time.perf_counter() - t0
    check = check_broker_schedule(inst, schedule)
    if not check.ok:
        raise AssertionError(f"MILP schedule: {check.violations[:3]}")
    out = {"status": res.termination.name, "optimal": bool(res.is_optimal), "value": value,
           "checked_total": float(check.total_cost), "bound": res.bound, "gap": res.gap,
           "handoff_s": res.build_seconds, "solve_s": res.solve_seconds, "wall_s": wall, "time_limit": time_limit}
    print(f"  MILP: {res.termination.name} {value:.6g} (bound {res.bound}), {wall:.1f} s", flush=True)
    return out


def scs_check(inst, run: dict, slots) -> list[dict]:
    """Problem (10) at ``slots`` of the run (same ``v(t - 1)``) with SCS, against Clarabel's objective."""
    clarabel = {r["slot"]: r for r in run["per_slot"]}
    price_form = run["options"].get("price_form", "tight")
    out = []
    for t in slots:
        if t not in run["kept_prev_v"]:
            continue
        model = broker_models.build_broker_regularized(inst, t, run["kept_prev_v"][t], price_form=price_form)
        t0 = time.perf_counter()
        res = solve(model, "scs", raise_on_nonoptimal=False)
        wall = time.perf_counter() - t0
        ref = clarabel[t]["objective"]
        obj = res.objective
        out.append({"slot": t, "price_form": price_form, "jobs": len(model.jobs),
                    "status": res.termination.name, "objective": obj, "clarabel_objective": ref,
                    "abs_gap": None if obj is None else obj - ref,
                    "rel_gap": None if obj is None else (obj - ref) / max(abs(ref), 1e-9),
                    "canonicalize_s": res.build_seconds, "solve_s": res.solve_seconds, "wall_s": wall,
                    "clarabel_solve_s": clarabel[t]["solve_s"]})
        print(f"  SCS {price_form} slot {t}: {res.termination.name} {obj} vs Clarabel {ref:.6g}, {wall:.1f} s",
              flush=True)
    return out


def run_seed(case: dict, seed: int, timing: dict, standalone: bool) -> dict:
    inst = broker_preset(case["preset"], seed=seed)
    print(f"{case['preset']} seed {seed}: {inst.n_jobs} jobs, R = {inst.n_dcs}, T = {inst.horizon}", flush=True)
    is_timing = case["preset"] == timing["preset"] and seed == timing["seed"]
    keep = tuple(timing["scs_slots"]) if is_timing else ()
    out = {"seed": seed, "timing_run": is_timing,
           "lp": {pf: offline_lp(inst, pf) for pf in FORMS}, "milp": None}
    if seed in case.get("milp_seeds", ()):
        out["milp"] = offline_milp(inst, case["milp_time_limit"])
    runs = {}
    for label, name, options in POLICIES:
        runs[label] = run_policy(inst, label, name, options, keep_slots=keep,
                                 keep_per_slot=is_timing and label in ("mlbroker", "mlbroker-bigm"))
    if is_timing:
        out["scs"] = [*scs_check(inst, runs["mlbroker"], timing["scs_slots"]),
                      *scs_check(inst, runs["mlbroker-bigm"], timing["scs_slots"])]
    for r in runs.values():
        r.pop("kept_prev_v", None)
        if not is_timing:
            r.pop("per_slot", None)
    out["runs"] = runs
    if standalone:
        out["afractional_standalone"] = {}
        for pf, label in (("tight", "mlbroker"), ("bigm", "mlbroker-bigm")):
            alone = run_policy(inst, f"afractional-{pf}", "afractional", {"price_form": pf})
            inner = runs[label]["fractional"]["total"]
            alone["rel_diff_vs_mlbroker_fractional"] = abs(alone["total_cost"] - inner) / max(1.0, abs(inner))
            alone.pop("kept_prev_v", None)
            out["afractional_standalone"][pf] = alone
    out["quality"] = quality(out)
    return out


def quality(seed: dict) -> dict:
    runs, lp, milp = seed["runs"], seed["lp"], seed["milp"]
    mlb = runs["mlbroker"]["total_cost"]
    q = {"afractional_tight_over_pf_tight": runs["mlbroker"]["fractional"]["total"] / lp["tight"]["value"],
         "afractional_bigm_over_pf_bigm": runs["mlbroker-bigm"]["fractional"]["total"] / lp["bigm"]["value"],
         "over_pf_tight": {k: r["total_cost"] / lp["tight"]["value"] for k, r in runs.items()},
         "mlbroker_savings": {b: 1.0 - mlb / runs[b]["total_cost"] for b in BASELINES}}
    if milp and "value" in milp:
        q["over_milp"] = {k: r["total_cost"] / milp["value"] for k, r in runs.items()}
        if milp.get("bound"):
            q["mlbroker_over_milp_bound"] = mlb / milp["bound"]
    return q


# ---------------------------------------------------------------------------------------------
# report


def _f(x, nd=4) -> str:
    return "—" if x is None else f"{x:.{nd}g}"


def _bar(ok: bool) -> str:
    return "**yes**" if ok else "**NO**"


def to_markdown(report: dict) -> str:
    m = report["machine"]
    lines = [f"# {NAME}", "",
             f"recorded {report['created']} on {m['platform']}, {m['cpu_count']} CPUs; load average before "
             f"{m.get('load_average_1_5_15')}, after {m.get('load_average_after')}; whole benchmark "
             f"{report['wall_s']:.0f} s wall.", "",
             f"Reproduce: `python -m benchmarks.broker`{' --quick' if report['quick'] else ''} "
             "(`--quick`: the small preset, seed 0, printed only).  Paper 003 (mlBroker), Sec. 6.1 setting.  "
             "`tight` = convex hull of the price (7) (the library's default), `bigm` = the paper's rows "
             "(8c)-(8e).  "
             "Every integral schedule is checked by `check_broker_schedule`; its recomputed total is reported.",
             ""]
    lines += _timing_lines(report)
    for case in report["cases"]:
        lines += _case_lines(case)
    lines += _findings(report)
    return "\n".join(lines) + "\n"


def _timing_lines(report: dict) -> list[str]:
    tm = report["parameters"]["timing"]
    seed = next(s for c in report["cases"] for s in c["seeds"] if s["timing_run"])
    lines = [f"## (a) problem (10) per slot along A_fractional's run ({tm['preset']} preset, seed {tm['seed']}, "
             "Clarabel)", "",
             "Model build = `build_broker_regularized`; canonicalization = CVXPY's compilation; solve = "
             "Clarabel's own time, summed over A_fractional's attempts (a slot whose solve ends without "
             "an optimal status is solved again with the settings of `CLARABEL_RETRIES`).  Slot = the three "
             "together.", "",
             "| price form | slots | median active jobs | build median s | canon. median s | solve median s "
             "| solve p90 s | solve max s | slot median s | slot p90 s | slot max s | statuses "
             f"| slots by attempts | median < {BARS['slot_median_s']:.0f} s |",
             "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :--- | :--- | :--- |"]
    for pf, label in (("tight", "mlbroker"), ("bigm", "mlbroker-bigm")):
        st = seed["runs"][label]["slot_times"]
        lines.append(f"| {pf} | {st['slots']} | {st['median_jobs']:.0f} | {st['model_build_s']['median']:.3f} | "
                     f"{st['canonicalize_s']['median']:.3f} | {st['solve_s']['median']:.3f} | "
                     f"{st['solve_s']['p90']:.3f} | {st['solve_s']['max']:.3f} | {st['slot_s']['median']:.3f} | "
                     f"{st['slot_s']['p90']:.3f} | {st['slot_s']['max']:.3f} | "
                     f"{', '.join(f'{k}: {v}' for k, v in st['statuses'].items())} | "
                     f"{', '.join(f'{k}: {v}' for k, v in st.get('attempts', {}).items())} | "
                     f"{_bar(st['slot_s']['median'] < BARS['slot_median_s'])} |")
    lines += ["", "SCS on the same slots (same `v(t - 1)`), against Clarabel:", "",
              "| price form | slot | jobs | SCS status | SCS objective | Clarabel objective | rel. gap "
              "| SCS solve s | Clarabel solve s |",
              "| :--- | ---: | ---: | :--- | ---: | ---: | ---: | ---: | ---: |"]
    for r in seed.get("scs", []):
        lines.append(f"| {r['price_form']} | {r['slot']} | {r['jobs']} | {r['status']} | "
                     f"{_f(r['objective'], 8)} | {_f(r['clarabel_objective'], 8)} | {_f(r['rel_gap'], 3)} | "
                     f"{r['solve_s']:.2f} | "
                     f"{r['clarabel_solve_s']:.2f} |")
    lines += ["", f"## (b), (c) whole runs and offline problems ({tm['preset']} preset, every seed)", "",
              "| seed | what | wall s | build s | hand-off / canon. s | solve s | bar |",
              "| ---: | :--- | ---: | ---: | ---: | ---: | :--- |"]
    case = next(c for c in report["cases"] if c["preset"] == tm["preset"])
    for s in case["seeds"]:
        for label in ("mlbroker", "mlbroker-bigm", "mlbroker-ir", "mlbroker-gr", "oasis"):
            r = s["runs"][label]
            st = r.get("slot_times")
            bar = f"< {BARS['run_s']:.0f} s: {_bar(r['wall_s'] < BARS['run_s'])}" if label.startswith("ml") else ""
            if st:
                lines.append(f"| {s['seed']} | {label} run (T = {st['slots']} slots solved) | {r['wall_s']:.1f} | "
                             f"{st['model_build_s']['sum']:.1f} | {st['canonicalize_s']['sum']:.1f} | "
                             f"{st['solve_s']['sum']:.1f} | {bar} |")
            else:
                lines.append(f"| {s['seed']} | {label} run | {r['wall_s']:.1f} | | | | |")
        for pf in FORMS:
            lp = s["lp"][pf]
            lines.append(f"| {s['seed']} | P_f (9) {pf} | {lp['wall_s']:.1f} | {lp['build_s']:.1f} | "
                         f"{lp['handoff_s']:.1f} | {lp['solve_s']:.1f} | "
                         f"< {BARS['pf_s']:.0f} s: {_bar(lp['wall_s'] < BARS['pf_s'])} |")
        mi = s.get("milp")
        if mi:
            lines.append(f"| {s['seed']} | MILP (8) tight, limit {mi['time_limit']:.0f} s: {mi['status']} | "
                         f"{mi['wall_s']:.1f} | | {_f(mi.get('handoff_s'), 3)} | {_f(mi.get('solve_s'), 4)} | |")
    lines.append("")
    return lines


def _case_lines(case: dict) -> list[str]:
    seeds = case["seeds"]
    labels = list(seeds[0]["runs"])
    n = len(seeds)
    lines = [f"## quality: {case['preset']} preset, seeds {[s['seed'] for s in seeds]}", "",
             "Lower bounds and the MILP (8) (tight form, HiGHS; gap = HiGHS's relative gap when stopped):", "",
             "| seed | P_f bigm | P_f tight | MILP (8) | MILP status | MILP bound | A_fractional tight | "
             "/ P_f tight | A_fractional bigm | / P_f bigm |",
             "| ---: | ---: | ---: | ---: | :--- | ---: | ---: | ---: | ---: | ---: |"]
    for s in seeds:
        mi = s.get("milp") or {}
        q = s["quality"]
        lines.append(f"| {s['seed']} | {_f(s['lp']['bigm']['value'], 6)} | {_f(s['lp']['tight']['value'], 6)} | "
                     f"{_f(mi.get('value'), 6)} | {mi.get('status', 'not run')} | {_f(mi.get('bound'), 6)} | "
                     f"{_f(s['runs']['mlbroker']['fractional']['total'], 6)} | "
                     f"{q['afractional_tight_over_pf_tight']:.4f} | "
                     f"{_f(s['runs']['mlbroker-bigm']['fractional']['total'], 6)} | "
                     f"{q['afractional_bigm_over_pf_bigm']:.4f} |")
    has_milp = all("over_milp" in s["quality"] for s in seeds)
    lines += ["", f"Integral runs: total per seed, mean C1..C4 over the {n} seed(s), mean ratio to P_f tight"
              + (" and to the MILP" if has_milp else "") + ":", "",
              "| policy | " + " | ".join(f"seed {s['seed']}" for s in seeds) + " | mean C1 | mean C2 | mean C3 | "
              "mean C4 | mean / P_f tight |" + (" mean / MILP |" if has_milp else "") + " mean wall s |",
              "| :--- |" + " ---: |" * (n + 5 + has_milp + 1)]
    for label in labels:
        rs = [s["runs"][label] for s in seeds]
        mean = {c: np.mean([r["costs"][c] for r in rs]) for c in COSTS}
        row = (f"| {label} | " + " | ".join(f"{r['total_cost']:.6g}" for r in rs) + " | "
               + " | ".join(f"{mean[c]:.5g}" for c in COSTS)
               + f" | {np.mean([s['quality']['over_pf_tight'][label] for s in seeds]):.4f} |")
        if has_milp:
            row += f" {np.mean([s['quality']['over_milp'][label] for s in seeds]):.4f} |"
        lines.append(row + f" {np.mean([r['wall_s'] for r in rs]):.1f} |")
    lines += ["", "mlBroker's savings, 1 - mlBroker / baseline (negative: mlBroker costs more):", "",
              "| seed | " + " | ".join(f"vs {b}" for b in BASELINES) + " |",
              "| ---: |" + " ---: |" * len(BASELINES)]
    for s in seeds:
        lines.append(f"| {s['seed']} | " + " | ".join(f"{s['quality']['mlbroker_savings'][b]:+.1%}"
                                                      for b in BASELINES) + " |")
    alone = [s for s in seeds if s.get("afractional_standalone")]
    if alone:
        worst = max(a["rel_diff_vs_mlbroker_fractional"]
                    for s in alone for a in s["afractional_standalone"].values())
        lines += ["", f"Stand-alone A_fractional runs (both forms) cost the same as mlBroker's fractional side: "
                      f"largest relative difference {worst:.1e}."]
    lines.append("")
    return lines


def _findings(report: dict) -> list[str]:
    lines = ["## notes", ""]
    for case in report["cases"]:
        seeds = case["seeds"]
        lost = [(s["seed"], b) for s in seeds for b in BASELINES if s["quality"]["mlbroker_savings"][b] < 0]
        if lost:
            lines.append(f"- {case['preset']}: mlBroker costs more than "
                         + ", ".join(f"{b} (seed {sd})" for sd, b in lost) + ".")
        else:
            lines.append(f"- {case['preset']}: mlBroker costs less than every baseline on every seed.")
        for s in seeds:
            mi, q = s.get("milp"), s["quality"]
            if mi and "over_milp" in q:
                lines.append(f"- {case['preset']} seed {s['seed']}: MILP (8) {mi['status']} after "
                             f"{mi['wall_s']:.0f} s (gap {_f(mi.get('gap'), 3)}); mlBroker / MILP solution "
                             f"{q['over_milp']['mlbroker']:.4f}, / MILP bound "
                             f"{_f(q.get('mlbroker_over_milp_bound'))}, / P_f tight "
                             f"{q['over_pf_tight']['mlbroker']:.4f}; central / MILP solution "
                             f"{q['over_milp']['central']:.4f}.")
            elif mi:
                lines.append(f"- {case['preset']} seed {s['seed']}: MILP (8) found no solution within "
                             f"{mi['time_limit']:.0f} s.")
        f5 = [s["quality"]["afractional_bigm_over_pf_bigm"] for s in seeds]
        lines.append(f"- {case['preset']}: A_fractional / P_f with the paper's big-M rows: "
                     + ", ".join(f"{x:.3f}" for x in f5) + " (Fig. 5 reports < 1.25); with the hull: "
                     + ", ".join(f"{s['quality']['afractional_tight_over_pf_tight']:.4f}" for s in seeds) + ".")
    for case in report["cases"]:
        share = [s["runs"]["mlbroker"]["costs"]["C3"] / s["runs"]["mlbroker"]["total_cost"] for s in case["seeds"]]
        lines.append(f"- {case['preset']}: the deployment cost C3 is at most {max(share):.2%} of mlBroker's total "
                     "(c_i from Sec. 6.1's range): the slots hardly couple, which is why A_fractional's online "
                     "cost (convex-hull rows) meets the offline P_f tight.")
    timing = next(s for c in report["cases"] for s in c["seeds"] if s["timing_run"])
    for pf in FORMS:
        rows = [r for r in timing.get("scs", []) if r["price_form"] == pf and r["rel_gap"] is not None]
        if rows:
            worst = max(rows, key=lambda r: abs(r["rel_gap"]))
            speed = [r["solve_s"] / max(r["clarabel_solve_s"], 1e-9) for r in rows]
            lines.append(f"- SCS ({pf}): statuses {sorted({r['status'] for r in rows})}; largest relative "
                         f"objective difference to Clarabel {worst['rel_gap']:+.2e} (slot {worst['slot']}; SCS's "
                         f"default tolerances are looser); SCS solve {min(speed):.1f}-{max(speed):.1f}x "
                         "Clarabel's.")
    lines.append("- Status FEASIBLE in the slot table is CVXPY's `optimal_inaccurate`: A_fractional uses such a "
                 "solution (with a warning) only when no setting of its retry ladder ends optimal.")
    lines.append("- Wall times include contention from other jobs on the machine: see the load averages in the "
                 "header (2 CPUs).")
    lines.append("- The big-M P_f is tiny next to the tight P_f (relaxed big-M rows price almost nothing), so "
                 "ratios to it say little about the integral costs; mlbroker-bigm rounds a placement chosen "
                 "without prices.")
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "the small preset, seed 0; print only").parse_args(argv)
    params = dict(QUICK if args.quick else FULL)
    out = output_dir(args)
    start = time.perf_counter()
    report = {**header(NAME, ("clusteropt", "cvxpy", "clarabel", "scs", "pyomo", "highspy", "numpy")),
              "parameters": params, "quick": bool(args.quick), "bars": BARS}
    report["cases"] = [
        {"preset": case["preset"],
         "seeds": [run_seed(case, seed, params["timing"], case["preset"] in params["standalone_afractional"])
                   for seed in case["seeds"]]}
        for case in params["cases"]]
    report["wall_s"] = time.perf_counter() - start
    report["machine"]["load_average_after"] = machine_info()["load_average_1_5_15"]
    try:
        markdown = to_markdown(report)
    except Exception:
        write_results(NAME, report, "# broker\n\n(the Markdown report failed; see the JSON)\n", out)
        raise
    write_results(NAME, report, markdown, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
