"""Re-run a slice of every recorded experiment at the current code and compare it with the record.

``benchmarks/results/experiments/NAME/results.csv`` holds every recorded cell's metrics (timings
aside) and the code version that made them.  A later commit has another code version, so its
store re-runs every cell; this checks, on a cheap slice of each experiment (one or two grid
values, the recorded seeds only), that the current code still makes the recorded numbers: each
re-run cell is matched to the recorded one with the same parameters, seed and policy, and every
column is compared (numbers to a relative 1e-9, text exactly).  A cell that differs is listed with
its columns; a solver run under a time limit (``gadget-exact``'s 60 s slot ILP, say) may differ
legitimately when the machine is slower or busier than the recording's.

Nothing is assumed about which cells match: the table says how many were re-run, matched,
identical and different per experiment.  ``coflow-trace`` runs only when the Facebook trace it
reads (``FB2010-1Hr-150-0.txt``) is in the working directory.

Versions.  A re-run under other library versions (``pip install .`` takes the newest that
``pyproject.toml`` allows; ``make`` the lock) may move a number for a reason that is not the code's.
Each experiment's row therefore says what the re-run's versions are against the record's: the
recorded ``versions`` column where the record has one, else the lock
(``requirements/constraints.txt``, which pins what ``make`` installs), marked as such.  A cell that
differs is counted as differing *under changed versions* when any version differs, so a
version change is reported as one and not as a number that moved.

Under changed versions a difference is *explained* when it is within the solvers' tolerances
(relative :data:`SOLVER_TOLERANCE`, HiGHS's MIP feasibility tolerance: another version's optimum
of the same MILP differs in its last digits) or lies in a column :data:`VERSION_SENSITIVE` names
for its experiment and policy, with the reason the version moves it (an LP with several optimal
vertices, a MILP solved to a gap).  Every other difference is *unexplained*: what ``--strict``
fails on (with unchanged versions every difference is unexplained).

Run ``python -m benchmarks.record_check --jobs 2`` (writes ``benchmarks/results/``; the recorded
run, 1,574 cells, took 21 minutes on 2 cores beside another 2-worker run), ``--experiments a,b``
for some, ``--quick`` for two tiny slices (printed only), ``--solvers`` for the slices of the
experiments whose numbers come from a solver (:data:`SOLVER_SLICES`, a few minutes: what
``make test-latest`` re-runs under the newest allowed versions).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._report import RESULTS_DIR, finish, header, output_dir, parser

NAME = "record_check"
RECORD = RESULTS_DIR / "experiments"
#: Experiment -> the grid values its slice keeps (each a value of the experiment's own grid).
SLICES: dict[str, dict[str, list]] = {
    "broker-cost": {"data_per_slot": [100.0], "trial": [0]},
    "broker-deploy": {"trial": [3]},
    "broker-fractional": {"n_dcs": [5], "trial": [0]},
    "broker-ratio": {"horizon": [5]},
    "broker-rounding": {"trial": [1], "capacity": [16.0]},
    "broker-rounding-dcs": {"n_dcs": [5]},
    "coflow-arrivals": {"arrivals": ["at-0"]},
    "coflow-ratios": {"n_coflows": [50]},
    "coflow-trace": {},
    "gadget-capacity": {"units": [8.0]},
    "gadget-competitive": {"n_jobs": [4]},
    "gadget-slot-ratio": {"n_jobs": [10]},
    "gadget-slot-ratio-paper": {"n_jobs": [40], "utility": ["sigmoid"]},
    "gadget-utility": {"n_jobs": [100]},
    "gadget-utility-settings": {"utility": ["sigmoid-loaded"]},
    "realtime-fig3": {"direction": [8]},
    "realtime-fig4": {"direction": [0]},
    "realtime-fig5": {"n": [2]},
    "ring-cost-split": {"pattern": ["hotspot"]},
    "ring-hit-the-cut": {"n": [16]},
    "ring-load": {"trial": [4]},
    "ring-ratio": {"n": [16]},
    "ring-ratio-exact": {"n": [6]},
    "ring-ratio-dp": {"shape": ["8/2", "6/3"]},
    "ring-sensitivity": {},
    "worker-placement-gap": {"n_jobs": [8]},
}
QUICK = {"ring-cost-split": {"pattern": ["hotspot"]}, "ring-ratio-exact": {"n": [6], "pattern": ["hotspot"]}}
#: The slices whose numbers a solver makes (LP, MILP, conic): a solver's version can move them.
SOLVER_SLICES = {name: SLICES[name] for name in (
    "broker-cost", "broker-ratio", "broker-rounding-dcs", "coflow-ratios", "gadget-slot-ratio", "gadget-utility",
    "realtime-fig3", "worker-placement-gap")}


def _grid_values(spec, wanted: dict[str, list]) -> dict[str, list]:
    """``wanted`` with each value replaced by the equal one of the spec's grid (so ``100`` is the
    grid's ``100.0`` and the cell seeds agree); a value not in the grid is refused.
    """
    out = {}
    for key, values in wanted.items():
        if key not in spec.grid:
            raise ValueError(f"{spec.name}: no grid parameter {key!r}; its grid: {', '.join(spec.grid)}")
        kept = [v for v in spec.grid[key] if v in values]
        if len(kept) != len(values):
            raise ValueError(f"{spec.name}: {key} = {values} not all in its grid {list(spec.grid[key])}")
        out[key] = kept
    return out


LOCK = Path(__file__).resolve().parent.parent / "requirements" / "constraints.txt"
#: Relative difference within which two solver versions' numbers count as the same (HiGHS's
#: mip_feasibility_tolerance: the optimum of one MILP differs in its last digits between versions).
SOLVER_TOLERANCE = 1e-6
_LP_RS_MDE = ("gadget-lp-rs-mde", "gadget-lp-rs-mde-paper")
_LP_VERTEX = ("LP-RS-MDE draws its embedding from the optimal point HiGHS returns for its LPs, which "
              "have many optimal vertices; another highspy returns another one (same LP value)")
#: Experiment -> ``(policies, columns, reason)``: the numbers a library version may move, and why.
VERSION_SENSITIVE: dict[str, tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...]] = {
    "gadget-slot-ratio": ((_LP_RS_MDE, (
        "ratio_mean", "ratio_min", "ratio_median", "ratio_max", "drawn_ratio_mean", "drawn_ratio_min",
        "drawn_ratio_median", "drawn_ratio_max", "greedy_ratio_mean", "greedy_ratio_min", "greedy_ratio_median",
        "greedy_ratio_max", "capacity_violations", "overloaded_slots", "max_load_ratio", "policy_gain"),
        _LP_VERTEX),),
    "gadget-utility": ((_LP_RS_MDE, ("worker_slots", "fill_gain", "mean_slot_jobs", "capacity_violations",
                                     "overloaded_slots", "max_load_ratio"), _LP_VERTEX),),
    "broker-rounding-dcs": ((("slot-milp",), ("rounded_total", "C1", "C2", "C3", "C4", "total", "ratio"),
                             "the slot MILP is solved to a relative gap of 0.5% (DEFAULT_SLOT_GAP): another "
                             "highspy may stop at another incumbent within it"),),
}


def lock_versions(path: Path = LOCK) -> dict[str, str]:
    """``name -> version`` of every ``name==version`` pin of the lock (names lower-case).

    >>> v = lock_versions()
    >>> sorted(k for k in v if k in ("highspy", "numpy"))
    ['highspy', 'numpy']
    """
    out = {}
    for line in path.read_text().splitlines():
        name, sep, ver = line.partition("==")
        if sep and not line.startswith("#"):
            out[name.strip().lower()] = ver.strip()
    return out


def parse_versions(text: str) -> dict[str, str | None]:
    """The inverse of :func:`clusteropt.provenance.environment_text`.

    >>> parse_versions("python 3.11.7, highspy 1.15.1, gurobipy -")
    {'python': '3.11.7', 'highspy': '1.15.1', 'gurobipy': None}
    """
    out: dict[str, str | None] = {}
    for part in text.split(", "):
        name, _, ver = part.partition(" ")
        out[name] = None if ver == "-" else ver
    return out


def reference_versions(recorded: pd.DataFrame) -> tuple[dict[str, str | None], str]:
    """The versions a record was made under, and where they come from (``"record"`` or ``"lock"``)."""
    if "versions" in recorded.columns:
        seen = {str(v) for v in recorded.versions.dropna() if str(v)}
        if len(seen) == 1:
            return parse_versions(seen.pop()), "record"
        if len(seen) > 1:
            raise ValueError(f"the record mixes {len(seen)} library environments; record_check compares with one")
    return dict(lock_versions()), "lock"


def version_changes(reference: dict[str, str | None], now: dict[str, str | None]) -> list[str]:
    """``"name old -> new"`` for every package both name with different versions.

    >>> version_changes({"highspy": "1.15.1", "numpy": "2.4.6"}, {"highspy": "1.16.0", "numpy": "2.4.6"})
    ['highspy 1.15.1 -> 1.16.0']
    """
    return [f"{k} {reference[k] or '-'} -> {now[k] or '-'}" for k in now
            if k in reference and (reference[k] or None) != (now[k] or None)]


def _same(a: pd.Series, b: pd.Series) -> np.ndarray:
    """Element-wise: equal numbers (relative 1e-9) or equal text; both missing counts as equal."""
    if pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b):
        x, y = a.to_numpy(dtype=float), b.to_numpy(dtype=float)
        return np.isclose(x, y, rtol=1e-9, atol=1e-12, equal_nan=True)
    na = a.isna().to_numpy() & b.isna().to_numpy()
    return na | (a.astype(str).to_numpy() == b.astype(str).to_numpy())


def compare(recorded: pd.DataFrame, rerun: pd.DataFrame, *, versions_changed: bool = False,
            sensitive: tuple = ()) -> dict:
    """Match ``rerun``'s cells to ``recorded``'s by (parameters, seed, policy) and compare every
    other column but ``code_version`` and the environment columns (which say how each was made);
    both tables as read from a ``results.csv``.

    With ``versions_changed``, a difference within :data:`SOLVER_TOLERANCE` or in a column that
    ``sensitive`` (``(policies, columns, reason)`` triples, :data:`VERSION_SENSITIVE`) names for
    the cell's policy is explained; the rest is ``unexplained``.  Without, every difference is.
    """
    from clusteropt.experiments.report import param_columns
    from clusteropt.experiments.store import ENVIRONMENT_COLUMNS

    keys = [*param_columns(recorded), "seed", "policy"]
    absent = [k for k in keys if k not in rerun.columns]
    if absent:
        raise ValueError(f"the re-run cells have no column {', '.join(absent)}: the experiment's grid changed "
                         "since the record; its cells cannot be matched")
    skip = {*keys, "code_version", *ENVIRONMENT_COLUMNS}
    columns = [c for c in recorded.columns if c not in skip]
    missing = [c for c in columns if c not in rerun.columns]
    merged = recorded.merge(rerun, on=keys, how="inner", suffixes=("_rec", "_now"))
    differ = np.zeros(len(merged), dtype=bool)
    unexplained = np.zeros(len(merged), dtype=bool)
    unexplained_columns: dict[str, int] = {}
    policy = merged["policy"].astype(str).to_numpy()
    columns_differing: dict[str, int] = {}
    largest: dict[str, float] = {}  # numeric columns: the largest relative difference, |rec - now| / |rec|
    for c in columns:
        if c in missing:  # a recorded column none of the re-run cells makes: differs where it held a value
            bad = merged[c].notna().to_numpy()
            if bad.any():
                columns_differing[f"{c} (absent now)"] = int(bad.sum())
                unexplained_columns[f"{c} (absent now)"] = int(bad.sum())
            differ |= bad
            unexplained |= bad
            continue
        bad = ~_same(merged[f"{c}_rec"], merged[f"{c}_now"])
        if bad.any():
            columns_differing[c] = int(bad.sum())
            a, b = merged[f"{c}_rec"][bad], merged[f"{c}_now"][bad]
            if pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b):
                x, y = a.to_numpy(dtype=float), b.to_numpy(dtype=float)
                with np.errstate(invalid="ignore", divide="ignore"):
                    rel = np.abs(x - y) / np.maximum(np.abs(x), 1e-12)
                largest[c] = float(np.nanmax(rel)) if np.isfinite(rel).any() else float("nan")
        differ |= bad
        if not bad.any():
            continue
        moved = bad.copy()
        if versions_changed:
            rec, now = merged[f"{c}_rec"], merged[f"{c}_now"]
            if pd.api.types.is_numeric_dtype(rec) and pd.api.types.is_numeric_dtype(now):
                close = np.isclose(rec.to_numpy(dtype=float), now.to_numpy(dtype=float), rtol=SOLVER_TOLERANCE,
                                   atol=1e-12, equal_nan=True)
                moved &= ~close
            for policies, cols, _ in sensitive:
                if c in cols:
                    moved &= ~np.isin(policy, policies)
        if moved.any():
            unexplained_columns[c] = int(moved.sum())
        unexplained |= moved
    cells = [f"{', '.join(f'{k}={merged[k].iloc[i]}' for k in keys)}" for i in np.flatnonzero(differ)]
    return {"rerun": len(rerun), "matched": len(merged), "identical": int((~differ).sum()),
            "different": int(differ.sum()), "columns_differing": columns_differing, "largest_relative": largest,
            "unexplained": int(unexplained.sum()), "columns_unexplained": unexplained_columns,
            "columns_missing_now": missing, "different_cells": cells[:10],
            "failed_now": int((rerun.status != "ok").sum())}


def check(name: str, wanted: dict[str, list], *, n_jobs: int, store: Path) -> dict:
    """Re-run ``name``'s slice ``wanted`` (recorded seeds only) into ``store`` and compare."""
    from clusteropt.experiments import export_table, get_experiment, run_sweep
    from clusteropt.provenance import environment, environment_text

    recorded = pd.read_csv(RECORD / name / "results.csv")
    reference, source = reference_versions(recorded)
    spec = get_experiment(name)
    grid = _grid_values(spec, wanted)
    recorded_seeds = set(recorded.seed.tolist())
    seeds = [s for s in spec.seeds if s in recorded_seeds]
    spec = dataclasses.replace(spec.with_grid(**grid), seeds=seeds)
    start = time.perf_counter()
    table = run_sweep(spec, n_jobs=n_jobs, store=store, progress=False)
    seconds = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:  # the same CSV round trip as the record's
        rerun = pd.read_csv(export_table(table, Path(tmp) / "results.csv"))
    now = environment()
    changes = version_changes(reference, now)
    return {"experiment": name, "slice": grid, "seeds": seeds,
            "recorded_version": ", ".join(sorted(recorded.code_version.unique())),
            "now_version": ", ".join(sorted(rerun.code_version.unique())), "wall_s": seconds,
            "versions_now": environment_text(now), "versions_reference": source,
            "version_changes": changes, **compare(recorded, rerun, versions_changed=bool(changes),
                                                  sensitive=VERSION_SENSITIVE.get(name, ()))}


def main(argv: list[str] | None = None) -> int:
    p = parser(NAME, __doc__, "two tiny slices, print only")
    p.add_argument("--experiments", default=None, help="comma-separated experiment names (default: every slice)")
    p.add_argument("--solvers", action="store_true", help="only the slices a solver makes (SOLVER_SLICES)")
    p.add_argument("--strict", action="store_true", help="exit 1 when a re-run cell differs from the record "
                   "unexplained (any difference under the record's versions) or fails, after writing the report")
    p.add_argument("--jobs", type=int, default=1, help="worker processes for the re-run cells")
    p.add_argument("--store", type=Path, default=None, help="keep the re-run cells in this store (default: a "
                   "temporary one)")
    args = p.parse_args(argv)
    slices = QUICK if args.quick else SOLVER_SLICES if args.solvers else SLICES
    if args.experiments:
        names = [n.strip() for n in args.experiments.split(",") if n.strip()]
        unknown = [n for n in names if n not in SLICES]
        if unknown:
            p.error(f"--experiments: no slice for {', '.join(unknown)}; known: {', '.join(SLICES)}")
        slices = {n: SLICES[n] for n in names}
    start = time.perf_counter()
    rows, skipped = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or Path(tmp) / "record_check.sqlite"
        for name, wanted in slices.items():
            if not (RECORD / name / "results.csv").is_file():
                skipped[name] = "no recorded results.csv"
                continue
            if name == "coflow-trace" and not Path("FB2010-1Hr-150-0.txt").is_file():
                skipped[name] = "the trace FB2010-1Hr-150-0.txt is not in the working directory"
                continue
            rows.append(check(name, wanted, n_jobs=args.jobs, store=store))
    report = {**header(NAME, ("numpy", "pandas", "highspy", "pyomo", "cvxpy")), "jobs": args.jobs,
              "checks": rows, "skipped": skipped}

    def markdown(rep: dict) -> str:
        lines = [f"# {NAME}", "", f"created {rep['created']} at code version {rep['code_version']}, "
                 f"{rep['jobs']} worker(s); each experiment's slice re-run and compared with "
                 "`benchmarks/results/experiments/NAME/results.csv`.", "",
                 f"Library versions of the re-run: {rep['checks'][0]['versions_now'] if rep['checks'] else '-'}.  "
                 "The column *versions* compares them with the record's (`record`) or, for a record made "
                 "before results carried their versions, with the lock `requirements/constraints.txt` (`lock`).",
                 "",
                 "| experiment | slice | seeds | recorded at | versions | re-run | matched | identical | "
                 "different | unexplained | failed now | columns differing (cells; largest relative difference) "
                 "| wall s |",
                 "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|"]
        for r in rep["checks"]:
            big = r.get("largest_relative", {})
            cols = ", ".join(f"{c} ({k}{f'; {big[c]:.3g}' if c in big else ''})"
                             for c, k in r["columns_differing"].items())
            sl = ", ".join(f"{k}={','.join(map(str, v))}" for k, v in r["slice"].items()) or "all"
            changed = "; ".join(r["version_changes"]) or "same"
            lines.append(f"| {r['experiment']} | {sl} | {len(r['seeds'])} | {r['recorded_version']} | "
                         f"{changed} ({r['versions_reference']}) | {r['rerun']} | {r['matched']} | "
                         f"{r['identical']} | {r['different']} | {r['unexplained']} | {r['failed_now']} | "
                         f"{cols} | {r['wall_s']:.1f} |")
        total = {k: sum(r[k] for r in rep["checks"])
                 for k in ("rerun", "matched", "identical", "different", "unexplained")}
        moved = sum(r["different"] for r in rep["checks"] if r["version_changes"])
        lines += ["", f"In all: {total['rerun']} cells re-run, {total['matched']} matched to recorded cells, "
                  f"{total['identical']} identical, {total['different']} different ({moved} of them under changed "
                  f"library versions, {total['different'] - moved} under the same versions), "
                  f"{total['unexplained']} unexplained."]
        explained = [(r["experiment"], policies, cols, why) for r in rep["checks"] if r["version_changes"]
                     and r["different"] > r["unexplained"]
                     for policies, cols, why in VERSION_SENSITIVE.get(r["experiment"], ())]
        if any(r["version_changes"] and r["different"] for r in rep["checks"]):
            lines += ["", f"Under changed versions a difference within a relative {SOLVER_TOLERANCE:g} (the "
                      "solvers' tolerance) is explained, and so are these columns, which a solver's version "
                      "moves:", ""]
            lines += [f"- {e}, {', '.join(p)}: {', '.join(c)}. {why}." for e, p, c, why in explained]
        for r in rep["checks"]:
            if r["different_cells"]:
                lines += ["", f"{r['experiment']}, cells that differ (first 10):", ""]
                lines += [f"- {c}" for c in r["different_cells"]]
        if rep["skipped"]:
            lines += ["", "Skipped: " + "; ".join(f"{k} ({v})" for k, v in rep["skipped"].items()) + "."]
        return "\n".join(lines) + "\n"

    finish(NAME, report, markdown, output_dir(args), start)
    bad = sum(r["unexplained"] + r["failed_now"] for r in rows)
    return 1 if args.strict and bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
