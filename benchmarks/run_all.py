"""Run every benchmark in ``benchmarks/`` (``make bench``); ``--quick`` runs each in its quick mode.

A benchmark is a module of this package with a ``main(argv) -> int`` function; its results go
to ``benchmarks/results/<name>.{json,md}``.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import time
from pathlib import Path

SKIP = {"run_all"}


def benchmark_modules() -> list[str]:
    """Names of the benchmark modules in this folder, sorted."""
    here = Path(__file__).resolve().parent
    return sorted(
        info.name
        for info in pkgutil.iter_modules([str(here)])
        if not info.ispkg and not info.name.startswith("_") and info.name not in SKIP
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run_all", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="pass --quick to every benchmark")
    parser.add_argument("names", nargs="*", help="only these benchmarks (default: all)")
    args = parser.parse_args(argv)
    names = benchmark_modules()
    unknown = set(args.names) - set(names)
    if unknown:
        parser.error(f"unknown benchmark(s) {sorted(unknown)}; available: {', '.join(names)}")
    failed = []
    for name in args.names or names:
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"== {name}", flush=True)
        start = time.perf_counter()
        code = module.main(["--quick"] if args.quick else [])
        print(f"== {name}: exit {code} after {time.perf_counter() - start:.1f} s", flush=True)
        if code:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
