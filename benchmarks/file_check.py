"""What ``solve_file``'s structural check of an LP / MPS file costs (``check_model_file``).

The check reads every line of the file before a solver does (sections, names, entries, numbers;
:func:`clusteropt.solvers.files.check_model_file`), so its cost is per byte.  Measured here on
files the package writes itself: the offline broker MILP (8) of a preset (``clusteropt export``'s
route, Pyomo's LP and MPS writers) and the same model's LP relaxation, each as LP and MPS.  For
each file: its size, the check's CPU and wall time (``time.process_time`` / ``perf_counter``,
median of ``repeats``) and the CPU seconds per MiB; next to it HiGHS's own reading of the file
(``Highs.readModel``, CPU), the cost the check adds to.

Run ``python -m benchmarks.file_check`` (the paper preset; writes ``benchmarks/results/``) or
``--quick`` (the small preset, printed only).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from benchmarks._report import finish, header, output_dir, parser

NAME = "file_check"
FULL = {"preset": "paper", "seed": 0, "repeats": 3}
QUICK = {"preset": "small", "seed": 0, "repeats": 2}


def _timed(fn, repeats: int) -> tuple[float, float]:
    cpu, wall = [], []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu), statistics.median(wall)


def measure(params: dict) -> list[dict]:
    """One row per written file (model x format)."""
    import highspy

    from clusteropt.instances.broker import broker_preset
    from clusteropt.models.broker.milp import build_broker_milp
    from clusteropt.solvers import write_model
    from clusteropt.solvers.files import check_model_file
    from clusteropt.solvers.highs import quiet_banner

    quiet_banner()
    inst = broker_preset(params["preset"], seed=params["seed"])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, relax in (("broker-milp", False), ("broker-lp", True)):
            model = build_broker_milp(inst, relax=relax)
            for suffix in (".lp", ".mps"):
                path = Path(tmp) / f"{label}{suffix}"
                write_model(model, path)
                mib = path.stat().st_size / 2**20
                cpu, wall = _timed(lambda p=path: check_model_file(p), params["repeats"])

                def read(p=path):
                    h = highspy.Highs()
                    h.setOptionValue("output_flag", False)
                    if h.readModel(str(p)) == highspy.HighsStatus.kError:
                        raise RuntimeError(f"HiGHS could not read {p}, which the check accepted")

                read_cpu, _ = _timed(read, params["repeats"])
                rows.append({"model": label, "format": suffix[1:], "mib": mib, "check_cpu_s": cpu,
                             "check_wall_s": wall, "cpu_s_per_mib": cpu / mib, "highs_read_cpu_s": read_cpu})
    return rows


def to_markdown(report: dict) -> str:
    p = report["params"]
    lines = [f"# {NAME}", "", f"recorded {report['created']} at code version {report['code_version']}, "
             f"{report['machine']['cpu_count']} CPUs (load {report['machine']['load_average_1_5_15']}); broker "
             f"preset {p['preset']!r}, seed {p['seed']}, median of {p['repeats']} runs", "",
             "| model | format | MiB | check CPU s | check wall s | CPU s / MiB | HiGHS read CPU s |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for r in report["rows"]:
        lines.append(f"| {r['model']} | {r['format']} | {r['mib']:.1f} | {r['check_cpu_s']:.2f} | "
                     f"{r['check_wall_s']:.2f} | {r['cpu_s_per_mib']:.3f} | {r['highs_read_cpu_s']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "the small preset, print only").parse_args(argv)
    params = QUICK if args.quick else FULL
    start = time.perf_counter()
    report = {**header(NAME, ("pyomo", "highspy")), "params": params, "rows": measure(params)}
    finish(NAME, report, to_markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
