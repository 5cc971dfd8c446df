"""The ``clusteropt`` command.

Exit codes: 0 success; 2 bad input (one line on stderr, no traceback; also a file that cannot be
read or written, named in the line, and running out of memory); 3 the solver found no solution
(infeasible, unbounded, error, or a limit with no incumbent), or a run's output failed its
verification; 4 an experiment finished with failed or timed-out cells (they are in the store, with
their errors), or ``clusteropt verify`` found an output not verified.

Output options take ``-`` for stdout (the summary lines then go to stderr).  An output that is one
of the command's inputs is refused; an output that is a link, a device or a FIFO is written
through, a regular file replaced whole (a failed write leaves the earlier file).
"""

from __future__ import annotations

import io
import json
import logging
import math
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import click

from clusteropt.instances.base import InstanceError, write_text_atomic

log = logging.getLogger(__name__)

EXIT_BAD_INPUT = 2
EXIT_SOLVER_FAILURE = 3
EXIT_CELLS_FAILED = 4
EXIT_NOT_VERIFIED = 4


SEED = click.IntRange(min=0)
"""A seed option: a non-negative integer (numpy's seed sequences take no negative one)."""

POSITIVE = click.IntRange(min=1)
"""A count option that must be at least 1 (frames)."""


class Number(click.ParamType):
    """A float option that must be a real number in a range: ``nan`` never, ``inf`` only where it
    means "no limit" (``infinite=True``, e.g. a time limit).

    A bad value is bad input (exit 2): one line naming the option, the value as given and what is
    expected, ``--time-limit = nan; expected a positive number of seconds``.  (click's own
    ``FloatRange`` lets ``nan`` through every bound, and ``inf`` through an open upper one.)

    >>> Number("a probability in [0, 1]", low=0, high=1).convert("0.25", None, None)
    0.25
    >>> Number("a probability in [0, 1]", low=0, high=1).convert("nan", None, None)
    Traceback (most recent call last):
    ...
    clusteropt.cli.BadInput: value = nan; expected a probability in [0, 1]
    """

    name = "float"

    def __init__(self, expected: str, *, low: float | None = None, high: float | None = None,
                 low_open: bool = False, high_open: bool = False, infinite: bool = False):
        self.expected, self.low, self.high = expected, low, high
        self.low_open, self.high_open, self.infinite = low_open, high_open, infinite

    def _ok(self, x: float) -> bool:
        if math.isnan(x) or (math.isinf(x) and not (self.infinite and x > 0)):
            return False
        if self.low is not None and (x <= self.low if self.low_open else x < self.low):
            return False
        return self.high is None or (x < self.high if self.high_open else x <= self.high)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        """``value`` (the option's text, or a default) as a float, or :class:`BadInput`."""
        try:
            x = float(value)
        except (TypeError, ValueError, OverflowError):
            x = math.nan
        if isinstance(value, bool) or not self._ok(x):
            option = next((o for o in (param.opts if param is not None else ()) if o.startswith("--")), "value")
            raise BadInput(f"{option} = {value}; expected {self.expected}")
        return x


SECONDS = Number("a positive number of seconds", low=0, low_open=True)
"""A time limit (a solve's, a cell's)."""
SECONDS_OR_INF = Number("a positive number of seconds, or inf for none", low=0, low_open=True, infinite=True)
"""A time limit where ``inf`` is documented as "no limit" (``run --time-limit``)."""
GAP = Number("a relative gap in [0, 1)", low=0, high=1, high_open=True)
"""A relative MIP gap, as :func:`clusteropt.solvers.solve` takes it."""
PROBABILITY = Number("a probability in [0, 1]", low=0, high=1)
POSITIVE_NUMBER = Number("a finite number > 0", low=0, low_open=True)
NONNEGATIVE = Number("a finite number >= 0", low=0)


class BadInput(click.ClickException):
    """Bad input from the user: printed as one line, exit code 2."""

    exit_code = EXIT_BAD_INPUT


class SolverFailure(click.ClickException):
    """The solver produced no solution: printed as one line, exit code 3."""

    exit_code = EXIT_SOLVER_FAILURE


class NotVerified(click.ClickException):
    """``clusteropt verify``: the output is not a feasible run of the instance; exit code 4."""

    exit_code = EXIT_NOT_VERIFIED


class CellsFailed(click.ClickException):
    """An experiment ran to the end but some cells failed or timed out: exit code 4."""

    exit_code = EXIT_CELLS_FAILED


#: A table cell that is a number (never cut to fit the terminal).
_NUMBER_CELL = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?|nan|inf|-inf|")


def _table(rows: list[dict[str, Any]], columns: list[str], width: int | None = None) -> str:
    """Plain fixed-width table (no colours, stable for logs and tests).

    On a terminal the table fits its width: the widest text columns are cut (ending in ``...``)
    until it does (numbers are never cut); piped or redirected output (``width`` None and stdout
    not a terminal) is never cut.
    ``--json`` gives every listing whole.

    >>> print(_table([{"a": 1, "b": "x" * 30}], ["a", "b"], width=20))
    a  b
    -  -----------------
    1  xxxxxxxxxxxxxx...
    >>> print(_table([{"a": 123456789.0, "b": "x" * 12}], ["a", "b"], width=12))
    a            b
    -----------  --------
    1.23457e+08  xxxxx...
    """
    def text(v: Any) -> str:
        return f"{v:.6g}" if isinstance(v, float) else str(v)

    cells = [[text(r.get(c, "")) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[k]) for row in cells]) for k, c in enumerate(columns)]
    if width is None and sys.stdout.isatty():
        width = shutil.get_terminal_size().columns
    if width is not None:
        floor = 8  # no column is cut below this; columns of numbers are never cut
        texts = [k for k in range(len(columns)) if any(not _NUMBER_CELL.fullmatch(row[k]) for row in cells)]
        while texts and sum(widths) + 2 * (len(widths) - 1) > width:
            k = max(texts, key=widths.__getitem__)
            if widths[k] <= floor:
                break
            widths[k] -= 1
        cells = [[v if len(v) <= w else v[:max(w - 3, 0)] + "..." for v, w in zip(row, widths, strict=True)]
                 for row in cells]
        columns = [c if len(c) <= w else c[:w] for c, w in zip(columns, widths, strict=True)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
              for row in cells]
    return "\n".join(lines)


def _load(path: str):
    from clusteropt.instances import load_instance

    p = Path(path)
    if not p.exists():  # a FIFO, a device or a folder goes on: load_instance refuses it unread, in its words
        raise BadInput(f"no such instance file: {path}")
    try:
        return load_instance(p)
    except InstanceError as exc:
        text = str(exc)
        raise BadInput(text if text.startswith(str(p)) else f"{path}: {text}") from None


def _inputs(instance: str) -> tuple[str, ...]:
    """An instance file and what it may read beside it (a ring instance's ``.requests.npy``)."""
    p = Path(instance)
    return instance, str(p.with_name(f"{p.stem}.requests.npy"))


def _refuse_overwrite(output: str | None, option: str, *inputs: str | None) -> None:
    """Bad input when ``output`` is (the same file as) one of the ``inputs``: writing it would
    destroy the input.  Checked before anything is read or run.
    """
    if output is None or output == "-":
        return
    for source in inputs:
        if source is None or source == "-":
            continue
        try:
            same = os.path.samefile(output, source)  # also through links
        except OSError:
            same = False  # one of them does not exist
        if same:
            raise BadInput(f"{option} {output} is the input file {source}; writing it would destroy the input "
                           "(choose another output file)")


def _is_stdout(path: str | None) -> bool:
    """``-``, or a name of this process's standard output (``/dev/stdout``, ``/dev/fd/1``, its tty)."""
    if path is None or path == "-":
        return path == "-"
    try:
        return os.path.samestat(os.stat(path), os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False


def _echo(text: str, *outputs: str | None) -> None:
    """A line for the user: on stdout, unless a result goes to stdout (``-``), then on stderr."""
    click.echo(text, err=any(_is_stdout(o) for o in outputs))


def _write_text(path: str, text: str) -> None:
    """Write an output file (``-``: stdout); a write error is one line naming the file."""
    if _is_stdout(path):  # through our own stream, not a second one onto the same file
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise BadInput(_cannot_write(path, exc)) from None


_SLOT_HELP = ("Per-slot models: the slot t (gvne: default the last; broker-milp / broker-lp: default all "
              "slots; broker-regularized: required).")


def _cannot_write(path, exc: OSError) -> str:
    """``cannot write PATH: why``, once (an error of ours may already say "cannot write PATH")."""
    why = exc.strerror or str(exc)
    return why if why.startswith("cannot write") else f"cannot write {path}: {why}"


#: Size-guard flags of build / export / solve -> the builder keyword they set (where the model has it).
_SIZE_FLAGS = {"max_steps": "--max-steps", "max_binaries": "--max-binaries", "max_states": "--max-states"}


def _size_options(f):
    """The size-guard options of the model commands (each builder refuses a model past its limits
    before building it; these raise them knowingly).
    """
    f = click.option("--max-states", type=click.IntRange(min=1), default=None,
                     help="Realtime models: the most job-pattern states the exact region enumerates.")(f)
    f = click.option("--max-binaries", type=click.IntRange(min=1), default=None,
                     help="ring-dynamic-opt: the most binaries of the time-expanded MILP.")(f)
    f = click.option("--max-steps", type=click.IntRange(min=1), default=None,
                     help="ring-dynamic-opt: the most compressed request steps T'.")(f)
    f = click.option("--max-variables", type=click.IntRange(min=0), default=None,
                     help="The horizon-wide models (ddljs, the coflow and concurrent-open-shop MILPs, broker-milp "
                          "over all slots), which count their variables first: the most they build (default "
                          "2,000,000, about 2 GB; 0: no limit); as $CLUSTEROPT_MAX_VARIABLES.")(f)
    return f


def _build(path: str, model_name: str, relax: bool, slot: int | None = None, price_form: str | None = None,
           quotient: bool = False, sizes: dict[str, int | None] | None = None, form: str = "model"):
    from clusteropt.models import get_model
    from clusteropt.models.size import ENV_MAX_VARIABLES

    inst = _load(path)
    sizes = dict(sizes or {})
    limit = sizes.pop("max_variables", None)
    before = os.environ.get(ENV_MAX_VARIABLES)
    if limit is not None:  # the builders read the limit from the environment; restored below
        os.environ[ENV_MAX_VARIABLES] = str(limit)
    try:
        spec = get_model(model_name)
        if price_form is not None and spec.kind != "broker":
            raise ValueError(f"--price-form is an option of the broker models (paper 003), not of {spec.name!r}")
        if quotient:
            if inst.kind != "gadget":
                raise ValueError(f"--quotient-tree merges a GPU cluster's parallel switches; {path} is a "
                                 f"{inst.kind} instance")
            import dataclasses

            from clusteropt.algorithms.gadget.quotient import fat_tree_groups, quotient_tree

            tree = quotient_tree(inst.cluster, fat_tree_groups(inst.cluster)).tree
            inst = dataclasses.replace(inst, cluster=tree)
        options: dict[str, int | str] = {} if slot is None else {"slot": slot}
        if price_form is not None:
            options["price_form"] = price_form
        import inspect

        takes = inspect.signature(spec.builder).parameters
        for key, value in sizes.items():
            if value is None:
                continue
            if key not in takes:
                raise ValueError(f"{_SIZE_FLAGS[key]} is not a limit of model {spec.name!r}")
            options[key] = value
        arrays = {"auto": None, "arrays": True, "model": False}[form]
        model = spec.build(inst, relax=relax, arrays=arrays, **options)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    finally:
        if limit is not None:
            if before is None:
                os.environ.pop(ENV_MAX_VARIABLES, None)
            else:
                os.environ[ENV_MAX_VARIABLES] = before
    return inst, spec, model


def _n_variables(model) -> int:
    from clusteropt.models import model_summary
    from clusteropt.models.matrix import MatrixLP

    if isinstance(model, MatrixLP):
        return model.n_cols
    return sum(r["size"] for r in model_summary(model) if r["type"] == "variable")


def _empty_model_text(spec, path: str, slot: int | None) -> str:
    where = f" at slot {slot}" if slot is not None else ""
    return (f"model {spec.name} built for {path}{where} has no variables (nothing to decide there: e.g. no job or "
            "no state in that instance)")


_FORM_OPTION = click.option(
    "--form", type=click.Choice(["auto", "arrays", "model"]), default="auto", show_default=True,
    help="What goes to the solver: the model's arrays, built without the modelling layer (the same rows, "
         "tested; models that have them: `clusteropt models`, column forms), or the Pyomo / CVXPY model that "
         "`build` shows. auto: the arrays where the model has them.")

_QUOTIENT_OPTION = click.option(
    "--quotient-tree", "quotient", is_flag=True,
    help="GADGET: build on the fat-tree's quotient tree (parallel switches and links merged: the tree form, "
         "whose LP has the optimum of the fat-tree's splittable LP and whose ILP bounds the fat-tree's).")

_PRICE_FORM_OPTION = click.option(
    "--price-form", type=click.Choice(["tight", "bigm"]), default=None,
    help="Broker models (paper 003): the price rows of Eq. (7), the convex hull (tight, the default of every "
         "entry point) or the paper's big-M rows (8c)-(8e).")


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
    # long runs say how far they are (a bar on a terminal, else a line a minute) without -v
    logging.getLogger("clusteropt.progress").setLevel(min(level, logging.INFO))


_LISTING_JSON = click.option("--json", "as_json", is_flag=True,
                             help="Print the listing as JSON (a list of objects).")


def _listing(rows: list[dict], columns: list[str], as_json: bool) -> None:
    """A listing as a table, or with ``--json`` as a JSON list of the rows (every key)."""
    click.echo(json.dumps(rows, indent=1) if as_json else _table(rows, columns))


@cli.command("solvers")
@_LISTING_JSON
def solvers_cmd(as_json: bool) -> None:
    """List the registered solvers: backends, capabilities, and where they are available here."""
    from clusteropt.verbs import list_solvers

    rows = list_solvers()
    if as_json:
        _listing(rows, [], True)
        return
    shown = [{**r, **{k: ", ".join(r[k]) or "no" for k in ("backends", "capabilities", "available")}}
             for r in rows]
    _listing(shown, ["name", "backends", "capabilities", "available"], False)


@cli.command("models")
@click.option("--kind", default=None, help="Only the models of this instance kind.")
@_LISTING_JSON
def models_cmd(kind: str | None, as_json: bool) -> None:
    """List the registered models with the instance kind each takes and the forms `solve` can hand over.

    forms: model (the Pyomo / CVXPY model `build` shows), arrays (the same rows built as the solver's
    arrays, what `solve` and `export` use by default; `--form` chooses).
    """
    from clusteropt.verbs import list_models

    rows = list_models(kind)
    if as_json:
        _listing(rows, [], True)
        return
    _listing([{**r, "forms": ", ".join(r["forms"])} for r in rows], ["name", "kind", "backend", "forms",
                                                                       "description"], False)


@cli.command("policies")
@click.option("--kind", default=None, help="Only the policies of this instance kind.")
@_LISTING_JSON
def policies_cmd(kind: str | None, as_json: bool) -> None:
    """List the registered policies of `clusteropt run`, by instance kind (the first is the default)."""
    from clusteropt.runs import list_policies

    try:
        rows = list_policies(kind)
    except ValueError as exc:
        raise BadInput(f"--kind: {exc}") from None
    if as_json:
        _listing(rows, [], True)
        return
    shown = [{**r, "default": "yes" if r["default"] else ""} for r in rows]
    _listing(shown, ["kind", "policy", "default", "description"], False)


@cli.command("build")
@click.argument("instance", type=str)
@click.option("--model", "model_name", required=True, help="Registered model name.")
@click.option("--relax", is_flag=True, help="Build the continuous relaxation.")
@click.option("--slot", type=int, default=None, help=_SLOT_HELP)
@_PRICE_FORM_OPTION
@_QUOTIENT_OPTION
@click.option("--export", "export_path", type=str, default=None,
              help="Also write the model to FILE (.lp or .mps; - writes LP to stdout).")
@_size_options
def build_cmd(instance: str, model_name: str, relax: bool, slot: int | None, price_form: str | None,
              quotient: bool, export_path: str | None, **sizes) -> None:
    """Build a model for INSTANCE and print its components (sizes and equations)."""
    from clusteropt.models import model_summary

    _refuse_overwrite(export_path, "--export", *_inputs(instance))
    _, spec, model = _build(instance, model_name, relax, slot, price_form, quotient, sizes)
    rows = model_summary(model)
    _echo(f"model {spec.name} ({spec.backend}){' relaxed' if relax else ''}: {spec.description}", export_path)
    _echo(_table(rows, ["component", "type", "size", "doc"]), export_path)
    totals = {t: sum(r["size"] for r in rows if r["type"] == t) for t in ("variable", "constraint")}
    _echo(f"{totals['variable']} variables, {totals['constraint']} constraints", export_path)
    if not totals["variable"]:
        if export_path:
            raise BadInput(_empty_model_text(spec, instance, slot) + "; nothing exported")
        click.echo(f"warning: {_empty_model_text(spec, instance, slot)}", err=True)
    if export_path:
        _export(model, export_path)


def _export(model, path: str) -> None:
    """Write ``model`` to ``path`` (``-``: LP on stdout) through a temporary file and a rename, so
    a failed write (a full disk) leaves an earlier file as it was.
    """
    from clusteropt.instances.base import write_bytes_atomic
    from clusteropt.solvers import UnsuitableSolverError, write_model
    from clusteropt.solvers.files import FORMATS

    to_stdout = _is_stdout(path)
    if not to_stdout and Path(path).suffix.lower() not in FORMATS:
        raise BadInput(f"cannot tell the file format of {path!r} from its suffix {Path(path).suffix!r}; "
                       f"expected one of {', '.join(FORMATS)} (or - for LP on stdout)")
    try:
        if to_stdout:
            import tempfile

            with tempfile.TemporaryDirectory() as tmp:
                write_model(model, Path(tmp) / "model.lp")
                sys.stdout.write((Path(tmp) / "model.lp").read_text())
                sys.stdout.flush()
            return
        write_bytes_atomic(path, lambda tmp: write_model(model, tmp))
    except (ValueError, UnsuitableSolverError) as exc:
        raise BadInput(str(exc)) from None
    except OSError as exc:
        raise BadInput(_cannot_write(path, exc)) from None
    click.echo(f"wrote {path}")


@cli.command("export")
@click.argument("instance", type=str)
@click.argument("file", type=str)
@click.option("--model", "model_name", required=True, help="Registered model name.")
@click.option("--relax", is_flag=True, help="Export the continuous relaxation.")
@click.option("--slot", type=int, default=None, help=_SLOT_HELP)
@_PRICE_FORM_OPTION
@_QUOTIENT_OPTION
@_FORM_OPTION
@_size_options
def export_cmd(instance: str, file: str, model_name: str, relax: bool, slot: int | None,
               price_form: str | None, quotient: bool, form: str, **sizes) -> None:
    """Write the model built for INSTANCE to FILE (.lp or .mps; - writes LP to stdout) with the paper's names.

    A model with an array form is written from its arrays by HiGHS (columns named as Pyomo's
    writer names them, x(3_1); rows by their constraint, eq5(3_1)); --form model writes the Pyomo
    model with Pyomo's writer. A model with no variables (nothing to decide in that instance or
    slot) is refused: its file would be empty.
    """
    _refuse_overwrite(file, "FILE", *_inputs(instance))
    _, spec, model = _build(instance, model_name, relax, slot, price_form, quotient, sizes, form)
    if not _n_variables(model):
        raise BadInput(_empty_model_text(spec, instance, slot) + "; nothing exported")
    _export(model, file)


@cli.command("solve")
@click.argument("instance", type=str)
@click.option("--model", "model_name", required=True, help="Registered model name.")
@click.option("--solver", default=None, help="Solver name (see `clusteropt solvers`).")
@click.option("--time-limit", type=SECONDS, default=None, help="Seconds.")
@click.option("--mip-gap", type=GAP, default=None, help="Relative MIP gap.")
@click.option("--threads", type=int, default=None, help="Solver threads.")
@click.option("--relax", is_flag=True, help="Solve the continuous relaxation.")
@click.option("--slot", type=int, default=None, help=_SLOT_HELP)
@_PRICE_FORM_OPTION
@click.option("--json", "json_path", type=str, default=None,
              help="Write the result to FILE (-: stdout): each variable's values twice, labelled by the model's "
                   "own index (labelled_values: rows [key..., value], index_names: the key parts' sets) and as "
                   "bare arrays (values).")
@_FORM_OPTION
@_size_options
def solve_cmd(instance, model_name, solver, time_limit, mip_gap, threads, relax, slot, price_form, json_path,
              form, **sizes):
    """Build and solve the model for INSTANCE; print the result (and write it as JSON).

    The JSON holds each variable twice: labelled_values keys it by the model's own index (job and
    server ids, ports, slots), one row [key..., value] per entry, with index_names naming the key's
    parts (y: [I, S]); values is the bare array (nested lists, the shape of SolveResult.values).
    Variables of a model without index keys are keyed by array position.
    """
    from clusteropt.models.exact import ExactModel
    from clusteropt.solvers import SolverError, SolverUnavailableError, solve

    _refuse_overwrite(json_path, "--json", *_inputs(instance))
    inst, spec, model = _build(instance, model_name, relax, slot, price_form, sizes=sizes, form=form)
    if not _n_variables(model):
        click.echo(f"warning: {_empty_model_text(spec, instance, slot)}", err=True)
    try:
        result = solve(model, solver, time_limit=time_limit, mip_gap=mip_gap, threads=threads,
                       raise_on_nonoptimal=False)
    except (ValueError, SolverUnavailableError) as exc:
        raise BadInput(str(exc)) from None
    except SolverError as exc:
        raise SolverFailure(str(exc)) from None
    _echo(result.summary(), json_path)
    if not result.has_solution:
        # nothing is written: an earlier result file at --json stays as it was
        raise SolverFailure(f"no solution: {result.termination.value} ({result.raw.get('status')})")
    if json_path:
        head = {"instance": instance, "model": spec.name, "relax": relax, "slot": slot,
                "form": "arrays" if result.backend == "matrix" else "model",
                **({"price_form": getattr(model, "price_form", None) or price_form or "tight"}
                   if spec.kind == "broker" else {}),
                **({"job_ids": list(inst.job_ids)} if spec.kind == "gadget" else {}),
                # an exact algorithm's schedule as a run, which `clusteropt verify` replays
                **(dict(model.solution.output) if isinstance(model, ExactModel) and model.solution else {})}
        _write_solve_result(json_path, head, result, time_limit=time_limit, mip_gap=mip_gap, threads=threads)


def _write_solve_result(json_path: str, head: dict, result, **options) -> None:
    """``solve`` / ``solve-file --json``: ``head``, the result, and the provenance with the solver's
    options.
    """
    from clusteropt.provenance import solver_block

    payload = {**head, **result.to_dict(), "provenance": _provenance(solver_block(result.solver, options))}
    _write_text(json_path, json.dumps(payload, indent=1) + "\n")
    if not _is_stdout(json_path):
        click.echo(f"wrote {json_path}")


@cli.command("solve-file")
@click.argument("file", type=str)
@click.option("--solver", default="highs", show_default=True,
              help="Any installed solver with a file route (see `clusteropt solvers`: available 'file').")
@click.option("--time-limit", type=SECONDS, default=None, help="Seconds.")
@click.option("--mip-gap", type=GAP, default=None, help="Relative MIP gap.")
@click.option("--threads", type=int, default=None, help="Solver threads.")
@click.option("--json", "json_path", type=str, default=None,
              help="Write the result to FILE (-: stdout): status, objective, bound and the values by column "
                   "name.")
def solve_file_cmd(file, solver, time_limit, mip_gap, threads, json_path):
    """Solve an LP or MPS FILE (one written by `clusteropt export`, or any other) with SOLVER.

    The file is checked for structure first (a damaged file is refused, not read leniently); the
    values are keyed by the file's column names, which `export` writes as the model's own names.
    """
    from clusteropt.solvers import SolverError, SolverUnavailableError, solve_file

    _refuse_overwrite(json_path, "--json", file)
    try:
        result = solve_file(file, solver, time_limit=time_limit, mip_gap=mip_gap, threads=threads,
                            raise_on_nonoptimal=False)
    except FileNotFoundError:
        raise BadInput(f"no such model file: {file}") from None
    except (ValueError, SolverUnavailableError, InstanceError) as exc:
        raise BadInput(str(exc)) from None
    except SolverError as exc:
        raise SolverFailure(str(exc)) from None
    _echo(f"{file}: {result.summary()}", json_path)
    if not result.has_solution:
        raise SolverFailure(f"no solution: {result.termination.value} ({result.raw.get('status')})")
    if json_path:
        _write_solve_result(json_path, {"file": file}, result, time_limit=time_limit, mip_gap=mip_gap,
                            threads=threads)


@cli.command("verify")
@click.argument("instance", type=str)
@click.argument("output", type=str)
@click.option("--json", "json_path", type=str, default=None,
              help="Write the verdict to FILE (-: stdout): verified, value and the violations.")
def verify_cmd(instance, output, json_path):
    """Re-check OUTPUT (a run's out.json) against INSTANCE with clusteropt.verify alone.

    The decisions are read from OUTPUT and replayed against INSTANCE; the costs are recounted.
    Exit 0 when verified, 4 when not (the first violations on stderr), 2 when OUTPUT is not a run of
    INSTANCE's kind or lacks what the check needs.
    """
    from clusteropt.runs import check, read_output

    _refuse_overwrite(json_path, "--json", instance, output)
    inst = _load(instance)
    try:
        data = read_output(output)
        verdict = check(inst, data)
    except (ValueError, TypeError) as exc:
        raise BadInput(str(exc)) from None
    value = getattr(verdict, "value", None)
    if not (isinstance(value, int | float) and math.isfinite(value)):
        value = None  # a checker without a value, or one it could not count
    shown = [str(v) for v in verdict.violations[:20]]
    kind = data.get("system", inst.kind)
    line = (f"{output}: {kind} run of {data.get('policy', '?')} on {instance}: verified {verdict.ok}"
            + ("" if value is None else f", value {value:.6g} (recounted)")
            + ("" if verdict.ok else f", {len(verdict.violations)} violations"))
    _echo(line, json_path)
    if json_path:
        payload = {"instance": instance, "output": output, "system": kind, "policy": data.get("policy"),
                   "verified": bool(verdict.ok), "value": value, "violations": shown, "provenance": _provenance()}
        _write_text(json_path, json.dumps(payload, indent=1) + "\n")
    if not verdict.ok:
        raise NotVerified("not verified: " + "; ".join(shown[:3]))


@cli.command("demo")
@_LISTING_JSON
def demo_cmd(as_json: bool) -> None:
    """Run every registered system on a small instance; one summary row per system (``metric``
    says what each system's objective is, with its unit).
    """
    from clusteropt.systems import run_demo

    rows = run_demo()
    cols = ["system", "paper", "instance", "model", "solver", "objective", "metric", "verified", "seconds",
            "error"]
    _listing(rows, cols, as_json)
    failed = [r["system"] for r in rows if not r.get("verified")]
    if failed:
        raise SolverFailure(f"demo failed for: {', '.join(failed)}")


@cli.group("import")
def import_group() -> None:
    """Turn public trace files into instance files (JSON)."""


@import_group.command("coflow-benchmark")
@click.argument("trace", type=str)
@click.option("--unit-mb", type=POSITIVE_NUMBER, default=1.0, show_default=True,
              help="MB moved per port per slot: demands become ceil(MB / M / unit) units.")
@click.option("--slot-ms", type=POSITIVE_NUMBER, default=1000.0, show_default=True,
              help="Slot length: arrivals become release slots floor(ms / slot).")
@click.option("-o", "--output", "out_path", required=True, help="Instance file to write (JSON; -: stdout).")
def import_coflow_cmd(trace: str, unit_mb: float, slot_ms: float, out_path: str) -> None:
    """Read a coflow-benchmark trace (FB2010-1Hr-150-0.txt format) into a coflow instance."""
    from clusteropt.instances import read_coflow_benchmark

    _refuse_overwrite(out_path, "-o", trace)
    if not Path(trace).is_file():
        raise BadInput(f"no such trace file: {trace}")
    try:
        inst = read_coflow_benchmark(trace, unit_mb=unit_mb, slot_ms=slot_ms)
    except (InstanceError, ValueError) as exc:
        raise BadInput(str(exc)) from None
    _write_instance(inst, out_path)
    _echo(f"{inst.n_coflows} coflows, {inst.n_flows} flows, {int(inst.units.sum())} units on "
          f"{inst.n_inputs} ports -> {out_path}", out_path)


@import_group.command("alibaba")
@click.argument("pods", type=str)
@click.option("--nodes", "nodes_path", required=True,
              help="The trace's node list (openb_node_list_gpu_node.csv): the cluster, one server per GPU node.")
@click.option("--slot-seconds", type=POSITIVE_NUMBER, default=60.0, show_default=True,
              help="Slot length: creation times become arrival slots, run times budgets F_i.")
@click.option("--horizon", type=int, default=None,
              help="T (later pods are dropped); default the last arrival slot.")
@click.option("--max-jobs", type=int, default=None, help="Keep the first N GPU pods by creation time.")
@click.option("--utility", type=click.Choice(["sigmoid", "sqrt", "log", "quadratic"]), default="sigmoid",
              show_default=True,
              help="Utility family; its parameters (and F_i of pods without a run time) are drawn with --seed.")
@click.option("--topology", type=click.Choice(["tree", "fat-tree"]), default="tree", show_default=True,
              help="Racks under one core switch (the paper's Sec. VI-1 form), or the smallest k-ary fat-tree "
                   "that holds the servers (run it with --quotient-tree).")
@click.option("--rack-size", type=int, default=16, show_default=True,
              help="Servers per rack switch (tree; a fat-tree's edge switch holds k/2).")
@click.option("--server-bw", type=POSITIVE_NUMBER, default=100.0, show_default=True,
              help="Server-switch links, Gbps.")
@click.option("--rack-bw", type=POSITIVE_NUMBER, default=800.0, show_default=True,
              help="Rack-core links (tree) or every switch-switch link (fat-tree), Gbps.")
@click.option("--group-by", type=click.Choice(["model", "file"]), default="model", show_default=True,
              help="Servers grouped by GPU model (racks, or fat-tree ports, of one model), or in file order.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("-o", "--output", "out_path", required=True, help="Instance file to write (JSON; -: stdout).")
def import_alibaba_cmd(pods: str, nodes_path: str, slot_seconds: float, horizon: int | None,
                       max_jobs: int | None, utility: str, topology: str, rack_size: int, server_bw: float,
                       rack_bw: float, group_by: str, seed: int, out_path: str) -> None:
    """Read the Alibaba GPU cluster trace 2023 (pod list PODS and --nodes) into a GADGET instance.

    The nodes become the cluster (the trace has no topology: a documented two-level tree, or a
    k-ary fat-tree with --topology fat-tree), the GPU pods the jobs
    (``clusteropt.instances.read_alibaba_nodes`` and ``read_alibaba_jobs`` say how each column is
    read).  Prints the SHA-256 of both files, so a run can name the trace it used.
    """
    from clusteropt.instances.gadget.trace import read_alibaba_jobs, read_alibaba_nodes
    from clusteropt.provenance import file_sha256

    _refuse_overwrite(out_path, "-o", pods, nodes_path)
    for what, path in (("pod list", pods), ("--nodes", nodes_path)):
        if not Path(path).is_file():
            raise BadInput(f"{what}: no such file: {path}")
    try:
        cluster, _ = read_alibaba_nodes(nodes_path, rack_size=rack_size, server_bw=server_bw, rack_bw=rack_bw,
                                        group_by=group_by, topology=topology)
        inst = read_alibaba_jobs(pods, cluster=cluster, slot_seconds=slot_seconds, horizon=horizon,
                                 max_jobs=max_jobs, utility=utility, seed=seed)
    except (InstanceError, ValueError) as exc:
        raise BadInput(str(exc)) from None
    _write_instance(inst, out_path)
    _echo(f"{inst.n_jobs} GPU pods on {cluster.n_servers} servers ({int(cluster.capacity[:, 0].sum())} GPUs, "
          f"{cluster.n_switches} switches), T = {inst.horizon} slots of {slot_seconds:g} s -> {out_path}; "
          f"sha256 {Path(pods).name} {file_sha256(pods)}, {Path(nodes_path).name} {file_sha256(nodes_path)}",
          out_path)


def _floats(text: str | None, what: str) -> list[float] | None:
    """``"0.4,0.5"`` -> [0.4, 0.5]; a bad entry names the option and its position."""
    if text is None:
        return None
    out = []
    for k, raw in enumerate(text.split(",")):
        try:
            out.append(float(raw))
        except ValueError:
            raise BadInput(f"{what}[{k}] = {raw!r}; expected a number (comma-separated list)") from None
    return out


def _write_instance(inst, path: str) -> None:
    if _is_stdout(path) or (os.path.exists(path) and not os.path.isfile(path)):
        # stdout, a device, a FIFO: one stream, so everything inline (nothing written beside it)
        _write_text(path, inst.to_json() + "\n")
        return
    try:
        inst.to_json(path)
    except OSError as exc:
        raise BadInput(_cannot_write(path, exc)) from None


#: Command options that name input files: written with their SHA-256 in every output's provenance.
_INPUT_OPTIONS = ("instance", "trace", "prices", "transfer_costs", "file", "output")


def _provenance(solver: dict | None = None) -> dict:
    """The ``"provenance"`` block of an output (:func:`clusteropt.provenance.provenance`): the command
    line, the input files of the running command with their hashes, versions, and ``solver``.
    """
    from clusteropt.provenance import provenance

    ctx = click.get_current_context(silent=True)
    argv = ctx.find_root().obj.get("argv") if ctx is not None and isinstance(ctx.find_root().obj, dict) else None
    inputs = {}
    while ctx is not None:
        for key in _INPUT_OPTIONS:
            value = ctx.params.get(key)
            if isinstance(value, str) and value != "-" and key not in inputs:
                inputs[key] = value
        ctx = ctx.parent
    return provenance(command=argv, inputs=inputs, solver=solver)


def _write_json(path: str, data: dict, *, solver: dict | None = None) -> None:
    """Write a command's result as JSON with its provenance block (``solver``: the solver that ran)."""
    _write_text(path, json.dumps({**data, "provenance": _provenance(solver)}) + "\n")


@cli.group("generate")
def generate_group() -> None:
    """Write generated instance files (the papers' settings, from fixed seeds)."""


@generate_group.command("realtime")
@click.option("--preset", type=click.Choice(["paper", "fig3", "fig4", "fig5", "random"]), default="paper",
              show_default=True, help="Paper 002 setting: Fig. 1 / Examples 6, 11; Figs. 3-5; or random.")
@click.option("--n", "n", type=int, default=None, help="fig5: N = M; random: N (and M unless --workers).")
@click.option("--workers", type=int, default=None, help="random: M.")
@click.option("--generation", type=PROBABILITY, default=None, help="fig3: P[J_2j = 1]; fig5: P[J_ij = 1].")
@click.option("--success", type=PROBABILITY, default=None, help="fig4: P_2j.")
@click.option("--requirement", type=str, default=None, metavar="R1,R2,...", help="Requirement r (one per app).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="random: the generator's seed.")
@click.option("-o", "--output", "out_path", required=True, help="Instance file to write (JSON; -: stdout).")
def generate_realtime_cmd(preset, n, workers, generation, success, requirement, seed, out_path) -> None:
    """A paper 002 instance (real-time jobs on unreliable workers)."""
    from clusteropt.instances import random_realtime, realtime_preset

    try:
        if preset == "random":
            if generation is not None or success is not None:
                raise ValueError("--generation and --success are for the fig presets; random draws them")
            apps = 4 if n is None else n
            inst = random_realtime(apps, apps if workers is None else workers, seed=seed)
        else:
            if workers is not None:
                raise ValueError("--workers is for --preset random")
            inst = realtime_preset(preset, n=n, generation=generation, success=success)
        r = _floats(requirement, "--requirement")
        if r is not None:
            inst = inst.with_requirement(r)
    except (InstanceError, ValueError) as exc:
        raise BadInput(str(exc)) from None
    _write_instance(inst, out_path)
    assert inst.requirement is not None  # validation sets the default
    _echo(f"{inst.name}: {inst.n_apps} applications, {inst.n_workers} workers, "
          f"requirement {inst.requirement.tolist()} -> {out_path}", out_path)


@generate_group.command("coflow")
@click.option("--coflows", "n_coflows", type=click.IntRange(min=1), default=50, show_default=True,
              help="Number of coflows.")
@click.option("--ports", "n_ports", type=click.IntRange(min=1), default=20, show_default=True,
              help="Switch ports (inputs = outputs).")
@click.option("--width", type=click.Choice(["heavy", "narrow", "uniform"]), default="heavy", show_default=True,
              help="Mapper / reducer counts: trace-like heavy tail, one side a single port, or uniform.")
@click.option("--size", type=click.Choice(["heavy", "uniform", "unit"]), default="heavy", show_default=True,
              help="Flow sizes: Pareto-tailed per coflow (trace-like), uniform 1-10, or 1.")
@click.option("--arrival", type=click.Choice(["poisson", "bursty"]), default="poisson", show_default=True,
              help="Arrival process of the coflows.")
@click.option("--load", type=POSITIVE_NUMBER, default=0.9, show_default=True,
              help="Offered load of the busiest port.")
@click.option("--no-release", is_flag=True, help="Release every coflow at slot 0 (the paper's offline setting).")
@click.option("--weights", type=click.Choice(["unit", "random"]), default="unit", show_default=True,
              help="Coflow weights: all 1, or integers 1-10.")
@click.option("--max-units", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Cap on a flow's units.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="The generator's seed.")
@click.option("-o", "--output", "out_path", required=True, help="Instance file to write (JSON; -: stdout).")
def generate_coflow_cmd(n_coflows, n_ports, width, size, arrival, load, no_release, weights, max_units, seed,
                        out_path) -> None:
    """Random coflows shaped like the public Facebook coflow trace (paper 001; a synthetic stand-in)."""
    from clusteropt.instances.coflow.generate import random_coflows

    try:
        inst = random_coflows(n_coflows, n_ports, width=width, size=size, arrival=arrival, load=load,
                              release=not no_release, weights=weights, max_units=max_units, seed=seed)
    except (InstanceError, ValueError) as exc:
        raise BadInput(str(exc)) from None
    _write_instance(inst, out_path)
    _echo(f"{inst.n_coflows} coflows on {inst.n_inputs} x {inst.n_outputs} ports, {int(inst.units.sum())} "
          f"units, releases 0 .. {int(inst.release.max())} -> {out_path}", out_path)


@generate_group.command("worker-placement")
@click.option("--jobs", "n_jobs", type=click.IntRange(min=1), default=8, show_default=True, help="DL jobs.")
@click.option("--servers", "n_servers", type=click.IntRange(min=1), default=4, show_default=True,
              help="GPU servers.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="The generator's seed.")
@click.option("-o", "--output", "out_path", required=True, help="Instance file to write (JSON; -: stdout).")
def generate_worker_placement_cmd(n_jobs, n_servers, seed, out_path) -> None:
    """Random jobs and servers for one slot's worker placement (paper 000, Eqs. (2), (4))."""
    from clusteropt.instances import random_worker_placement

    try:
        inst = random_worker_placement(n_jobs, n_servers, seed=seed)
    except (InstanceError, ValueError) as exc:
        raise BadInput(str(exc)) from None
    _write_instance(inst, out_path)
    _echo(f"{inst.n_jobs} jobs x {inst.n_servers} servers (seed {seed}) -> {out_path}", out_path)


@generate_group.command("gadget")
@click.option("--preset", type=click.Choice(["paper", "small", "tiny"]), default="paper", show_default=True,
              help="Paper 000 setting: Sec. VI-1 (T = 200, 50-server fat-tree), or a small / tiny one.")
@click.option("--jobs", type=int, default=20, show_default=True, help="Number of DL jobs.")
@click.option("--utility", type=click.Choice(["sigmoid", "sqrt", "log", "quadratic"]), default="sigmoid",
              show_default=True, help="mu_i: the paper's sigmoid (Sec. VI-1) or an example of Sec. IV-3.")
@click.option("--horizon", type=int, default=None, help="T (default: the preset's).")
@click.option("--fat-tree", "fat_tree_k", type=int, default=None, metavar="K",
              help="Put the preset's jobs on a k-ary fat-tree (k^3/4 servers, 1-8 GPUs each, 100 Gbps at the "
                   "servers, 400 Gbps in the fabric) instead of the preset's cluster; K even.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="The generator's seed.")
@click.option("-o", "--output", "out_path", required=True, help="Instance file to write (JSON; -: stdout).")
def generate_gadget_cmd(preset, jobs, utility, horizon, fat_tree_k, seed, out_path) -> None:
    """A paper 000 instance (GADGET: ring-all-reduce DL jobs on a GPU cluster)."""
    import dataclasses

    from clusteropt.instances.gadget.instance import gadget_preset, k_ary_fat_tree

    try:
        inst = gadget_preset(preset, jobs=jobs, seed=seed, utility=utility, horizon=horizon)
        if fat_tree_k is not None:
            if fat_tree_k < 2 or fat_tree_k % 2 or fat_tree_k > 64:
                raise ValueError(f"--fat-tree {fat_tree_k}; expected an even K in 2 .. 64")
            inst = dataclasses.replace(inst, cluster=k_ary_fat_tree(fat_tree_k, seed=seed),
                                       name=f"{inst.name}-fat-tree-{fat_tree_k}")
    except (InstanceError, ValueError) as exc:
        raise BadInput(str(exc)) from None
    _write_instance(inst, out_path)
    cl = inst.cluster
    _echo(f"{inst.name}: {inst.n_jobs} jobs over T = {inst.horizon}, {cl.n_servers} servers "
          f"({int(cl.capacity[:, 0].sum())} {cl.resources[0]}), {cl.n_switches} switches, "
          f"{cl.n_links} links -> {out_path}", out_path)


@generate_group.command("broker")
@click.option("--preset", type=click.Choice(["paper", "small", "tiny"]), default="paper", show_default=True,
              help="Paper 003 setting: Sec. 6.1 (T = 50, 15 DCs, 4 resources), or a small / tiny one.")
@click.option("--jobs", type=int, default=None, help="Number of ML jobs (default: the preset's).")
@click.option("--horizon", type=int, default=None, help="T (default: the preset's).")
@click.option("--prices", "prices_path", type=str, default=None, metavar="CSV",
              help="Price table dc,resource,a,b,threshold (resources gpu, vcpu, memory, storage; per-slot "
                   "prices) replacing the drawn prices.")
@click.option("--transfer-costs", "transfer_path", type=str, default=None, metavar="CSV",
              help="R x R transfer-cost matrix replacing the drawn d^{rr'}.")
@click.option("--deploy-per", type=click.Choice(["model", "data"]), default="model", show_default=True,
              help="What the paper's deployment cost '[0.05, 0.1] USD per GB' is per GB of: the model "
                   "(the package's reading; C3 is then tiny) or the job's data per slot.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="The generator's seed.")
@click.option("-o", "--output", "out_path", required=True, help="Instance file to write (JSON; -: stdout).")
def generate_broker_cmd(preset, jobs, horizon, prices_path, transfer_path, deploy_per, seed, out_path) -> None:
    """A paper 003 instance (mlBroker: geo-distributed ML jobs under volume-discount prices)."""
    from clusteropt.instances.broker import (
        DEFAULT_RESOURCES,
        broker_preset,
        read_prices_csv,
        read_transfer_costs_csv,
    )

    _refuse_overwrite(out_path, "-o", prices_path, transfer_path)
    try:
        prices = read_prices_csv(prices_path, resources=DEFAULT_RESOURCES) if prices_path else None
        transfer = read_transfer_costs_csv(transfer_path) if transfer_path else None
        inst = broker_preset(preset, jobs=jobs, horizon=horizon, prices=prices, transfer_costs=transfer, seed=seed,
                             deploy_per=deploy_per)
    except OSError as exc:
        raise BadInput(f"cannot read {exc.filename}: {exc.strerror}") from None
    except (InstanceError, ValueError) as exc:
        raise BadInput(str(exc)) from None
    _write_instance(inst, out_path)
    _echo(f"{inst.name}: {inst.n_jobs} jobs over T = {inst.horizon}, {inst.n_dcs} data centers, "
          f"{inst.n_resources} resources ({', '.join(inst.resources)}) -> {out_path}", out_path)


#: ``generate ring`` patterns (clusteropt.instances.ring.PATTERNS and the adaptive one) and the options each uses.
_RING_PATTERN_OPTIONS: dict[str, tuple[str, ...]] = {
    "uniform": (),
    "hotspot": ("width", "hot"),
    "moving-hotspot": ("width", "hot", "step"),
    "zipf": ("zipf",),
    "phases": ("width", "hot", "phase"),
    "hit-the-cut": ("against", "epsilon"),
}


@generate_group.command("ring")
@click.option("--n", "n", type=int, required=True, help="Processes on the ring.")
@click.option("--servers", type=int, required=True, help="Servers l (a divisor of n; capacity k = n / l).")
@click.option("--requests", type=int, required=True, help="Length T of the request sequence.")
@click.option("--pattern", type=click.Choice(list(_RING_PATTERN_OPTIONS)), default="uniform", show_default=True,
              help="How requests are drawn; hit-the-cut requests, at every step, a cut edge of a deterministic "
                   "run of --against (the adversary of the deterministic lower bound).")
@click.option("--against", default=None, metavar="POLICY",
              help="hit-the-cut: the ring policy the sequence is built against (default dynamic-wfa), run "
                   "with --seed.")
@click.option("--epsilon", type=NONNEGATIVE, default=None, help="hit-the-cut: the --against policy's epsilon.")
@click.option("--width", type=int, default=None,
              help="hotspot, moving-hotspot, phases: edges of the hot arc (default k).")
@click.option("--hot", type=PROBABILITY, default=None,
              help="hotspot, moving-hotspot, phases: P[request in the hot arc] (default 0.9).")
@click.option("--step", type=int, default=None, help="moving-hotspot: requests per one-edge move (default k).")
@click.option("--phase", type=int, default=None, help="phases: requests per phase (default 10 n).")
@click.option("--zipf", type=NONNEGATIVE, default=None, help="zipf: exponent (default 1.2).")
@click.option("--alpha", type=NONNEGATIVE, default=1.0, show_default=True,
              help="Migration cost per process moved.")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="The generator's seed (hit-the-cut: the seed of the --against run).")
@click.option("-o", "--output", "out_path", required=True,
              help="Instance file to write (JSON; more than 10000 requests go to a .npy beside it; -: stdout, "
                   "all inline).")
def generate_ring_cmd(n, servers, requests, pattern, against, epsilon, width, hot, step, phase, zipf, alpha, seed,
                      out_path) -> None:
    """A paper 004 instance (online balanced partitioning of ring demands)."""
    import numpy as np

    from clusteropt.instances.ring import RingInstance, random_ring

    given = {"against": against, "epsilon": epsilon, "width": width, "hot": hot, "step": step, "phase": phase,
             "zipf": zipf}
    for name, value in given.items():
        if value is not None and name not in _RING_PATTERN_OPTIONS[pattern]:
            users = [p for p, opts in _RING_PATTERN_OPTIONS.items() if name in opts]
            raise BadInput(f"--{name} is for --pattern {' / '.join(users)}, not {pattern}")
    try:
        if pattern == "hit-the-cut":
            from clusteropt.online.ring import POLICIES, hit_the_cut

            against = "dynamic-wfa" if against is None else against
            if against not in POLICIES:
                raise BadInput(f"--against {against!r}; expected a ring policy: {', '.join(POLICIES)}")
            if requests < 0:
                raise InstanceError("requests", requests, ">= 0")
            base = RingInstance(n=n, servers=servers, requests=np.zeros(0, dtype=np.int64), alpha=alpha,
                                name=f"ring-hit-the-cut-{against}-n{n}-l{servers}-T{requests}")
            params = {} if epsilon is None else {"epsilon": epsilon}
            inst = hit_the_cut(base, requests, against=against, seed=seed, **params)
        else:
            options = {k: v for k, v in given.items() if v is not None}
            inst = random_ring(n, servers, requests, pattern, seed=seed, alpha=alpha, **options)
    except ModuleNotFoundError as exc:
        raise BadInput(f"--against {against!r} is not available here ({exc})") from None
    except (InstanceError, ValueError) as exc:
        raise BadInput(str(exc)) from None
    _write_instance(inst, out_path)
    where = (" (requests in a .npy beside it)"
             if inst.n_requests > _ring_inline() and os.path.isfile(out_path) and not os.path.islink(out_path)
             else "")
    _echo(f"{inst.name}: {inst.n} processes, {inst.servers} servers (k = {inst.k}), {inst.n_requests} "
          f"requests, alpha {inst.alpha:g} -> {out_path}{where}", out_path)


def _ring_inline() -> int:
    from clusteropt.instances.ring import INLINE_REQUESTS

    return INLINE_REQUESTS


@cli.command("run")
@click.argument("instance", type=str)
@click.option("--policy", default=None,
              help="Coflow ordering: primal-dual (default), lp-order, sincronia, sebf, fifo, smallest-first, "
                   "largest-first.  Realtime: sqrt-greedy (default), max-weight, weight-greedy, random.  "
                   "GADGET: gadget (default), fifo, drf, las.  mlBroker: mlbroker (default), mlbroker-plus "
                   "(the package's: A_round or the slot's exact MILP, whichever costs less), local, central, "
                   "oasis.  Ring: dynamic (default), dynamic-mix (ours: the paper's HST MTS and the work "
                   "function MTS combined), dynamic-soft, dynamic-wfa, static, never, static-best, greedy.")
@click.option("--schedule", "scheduler", type=click.Choice(["paper", "greedy", "madd"]), default="greedy",
              show_default=True,
              help="Coflow scheduler: the paper's moved blocks, the priority greedy, or Varys's MADD pacing (each "
                   "flow finishes with its coflow's bottleneck).")
@click.option("--lower-bound", is_flag=True, help="Coflow: also compute the LP lower bound (row generation).")
@click.option("--kappa", type=POSITIVE_NUMBER, default=0.5, show_default=True,
              help="Coflow: primal-dual threshold.")
@click.option("--online", is_flag=True,
              help="Coflow: re-plan the ordering on the remaining demand at every arrival and continue the greedy "
                   "schedule, deciding each slot from released coflows only.  Without it primal-dual, sincronia "
                   "and lp-order are offline (they look at coflows not yet arrived); sebf, fifo, smallest-first "
                   "and largest-first with --schedule greedy are online as they are (out.json: online).")
@click.option("--epoch", type=POSITIVE, default=None,
              help="Coflow --online: re-plan every EPOCH slots instead of at every arrival.")
@click.option("--frames", type=POSITIVE, default=10_000, show_default=True, help="Realtime: frames to simulate.")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Realtime, GADGET lp-rs-mde, ring: random seed of the run.")
@click.option("--requirement", type=str, default=None, metavar="R1,R2,...",
              help="Realtime: requirement r (default: the instance's).")
@click.option("--slot-solver", type=click.Choice(["greedy", "exact", "lp-rs-mde"]), default="greedy",
              show_default=True, help="GADGET: per-slot solver of Alg. 1 (exact: the G-VNE ILP (12)-(19); "
              "lp-rs-mde: Alg. 2, LP ring selection and randomized embedding).")
@click.option("--time-limit", type=SECONDS_OR_INF, default=None,
              help="GADGET exact: seconds per slot ILP (default 60; inf: none); mlbroker-plus: seconds per "
                   "slot MILP (default: none).")
@click.option("--mip-gap", type=GAP, default=None,
              help="GADGET exact, mlbroker-plus: relative MIP gap per slot (defaults 1e-4 and 0.005).")
@click.option("--warm", is_flag=True,
              help="GADGET lp-rs-mde: keep the HiGHS models across slots (both with the lp route, the selection "
                   "LP's with colgen) and re-solve an LP with the previous slot's structure from its basis "
                   "(same optimal values; default: every slot cold).")
@click.option("--embed-route", type=click.Choice(["auto", "lp", "colgen"]), default=None,
              help="GADGET lp-rs-mde: Alg. 2 lines 4-6 as the augmented LP then its decomposition (lp, the "
                   "paper's), or by column generation over the valid mappings (colgen: tree clusters, HiGHS; "
                   "the same LP optimum, scales with servers).  auto (default): colgen from 16 servers on "
                   "where it can run, else lp (benchmarks/results/gadget_route.md); out.json params record "
                   "the route taken.")
@click.option("--select-lp", "select_algorithm", type=click.Choice(["simplex", "ipm"]), default=None,
              help="GADGET lp-rs-mde: HiGHS's algorithm for the ring-selection LP (simplex: primal simplex, the "
                   "default; ipm: interior point with crossover, faster from a few hundred servers on).")
@click.option("--server-classes", "select_classes", is_flag=True,
              help="GADGET lp-rs-mde: solve the ring-selection LP over classes of interchangeable servers (same "
                   "rack, capacity and link bandwidth; the same LP value, far smaller on homogeneous racks).")
@click.option("--select-route", type=click.Choice(["auto", "full", "capacity"]), default=None,
              help="GADGET lp-rs-mde: solve the ring-selection LP as built (full, the paper's) or first without "
                   "its link rows, certified against the full LP (capacity: tree clusters, HiGHS; the full LP "
                   "only when that fails).  auto (default): capacity from 16 servers on where it can run, else "
                   "full; out.json params record the route taken.")
@click.option("--quotient-tree", "quotient", is_flag=True,
              help="GADGET (any slot solver): solve every slot on the fat-tree's quotient tree (parallel "
                   "switches and links merged; the same LP optimum as on the fat-tree) and route the rings on "
                   "the fat-tree's own links; a job that cannot be routed is dropped from the slot and listed.")
@click.option("--fill", type=click.Choice(["greedy", "none"]), default=None,
              help="GADGET: greedy (default) ends every slot with the work-conserving fill of idle capacity; "
                   "none is Alg. 1 exactly as written.")
@click.option("--epsilon", type=NONNEGATIVE, default=None,
              help="mlBroker: epsilon of the regularized problem (10) (default 0.1).  Ring (dynamic, "
                   "dynamic-mix, dynamic-soft, dynamic-wfa, static, greedy): the algorithm's epsilon (default: "
                   "the algorithm's own).")
@click.option("--rate", type=POSITIVE_NUMBER, default=None,
              help="Ring dynamic-mix: learning-rate scale of the combined line MTS, eta = rate / (L - 1) "
                   "(default 2).")
@click.option("--price-form", type=click.Choice(["tight", "bigm"]), default="tight", show_default=True,
              help="mlBroker: price rows of (10): the convex hull of Eq. (7), or the paper's big-M rows "
                   "(8c)-(8e).")
@click.option("--rounding", "rounding_variant", type=click.Choice(["package", "safe", "paper"]), default=None,
              help="mlBroker: A_round with the package's repair of a job left short of workers (package, the "
                   "default), or exactly as Alg. 2 writes it (paper: such a slot stops the run).  GADGET "
                   "lp-rs-mde: safe (default; never exceeds a capacity) or paper (Alg. 2 lines 7-9: may "
                   "overload servers and links, reported; exit 0 with verified False).")
@click.option("--transfers", type=click.Choice(["all", "sources"]), default=None,
              help="mlBroker: data-transfer variables of (10): every pair of DCs (all, default: the paper's) or "
                   "only from the DCs that hold each job's data (sources: the same problem with the variables "
                   "(8b) fixes at 0 left out; Clarabel solves it at 100 DCs, where the full form fails).")
@click.option("--trace-fractional", is_flag=True,
              help="mlBroker: also write every slot's fractional solution of (10) and A_round's candidates "
                   "into the --json output.")
@click.option("--json", "json_path", type=str, default=None,
              help="Write the run's result to FILE (README; -: stdout).")
def run_cmd(instance, policy, scheduler, lower_bound, kappa, online, epoch, frames, seed, requirement, slot_solver,
            time_limit, mip_gap, warm, embed_route, select_algorithm, select_classes, select_route, quotient, fill,
            epsilon, rate, price_form, rounding_variant, transfers, trace_fractional, json_path) -> None:
    """Run a policy on an instance; its output is verified.

    Coflow (and concurrent-open-shop) instances: order and schedule.  Realtime instances (paper 002):
    simulate ``--frames`` frames and report each application's completion rate.  GADGET and mlBroker
    instances (papers 000, 003): decide every slot.  Ring instances (paper 004): serve every request,
    migrate, and report communication, migration and load.  Each kind's runner is registered in
    ``clusteropt.runs`` (``clusteropt policies`` lists them); a flag of another kind is refused.
    """
    from click.core import ParameterSource

    from clusteropt.runs import OptionError, get_runner
    from clusteropt.runs import run as run_policy

    _refuse_overwrite(json_path, "--json", *_inputs(instance))
    inst = _load(instance)
    ctx = click.get_current_context()
    given = {name: value for name, value in ctx.params.items()
             if name not in ("instance", "policy", "seed", "json_path")
             and ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)}
    if inst.kind not in ("coflow", "concurrent-open-shop") and ("online" in given or "epoch" in given):
        raise BadInput(f"--online and --epoch re-plan coflow orderings; {instance} is a {inst.kind} instance")
    if inst.kind != "ring" and "rate" in given:
        raise BadInput(f"--rate is the ring policy dynamic-mix's; {instance} is a {inst.kind} instance")
    if trace_fractional and json_path is None:
        raise BadInput("--trace-fractional writes into the --json output; give --json FILE")
    try:
        spec = get_runner(inst.kind)
    except ValueError as exc:
        raise BadInput(f"{instance}: {exc}") from None
    options = {_RUN_OPTION.get(name, name): value for name, value in given.items()}
    for name in options:
        if name not in spec.options:
            raise BadInput(f"{_run_flag(name)} is not an option of {spec.kind} runs; they take "
                           f"{', '.join(_run_flag(o) for o in spec.options)}")
    if "requirement" in options:
        options["requirement"] = _floats(requirement, "--requirement")
    try:
        result = run_policy(inst, policy, seed=seed, progress=True, **options)
    except OptionError as exc:
        raise BadInput(exc.render(_run_flag)) from None
    except ModuleNotFoundError as exc:
        raise BadInput(f"policy {policy!r} is not available here ({exc})") from None
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    except RuntimeError as exc:  # a solve without solution where the policy has no fallback
        raise SolverFailure(str(exc)) from None
    _echo(result.summary, json_path)
    if json_path is not None:
        _write_json(json_path, result.out, solver=result.solver)
    if result.warning is not None:
        click.echo(f"warning: {OptionError(result.warning).render(_run_flag)}", err=True)
    elif not result.ok:
        raise SolverFailure(result.failure or "the run failed verification")


#: ``run`` parameter -> the runner's option, where the names differ.
_RUN_OPTION = {"rounding_variant": "rounding"}

#: A runner option -> its flag, where it is not ``--`` + the name with dashes.
_RUN_FLAG = {"scheduler": "--schedule", "select_algorithm": "--select-lp", "select_classes": "--server-classes",
             "quotient": "--quotient-tree"}


def _run_flag(option: str) -> str:
    return _RUN_FLAG.get(option, "--" + option.replace("_", "-"))


@cli.command("region")
@click.argument("instance", type=str)
@click.option("--policy", default="sqrt-greedy", show_default=True,
              help="sqrt-greedy, max-weight, weight-greedy or random.")
@click.option("--direction", type=str, default=None, metavar="D1,D2,...",
              help="Direction d >= 0 (default: the instance's requirement, or all ones).")
@click.option("--exact", is_flag=True, help="Also solve the exact region LP (small instances).")
@click.option("--frames", type=POSITIVE, default=10_000, show_default=True, help="Frames per simulation.")
@click.option("--tol", type=NONNEGATIVE, default=0.01, show_default=True,
              help="Accept rates this far below the requirement (the paper's 0.01).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed shared by every bisection step.")
@click.option("--json", "json_path", type=str, default=None,
              help="Write theta (and exact_theta) to FILE (-: stdout).")
def region_cmd(instance, policy, direction, exact, frames, tol, seed, json_path) -> None:
    """Largest multiple theta * d of a direction that a realtime policy fulfils (paper 002, Sec. IV)."""
    from clusteropt.online.realtime.policies import POLICIES
    from clusteropt.online.realtime.regions import estimate_theta, exact_region
    from clusteropt.solvers import SolverError

    _refuse_overwrite(json_path, "--json", instance)
    inst = _load(instance)
    if inst.kind != "realtime":
        raise BadInput(f"{instance}: `region` takes realtime instances, not {inst.kind!r}")
    if policy not in POLICIES:
        raise BadInput(f"--policy {policy!r}; expected one of {', '.join(POLICIES)}")
    d = _floats(direction, "--direction")
    try:
        theta = estimate_theta(inst, policy, d, frames=frames, tol=tol, seed=seed, progress=True)
        out: dict[str, Any] = {"policy": policy, "frames": frames, "tol": tol, "seed": seed, "theta": theta}
        line = f"{policy}: theta = {theta:.4f}"
        if exact:
            strict = exact_region(inst, d)
            matched = exact_region(inst, d, slack=tol)
            out.update(direction=strict.direction.tolist(), exact_theta=strict.theta,
                       exact_theta_with_tol=matched.theta, exact_rates=strict.rates.tolist())
            line += (f"; exact theta = {strict.theta:.4f} (R_max boundary), {matched.theta:.4f} with the "
                     f"same {tol} slack; fraction {theta / matched.theta:.4f}")
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    except SolverError as exc:
        raise SolverFailure(str(exc)) from None
    if "direction" not in out:
        from clusteropt.models.realtime import resolve_direction

        out["direction"] = resolve_direction(inst, d).tolist()
    _echo(line, json_path)
    if json_path is not None:
        _write_json(json_path, out)


@cli.group("experiment")
def experiment_group() -> None:
    """Paper experiments: list them, run a sweep, write a report."""


def _import_modules(modules: tuple[str, ...]) -> None:
    """Import the modules that register experiments outside clusteropt (cwd on the path).

    Each ``--module`` must be a dotted module name (``mypkg.experiments``; a file path or an empty
    name is refused unimported), must import without an error, and must register an experiment
    (one that importing it adds, or, for a module imported before, one whose cell function it
    defines or whose spec it holds).  Anything else is bad input, one line saying which.
    """
    import importlib

    from clusteropt.experiments import EXPERIMENTS  # the package's own first: they are not the module's

    if modules and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    for name in dict.fromkeys(modules):
        shown = name if name and name.isprintable() and name.strip() == name else repr(name)
        where = f"--module {shown}"
        parts = name.split(".")
        if not name:
            raise BadInput(f"{where}: an empty name; expected a dotted module name such as mypkg.experiments")
        if any(sep in name for sep in ("/", "\\", os.sep)) or name.endswith(".py"):
            raise BadInput(f"{where}: a file path; expected a dotted module name importable from the current "
                           "directory (mypkg/experiments.py is mypkg.experiments)")
        if not all(part.isidentifier() for part in parts):
            raise BadInput(f"{where}: not a dotted module name (Python identifiers joined by dots, such as "
                           "mypkg.experiments)")
        before = set(EXPERIMENTS)
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not (name == exc.name or name.startswith(exc.name + ".")):
                raise BadInput(f"{where}: importing it raised {_error_text(exc)}") from None
            raise BadInput(f"{where}: cannot import it (no module {exc.name!r} on the path, the current "
                           "directory first)") from None
        except (Exception, SystemExit) as exc:  # its own code failed: a syntax error, a raise, sys.exit()
            raise BadInput(f"{where}: importing it raised {_error_text(exc)}") from None
        held = {id(value) for value in vars(module).values()}
        if set(EXPERIMENTS) == before and not any(
                getattr(spec.run, "__module__", None) == module.__name__ or id(spec) in held
                for spec in EXPERIMENTS.values()):
            raise BadInput(f"{where}: it imports but registers no experiment (a module for --module calls "
                           "clusteropt.experiments.register_experiment)")


def _error_text(exc: BaseException) -> str:
    """``Type: message`` of an exception on one line (white space folded, at most 300 characters)."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= 300 else text[:297] + "..."


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


def _experiments(name: str | None, every: bool, modules: tuple[str, ...], quick: bool,
                 params: tuple[str, ...] = ()) -> list:
    """The experiment NAME, or with ``--all`` every registered one (NAME and ``--all`` exclude
    each other; ``--param`` goes with one experiment).
    """
    from clusteropt.experiments import EXPERIMENTS

    if every == (name is not None):
        raise BadInput("give an experiment NAME or --all (not both); `clusteropt experiment list` lists them")
    if not every:
        assert name is not None  # checked above: NAME or --all
        return [_experiment(name, modules, quick, params)]
    if params:
        raise BadInput("--param replaces one experiment's grid; it does not go with --all")
    _import_modules(modules)
    return [_experiment(n, (), quick) for n in sorted(EXPERIMENTS)]


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
@_LISTING_JSON
def experiment_list_cmd(modules: tuple[str, ...], as_json: bool) -> None:
    """List the registered experiments with their cell counts (full and --quick)."""
    from clusteropt.experiments import EXPERIMENTS

    _import_modules(modules)
    rows = [EXPERIMENTS[name].describe() for name in sorted(EXPERIMENTS)]
    if not as_json:  # the table joins the lists; --json keeps them arrays
        rows = [{**r, "policies": ", ".join(r["policies"])} for r in rows]
    _listing(rows, ["name", "paper", "cells", "quick cells", "policies", "description"], as_json)


@experiment_group.command("run")
@click.argument("name", required=False)
@click.option("--all", "every", is_flag=True, help="Every registered experiment, one after the other.")
@click.option("--quick", is_flag=True, help="Run the seconds-long variant.")
@click.option("--jobs", "n_jobs", type=int, default=1, show_default=True,
              help="Worker processes on this machine (-1: one per core).")
@click.option("--scheduler", default=None, metavar="ADDR",
              help="Dask scheduler address (tcp://host:8786): run the cells on that cluster.")
@click.option("--backend", type=click.Choice(["joblib", "dask"]), default=None,
              help="Default: dask with --scheduler, else joblib; dask alone starts a local cluster.")
@click.option("--store", default="experiments.sqlite", show_default=True, help="Results store (SQLite).")
@click.option("--out", "out_dir", default=None, help="Also write the report (tables, figures) into DIR.")
@click.option("--timeout", type=SECONDS, default=None,
              help="Per-cell time limit in seconds (default: the spec's).")
@click.option("--no-resume", is_flag=True, help="Run every cell again, replacing stored results.")
@click.option("--retry", multiple=True, type=click.Choice(["failed", "timeout"]),
              help="Run stored cells of this status again; repeatable.")
@_PARAM_OPTION
@_MODULE_OPTION
def experiment_run_cmd(name, every, quick, n_jobs, scheduler, backend, store, out_dir, timeout, no_resume, retry,
                       params, modules) -> None:
    """Run experiment NAME's cells not yet in the store, or with --all every experiment's (a
    progress bar on a terminal, log lines otherwise); exit code 4 when some cells failed or timed
    out.  With --out, the report goes to DIR (--all: DIR/NAME for each, and DIR/index.md).
    """
    from clusteropt.experiments import StoreError, run_sweep

    specs = _experiments(name, every, modules, quick, params)
    for spec in specs:  # before any cell runs
        _check_outputs(spec, store, _report_dir(out_dir, spec, every))
    if not sys.stderr.isatty():
        logging.getLogger("clusteropt.experiments").setLevel(
            min(logging.INFO, logging.getLogger().getEffectiveLevel())
        )
    bad_cells = []
    for spec in specs:
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
        if counts.get("failed", 0) or counts.get("timeout", 0):
            bad = table[table.status != "ok"].iloc[0]
            bad_cells.append(f"{spec.name + ': ' if every else ''}"
                             f"{int(counts.get('failed', 0) + counts.get('timeout', 0))} cells did not finish ok; "
                             f"first: seed={bad.seed} policy={bad.policy}: {bad.error}")
    report_error = None
    if out_dir is not None:
        try:
            _report_all(specs, store, out_dir, every)
        except BadInput as exc:  # with failed cells the report's failure is most likely theirs
            if not bad_cells:
                raise
            report_error = f"report: {exc}"
    if bad_cells:
        raise CellsFailed("; ".join(bad_cells + ([report_error] if report_error else [])))


def _report_dir(out_dir: str | None, spec, every: bool) -> str | None:
    """Where ``spec``'s report goes: ``--out`` itself, or ``--out/NAME`` with ``--all``."""
    return None if out_dir is None else str(Path(out_dir) / spec.name) if every else out_dir


def _report_all(specs: list, store: str, out_dir: str, every: bool, code_version: str | None = None) -> None:
    """Write each experiment's report (``--all``: into ``out_dir/NAME``, and ``out_dir/index.md``).

    With ``--all`` a report that fails in part does not stop the others: the index lists it with
    its error, and the error is raised once every report and the index are written.
    """
    from clusteropt.experiments import ResultsStore, StoreError
    from clusteropt.experiments.report import index_entry, write_index

    entries, missing = [], []
    errors: list[str] = []
    for spec in specs:
        try:
            with ResultsStore(store, read_only=True) as db:  # a finished store may be read-only
                table = db.table(spec, code_version=code_version)  # no timings: re-made byte for byte
                dates = db.table(spec, code_version=code_version, timing=True)
        except StoreError as exc:
            raise BadInput(str(exc)) from None
        if table.empty and every:
            missing.append(spec.name)
            continue
        report_dir = _report_dir(out_dir, spec, every)
        assert report_dir is not None  # out_dir is given
        written = _report(spec, table, report_dir, errors if every else None)
        entries.append(index_entry(spec, dates, written, out_dir))
    if every:
        try:
            index = write_index(entries, out_dir, missing=missing, errors=errors)
        except OSError as exc:
            raise BadInput(f"cannot write {exc.filename or out_dir}: {exc.strerror or exc}") from None
        click.echo(f"index: {index} ({len(entries)} experiments, {len(missing)} without results, "
                   f"{len(errors)} written in part)")
    if errors:
        raise BadInput("; ".join(errors))


def _same_path(a: str | Path, b: str | Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one does not exist (yet)
        return os.path.realpath(a) == os.path.realpath(b)


def _check_outputs(spec, store: str, out_dir: str | None) -> None:
    """Bad input, before anything runs, when ``--out`` cannot be a directory of the report or
    the report would overwrite the store.
    """
    if out_dir is None:
        return
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise BadInput(f"--out {out_dir} exists and is not a directory; the report is a directory of files")
    parent = out
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise BadInput(f"--out {out_dir}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise BadInput(f"--out {out_dir}: cannot write in {parent} (permission denied or a read-only disk)")
    names = ["results.csv", "summary.csv", "summary.md"]
    names += [f"{t}.{ext}" for t in spec.tables for ext in ("csv", "md")]
    names += [f"{f}.{ext}" for f in spec.figures for ext in ("png", "svg")]
    for name in names:
        if _same_path(store, out / name):
            raise BadInput(f"--store {store} is the report's {name} in --out {out_dir}; writing the report "
                           "would destroy the store (choose another --out)")


def _report(spec, table, out_dir: str, errors: list[str] | None = None) -> list:
    """Write ``spec``'s report; a report written in part raises :class:`BadInput`, or with a list
    ``errors`` (``--all``) appends its message there and returns the files written.
    """
    from clusteropt.experiments import write_report
    from clusteropt.experiments.report import ReportError

    try:
        written = write_report(spec, table, out_dir)
    except ReportError as exc:
        if errors is None:
            raise BadInput(str(exc)) from None
        errors.append(str(exc))  # logged by write_report; raised once all are written
        return exc.written
    except (ValueError, RuntimeError) as exc:
        raise BadInput(str(exc)) from None
    except OSError as exc:
        raise BadInput(f"cannot write {exc.filename or out_dir}: {exc.strerror or exc}") from None
    click.echo(f"report: {len(written)} files in {out_dir}")
    return written


@experiment_group.command("report")
@click.argument("name", required=False)
@click.option("--all", "every", is_flag=True,
              help="Every registered experiment with results: DIR/NAME for each, and DIR/index.md.")
@click.option("--store", required=True, help="Results store (SQLite) the sweep wrote.")
@click.option("--out", "out_dir", required=True, help="Directory for the tables and figures.")
@click.option("--quick", is_flag=True, help="Report the cells of the --quick variant.")
@click.option("--code-version", default=None, help="Results of this code version (default: the newest).")
@_PARAM_OPTION
@_MODULE_OPTION
def experiment_report_cmd(name, every, store, out_dir, quick, code_version, params, modules) -> None:
    """Write experiment NAME's tables (CSV, Markdown) and figures (PNG, SVG) into --out; with --all,
    every experiment the store holds, into --out/NAME, and an index page --out/index.md.
    """
    specs = _experiments(name, every, modules, quick, params)
    if not Path(store).exists():
        raise BadInput(f"no such results store: {store}")
    for spec in specs:
        _check_outputs(spec, store, _report_dir(out_dir, spec, every))
    _report_all(specs, store, out_dir, every, code_version)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI and map every error to its exit code and one line."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        cli.main(args=args, prog_name="clusteropt", standalone_mode=False, obj={"argv": ["clusteropt", *args]})
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.Abort:
        click.echo("aborted", err=True)
        return 1
    except (BadInput, SolverFailure, CellsFailed, NotVerified) as exc:
        click.echo(f"error: {exc.format_message()}", err=True)
        return exc.exit_code
    except click.ClickException as exc:  # usage errors from click itself
        click.echo(f"error: {exc.format_message()} (see clusteropt --help)", err=True)
        return EXIT_BAD_INPUT
    except MemoryError:
        words = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")][:2]
        click.echo(f"error: out of memory while running clusteropt {' '.join(words)}; try a smaller instance",
                   err=True)
        return EXIT_BAD_INPUT
    except OSError as exc:  # a read or write the command did not expect to fail (a full disk, ...)
        where = f"{exc.filename}: " if exc.filename else ""
        click.echo(f"error: {where}{exc.strerror or exc}", err=True)
        return EXIT_BAD_INPUT
    return 0


def run() -> None:
    """Console-script entry point (``clusteropt``): exits with :func:`main`'s code."""
    sys.exit(main())


if __name__ == "__main__":
    run()
