"""Ring partitioning (paper 004): speed of every online policy, and how it grows with n.

(a) 10^6 uniform requests at n = 1024, l = 16 (k = 64) for each online policy, on one core; the
    target is 2 s of CPU per policy.  Recorded per policy: the CPU and wall time of ``run_ring``
    (driver and batching included; requests are served in batches of ``DEFAULT_BATCH``; shared
    machines inflate wall time, so the CPU time is the one to compare), the verifier's time
    (``check_ring_run`` replays every migration; it is not part of the target), the realised max
    load / k, and the verified cost per request.
(b) Growth: per-request CPU time at n = 128 .. 32768 (k = 64, so l = n / 64 >= 2) with the same number of
    uniform requests at every n, and the fitted exponent ``b`` of ``time ~ n^b`` (polylogarithmic
    growth shows as ``b`` near 0, with a slowly rising time; the bar is "at most
    polylogarithmically in n").
The instance generation and the file round trip (JSON + ``.npy``) of the 10^6 requests are timed
too.  The policies with a block path (``dynamic``, ``dynamic-mix``, ``follow`` compiled:
:mod:`clusteropt.algorithms.ring.compiled`; ``never``, ``static-best`` numpy) are also run on the
per-request reference (``CLUSTEROPT_JIT=0``) on the same instance, and the two runs must give the
same verified cost; before its
timed run each policy serves a tiny instance once (the first call loads the compiled code from the
cache), and a fresh process with an empty numba cache measures the compile itself.

Run ``python -m benchmarks.ring_online`` (writes ``benchmarks/results/``) or ``--quick``.
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

from benchmarks._report import header, output_dir, parser, write_results
from clusteropt.instances import load_instance, random_ring
from clusteropt.online.ring import DEFAULT_BATCH, run_ring
from clusteropt.verify import check_ring_run

NAME = "ring_online"
POLICIES = ("dynamic", "dynamic-mix", "dynamic-soft", "dynamic-wfa", "static", "follow", "component", "greedy",
            "never", "static-best")
FULL = {"n": 1024, "servers": 16, "requests": 1_000_000, "growth_n": [128, 512, 2048, 8192, 32768],
        "growth_k": 64, "growth_requests": 200_000, "seed": 0}
QUICK = {"n": 256, "servers": 4, "requests": 20_000, "growth_n": [128, 256], "growth_k": 64,
         "growth_requests": 5_000, "seed": 0}
TARGET_CPU_SECONDS = 2.0
#: Policies with a block path (compiled or numpy), also timed on the per-request reference.
BLOCK_PATH = ("dynamic", "dynamic-mix", "follow", "never", "static-best")
_COLD = ("from clusteropt.instances import random_ring; from clusteropt.online.ring import run_ring; "
         "inst = random_ring(64, 4, 200, 'uniform', seed=0); "
         "[run_ring(p, inst, seed=0) for p in ('dynamic', 'dynamic-mix', 'follow')]")


def _cold_compile() -> dict:
    """CPU and wall time of a fresh process that compiles the kernels into an empty cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, CLUSTEROPT_JIT="1")  # compiled however small
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", _COLD], check=True, env=env)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cold = {"wall_s": wall, "cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)}
        before = after
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", _COLD], check=True, env=env)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    warm = {"wall_s": wall, "cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)}
    return {"empty_cache": cold, "filled_cache": warm}


def _first_call(policy: str) -> dict:
    """A tiny run on the compiled path (``CLUSTEROPT_JIT=1``): loads the kernels before the timed run."""
    os.environ["CLUSTEROPT_JIT"] = "1"
    try:
        cpu0, start = time.process_time(), time.perf_counter()
        run_ring(policy, random_ring(64, 4, 200, "uniform", seed=0), seed=0)
        return {"wall_s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu0}
    finally:
        del os.environ["CLUSTEROPT_JIT"]


def _reference(policy: str, inst, seed: int) -> dict:
    """The same run on the pure-Python reference path."""
    os.environ["CLUSTEROPT_JIT"] = "0"
    try:
        return _one(policy, inst, seed)
    finally:
        del os.environ["CLUSTEROPT_JIT"]


def _one(policy: str, inst, seed: int) -> dict:
    cpu0, start = time.process_time(), time.perf_counter()
    run = run_ring(policy, inst, seed=seed)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    start = time.perf_counter()
    check = check_ring_run(inst, run)
    verify = time.perf_counter() - start
    check.raise_if_infeasible()
    return {"wall_s": wall, "cpu_s": cpu, "per_request_us": 1e6 * cpu / max(1, inst.n_requests),
            "verify_s": verify,
            "max_load_over_k": check.max_load_ratio, "augmentation": run.augmentation,
            "cost_per_request": check.value / max(1, inst.n_requests),
            "communication": check.communication_cost, "migration": check.migration_cost}


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "small sizes, print only").parse_args(argv)
    cfg = QUICK if args.quick else FULL
    report = header(NAME, ("numpy", "scipy"))
    report.update(config=cfg, batch=DEFAULT_BATCH, target_cpu_seconds=TARGET_CPU_SECONDS)
    start = time.perf_counter()
    inst = random_ring(cfg["n"], cfg["servers"], cfg["requests"], "uniform", seed=cfg["seed"])
    gen_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ring.json"
        start = time.perf_counter()
        inst.to_json(path)
        save_s = time.perf_counter() - start
        start = time.perf_counter()
        back = load_instance(path)
        load_s = time.perf_counter() - start
        assert back == inst
    report["files"] = {"generate_s": gen_s, "save_s": save_s, "load_s": load_s}
    report["compile"] = _cold_compile()
    speed = {}
    for policy in POLICIES:
        first = _first_call(policy)
        speed[policy] = _one(policy, inst, cfg["seed"])
        speed[policy]["first_call"] = first
        if policy in BLOCK_PATH:
            ref = _reference(policy, inst, cfg["seed"])
            if ref["cost_per_request"] != speed[policy]["cost_per_request"]:
                raise AssertionError(f"{policy}: the compiled and the reference run differ")
            speed[policy]["reference_cpu_s"] = ref["cpu_s"]
            speed[policy]["reference_wall_s"] = ref["wall_s"]
        print(f"{policy}: {speed[policy]['cpu_s']:.1f} s CPU", flush=True)
    report["speed"] = speed
    growth: dict[str, dict] = {p: {} for p in POLICIES}
    for n in cfg["growth_n"]:
        g_inst = random_ring(n, n // cfg["growth_k"], cfg["growth_requests"], "uniform", seed=cfg["seed"])
        for policy in POLICIES:
            growth[policy][str(n)] = _one(policy, g_inst, cfg["seed"])["per_request_us"]
        print(f"growth n = {n} done", flush=True)
    ns = np.asarray(cfg["growth_n"], dtype=float)
    exponents = {}
    for policy in POLICIES:
        t = np.asarray([growth[policy][str(int(n))] for n in ns])
        exponents[policy] = float(np.polyfit(np.log(ns), np.log(t), 1)[0]) if len(ns) > 1 else None
    report["growth_us_per_request"] = growth
    report["growth_exponent"] = exponents
    machine = report["machine"]
    lines = [f"# {NAME}", "", f"Machine: {machine['platform']}, {machine['cpu_count']} cores, load average "
             f"{machine.get('load_average_1_5_15')}; created {report['created']}, code version "
             f"{report.get('code_version')}; numpy {report['versions'].get('numpy')}.", "",
             f"## (a) {cfg['requests']:,} uniform requests, n = {cfg['n']}, l = {cfg['servers']} "
             f"(target {TARGET_CPU_SECONDS:g} s CPU per policy)", "",
             f"Instance: generated in {gen_s:.2f} s, saved (JSON + .npy) in {save_s:.2f} s, "
             f"loaded in {load_s:.2f} s.", "",
             "Compiled kernels (`dynamic`, `dynamic-mix`, `follow`; a fresh process serving 200 requests with "
             f"each): {report['compile']['empty_cache']['cpu_s']:.1f} s CPU with an empty numba cache "
             f"(compiling), {report['compile']['filled_cache']['cpu_s']:.1f} s with the cache filled "
             "(imports included).  Reference = the same run with `CLUSTEROPT_JIT=0` (request by request "
             "in Python; the same verified cost); first call = a 200-request instance served just before.",
             "", "| policy | run CPU (s) | run wall (s) | CPU us / request | reference CPU (s) "
             "| first call CPU (s) | verify (s) | max load / k | promised c | cost / request |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p, r in speed.items():
        ref = f"{r['reference_cpu_s']:.2f}" if "reference_cpu_s" in r else ""
        lines.append(f"| {p} | {r['cpu_s']:.2f} | {r['wall_s']:.2f} | {r['per_request_us']:.1f} | {ref} | "
                     f"{r['first_call']['cpu_s']:.2f} | {r['verify_s']:.2f} | {r['max_load_over_k']:.3f} | "
                     f"{r['augmentation']:.3g} | {r['cost_per_request']:.4f} |")
    lines += ["", f"## (b) CPU us per request vs n (k = {cfg['growth_k']}, "
              f"{cfg['growth_requests']:,} uniform requests)",
              "", "| policy | " + " | ".join(f"n = {n}" for n in cfg["growth_n"]) + " | exponent b (time ~ n^b) |",
              "|---|" + "---:|" * (len(cfg["growth_n"]) + 1)]
    for p in POLICIES:
        b = exponents[p]
        lines.append(f"| {p} | " + " | ".join(f"{growth[p][str(n)]:.1f}" for n in cfg["growth_n"])
                     + f" | {'' if b is None else f'{b:.3f}'} |")
    lines.append("")
    write_results(NAME, report, "\n".join(lines) + "\n", output_dir(args))
    over = [p for p, r in speed.items() if not args.quick and r["cpu_s"] > TARGET_CPU_SECONDS]
    if over:
        print(f"over the {TARGET_CPU_SECONDS:g} s CPU target: {', '.join(over)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
