"""Start-up of a run: what ``clusteropt run`` costs on instances so small that the run itself is nothing.

Each case is a fresh process (``python -m clusteropt.cli`` ... as ``clusteropt`` runs it), repeated
``repeats`` times; recorded per case: the median CPU time (user + system, from the children's
``getrusage``) and the median wall time, next to the bare interpreter (``python -c pass``) and the
package import alone.  The instances are tiny (a 64-process ring with 10 requests, 3 coflows on 4
ports), so the time is the start-up: the imports and the set-up a run needs before its first
request.  The target is 0.5 s of CPU for a small ring or coflow run.  Ring policies with a compiled
path stay on the Python reference below 20,000 requests (``clusteropt.algorithms.ring.compiled``),
so they do not load numba here.

Run ``python -m benchmarks.startup`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._report import finish, header, output_dir, parser

NAME = "startup"
TARGET_CPU_SECONDS = 0.5


def _cases(tmp: Path) -> dict[str, list[str]]:
    from clusteropt.instances import random_ring
    from clusteropt.instances.coflow import random_coflows

    ring = tmp / "ring.json"
    random_ring(64, 4, 10, "uniform", seed=0).to_json(ring)
    coflow = tmp / "coflow.json"
    random_coflows(3, 4, seed=0).to_json(coflow)
    out = str(tmp / "out.json")
    cli = [sys.executable, "-m", "clusteropt.cli"]
    cases = {"python -c pass": [sys.executable, "-c", "pass"],
             "import clusteropt": [sys.executable, "-c", "import clusteropt"],
             "clusteropt --help": [*cli, "--help"]}
    for policy in ("dynamic", "never", "follow", "static"):
        cases[f"run ring, {policy}"] = [*cli, "run", str(ring), "--policy", policy, "--json", out]
    cases["run coflow (default policy)"] = [*cli, "run", str(coflow), "--json", out]
    return cases


def _time(command: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), wall


def _markdown(report: dict) -> str:
    m = report["machine"]
    lines = [f"# {NAME}", "", f"Machine: {m['platform']}, {m['cpu_count']} cores, load average "
             f"{m.get('load_average_1_5_15')} (after: {m.get('load_average_after')}); created "
             f"{report['created']}, code version {report['code_version']}.", "",
             f"Median of {report['repeats']} fresh processes per case; target {TARGET_CPU_SECONDS:g} s CPU "
             "for a small ring or coflow run.", "",
             "| case | CPU (s) | wall (s) |", "|---|---:|---:|"]
    for case, r in report["cases"].items():
        lines.append(f"| {case} | {r['cpu_s']:.2f} | {r['wall_s']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "one repeat, print only").parse_args(argv)
    start = time.perf_counter()
    report = header(NAME, ())
    report["repeats"] = repeats = 1 if args.quick else 5
    report["cases"] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cases = _cases(Path(tmp))
        for case, command in cases.items():
            runs = [_time(command) for _ in range(repeats)]
            report["cases"][case] = {"cpu_s": statistics.median(c for c, _ in runs),
                                     "wall_s": statistics.median(w for _, w in runs),
                                     "command": [Path(c).name if c == sys.executable else c for c in command[1:]]}
    finish(NAME, report, _markdown, output_dir(args), start)
    over = [c for c, r in report["cases"].items() if c.startswith("run") and r["cpu_s"] > TARGET_CPU_SECONDS]
    if over and not args.quick:
        print(f"over the {TARGET_CPU_SECONDS:g} s CPU target: {', '.join(over)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
