"""Reports: an experiment's tables (CSV and Markdown) and figures (PNG and SVG) from its results.

``write_report(spec, table, out)`` writes into ``out/``:

- ``results.csv``: the tidy table (one row per cell);
- ``summary.csv`` / ``summary.md``: per (params, policy) the counts by status and the mean and
  standard deviation over seeds of every numeric metric of the ``ok`` cells;
- one CSV + Markdown pair per table the spec declares, one PNG + SVG pair per figure.

Every file is written through a temporary name and a rename, and the figures carry no date,
so a second report of the same results gives byte-identical files.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

import pandas as pd

from clusteropt.experiments.spec import RESERVED_COLUMNS, Experiment

__all__ = ["markdown_table", "ok_rows", "summarize", "write_report"]

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


def write_report(spec: Experiment, table: pd.DataFrame, out: str | Path) -> list[Path]:
    """Write the report of ``spec`` from its results ``table`` into ``out``; the paths written.

    A figure or table function that fails is logged with its error and skipped, and the rest
    of the report is still written; the error is raised at the end (``RuntimeError`` naming
    every one that failed).
    """
    from clusteropt.experiments.plots import save_figure
    from clusteropt.experiments.store import export_table

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
    for name, plot in spec.figures.items():
        try:
            fig = plot(table)
            written += save_figure(fig, out / name)
        except Exception as exc:
            log.error("figure %s of %s failed: %s: %s", name, spec.name, type(exc).__name__, exc)
            errors.append(f"figure {name}: {type(exc).__name__}: {exc}")
    if errors:
        raise RuntimeError(f"report of {spec.name} written to {out} except: " + "; ".join(errors))
    return written
