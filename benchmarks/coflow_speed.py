"""Coflow greedy schedulers at the public trace's scale: compiled against the Python reference, and whole CLI runs.

A trace-like synthetic workload (``random_coflows``: 150 ports, 526 coflows, heavy-tailed widths
and sizes scaled as in ``coflow_scale``, Poisson arrivals), seeds 0-2.  Per seed, in one process:
the offline greedy schedule of the SEBF order and the online greedy (SEBF re-planned at every
arrival), each with ``CLUSTEROPT_JIT=1`` (the compiled fill, kernels loaded beforehand) and
``CLUSTEROPT_JIT=0`` (the pure-Python reference), CPU and wall time, and the check that both give
the same schedule array for array.  Then ``clusteropt run FILE --policy sebf --schedule greedy
--online`` as a fresh process (the default mode: compiled at this size), CPU and wall time with
the verifier and the JSON write included; and the kernel's compile time in a fresh process with an
empty numba cache.  Targets: a trace-scale synthetic run within 1 s of CPU in process.

With ``--trace FB2010-1Hr-150-0.txt`` (the public Facebook trace, github.com/coflow/coflow-benchmark;
not in the repository) the same on the real trace at 1 MB units and 1 s slots: the import as a
fresh process (``clusteropt import coflow-benchmark``), the online greedy in process (compiled and
reference), and the whole CLI run as a fresh process, CPU and wall time, with the file's SHA-256
so that a reader can tell it is the same file.  Target: the CLI run within 5 s of CPU.

Run ``python -m benchmarks.coflow_speed`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.algorithms.coflow.online import online_greedy_schedule
from clusteropt.algorithms.coflow.pipeline import coflow_order
from clusteropt.algorithms.coflow.schedulers import greedy_schedule
from clusteropt.instances import random_coflows

NAME = "coflow_speed"
FULL = {"n_coflows": 526, "n_ports": 150, "units_scale": 2000.0, "max_units": None, "seeds": [0, 1, 2],
        "load": 0.9, "weights": "random"}
QUICK = {"n_coflows": 40, "n_ports": 12, "units_scale": 20.0, "max_units": None, "seeds": [0],
         "load": 0.9, "weights": "random"}
FIELDS = ("start", "length", "ptr", "coflow", "input", "output", "order")
TARGET_CPU_SECONDS = 1.0


def _timed(fn, jit: str):
    os.environ["CLUSTEROPT_JIT"] = jit
    try:
        cpu, wall = time.process_time(), time.perf_counter()
        out = fn()
        return out, time.process_time() - cpu, time.perf_counter() - wall
    finally:
        del os.environ["CLUSTEROPT_JIT"]


def _child(command: list[str], env: dict | None = None) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), "wall_s": wall}


def _seed(cfg: dict, seed: int, tmp: Path) -> dict:
    inst = random_coflows(cfg["n_coflows"], cfg["n_ports"], load=cfg["load"], weights=cfg["weights"],
                          units_scale=cfg["units_scale"], max_units=cfg["max_units"], seed=seed)
    order = coflow_order(inst, "sebf")
    row: dict = {"seed": seed, "flows": int(inst.n_flows), "units": int(inst.units.sum())}
    for name, fn in (("greedy", lambda: greedy_schedule(inst, order)),
                     ("online", lambda: online_greedy_schedule(inst, "sebf").schedule)):
        fast, cpu, wall = _timed(fn, "1")
        ref, rcpu, rwall = _timed(fn, "0")
        same = all(np.array_equal(getattr(fast, f), getattr(ref, f)) for f in FIELDS)
        if not same:
            raise AssertionError(f"seed {seed} {name}: the compiled and the reference schedule differ")
        row[name] = {"cpu_s": cpu, "wall_s": wall, "reference_cpu_s": rcpu, "reference_wall_s": rwall,
                     "same": same}
    path = tmp / f"coflow-{seed}.json"
    inst.to_json(path)
    row["cli_online"] = _child([sys.executable, "-m", "clusteropt.cli", "run", str(path), "--policy", "sebf",
                                "--schedule", "greedy", "--online", "--json", str(tmp / "out.json")])
    return row


def _trace(path: Path, tmp: Path) -> dict:
    """The real trace: import, in-process online greedy (compiled, reference), the CLI run."""
    import hashlib

    from clusteropt.instances import load_instance

    out: dict = {"file": path.name, "bytes": path.stat().st_size,
                 "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), **TRACE}
    inst_path = tmp / "fb.json"
    out["import"] = _child([sys.executable, "-m", "clusteropt.cli", "import", "coflow-benchmark", str(path),
                            "--unit-mb", str(TRACE["unit_mb"]), "--slot-ms", str(TRACE["slot_ms"]), "-o",
                            str(inst_path)])
    inst = load_instance(inst_path)
    out.update(flows=int(inst.n_flows), units=int(inst.units.sum()))
    fast, cpu, wall = _timed(lambda: online_greedy_schedule(inst, "sebf").schedule, "1")
    ref, rcpu, rwall = _timed(lambda: online_greedy_schedule(inst, "sebf").schedule, "0")
    if not all(np.array_equal(getattr(fast, f), getattr(ref, f)) for f in FIELDS):
        raise AssertionError("the trace's compiled and reference online schedules differ")
    out["online"] = {"cpu_s": cpu, "wall_s": wall, "reference_cpu_s": rcpu, "reference_wall_s": rwall,
                     "same": True}
    out["cli_online"] = _child([sys.executable, "-m", "clusteropt.cli", "run", str(inst_path), "--policy", "sebf",
                                "--schedule", "greedy", "--online", "--json", str(tmp / "fb-out.json")])
    return out


#: The import of the real trace: the units and slots of the ``coflow-trace`` experiment.
TRACE = {"unit_mb": 1.0, "slot_ms": 1000.0}
TRACE_TARGET_CPU_SECONDS = 5.0


def _markdown(report: dict) -> str:
    m = report["machine"]
    c = report["compile"]
    lines = [f"# {NAME}", "", f"Machine: {m['platform']}, {m['cpu_count']} cores, load average "
             f"{m.get('load_average_1_5_15')} (after: {m.get('load_average_after')}); created "
             f"{report['created']}, code version {report['code_version']}; parameters {report['config']}.", "",
             f"Compiled fill: {c['empty_cache']['cpu_s']:.1f} s CPU to compile (a fresh process, empty numba "
             f"cache), {c['filled_cache']['cpu_s']:.2f} s to import and load it (cache filled).  Reference = "
             "the same call with `CLUSTEROPT_JIT=0`; every schedule equal array for array.  CLI = "
             "`clusteropt run FILE --policy sebf --schedule greedy --online --json out.json`, a fresh "
             "process (verification and JSON included).", "",
             "| seed | flows | units | greedy CPU (s) | reference (s) | online CPU (s) | reference (s) "
             "| CLI online CPU (s) | CLI wall (s) |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in report["seeds"]:
        lines.append(f"| {r['seed']} | {r['flows']} | {r['units']} | {r['greedy']['cpu_s']:.2f} | "
                     f"{r['greedy']['reference_cpu_s']:.2f} | {r['online']['cpu_s']:.2f} | "
                     f"{r['online']['reference_cpu_s']:.2f} | {r['cli_online']['cpu_s']:.2f} | "
                     f"{r['cli_online']['wall_s']:.2f} |")
    t = report.get("trace")
    if t:
        lines += ["", f"The Facebook trace `{t['file']}` ({t['bytes']} bytes, SHA-256 `{t['sha256']}`), "
                  f"{t['unit_mb']:g} MB units, {t['slot_ms']:g} ms slots: {t['flows']} flows, {t['units']} units.",
                  "",
                  "| step | CPU (s) | wall (s) |", "|:---|---:|---:|",
                  f"| import (CLI process) | {t['import']['cpu_s']:.2f} | {t['import']['wall_s']:.2f} |",
                  f"| online greedy in process, compiled | {t['online']['cpu_s']:.2f} | "
                  f"{t['online']['wall_s']:.2f} |",
                  f"| online greedy in process, reference | {t['online']['reference_cpu_s']:.2f} | "
                  f"{t['online']['reference_wall_s']:.2f} |",
                  f"| `clusteropt run --online` (CLI process) | {t['cli_online']['cpu_s']:.2f} | "
                  f"{t['cli_online']['wall_s']:.2f} |"]
    return "\n".join(lines) + "\n"


_LOAD = ("import numpy as np; from clusteropt.algorithms.coflow import _numba_kernels as k; "
         "z = np.zeros(1, dtype=np.int64); k.fill(z, z, z + 1, z, -1, 1, 1)")


def main(argv: list[str] | None = None) -> int:
    ap = parser(NAME, __doc__, "small sizes, print only")
    ap.add_argument("--trace", type=Path, default=None,
                    help="the Facebook trace FB2010-1Hr-150-0.txt (github.com/coflow/coflow-benchmark), "
                         "to time it too")
    args = ap.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    start = time.perf_counter()
    report = header(NAME, ("numpy", "numba"))
    report["config"] = cfg
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        report["compile"] = {"empty_cache": _child([sys.executable, "-c", _LOAD], env),
                             "filled_cache": _child([sys.executable, "-c", _LOAD], env)}
    _timed(lambda: greedy_schedule(random_coflows(5, 3, seed=0), np.arange(5)), "1")  # load the kernel
    with tempfile.TemporaryDirectory() as tmp:
        report["seeds"] = [_seed(cfg, seed, Path(tmp)) for seed in cfg["seeds"]]
        if args.trace is not None:
            report["trace"] = _trace(args.trace, Path(tmp))
    finish(NAME, report, _markdown, output_dir(args), start)
    over = [r["seed"] for r in report["seeds"]
            if max(r["greedy"]["cpu_s"], r["online"]["cpu_s"]) > TARGET_CPU_SECONDS]
    if over and not args.quick:
        print(f"over the {TARGET_CPU_SECONDS:g} s CPU target: seeds {over}")
    if args.trace is not None and report["trace"]["cli_online"]["cpu_s"] > TRACE_TARGET_CPU_SECONDS:
        print(f"the trace's CLI run is over the {TRACE_TARGET_CPU_SECONDS:g} s CPU target: "
              f"{report['trace']['cli_online']['cpu_s']:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
