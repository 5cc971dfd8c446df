"""Reports: an experiment's tables (CSV and Markdown) and figures (PNG and SVG) from its results.

``write_report(spec, table, out)`` writes into ``out/``:

- ``results.csv``: the tidy table (one row per cell);
- ``summary.csv`` / ``summary.md``: per (params, policy) the counts by status and the mean and
  standard deviation over seeds of every numeric metric of the ``ok`` cells;
- one CSV + Markdown pair per table the spec declares, one PNG + SVG pair per figure.

Every file is written through a temporary name and a rename, and the figures carry no date,
so a second report of the same results gives byte-identical files.

The figures can be drawn again from a recorded ``results.csv`` alone, without the store that
produced it: :func:`read_results` reads the file back as the tidy table and :func:`write_figures`
draws the spec's figures from it; :func:`remake_figures` does both for every experiment recorded
under a directory, leaving every table and number as it is::

    from clusteropt.experiments.report import remake_figures
    remake_figures("benchmarks/results/experiments")
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pandas as pd

from clusteropt.experiments.spec import RESERVED_COLUMNS, Experiment

__all__ = [
    "export_table",
    "figures_note",
    "index_entry",
    "markdown_table",
    "ok_rows",
    "read_results",
    "remake_figures",
    "summarize",
    "write_figures",
    "write_index",
    "write_report",
]

log = logging.getLogger(__name__)


def ok_rows(table: pd.DataFrame, fn: str, columns: tuple[str, ...]) -> pd.DataFrame:
    """The cells of ``table`` whose status is ``ok``, for a figure or table function named ``fn``.

    Raises ``ValueError`` naming the missing columns (and listing the available ones), or when no
    cell is ``ok``; logs a warning with the number of cells left out.

    >>> t = pd.DataFrame({"status": ["ok", "failed"], "ratio": [1.0, None]})
    >>> ok_rows(t, "demo", ("ratio",)).ratio.tolist()
    [1.0]
    >>> ok_rows(t, "demo", ("cost",))
    Traceback (most recent call last):
    ...
    ValueError: demo: the results table lacks cost; available columns: status, ratio
    """
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"{fn}: the results table lacks {', '.join(missing)}; "
                         f"available columns: {', '.join(map(str, table.columns))}")
    ok = table[table.status == "ok"] if "status" in table.columns else table
    if len(ok) < len(table):
        log.warning("%s: left out %d of %d cells whose status is not ok", fn, len(table) - len(ok), len(table))
    if ok.empty:
        raise ValueError(f"{fn}: no cell with status 'ok' in the results table ({len(table)} rows)")
    return ok



def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(table: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (numbers right-aligned, floats to 6 significant digits).

    Written here rather than with ``DataFrame.to_markdown`` so reports need no ``tabulate``.

    Examples
    --------
    >>> print(markdown_table(pd.DataFrame({"policy": ["a", "b"], "cost": [1.5, 10.0]})), end="")
    | policy | cost |
    | :----- | ---: |
    | a      |  1.5 |
    | b      |   10 |
    """
    columns = [str(c) for c in table.columns]
    cells = [[_text(v) for v in row] for row in table.itertuples(index=False, name=None)]
    numeric = [pd.api.types.is_numeric_dtype(table[c]) and not pd.api.types.is_bool_dtype(table[c])
               for c in table.columns]
    widths = [max([len(c), 3] + [len(r[k]) for r in cells]) for k, c in enumerate(columns)]

    def line(values: list[str]) -> str:
        parts = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric, strict=True)]
        return "| " + " | ".join(parts) + " |"

    rule = "| " + " | ".join(("-" * (w - 1) + ":") if num else (":" + "-" * (w - 1))
                             for w, num in zip(widths, numeric, strict=True)) + " |"
    return "\n".join([line(columns), rule, *(line(r) for r in cells)]) + "\n"


def export_table(table: pd.DataFrame, path: str | Path) -> Path:
    """Write ``table`` by the file's suffix: ``.csv``, ``.parquet`` (needs pyarrow) or ``.md``.

    The file is written whole to a temporary name and then renamed, so a failed export leaves
    an earlier file intact.

    Raises
    ------
    ValueError
        For another suffix.
    ImportError
        For ``.parquet`` when pyarrow is not installed (the message says how to get it).
    """
    from clusteropt.instances.base import write_text_atomic

    path = Path(path)
    suffix = path.suffix.lower()
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".csv":
        write_text_atomic(path, table.to_csv(index=False, lineterminator="\n"))
    elif suffix == ".md":
        write_text_atomic(path, markdown_table(table))
    elif suffix == ".parquet":
        if find_spec("pyarrow") is None:
            raise ImportError(
                f"cannot write {path}: Parquet export needs pyarrow, which is not installed here "
                "(pip install 'clusteropt[parquet]' or pip install pyarrow); CSV and Markdown need nothing"
            )
        tmp = path.with_name(f".{path.name}.tmp")
        try:
            table.to_parquet(tmp, index=False, engine="pyarrow")
            tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)
    else:
        raise ValueError(f"cannot export to {path}: suffix {path.suffix!r}; expected .csv, .parquet or .md")
    return path


def param_columns(table: pd.DataFrame) -> list[str]:
    """The parameter columns of a tidy table: those between ``code_version`` and ``seed``."""
    cols = list(table.columns)
    return cols[cols.index("code_version") + 1 : cols.index("seed")]


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Per (params, policy): cells by status, then ``<metric>_mean`` and ``<metric>_std`` over
    the seeds of the ``ok`` cells for every numeric metric.  Rows follow the table's order.
    """
    keys = [*param_columns(table), "policy"]
    metrics = [c for c in table.columns
               if c not in RESERVED_COLUMNS and c not in keys and pd.api.types.is_numeric_dtype(table[c])]
    groups = table.groupby(keys, sort=False, dropna=False)
    out = groups.size().rename("cells").to_frame()
    for status in ("ok", "failed", "timeout"):
        out[status] = groups["status"].apply(lambda s, st=status: int((s == st).sum()))
    ok = table[table.status == "ok"]
    if metrics and not ok.empty:
        stats = ok.groupby(keys, sort=False, dropna=False)[metrics].agg(["mean", "std"])
        stats.columns = [f"{m}_{agg}" for m, agg in stats.columns]
        out = out.join(stats)
    return out.reset_index()


class ReportError(RuntimeError):
    """Some tables or figures of a report failed (:func:`write_report`); ``written`` holds the
    paths that were written all the same.
    """

    def __init__(self, message: str, written: list[Path]):
        super().__init__(message)
        self.written = written


def write_report(spec: Experiment, table: pd.DataFrame, out: str | Path) -> list[Path]:
    """Write the report of ``spec`` from its results ``table`` into ``out``; the paths written.

    A figure or table function that fails is logged with its error and skipped, and the rest
    of the report is still written; the error is raised at the end (:class:`ReportError`, a
    ``RuntimeError`` naming every one that failed and holding the paths written).
    """
    out = Path(out)
    if table.empty:
        raise ValueError(f"no results for experiment {spec.name!r}; run it first (clusteropt experiment run)")
    written = [export_table(table, out / "results.csv")]
    summary = summarize(table)
    written += [export_table(summary, out / "summary.csv"), export_table(summary, out / "summary.md")]
    errors = []
    for name, make in spec.tables.items():
        try:
            frame = make(table)
            written += [export_table(frame, out / f"{name}.csv"), export_table(frame, out / f"{name}.md")]
        except Exception as exc:
            log.error("table %s of %s failed: %s: %s", name, spec.name, type(exc).__name__, exc)
            errors.append(f"table {name}: {type(exc).__name__}: {exc}")
    figures, figure_errors = _figures(spec, table, out)
    written += figures
    errors += figure_errors
    if errors:
        raise ReportError(f"report of {spec.name} written to {out} except: " + "; ".join(errors), written)
    return written


def _figures(spec: Experiment, table: pd.DataFrame, out: Path) -> tuple[list[Path], list[str]]:
    """Draw and save every figure of ``spec``: the paths written and the failures' messages."""
    from clusteropt.experiments.plots import save_figure

    written: list[Path] = []
    errors: list[str] = []
    for name, plot in spec.figures.items():
        try:
            fig = plot(table)
            written += save_figure(fig, out / name)
        except Exception as exc:
            log.error("figure %s of %s failed: %s: %s", name, spec.name, type(exc).__name__, exc)
            errors.append(f"figure {name}: {type(exc).__name__}: {exc}")
    return written, errors


def write_figures(spec: Experiment, table: pd.DataFrame, out: str | Path) -> list[Path]:
    """Draw the figures of ``spec`` from its results ``table`` into ``out`` (PNG and SVG each); the
    paths written.  Tables and ``results.csv`` are left alone.

    A figure that fails is logged and skipped and the rest are drawn; the failures are raised at
    the end as :class:`ReportError` (holding the paths written), as in :func:`write_report`.
    """
    out = Path(out)
    if table.empty:
        raise ValueError(f"no results for experiment {spec.name!r}; run it first (clusteropt experiment run)")
    written, errors = _figures(spec, table, out)
    if errors:
        raise ReportError(f"figures of {spec.name} written to {out} except: " + "; ".join(errors), written)
    return written


def read_results(path: str | Path) -> pd.DataFrame:
    """A recorded ``results.csv`` (:func:`write_report`'s first file) read back as the tidy table.

    Columns come back with the types :func:`pandas.read_csv` infers (numbers, booleans, text);
    empty cells are missing values.  The experiments' figure and table functions take the table so
    read as they take the store's: the tables a report writes from it equal the recorded ones
    (``tests/experiments/test_recorded_figures.py`` checks every recorded experiment).

    Raises
    ------
    ValueError
        If the file lacks the columns every results table has (``experiment``, ``code_version``,
        ``seed``, ``policy``, ``status``).
    """
    path = Path(path)
    table = pd.read_csv(path)
    missing = [c for c in ("experiment", "code_version", "seed", "policy", "status") if c not in table.columns]
    if missing:
        raise ValueError(f"{path}: not a results table (no column {', '.join(missing)}); "
                         f"columns: {', '.join(map(str, table.columns))}")
    return table


def remake_figures(root: str | Path, names: Sequence[str] = ()) -> list[Path]:
    """Draw again the figures of every experiment recorded under ``root`` (``root/NAME/results.csv``)
    from those files, into ``root/NAME``; the paths written.

    ``names`` limits it to those experiments (default: every registered experiment with a
    ``results.csv`` under ``root``).  Only PNG and SVG files are written, and in ``root/index.md``
    (when there is one) the line that says which code drew the figures (:func:`figures_note`):
    every ``results.csv``, table and number stays as recorded.  Figures that fail are raised at
    the end as one :class:`ReportError`, after the others are written.

    Raises
    ------
    ValueError
        If a named experiment is not registered or has no ``results.csv`` under ``root``.
    """
    import clusteropt.experiments  # noqa: F401  (registers every system's experiments)
    from clusteropt.experiments.spec import EXPERIMENTS, get_experiment

    root = Path(root)
    if names:
        specs = [get_experiment(name) for name in names]
    else:
        specs = [EXPERIMENTS[name] for name in sorted(EXPERIMENTS) if (root / name / "results.csv").is_file()]
    written: list[Path] = []
    errors: list[str] = []
    for spec in specs:
        csv = root / spec.name / "results.csv"
        if not csv.is_file():
            raise ValueError(f"experiment {spec.name!r} has no recorded results: no file {csv}")
        try:
            written += write_figures(spec, read_results(csv), root / spec.name)
        except ReportError as exc:
            written += exc.written
            errors.append(str(exc))
    if errors:
        raise ReportError("; ".join(errors), written)
    index = root / "index.md"
    if index.is_file():
        from clusteropt.experiments.spec import code_version
        from clusteropt.instances.base import write_text_atomic

        note = figures_note(code_version(), [spec.name for spec in specs] if names else None)
        lines = index.read_text().splitlines()
        for k in reversed([k for k, line in enumerate(lines) if line.startswith(_FIGURES_NOTE)]):
            del lines[k - 1 if k and not lines[k - 1] else k : k + 1]  # the note and the blank line before it
        at = next((k + 1 for k, line in enumerate(lines) if line.startswith("Code version")), 1)
        write_text_atomic(index, "\n".join([*lines[:at], "", note, *lines[at:]]) + "\n")
    return written


#: How the line of the index that names the figures' code version begins.
_FIGURES_NOTE = "Figures drawn again"


def figures_note(version: str, names: Sequence[str] | None = None) -> str:
    """The index line that says which code version (and matplotlib) drew the figures again.

    >>> figures_note("0.1.0+abc", ["ring-load"])[:75]
    'Figures drawn again from the recorded results.csv by code version 0.1.0+abc'
    """
    import matplotlib

    which = "" if names is None else f" (of {', '.join(names)})"
    return (f"{_FIGURES_NOTE} from the recorded results.csv by code version {version}, matplotlib "
            f"{matplotlib.__version__}{which}: the figures' styles and labels are that code's, every number "
            "in them and every table is the results' (`clusteropt.experiments.report.remake_figures`).")


def index_entry(spec: Experiment, table: pd.DataFrame, written: list[Path], out: str | Path) -> dict[str, Any]:
    """One experiment's line of the index (:func:`write_index`) from its results ``table`` (with
    timing columns, for the date) and the files :func:`write_report` wrote under ``out``.
    """
    status = table.status.value_counts() if not table.empty else pd.Series(dtype=int)
    versions = sorted(table.code_version.unique()) if not table.empty else []
    finished = table["finished_at"] if "finished_at" in table else pd.Series(dtype=str)
    libraries = sorted({str(v) for v in table.get("versions", pd.Series(dtype=str)).dropna()})
    commits = sorted({str(v) for v in table.get("git_commit", pd.Series(dtype=str)).dropna() if v})
    return {
        "experiment": spec.name,
        "paper": spec.paper,
        "variant": spec.variant,
        "code_version": ", ".join(versions),
        "libraries": libraries,
        "git_commit": ", ".join(commits),
        "seeds": sorted(int(s) for s in table.seed.unique()) if not table.empty else [],
        "trials": (sorted(int(t) for t in table.trial.unique())
                   if "trial" in table and not table.empty else []),
        "cells": len(table),
        "ok": int(status.get("ok", 0)),
        "failed": int(status.get("failed", 0)) + int(status.get("timeout", 0)),
        "finished": str(finished.max())[:19] if len(finished) else "",
        "files": [str(Path(p).relative_to(out)) for p in written if Path(p).suffix in (".md", ".png")
                  and Path(p).name not in ("summary.md",)],
    }


def _seed_text(seeds: list[int]) -> str:
    if not seeds:
        return ""
    if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 2:
        return f"{seeds[0]}..{seeds[-1]} ({len(seeds)})"
    return ", ".join(map(str, seeds))


def _replicates(entry: dict[str, Any]) -> str:
    """The seeds column: the harness seeds, and the trials where the experiment has them."""
    text = _seed_text(entry["seeds"])
    if entry.get("trials"):
        text += f"; trials {_seed_text(entry['trials'])}"
    return text


def write_index(entries: list[dict[str, Any]], out: str | Path, *, missing: Sequence[str] = (),
                errors: Sequence[str] = ()) -> Path:
    """``out/index.md``: every experiment reported under ``out`` with its paper, code version, seeds
    (and trials, the replicates of experiments whose instance is drawn per ``trial``), cell counts
    and date, each figure and table linked; ``missing`` lists registered experiments with no
    results in the store, ``errors`` the reports that were written only in part (the
    :class:`ReportError` messages).

    >>> import tempfile
    >>> e = {"experiment": "x", "paper": "000 Fig. 4", "variant": "full", "code_version": "0.1.0+abc",
    ...      "seeds": [0, 1, 2, 3, 4], "cells": 10, "ok": 10, "failed": 0, "finished": "2026-11-25T20:00:00",
    ...      "files": ["x/utility.md", "x/utility.png"]}
    >>> row = write_index([e], tempfile.mkdtemp()).read_text().splitlines()[8]
    >>> row.split(" | ")[:6]
    ['| [x](x/summary.md)', '000 Fig. 4', 'full', '0.1.0+abc', '0..4 (5)', '10 / 10']
    >>> row.split(" | ")[7]
    '[utility.md](x/utility.md), [utility.png](x/utility.png) |'
    """
    from clusteropt.instances.base import write_text_atomic

    versions = sorted({v for e in entries for v in e["code_version"].split(", ") if v})
    libraries: dict[str, list[str]] = {}
    for e in sorted(entries, key=lambda e: e["experiment"]):
        for text in e.get("libraries") or ["not recorded"]:
            libraries.setdefault(text or "not recorded", []).append(e["experiment"])
    commits = sorted({c for e in entries for c in str(e.get("git_commit") or "").split(", ") if c})
    lines = ["# Recorded experiment results", "",
             f"Code version{'s' if len(versions) != 1 else ''}: {', '.join(versions) or 'none'}"
             + (f" (git commit{'s' if len(commits) != 1 else ''} {', '.join(commits)})" if commits else "") + ".  "
             "Re-create with `clusteropt experiment run --all --store S` and "
             "`clusteropt experiment report --all --store S --out DIR`.", ""]
    if len(libraries) == 1:
        lines += [f"Library versions: {next(iter(libraries))}.", ""]
    else:
        lines += ["Library versions:", "", *(f"- {text}: {', '.join(names)}" for text, names in libraries.items()),
                  ""]
    lines += ["| experiment | paper | variant | code version | seeds (trials) | ok / cells | finished (UTC) "
              "| files |",
              "|---|---|---|---|---|---|---|---|"]
    for e in sorted(entries, key=lambda e: e["experiment"]):
        files = ", ".join(f"[{Path(f).name}]({f})" for f in e["files"])
        lines.append(f"| [{e['experiment']}]({e['experiment']}/summary.md) | {e['paper']} | {e['variant']} | "
                     f"{e['code_version']} | {_replicates(e)} | {e['ok']} / {e['cells']} | "
                     f"{e['finished']} | {files} |")
    if missing:
        lines += ["", f"No results in the store for: {', '.join(sorted(missing))}."]
    if errors:
        lines += ["", "Reports written only in part (the files listed above are those written):", "",
                  *(f"- {e}" for e in errors)]
    return write_text_atomic(Path(out) / "index.md", "\n".join(lines) + "\n")

