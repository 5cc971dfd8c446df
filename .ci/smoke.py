"""The installed package, used as a user would: every kind through the verbs and the CLI.

Run by ``.ci/wheel-smoke`` from a folder outside the checkout with the wheel installed in a fresh
environment, so nothing here can read the repository.  For each kind: ``clusteropt.generate``,
``clusteropt.build`` by name, ``clusteropt.solve`` with two solvers (the same objective), LP and
MPS export, ``clusteropt solve-file`` on both files, ``clusteropt.run``, ``clusteropt.check`` and
``clusteropt verify``; then one quick experiment per system (``coflow-trace`` among them, which
reads the trace shipped as package data).  Any failure exits non-zero with the step named.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import clusteropt

assert "site-packages" in clusteropt.__file__, f"not the installed package: {clusteropt.__file__}"

#: kind -> (generator keywords, model, build options, solvers, run options)
CASES = {
    "worker-placement": (dict(n_jobs=6, n_servers=3, seed=0), "worker-placement", {}, ("highs", "scip"), None),
    "coflow": (dict(n_coflows=8, n_ports=4, seed=0), "coflow-lp", {}, ("highs", "scip"), {}),
    "realtime": (dict(preset="fig5", n=3), "realtime-region", {}, ("highs", "scip"), {"frames": 500}),
    "gadget": (dict(preset="small", jobs=6, seed=2), "gvne", {"slot": 3}, ("highs", "scip"), {}),
    "broker": (dict(preset="tiny", seed=0), "broker-milp", {"slot": 2}, ("highs", "scip"), {}),
    "ring": (dict(n=8, servers=2, requests=100, seed=0), "ring-static-opt", {}, ("highs", "scip"), {}),
}
CVXPY_CASE = ("worker-placement", "worker-placement-cvxpy", ("highs", "scip"))
EXPERIMENTS = ("coflow-trace", "realtime-fig3", "gadget-slot-ratio-paper", "broker-rounding", "ring-sensitivity",
               "worker-placement-gap")
CLI = shutil.which("clusteropt")


def cli(*args) -> str:
    proc = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"clusteropt {' '.join(map(str, args))}: exit {proc.returncode}\n{proc.stderr}")
    return proc.stdout


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def main() -> None:
    work = Path.cwd()
    for kind, (params, model_name, options, solvers, run_options) in CASES.items():
        start = time.perf_counter()
        inst = clusteropt.generate(kind, **params)
        inst_path = clusteropt.save(inst, work / f"{kind}.json")
        model = clusteropt.build(model_name, inst, **options)
        objectives = [clusteropt.solve(model, s).objective for s in solvers]
        assert close(*objectives), f"{kind}: {solvers} give {objectives}"
        for suffix in (".lp", ".mps"):
            path = work / f"{kind}{suffix}"
            clusteropt.write_model(model, path)
            out = work / f"{kind}{suffix}.json"
            cli("solve-file", path, "--solver", solvers[1], "--json", out)
            got = json.loads(out.read_text())["objective"]
            assert close(got, objectives[0]), f"{kind}{suffix}: solve-file {got} vs {objectives[0]}"
        line = f"{kind}: {model_name} {objectives[0]:.6g} with {' and '.join(solvers)}, LP/MPS re-solved"
        if run_options is not None:
            r = clusteropt.run(inst, seed=0, **run_options)
            assert r.ok, r.summary
            out_json = r.to_json(work / f"{kind}-out.json")
            assert clusteropt.check(inst, out_json).ok
            cli("verify", inst_path, out_json)
            cli("run", inst_path, "--json", work / f"{kind}-cli.json")
            cli("verify", inst_path, work / f"{kind}-cli.json")
            line += f"; run {r.policy} verified (Python and CLI)"
        print(f"{line} ({time.perf_counter() - start:.1f} s)", flush=True)
    kind, name, solvers = CVXPY_CASE
    inst = clusteropt.generate(kind, **CASES[kind][0])
    model = clusteropt.build(name, inst)
    values = [clusteropt.solve(model, s).objective for s in solvers]
    assert close(*values), f"{name}: {solvers} give {values}"
    print(f"{kind}: {name} {values[0]:.6g} with {' and '.join(solvers)}", flush=True)
    for experiment in EXPERIMENTS:
        start = time.perf_counter()
        out = cli("experiment", "run", experiment, "--quick", "--store", work / "smoke.sqlite")
        print(f"{out.strip().splitlines()[-1]} ({time.perf_counter() - start:.1f} s)", flush=True)
    print("smoke: every kind and experiment passed from the installed wheel")


if __name__ == "__main__":
    main()
