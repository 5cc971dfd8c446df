"""The ``clusteropt`` command.

Exit codes: 0 success; 2 bad input (one line on stderr, no traceback); 3 the solver found no
solution (infeasible, unbounded, error, or a limit with no incumbent); 4 an experiment finished
with failed or timed-out cells (they are in the store, with their errors).
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import click

from clusteropt.instances.base import InstanceError, write_text_atomic

log = logging.getLogger(__name__)

EXIT_BAD_INPUT = 2
EXIT_SOLVER_FAILURE = 3
EXIT_CELLS_FAILED = 4


class BadInput(click.ClickException):
    """Bad input from the user: printed as one line, exit code 2."""

    exit_code = EXIT_BAD_INPUT


class SolverFailure(click.ClickException):
    """The solver produced no solution: printed as one line, exit code 3."""

    exit_code = EXIT_SOLVER_FAILURE


class CellsFailed(click.ClickException):
    """An experiment ran to the end but some cells failed or timed out: exit code 4."""

    exit_code = EXIT_CELLS_FAILED


def _table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """Plain fixed-width table (no colours, stable for logs and tests)."""
    def text(v: Any) -> str:
        return f"{v:.6g}" if isinstance(v, float) else str(v)

    cells = [[text(r.get(c, "")) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[k]) for row in cells]) for k, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
              for row in cells]
    return "\n".join(lines)


def _load(path: str):
    from clusteropt.instances import load_instance

    p = Path(path)
    if not p.is_file():
        raise BadInput(f"no such instance file: {path}")
    try:
        return load_instance(p)
    except InstanceError as exc:
        text = str(exc)
        raise BadInput(text if text.startswith(str(p)) else f"{path}: {text}") from None


def _build(path: str, model_name: str, relax: bool):
    from clusteropt.models import get_model

    inst = _load(path)
    try:
        spec = get_model(model_name)
        return inst, spec, spec.build(inst, relax=relax)
    except ValueError as exc:
        raise BadInput(str(exc)) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="clusteropt")
@click.option("-v", "--verbose", count=True, help="More log output (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """clusteropt: optimization models for scheduling distributed-computing jobs.

    Build, inspect, solve and export the models of five papers (GADGET, coflow scheduling,
    real-time jobs on unreliable workers, mlBroker, ring partitioning) with swappable solvers.
    """
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


@cli.command("solvers")
def solvers_cmd() -> None:
    """List the registered solvers: backends, capabilities, and where they are available here."""
    from clusteropt.solvers import solver_table

    click.echo(_table(solver_table(), ["name", "backends", "capabilities", "available"]))


@cli.command("models")
def models_cmd() -> None:
    """List the registered models with the instance kind each takes."""
    from clusteropt.models import MODELS

    rows = [
        {"model": m.name, "kind": m.kind, "backend": m.backend, "description": m.description}
        for m in MODELS.values()
    ]
    click.echo(_table(rows, ["model", "kind", "backend", "description"]))


@cli.command("build")
@click.argument("instance", type=str)
@click.option("--model", "model_name", required=True, help="Registered model name.")
@click.option("--relax", is_flag=True, help="Build the continuous relaxation.")
@click.option("--export", "export_path", type=str, default=None,
              help="Also write the model to FILE (.lp or .mps).")
def build_cmd(instance: str, model_name: str, relax: bool, export_path: str | None) -> None:
    """Build a model for INSTANCE and print its components (sizes and equations)."""
    from clusteropt.models import model_summary

    _, spec, model = _build(instance, model_name, relax)
    rows = model_summary(model)
    click.echo(f"model {spec.name} ({spec.backend}){' relaxed' if relax else ''}: {spec.description}")
    click.echo(_table(rows, ["component", "type", "size", "doc"]))
    totals = {t: sum(r["size"] for r in rows if r["type"] == t) for t in ("variable", "constraint")}
    click.echo(f"{totals['variable']} variables, {totals['constraint']} constraints")
    if export_path:
        _export(model, export_path)


def _export(model, path: str) -> None:
    from clusteropt.solvers import UnsuitableSolverError, write_model

    try:
        out = write_model(model, path)
    except (ValueError, UnsuitableSolverError) as exc:
        raise BadInput(str(exc)) from None
    except OSError as exc:
        raise BadInput(f"cannot write {path}: {exc.strerror or exc}") from None
    click.echo(f"wrote {out}")


@cli.command("export")
@click.argument("instance", type=str)
@click.argument("file", type=str)
@click.option("--model", "model_name", required=True, help="Registered model name.")
@click.option("--relax", is_flag=True, help="Export the continuous relaxation.")
def export_cmd(instance: str, file: str, model_name: str, relax: bool) -> None:
    """Write the model built for INSTANCE to FILE (.lp or .mps) with the paper's names."""
    _, _, model = _build(instance, model_name, relax)
    _export(model, file)


@cli.command("solve")
@click.argument("instance", type=str)
@click.option("--model", "model_name", required=True, help="Registered model name.")
@click.option("--solver", default=None, help="Solver name (see `clusteropt solvers`).")
@click.option("--time-limit", type=float, default=None, help="Seconds.")
@click.option("--mip-gap", type=float, default=None, help="Relative MIP gap.")
@click.option("--threads", type=int, default=None, help="Solver threads.")
@click.option("--relax", is_flag=True, help="Solve the continuous relaxation.")
@click.option("--json", "json_path", type=str, default=None, help="Write the result to FILE.")
def solve_cmd(instance, model_name, solver, time_limit, mip_gap, threads, relax, json_path):
    """Build and solve the model for INSTANCE; print the result (and write it as JSON)."""
    from clusteropt.solvers import SolverError, SolverUnavailableError, solve

    _, spec, model = _build(instance, model_name, relax)
    try:
        result = solve(model, solver, time_limit=time_limit, mip_gap=mip_gap, threads=threads,
                       raise_on_nonoptimal=False)
    except (ValueError, SolverUnavailableError) as exc:
        raise BadInput(str(exc)) from None
    except SolverError as exc:
        raise SolverFailure(str(exc)) from None
    click.echo(result.summary())
    if not result.has_solution:
        # nothing is written: an earlier result file at --json stays as it was
        raise SolverFailure(f"no solution: {result.termination.value} ({result.raw.get('status')})")
    if json_path:
        payload = {"instance": instance, "model": spec.name, "relax": relax, **result.to_dict()}
        try:
            write_text_atomic(json_path, json.dumps(payload, indent=1) + "\n")
        except OSError as exc:
            raise BadInput(f"cannot write {json_path}: {exc.strerror or exc}") from None
        click.echo(f"wrote {json_path}")


@cli.command("demo")
def demo_cmd() -> None:
    """Run every registered system on a small instance; one summary row per system."""
    from clusteropt.systems import run_demo

    rows = run_demo()
    cols = ["system", "paper", "instance", "model", "solver", "objective", "verified", "seconds",
            "error"]
    click.echo(_table(rows, cols))
    failed = [r["system"] for r in rows if not r.get("verified")]
    if failed:
        raise SolverFailure(f"demo failed for: {', '.join(failed)}")


@cli.group("import")
def import_group() -> None:
    """Turn public trace files into instance files (JSON)."""


@import_group.command("coflow-benchmark")
@click.argument("trace", type=str)
@click.option("--unit-mb", type=float, default=1.0, show_default=True,
              help="MB moved per port per slot: demands become ceil(MB / M / unit) units.")
@click.option("--slot-ms", type=float, default=1000.0, show_default=True,
              help="Slot length: arrivals become release slots floor(ms / slot).")
@click.option("-o", "--output", "out_path", required=True, help="Instance file to write (JSON).")
def import_coflow_cmd(trace: str, unit_mb: float, slot_ms: float, out_path: str) -> None:
    """Read a coflow-benchmark trace (FB2010-1Hr-150-0.txt format) into a coflow instance."""
    from clusteropt.instances import read_coflow_benchmark

    if not Path(trace).is_file():
        raise BadInput(f"no such trace file: {trace}")
    try:
        inst = read_coflow_benchmark(trace, unit_mb=unit_mb, slot_ms=slot_ms)
    except (InstanceError, ValueError) as exc:
        raise BadInput(str(exc)) from None
    try:
        inst.to_json(out_path)
    except OSError as exc:
        raise BadInput(f"cannot write {out_path}: {exc.strerror}") from None
    click.echo(f"{inst.n_coflows} coflows, {inst.n_flows} flows, {int(inst.units.sum())} units on "
               f"{inst.n_inputs} ports -> {out_path}")


@cli.command("run")
@click.argument("instance", type=str)
@click.option("--policy", default="primal-dual", show_default=True,
              help="Ordering: primal-dual, lp-order, sincronia, sebf, fifo, smallest-first, largest-first.")
@click.option("--schedule", "scheduler", type=click.Choice(["paper", "greedy"]), default="greedy",
              show_default=True, help="Scheduler: the paper's moved blocks, or the priority greedy.")
@click.option("--lower-bound", is_flag=True, help="Also compute the LP lower bound (row generation).")
@click.option("--kappa", type=float, default=0.5, show_default=True, help="Primal-dual threshold.")
@click.option("--json", "json_path", type=str, default=None, help="Write order, completions, blocks to FILE.")
def run_cmd(instance, policy, scheduler, lower_bound, kappa, json_path) -> None:
    """Order and schedule a coflow (or concurrent-open-shop) instance; the schedule is verified."""
    from clusteropt.algorithms.coflow.pipeline import run_coflow

    inst = _load(instance)
    if inst.kind == "concurrent-open-shop":
        inst = inst.to_coflow()
    if inst.kind != "coflow":
        raise BadInput(f"{instance}: instances of kind {inst.kind!r} have no runner; `run` takes coflow "
                       "and concurrent-open-shop instances")
    try:
        result = run_coflow(inst, policy, scheduler, lower_bound=lower_bound, kappa=kappa)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    line = (f"{policy} + {scheduler}: total weighted CCT {result.total_weighted_cct:.6g}, "
            f"{result.schedule.n_blocks} blocks, makespan {result.schedule.makespan}, "
            f"verified {result.verified}")
    if result.lower_bound is not None:
        line += f"; LP bound {result.lower_bound:.6g} (ratio {result.ratio:.4f})"
    click.echo(line)
    if json_path is not None:
        try:
            write_text_atomic(json_path, json.dumps(result.to_json_dict(inst)) + "\n")
        except OSError as exc:
            raise BadInput(f"cannot write {json_path}: {exc.strerror}") from None
    if not result.verified:
        raise SolverFailure(f"the schedule failed verification: {'; '.join(result.violations[:3])}")


@cli.group("experiment")
def experiment_group() -> None:
    """Paper experiments: list them, run a sweep, write a report."""


def _import_modules(modules: tuple[str, ...]) -> None:
    """Import the modules that register experiments outside clusteropt (cwd on the path)."""
    import importlib
    import os

    if modules and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise BadInput(f"--module {name}: cannot import it ({exc})") from None


def _param_values(text: str) -> tuple[str, list[Any]]:
    """``NAME=V1,V2``: each value read as JSON (numbers, true/false) or else kept as a string."""
    name, sep, values = text.partition("=")
    if not sep or not name:
        raise BadInput(f"--param {text!r}; expected NAME=VALUE[,VALUE...]")
    out = []
    for raw in values.split(","):
        try:
            out.append(json.loads(raw))
        except json.JSONDecodeError:
            out.append(raw)
    return name, out


def _experiment(name: str, modules: tuple[str, ...], quick: bool, params: tuple[str, ...] = ()):
    from clusteropt.experiments import get_experiment

    _import_modules(modules)
    try:
        spec = get_experiment(name)
        spec = spec.quick_variant() if quick else spec
        if params:
            spec = spec.with_grid(**dict(_param_values(p) for p in params))
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    return spec


_PARAM_OPTION = click.option(
    "--param", "params", multiple=True, metavar="NAME=V1,V2",
    help="Replace a grid parameter's values (e.g. --param trace=FB2010-1Hr-150-0.txt); repeatable.",
)


_MODULE_OPTION = click.option(
    "--module", "modules", multiple=True, metavar="MOD",
    help="Import MOD first (it registers experiments defined outside clusteropt); repeatable.",
)


@experiment_group.command("list")
@_MODULE_OPTION
def experiment_list_cmd(modules: tuple[str, ...]) -> None:
    """List the registered experiments with their cell counts (full and --quick)."""
    from clusteropt.experiments import EXPERIMENTS

    _import_modules(modules)
    rows = [EXPERIMENTS[name].describe() for name in sorted(EXPERIMENTS)]
    click.echo(_table(rows, ["name", "paper", "cells", "quick cells", "policies", "description"]))


@experiment_group.command("run")
@click.argument("name")
@click.option("--quick", is_flag=True, help="Run the seconds-long variant.")
@click.option("--jobs", "n_jobs", type=int, default=1, show_default=True,
              help="Worker processes on this machine (-1: one per core).")
@click.option("--scheduler", default=None, metavar="ADDR",
              help="Dask scheduler address (tcp://host:8786): run the cells on that cluster.")
@click.option("--backend", type=click.Choice(["joblib", "dask"]), default=None,
              help="Default: dask with --scheduler, else joblib; dask alone starts a local cluster.")
@click.option("--store", default="experiments.sqlite", show_default=True, help="Results store (SQLite).")
@click.option("--out", "out_dir", default=None, help="Also write the report (tables, figures) into DIR.")
@click.option("--timeout", type=float, default=None, help="Per-cell time limit in seconds (default: the spec's).")
@click.option("--no-resume", is_flag=True, help="Run every cell again, replacing stored results.")
@click.option("--retry", multiple=True, type=click.Choice(["failed", "timeout"]),
              help="Run stored cells of this status again; repeatable.")
@_PARAM_OPTION
@_MODULE_OPTION
def experiment_run_cmd(name, quick, n_jobs, scheduler, backend, store, out_dir, timeout, no_resume, retry,
                       params, modules) -> None:
    """Run experiment NAME's cells not yet in the store (a progress bar on a terminal, log lines
    otherwise); exit code 4 when some cells failed or timed out.
    """
    from clusteropt.experiments import StoreError, run_sweep

    spec = _experiment(name, modules, quick, params)
    if not sys.stderr.isatty():
        logging.getLogger("clusteropt.experiments").setLevel(
            min(logging.INFO, logging.getLogger().getEffectiveLevel())
        )
    try:
        table = run_sweep(spec, n_jobs=n_jobs, backend=backend, scheduler=scheduler, store=store,
                          resume=not no_resume, timeout=timeout, retry=retry)
    except (ValueError, StoreError, ImportError, OSError) as exc:
        raise BadInput(str(exc)) from None
    counts = table.status.value_counts()
    click.echo(
        f"{spec.name} ({spec.variant}): {len(table)} cells in {store}: {counts.get('ok', 0)} ok, "
        f"{counts.get('failed', 0)} failed, {counts.get('timeout', 0)} timed out"
    )
    if out_dir is not None:
        _report(spec, table, out_dir)
    if counts.get("failed", 0) or counts.get("timeout", 0):
        bad = table[table.status != "ok"].iloc[0]
        raise CellsFailed(
            f"{int(counts.get('failed', 0) + counts.get('timeout', 0))} cells did not finish ok; "
            f"first: seed={bad.seed} policy={bad.policy}: {bad.error}"
        )


def _report(spec, table, out_dir: str) -> None:
    from clusteropt.experiments import write_report

    try:
        written = write_report(spec, table, out_dir)
    except (ValueError, RuntimeError) as exc:
        raise BadInput(str(exc)) from None
    click.echo(f"report: {len(written)} files in {out_dir}")


@experiment_group.command("report")
@click.argument("name")
@click.option("--store", required=True, help="Results store (SQLite) the sweep wrote.")
@click.option("--out", "out_dir", required=True, help="Directory for the tables and figures.")
@click.option("--quick", is_flag=True, help="Report the cells of the --quick variant.")
@click.option("--code-version", default=None, help="Results of this code version (default: the newest).")
@_PARAM_OPTION
@_MODULE_OPTION
def experiment_report_cmd(name, store, out_dir, quick, code_version, params, modules) -> None:
    """Write experiment NAME's tables (CSV, Markdown) and figures (PNG, SVG) into --out."""
    from clusteropt.experiments import ResultsStore, StoreError

    spec = _experiment(name, modules, quick, params)
    if not Path(store).is_file():
        raise BadInput(f"no such results store: {store}")
    try:
        with ResultsStore(store) as db:
            table = db.table(spec, code_version=code_version)
    except StoreError as exc:
        raise BadInput(str(exc)) from None
    _report(spec, table, out_dir)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI and map every error to its exit code and one line."""
    try:
        cli.main(args=argv, prog_name="clusteropt", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.Abort:
        click.echo("aborted", err=True)
        return 1
    except (BadInput, SolverFailure, CellsFailed) as exc:
        click.echo(f"error: {exc.format_message()}", err=True)
        return exc.exit_code
    except click.ClickException as exc:  # usage errors from click itself
        click.echo(f"error: {exc.format_message()} (see clusteropt --help)", err=True)
        return EXIT_BAD_INPUT
    return 0


def run() -> None:
    """Console-script entry point (``clusteropt``): exits with :func:`main`'s code."""
    sys.exit(main())


if __name__ == "__main__":
    run()
