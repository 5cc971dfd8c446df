"""What every benchmark records besides its own numbers: the machine, package versions, and
the atomic write of ``<name>.json`` / ``<name>.md`` (a module starting with ``_`` is not run
by ``run_all``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from clusteropt.instances.base import write_text_atomic

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def package_version(pkg: str) -> str | None:
    try:
        return version(pkg)
    except PackageNotFoundError:
        return None


def machine_info() -> dict:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "python": sys.version.split()[0],
        "cpu_count": os.cpu_count(),
        "load_average_1_5_15": list(load) if load else None,
    }


def header(name: str, packages: tuple[str, ...]) -> dict:
    """The opening fields of a benchmark's JSON report."""
    from clusteropt.provenance import code_version

    return {
        "benchmark": name,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "code_version": code_version(),
        "machine": machine_info(),
        "versions": {pkg: package_version(pkg) for pkg in packages},
    }


def parser(name: str, doc: str, quick_help: str) -> argparse.ArgumentParser:
    """The options every benchmark takes: ``--quick`` (small, print only) and ``--out DIR``."""
    out = argparse.ArgumentParser(prog=f"python -m benchmarks.{name}", description=doc.split("\n")[0])
    out.add_argument("--quick", action="store_true", help=quick_help)
    out.add_argument("--out", type=Path, default=None,
                     help="directory for the .json / .md results (default benchmarks/results; --quick: none)")
    return out


def output_dir(args: argparse.Namespace) -> Path | None:
    """Where results go: ``--out`` if given, else benchmarks/results, except quick runs (nowhere)."""
    return args.out if args.out is not None else (None if args.quick else RESULTS_DIR)


def finish(name: str, report: dict, to_markdown, out: Path | None, start: float | None = None) -> None:
    """Close a benchmark's report: its wall time since ``start`` (``time.perf_counter()``; not
    recorded when None), the load average after the run, and :func:`write_results` of
    ``to_markdown(report)``.
    """
    if start is not None:
        report["wall_s"] = time.perf_counter() - start
    report["machine"]["load_average_after"] = machine_info()["load_average_1_5_15"]
    write_results(name, report, to_markdown(report), out)


def write_results(name: str, report: dict, markdown: str, out: Path | None) -> None:
    """Print the Markdown; with ``out``, write ``<name>.json`` and ``<name>.md`` there atomically."""
    print(markdown)
    if out is None:
        return
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / f"{name}.json", json.dumps(report, indent=1) + "\n")
    write_text_atomic(out / f"{name}.md", markdown)
    print(f"wrote {out / (name + '.json')} and {out / (name + '.md')}")
