"""Figures from the tidy results table: lines with confidence bands, normalized bars, CDFs, ratios.

The input of every function here is the *tidy results table* an experiment produces: a pandas
DataFrame with one row per cell and the columns

``experiment``, ``code_version``
    which experiment and which version of the code ran the cell;
one column per experiment parameter
    (``n_jobs``, ``load``, ...; numbers or strings);
``seed``, ``cell_seed``
    the replicate and the seed the cell function received (equal across the policies of one
    parameter setting and replicate);
``policy``
    the policy / algorithm of the cell;
``status``
    ``"ok"``, ``"failed"`` or ``"timeout"``;
one column per metric
    (numbers or short strings; NaN where a failed cell has none);
``error``
    the error message of a failed cell.

Only rows with ``status == "ok"`` are plotted (a table without a ``status`` column is taken as all
ok).  Dropped rows are reported through the module's :mod:`logging` logger as a warning giving how
many rows of which status were left out, never silently.  A column named in an argument that the
table lacks, or a table with nothing left to plot, raises :class:`ValueError` naming what was
expected and listing the available columns.

Every function returns a :class:`matplotlib.figure.Figure` built directly (``Figure()``), not
through :mod:`matplotlib.pyplot`: nothing is registered in pyplot's global figure list, so
figures are garbage-collected like any object, need no ``plt.close`` and work with any backend.
Pass ``ax=`` to draw into an existing Axes instead; the function then returns that Axes' figure.
:func:`save_figure` writes a figure as PNG / SVG / PDF files that are byte-identical whenever
the same figure is saved again, in this process or another.

Examples
--------
>>> import pandas as pd
>>> table = pd.DataFrame({
...     "n_jobs": [4, 4, 8, 8] * 2,
...     "seed": [0, 1] * 4,
...     "policy": ["fifo"] * 4 + ["gadget"] * 4,
...     "status": "ok",
...     "makespan": [10.0, 12.0, 20.0, 22.0, 8.0, 9.0, 15.0, 16.0],
... })
>>> fig = line_plot(table, "n_jobs", "makespan")
>>> type(fig).__name__
'Figure'
>>> [line.get_ydata().tolist() for line in fig.axes[0].get_lines()]
[[11.0, 21.0], [8.5, 15.5]]
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from scipy import stats

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

__all__ = ["BANDS", "FIGURE_FORMATS", "HATCHES", "LINE_MARKERS", "LINE_STYLES", "MIN_BAND_VALUES", "POLICY_LABELS",
           "POLICY_STYLES", "PolicyStyle", "cdf_plot", "label_of", "line_plot", "line_style", "normalized_bars",
           "policy_of", "policy_style", "ratio_plot", "save_figure", "value_style"]

logger = logging.getLogger(__name__)

#: Formats :func:`save_figure` writes, with the savefig options that make each byte-stable:
#: no software version and no date in the file.
_SAVE_OPTIONS: dict[str, dict] = {
    "png": {"metadata": {"Software": None}},
    "svg": {"metadata": {"Date": None, "Creator": "clusteropt"}},
    "pdf": {"metadata": {"Creator": "clusteropt", "Producer": None, "CreationDate": None, "ModDate": None}},
}
#: Formats :func:`save_figure` accepts.
FIGURE_FORMATS = tuple(_SAVE_OPTIONS)
#: rcParams in force while saving: a fixed salt makes SVG element ids a function of the content
#: alone (the default salt is a fresh UUID per save), and text drawn as paths does not depend on
#: which fonts the viewer has.
_SAVE_RC: dict[RcKeyType, str] = {"svg.hashsalt": "clusteropt", "svg.fonttype": "path"}

#: Margin (inches) :func:`save_figure` keeps around everything drawn: the saved image grows or
#: shrinks to the bounding box of all the figure's text and artists, so no label is cut.
_PAD_INCHES = 0.05

_OK = "ok"
#: Columns that identify a cell apart from its parameters, used by :func:`ratio_plot` to pair rows.
_CELL_ID_COLUMNS = ("experiment", "code_version", "cell_seed")


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def _axes(ax: Axes | None) -> tuple[Figure, Axes]:
    """A new Figure with one Axes, or the root Figure of the given Axes and the Axes."""
    if ax is None:
        fig = Figure(layout="constrained")
        return fig, fig.add_subplot()
    root = ax.figure
    while not isinstance(root, Figure):  # a SubFigure: its .figure is the root Figure
        root = root.figure
    return root, ax


def _columns_list(table: pd.DataFrame) -> str:
    return ", ".join(str(c) for c in table.columns)


def _require_columns(table: pd.DataFrame, fn: str, columns: Iterable[tuple[str, str]]) -> None:
    """Raise ValueError naming every (role, column) the table lacks."""
    missing = [(role, col) for role, col in columns if col not in table.columns]
    if missing:
        named = "; ".join(f"{role} = {col!r}" for role, col in missing)
        raise ValueError(
            f"{fn}: {named}: no such column in the results table; available columns: {_columns_list(table)}"
        )


def _ordered(values: pd.Series) -> list:
    """Distinct values in a reproducible order: sorted, or by their text when types are mixed."""
    unique = list(pd.unique(values))
    try:
        return sorted(unique)
    except TypeError:
        return sorted(unique, key=str)


def _status_summary(statuses: pd.Series) -> str:
    counts = statuses.astype(str).value_counts(sort=False).sort_index()
    return ", ".join(f"{status}: {count}" for status, count in counts.items())


def _prepare(
    table: pd.DataFrame,
    fn: str,
    columns: Sequence[tuple[str, str]],
    *,
    numeric: Sequence[str],
    nonnull: Sequence[str],
) -> pd.DataFrame:
    """The rows to plot: status ok, the numeric columns as floats, no missing values in `nonnull`.

    Checks that the named columns exist, logs a warning for every group of dropped rows and raises
    ValueError when nothing is left.
    """
    if not isinstance(table, pd.DataFrame):
        raise TypeError(
            f"{fn}: table is a {type(table).__name__}; expected a pandas DataFrame (the results table)"
        )
    _require_columns(table, fn, columns)
    data = table
    if "status" in table.columns:
        ok = table["status"] == _OK
        if not ok.all():
            dropped = table.loc[~ok, "status"]
            logger.warning(
                "%s: dropped %d of %d rows whose status is not %r (%s)",
                fn, len(dropped), len(table), _OK, _status_summary(dropped),
            )
        data = table.loc[ok]
        if data.empty:
            what = f"the table has {len(table)} rows"
            if len(table):
                what += f" ({_status_summary(table['status'])})"
            raise ValueError(
                f"{fn}: no rows with status {_OK!r} to plot; {what}; available columns: {_columns_list(table)}"
            )
    elif data.empty:
        raise ValueError(f"{fn}: the results table has no rows; available columns: {_columns_list(table)}")
    data = data.copy()
    for col in dict.fromkeys(numeric):
        raw = data[col]
        converted = pd.to_numeric(raw, errors="coerce")
        bad = converted.isna() & raw.notna()
        if bad.any():
            example = _plain(raw[bad].iloc[0])
            raise ValueError(f"{fn}: column {col!r} holds non-numeric values (e.g. {example!r}); expected numbers")
        data[col] = converted.astype(float)
    nonnull = list(dict.fromkeys(nonnull))
    missing = data[nonnull].isna().any(axis=1)
    if missing.any():
        logger.warning(
            "%s: dropped %d rows with status %r but no value in column(s) %s",
            fn, int(missing.sum()), _OK, ", ".join(repr(c) for c in nonnull if data[c].isna().any()),
        )
        data = data.loc[~missing]
        if data.empty:
            raise ValueError(
                f"{fn}: no row with status {_OK!r} has a value in all of {nonnull}; nothing to plot"
            )
    return data


def _x_positions(data: pd.DataFrame, x: str, fn: str, logx: bool) -> tuple[pd.Series, list | None]:
    """Numeric x values, or positions 0..k-1 plus tick labels when the x column holds text."""
    try:
        return pd.to_numeric(data[x]).astype(float), None
    except (ValueError, TypeError):
        pass
    if logx:
        raise ValueError(f"{fn}: logx=True but column {x!r} holds non-numeric values; expected numbers")
    categories = _ordered(data[x])
    positions = data[x].map({value: i for i, value in enumerate(categories)}).astype(float)
    return positions, categories


def _check_ci(ci: float | None, fn: str) -> None:
    if ci is not None and not 0.0 < ci < 1.0:
        raise ValueError(f"{fn}: ci = {ci!r}; expected a confidence level in (0, 1) or None")


def _t_halfwidth(std: np.ndarray, n: np.ndarray, ci: float) -> np.ndarray:
    """Half-width of the Student-t interval of a mean; NaN where fewer than two values."""
    std, n = np.asarray(std, dtype=float), np.asarray(n, dtype=float)
    half = np.full(n.shape, np.nan)
    enough = n >= 2
    half[enough] = stats.t.ppf((1.0 + ci) / 2.0, n[enough] - 1) * std[enough] / np.sqrt(n[enough])
    return half


#: Readable names of the policies' code names, used in legends (``label_of``).  An experiment's
#: own mapping (``labels=``) takes precedence; a value named in neither is shown as it is.  The ring
#: policies' names say the load they may put on a server (``c k`` with their resource augmentation
#: ``c``, paper 004 Sec. 2; ``ε`` is their ``epsilon``): the optima they are compared with keep every
#: server at its capacity ``k``.
POLICY_LABELS: dict[str, str] = {
    "gadget": "GADGET (greedy slots)",
    "gadget-exact": "GADGET (exact slot ILP)",
    "gadget-nofill": "GADGET, paper: no fill",
    "gadget-lp-rs-mde": "GADGET (LP-RS-MDE slots)",
    "gadget-lp-rs-mde-paper": "LP-RS-MDE, paper rounding",
    "lp-rs-mde-alone": "LP-RS-MDE rounding alone (no fill)",
    "lp-rs-mde-greedy": "greedy at LP-RS-MDE's states",
    "fifo": "FIFO", "drf": "DRF", "las": "LAS",
    "mlbroker": "mlBroker", "mlbroker-paper": "mlBroker (paper-literal)", "mlbroker-plus": "mlBroker-plus",
    "local": "Local",
    "central": "Central", "oasis": "OASiS", "opt": "Opt (P_f)", "a_round": "A_round", "ir": "IR", "gr": "GR",
    "slot-milp": "A_round or slot MILP (mlBroker-plus)",
    "max-weight": "Alg. 1 (max-weight)", "sqrt-greedy": "Alg. 2 (sqrt-greedy)",
    "weight-greedy": "weight-greedy", "random": "random",
    "dynamic": "dynamic (Thm 2.1), load ≤ (2+ε)k",
    "dynamic-soft": "dynamic, smooth-min, load ≤ (2+ε)k",
    "dynamic-wfa": "dynamic, deterministic WFA, load ≤ (2+ε)k",
    "dynamic-mix": "dynamic, HST + WFA combined (ours), load ≤ (2+ε)k",
    "follow": "follow dynamic-mix / greedy / never (ours), load ≤ (2+ε)k",
    "component": "component-based (Avin et al.), load ≤ (2+ε)k",
    "static": "static (Thm 2.2), load ≤ (1+ε+cluster_cap)k",
    "greedy": "greedy, load ≤ (1+ε)k", "never": "never move, load ≤ k",
    "static-best": "best static (offline), load ≤ k",
    "ilp": "ILP", "lp-floor": "LP, floor rounding",
}


class PolicyStyle(NamedTuple):
    """How one policy is drawn: a matplotlib colour, marker and line style."""

    color: str
    marker: str
    linestyle: str

    def kwargs(self) -> dict[str, str]:
        """The style as keyword arguments of ``Axes.plot``."""
        return {"color": self.color, "marker": self.marker, "linestyle": self.linestyle}


#: The style of every policy, optimum and bound that any experiment plots, by code name: one
#: (colour, marker) pair per policy across the package, so that a policy looks the same in every
#: panel and figure.  Within one system the colours differ (bars show colour and hatch only, see
#: :data:`HATCHES`); the coflow policies are ``ordering+allocation``, the colour naming the
#: ordering and the marker and line style the allocation.  Black and grey are left to the
#: reference lines the figures draw themselves (exact regions, promised bounds, the line at 1).
#: Values of a column that are not policies (parameter values such as data sizes) are drawn by
#: :func:`value_style` in sequential colours instead.
POLICY_STYLES: dict[str, PolicyStyle] = {
    # 000 GADGET
    "gadget": PolicyStyle("tab:blue", "s", "-"),
    "gadget-lp-rs-mde": PolicyStyle("tab:orange", "o", "--"),
    "gadget-nofill": PolicyStyle("tab:green", "v", "-."),
    "gadget-lp-rs-mde-paper": PolicyStyle("tab:red", "^", ":"),
    "gadget-exact": PolicyStyle("tab:purple", "*", "-"),
    "fifo": PolicyStyle("tab:brown", "P", "--"),
    "drf": PolicyStyle("tab:pink", "X", "-."),
    "las": PolicyStyle("tab:olive", "D", ":"),
    # 000 the slot figure's parts of LP-RS-MDE (its rounding alone; greedy at the states it chose)
    "lp-rs-mde-alone": PolicyStyle("tab:cyan", "<", "--"),
    "lp-rs-mde-greedy": PolicyStyle("tab:olive", ">", "-."),
    # 000 worker placement (one slot)
    "ilp": PolicyStyle("tab:cyan", "o", "-"),
    "lp-floor": PolicyStyle("tab:purple", "s", "--"),
    # 002 real-time jobs (the order of the region figures' own cycle: blue circles, orange squares, ...)
    "max-weight": PolicyStyle("tab:blue", "o", "-"),
    "sqrt-greedy": PolicyStyle("tab:orange", "s", "--"),
    "weight-greedy": PolicyStyle("tab:green", "^", "-."),
    "random": PolicyStyle("tab:red", "D", ":"),
    # 003 mlBroker: the integral algorithms and the fractional optimum
    "mlbroker": PolicyStyle("tab:blue", "D", "-"),
    "mlbroker-paper": PolicyStyle("tab:orange", "v", "--"),
    "mlbroker-plus": PolicyStyle("tab:green", "s", "-."),
    "local": PolicyStyle("tab:brown", "o", ":"),
    "central": PolicyStyle("tab:pink", "^", "-"),
    "oasis": PolicyStyle("tab:olive", "P", "--"),
    "opt": PolicyStyle("tab:red", "*", ":"),
    # 003 roundings
    "a_round": PolicyStyle("tab:purple", "o", "-"),
    "ir": PolicyStyle("tab:brown", "s", "--"),
    "gr": PolicyStyle("tab:pink", "D", "-."),
    "slot-milp": PolicyStyle("tab:green", "P", ":"),
    # 003 A_fractional's epsilon
    "eps-0.05": PolicyStyle("tab:blue", "v", "-"),
    "eps-0.1": PolicyStyle("tab:orange", "^", "--"),
    "eps-0.5": PolicyStyle("tab:green", "D", "-."),
    "eps-1": PolicyStyle("tab:red", "s", ":"),
    # 004 ring partitioning: the online algorithms and the offline baselines
    "dynamic": PolicyStyle("tab:blue", "P", "-"),
    "dynamic-soft": PolicyStyle("tab:orange", "X", "--"),
    "dynamic-wfa": PolicyStyle("tab:green", "*", "-."),
    "dynamic-mix": PolicyStyle("tab:cyan", "v", ":"),
    "follow": PolicyStyle("tab:olive", "h", "--"),
    "component": PolicyStyle("goldenrod", "d", "-."),
    "static": PolicyStyle("tab:red", "o", "-"),
    "greedy": PolicyStyle("tab:purple", "^", "--"),
    "never": PolicyStyle("tab:brown", "D", "-."),
    "static-best": PolicyStyle("tab:pink", "s", ":"),
}
#: 001 coflow: the colour of each ordering and the marker and line style of each allocation.
_COFLOW_ORDERINGS = {"primal-dual": "tab:blue", "sincronia": "tab:orange", "sebf": "tab:green",
                     "lp-order": "tab:red", "fifo": "tab:purple", "smallest-first": "tab:brown",
                     "largest-first": "tab:pink"}
_COFLOW_ALLOCATIONS = {"greedy": ("h", "-"), "paper": ("p", "--"), "madd": ("d", "-."), "online": ("H", ":")}
POLICY_STYLES.update({f"{ordering}+{allocation}": PolicyStyle(color, marker, linestyle)
                      for ordering, color in _COFLOW_ORDERINGS.items()
                      for allocation, (marker, linestyle) in _COFLOW_ALLOCATIONS.items()})
#: The hatch of a bar by the line style of its policy, so that bars of one colour stay apart.
HATCHES = {"-": "", "--": "//", "-.": "..", ":": "xx"}

#: Markers and line styles cycled through lines that are not policies (:func:`value_style`).
LINE_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
LINE_STYLES = ("-", "--", "-.", ":")
#: Fewest values at an x position for :func:`line_plot` to draw a spread band there.
MIN_BAND_VALUES = 5
#: What :func:`line_plot` draws as the band.
BANDS = ("ci", "range")


def label_of(value, labels: dict | None = None) -> str:
    """The legend name of a value: ``labels``, then :data:`POLICY_LABELS`, then the value itself.

    >>> label_of("max-weight"), label_of("eps-0.1"), label_of("fifo", {"fifo": "first come"})
    ('Alg. 1 (max-weight)', 'eps-0.1', 'first come')
    """
    text = f"{value}"
    if labels and text in labels:
        return str(labels[text])
    return POLICY_LABELS.get(text, text)


def policy_of(value, labels: dict | None = None) -> str | None:
    """The code name of a policy given by its code name or its legend name, or None.

    A figure may draw its lines by code name (``policy``) or by a readable name (``labels``, or
    :data:`POLICY_LABELS`); either finds the policy's entry in :data:`POLICY_STYLES`.

    >>> policy_of("mlbroker"), policy_of("Opt (P_f)"), policy_of("first come", {"fifo": "first come"})
    ('mlbroker', 'opt', 'fifo')
    >>> policy_of("700 GB") is None
    True
    """
    text = f"{value}"
    if text in POLICY_STYLES:
        return text
    for names in (labels or {}, POLICY_LABELS):
        for name, label in names.items():
            if str(label) == text and name in POLICY_STYLES:
                return name
    return None


def policy_style(value, labels: dict | None = None) -> dict[str, str] | None:
    """Colour, marker and line style of a policy (:data:`POLICY_STYLES`), as ``Axes.plot`` keywords.

    `value` is the policy's code name or legend name (:func:`policy_of`); None when it names no
    policy.

    >>> policy_style("Opt (P_f)")
    {'color': 'tab:red', 'marker': '*', 'linestyle': ':'}
    """
    name = policy_of(value, labels)
    return None if name is None else POLICY_STYLES[name].kwargs()


def line_style(k: int) -> dict:
    """Marker and line style of the k-th line of an Axes (:data:`LINE_MARKERS`, :data:`LINE_STYLES`).

    >>> line_style(0), line_style(5)
    ({'marker': 'o', 'linestyle': '-'}, {'marker': 'P', 'linestyle': '--'})
    """
    return {"marker": LINE_MARKERS[k % len(LINE_MARKERS)], "linestyle": LINE_STYLES[k % len(LINE_STYLES)]}


def value_style(k: int, count: int) -> dict[str, Any]:
    """Style of the k-th of `count` lines that are not policies (e.g. one per data size).

    Colours run through the sequential colormap ``viridis`` in the values' order, apart from the
    categorical colours of :data:`POLICY_STYLES`; markers and line styles cycle as :func:`line_style`.

    >>> style = value_style(0, 3)
    >>> style["marker"], style["linestyle"], len(style["color"])
    ('o', '-', 4)
    """
    fraction = 0.0 if count <= 1 else 0.85 * k / (count - 1)
    return {"color": tuple(float(c) for c in colormaps["viridis"](fraction)), **line_style(k)}


def _hue_styles(values: Sequence, labels: dict | None, start: int = 0) -> list[dict[str, Any]]:
    """A style per value: a policy's own (:func:`policy_style`), else :func:`value_style` counted
    over the values that name no policy, after the `start` lines already on the Axes.
    """
    styles: list[dict[str, Any] | None] = [policy_style(value, labels) for value in values]
    others = [k for k, style in enumerate(styles) if style is None]
    for j, k in enumerate(others):
        styles[k] = value_style(start + j, start + len(others))
    return [style for style in styles if style is not None]


def _mean_line(ax: Axes, frame: pd.DataFrame, value: str, ci: float | None, label: str, *, style: dict,
               band: str | None = "ci", min_band: int = MIN_BAND_VALUES) -> bool:
    """Mean of `value` at each `_x` position, drawn in `style` (colour, marker, line style), and a
    band where at least `min_band` values support it; True when a band was drawn.
    """
    summary = frame.groupby("_x", sort=True)[value].agg(["mean", "std", "count", "min", "max"])
    xs = summary.index.to_numpy(dtype=float)
    means = summary["mean"].to_numpy()
    (line,) = ax.plot(xs, means, label=label, markersize=5, **style)
    if band is None or (band == "ci" and ci is None):
        return False
    enough = summary["count"].to_numpy() >= max(int(min_band), 2)
    if band == "ci":
        assert ci is not None  # returned above otherwise
        half = _t_halfwidth(summary["std"].to_numpy(), summary["count"].to_numpy(), ci)
        low, high = means - half, means + half
    else:
        low, high = summary["min"].to_numpy(), summary["max"].to_numpy()
    shown = enough & np.isfinite(low) & np.isfinite(high)
    if not shown.any():
        return False
    ax.fill_between(xs, np.where(shown, low, np.nan), np.where(shown, high, np.nan), color=line.get_color(),
                    alpha=0.15, linewidth=0)
    return True


def _band_note(band: str | None, ci: float | None, min_band: int) -> str:
    if band == "range":
        return f"band: min-max of the runs (where >= {min_band})"
    assert ci is not None  # a t-interval band is drawn only with a confidence level
    return f"band: {100 * ci:g}% t-interval of the mean (where >= {min_band} runs)"


def _finish(ax: Axes, *, title: str | None, xlabel: str | None, ylabel: str | None) -> None:
    if title is not None:
        ax.set_title(title)
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)


def _set_categories(ax: Axes, categories: list | None) -> None:
    if categories is not None:
        ax.set_xticks(range(len(categories)), [f"{value}" for value in categories])


# --------------------------------------------------------------------------------------------
# plots
# --------------------------------------------------------------------------------------------


def line_plot(
    table: pd.DataFrame,
    x: str,
    y: str,
    *,
    hue: str | None = "policy",
    ci: float | None = 0.95,
    ax: Axes | None = None,
    logx: bool = False,
    logy: bool = False,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    band: str | None = "ci",
    min_band: int = MIN_BAND_VALUES,
    labels: dict | None = None,
) -> Figure:
    """Mean of a metric against a parameter, one line per policy, with a spread band.

    At each value of `x` the line passes through the mean of `y` over all rows there (the seeds,
    and any other parameter values not on the plot).  A `hue` value that names a policy (by code
    name or legend name) is drawn in that policy's colour, marker and line style
    (:data:`POLICY_STYLES`), the same in every figure; other values get sequential colours
    (:func:`value_style`).  Lines differ in colour, marker and line style, so lines that coincide
    stay visible, and are named by :func:`label_of`.
    The shaded band is, for ``band="ci"``, the Student-t interval of that mean,
    ``t.ppf((1 + ci) / 2, n - 1) * std(ddof=1) / sqrt(n)``, or for ``band="range"`` the smallest
    to the largest value; it is drawn only at points with at least `min_band` rows (fewer seeds do
    not support a spread), and the legend title says what it is.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy results table (see the module docstring); only rows with status ``"ok"`` are used.
    x : str
        Column on the horizontal axis (a parameter).  Text values are placed evenly in sorted order.
    y : str
        Numeric column averaged on the vertical axis (a metric).
    hue : str or None, default "policy"
        Column whose values get one line each; None draws a single line over all rows.
    ci : float or None, default 0.95
        Confidence level of the ``"ci"`` band; None draws no band.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; by default a new Figure with one Axes is made.
    logx, logy : bool, default False
        Logarithmic axes.
    title, xlabel, ylabel : str, optional
        Axes title and labels; the labels default to the column names.
    band : {"ci", "range"} or None, default "ci"
        What the shaded band shows (above); None draws none.
    min_band : int, default :data:`MIN_BAND_VALUES`
        Fewest rows at a point for its band to be drawn (at least 2).
    labels : dict, optional
        Legend names of `hue` values, before :data:`POLICY_LABELS`.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or the figure holding `ax`.

    Raises
    ------
    ValueError
        If a named column is missing, no row has status ``"ok"`` and values in `x`, `y` and `hue`,
        `y` is not numeric, `ci` is not in (0, 1), `band` is not one of :data:`BANDS` or None, or
        `min_band` is below 2.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"load": [0.5, 0.5, 0.9, 0.9], "seed": [0, 1, 0, 1],
    ...                       "policy": "fifo", "status": "ok", "delay": [1.0, 3.0, 5.0, 7.0]})
    >>> fig = line_plot(table, "load", "delay", ci=None)
    >>> fig.axes[0].get_lines()[0].get_ydata().tolist()
    [2.0, 6.0]
    """
    fn = "line_plot"
    _check_ci(ci, fn)
    if band is not None and band not in BANDS:
        raise ValueError(f"{fn}: band = {band!r}; expected one of {', '.join(BANDS)} or None")
    if isinstance(min_band, bool) or not isinstance(min_band, int | np.integer) or min_band < 2:
        raise ValueError(f"{fn}: min_band = {min_band!r}; expected an integer >= 2")
    columns = [("x", x), ("y", y)] + ([("hue", hue)] if hue is not None else [])
    keys = [x] + ([hue] if hue is not None else [])
    data = _prepare(table, fn, columns, numeric=[y], nonnull=[*keys, y])
    data["_x"], categories = _x_positions(data, x, fn, logx)
    fig, ax = _axes(ax)
    start = len(ax.get_lines())  # lines already on a shared Axes keep their styles
    if hue is None:
        banded = _mean_line(ax, data, y, ci, label=y, style=value_style(start, start + 1), band=band,
                            min_band=min_band)
    else:
        banded = False
        values = _ordered(data[hue])
        for value, style in zip(values, _hue_styles(values, labels, start), strict=True):
            banded |= _mean_line(ax, data.loc[data[hue] == value], y, ci, label=label_of(value, labels),
                                 style=style, band=band, min_band=min_band)
    if hue is not None or banded:
        legend_title = hue if hue is not None else None
        if banded:
            note = _band_note(band, ci, min_band)
            legend_title = note if legend_title is None else f"{legend_title}; {note}"
        ax.legend(title=legend_title, fontsize="small", title_fontsize="small")
    _set_categories(ax, categories)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    _finish(ax, title=title, xlabel=x if xlabel is None else xlabel, ylabel=y if ylabel is None else ylabel)
    return fig


def normalized_bars(
    table: pd.DataFrame,
    y: str,
    *,
    baseline: str,
    by: str = "policy",
    group: str | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    ylabel: str | None = None,
) -> Figure:
    """Grouped bars of each policy's mean metric divided by the baseline policy's mean.

    Within each cluster (one per value of `group`, or a single cluster), the bar of a `by` value is
    ``mean(y of that value) / mean(y of the baseline)`` over the cluster's rows, so the baseline's
    bars are exactly 1; a dashed line marks 1.  A `by` value with no rows in a cluster gets no bar
    there.  No error bars are drawn.  A policy's bars have its colour (:data:`POLICY_STYLES`) and
    the hatch of its line style (:data:`HATCHES`).  Without `group` the bars are named below the
    axis, slanted when their names would not fit side by side.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy results table (see the module docstring); only rows with status ``"ok"`` are used.
    y : str
        Numeric column to average (a metric).
    baseline : str
        The value of `by` everything is divided by (e.g. ``"fifo"``).
    by : str, default "policy"
        Column whose values get one bar each per cluster.
    group : str, optional
        Column whose values make the clusters of bars (e.g. a parameter); by default one cluster.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; by default a new Figure with one Axes is made.
    title, ylabel : str, optional
        Axes title and y label (default ``"<y> relative to <baseline>"``).

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or the figure holding `ax`.

    Raises
    ------
    ValueError
        If a named column is missing, no row has status ``"ok"``, `y` is not numeric, the baseline
        has no rows (in the table, or in one cluster, which is named) or its mean there is 0.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"policy": ["fifo", "fifo", "gadget", "gadget"], "seed": [0, 1, 0, 1],
    ...                       "status": "ok", "makespan": [10.0, 30.0, 10.0, 10.0]})
    >>> fig = normalized_bars(table, "makespan", baseline="fifo")
    >>> [float(bar.get_height()) for bar in fig.axes[0].patches]
    [1.0, 0.5]
    """
    fn = "normalized_bars"
    columns = [("y", y), ("by", by)] + ([("group", group)] if group is not None else [])
    keys = [by] + ([group] if group is not None else [])
    data = _prepare(table, fn, columns, numeric=[y], nonnull=[*keys, y])
    members = _ordered(data[by])
    if baseline not in members:
        raise ValueError(
            f"{fn}: baseline = {baseline!r} not found in column {by!r} among rows with status {_OK!r}; "
            f"values present: {', '.join(f'{m}' for m in members)}"
        )
    clusters = _ordered(data[group]) if group is not None else [None]
    heights = {member: [np.nan] * len(clusters) for member in members}
    for i, cluster in enumerate(clusters):
        rows = data if group is None else data.loc[data[group] == cluster]
        means = rows.groupby(by, sort=True)[y].mean()
        where = "" if group is None else f" in group {group} = {_plain(cluster)!r}"
        if baseline not in means.index:
            raise ValueError(
                f"{fn}: baseline = {baseline!r} has no rows with status {_OK!r}{where}; "
                f"{by} values there: {', '.join(f'{m}' for m in _ordered(rows[by]))}"
            )
        base = means[baseline]
        if base == 0 or not np.isfinite(base):
            raise ValueError(
                f"{fn}: mean {y} of baseline {baseline!r} is {_plain(base)!r}{where}; cannot divide by it"
            )
        for member, mean in means.items():
            heights[member][i] = float(mean / base)
    fig, ax = _axes(ax)
    width = 0.8 / len(members)
    centers = []
    for j, (member, style) in enumerate(zip(members, _hue_styles(members, None), strict=True)):
        offset = (j - (len(members) - 1) / 2) * width
        shown = [i for i, h in enumerate(heights[member]) if np.isfinite(h)]
        positions = [i + offset for i in shown]
        ax.bar(positions, [heights[member][i] for i in shown], width, label=f"{member}", color=style["color"],
               hatch=HATCHES.get(str(style["linestyle"]), ""), edgecolor="white", linewidth=0.5)
        centers.append(offset)
    ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8)
    if group is None:
        names = [f"{member}" for member in members]
        slanted = sum(map(len, names)) > 40  # more text than fits under the bars side by side
        ax.set_xticks(centers, names, rotation=30 if slanted else 0, ha="right" if slanted else "center",
                      rotation_mode="anchor")
        ax.set_xlabel(by)
    else:
        ax.set_xticks(range(len(clusters)), [f"{cluster}" for cluster in clusters])
        ax.set_xlabel(group)
        ax.legend(title=by)
    _finish(ax, title=title, xlabel=None, ylabel=f"{y} relative to {baseline}" if ylabel is None else ylabel)
    return fig


def cdf_plot(
    table: pd.DataFrame,
    y: str,
    *,
    hue: str | None = "policy",
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str | None = None,
) -> Figure:
    """Empirical cumulative distribution of a metric, one step line per policy.

    The line of a `hue` value with ``n`` rows starts at 0 at its smallest value and rises by
    ``1 / n`` at every value (``where="post"`` steps), reaching 1 at its largest.  A policy's line
    has its style (:data:`POLICY_STYLES`), with a marker on about every eighth step.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy results table (see the module docstring); only rows with status ``"ok"`` are used.
    y : str
        Numeric column whose distribution is drawn (a metric).
    hue : str or None, default "policy"
        Column whose values get one line each; None draws a single line over all rows.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; by default a new Figure with one Axes is made.
    title, xlabel : str, optional
        Axes title and x label (default: `y`).

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or the figure holding `ax`.

    Raises
    ------
    ValueError
        If a named column is missing, no row has status ``"ok"`` and a value in `y`, or `y` is not
        numeric.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"policy": "fifo", "status": "ok", "delay": [3.0, 1.0, 2.0, 4.0]})
    >>> line = cdf_plot(table, "delay").axes[0].get_lines()[0]
    >>> line.get_xdata().tolist(), line.get_ydata().tolist()
    ([1.0, 1.0, 2.0, 3.0, 4.0], [0.0, 0.25, 0.5, 0.75, 1.0])
    """
    fn = "cdf_plot"
    columns = [("y", y)] + ([("hue", hue)] if hue is not None else [])
    data = _prepare(table, fn, columns, numeric=[y], nonnull=[y] + ([hue] if hue is not None else []))
    fig, ax = _axes(ax)
    start = len(ax.get_lines())
    if hue is None:
        parts, styles = [(y, data)], [value_style(start, start + 1)]
    else:
        members = _ordered(data[hue])
        parts = [(f"{v}", data.loc[data[hue] == v]) for v in members]
        styles = _hue_styles(members, None, start)
    for (label, part), style in zip(parts, styles, strict=True):
        values = np.sort(part[y].to_numpy())
        fractions = np.arange(1, len(values) + 1) / len(values)
        xs, ys = np.r_[values[0], values], np.r_[0.0, fractions]
        ax.step(xs, ys, where="post", label=label, markersize=4, markevery=max(1, len(xs) // 8), **style)
    if hue is not None:
        ax.legend(title=hue)
    ax.set_ylim(-0.02, 1.02)
    _finish(ax, title=title, xlabel=y if xlabel is None else xlabel, ylabel="fraction of runs")
    return fig


def _plain(value):
    """A numpy scalar as the Python scalar it holds, so messages read ``8``, not ``np.int64(8)``."""
    return value.item() if isinstance(value, np.generic) else value


def _describe_key(key: dict, x: str, shown: Sequence[str]) -> str:
    return ", ".join(f"{col} = {_plain(key[col])!r}" for col in dict.fromkeys([x, "seed", *shown]))


def _status_of(table: pd.DataFrame, key: dict, by: str, member: str) -> str:
    """Why a row is missing from the ok rows: the status of a matching row in the full table."""
    mask = table[by] == member
    for col, value in key.items():
        mask &= table[col] == value
    if not mask.any():
        return "there is no such row"
    if "status" in table.columns:
        statuses = sorted({f"{s}" for s in table.loc[mask, "status"]})
        if statuses != [_OK]:
            return f"its row has status {', '.join(repr(s) for s in statuses)}"
    return "its row has no value"


def ratio_plot(
    table: pd.DataFrame,
    x: str,
    y: str,
    *,
    numerator: str | Sequence[str],
    denominator: str,
    by: str = "policy",
    ci: float | None = 0.95,
    ax: Axes | None = None,
    title: str | None = None,
    ylabel: str | None = None,
    logx: bool = False,
    on: Sequence[str] | None = None,
) -> Figure:
    """Paired ratio of a metric between two policies against a parameter, mean with a t-band.

    Every row of the numerator policy is paired with the row of the denominator policy of the same
    cell (same parameters and seed), giving one ratio ``y[numerator] / y[denominator]`` per cell;
    the line passes through the mean ratio at each `x` and the band is the Student-t interval of
    that mean over the ratios there (normally one per seed), drawn only where at least
    :data:`MIN_BAND_VALUES` ratios support it.
    A dashed line marks 1.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy results table (see the module docstring); only rows with status ``"ok"`` are used.
    x : str
        Column on the horizontal axis (a parameter).
    y : str
        Numeric column whose ratio is taken (a metric).
    numerator : str or sequence of str
        Value(s) of `by` on top of the ratio; one line each.
    denominator : str
        Value of `by` below the ratio.
    by : str, default "policy"
        Column holding the policies.
    ci : float or None, default 0.95
        Confidence level of the band; None draws no band.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; by default a new Figure with one Axes is made.
    title, ylabel : str, optional
        Axes title and y label (default ``"<y> relative to <denominator>"``).
    logx : bool, default False
        Logarithmic x axis.
    on : sequence of str, optional
        Columns that identify a cell apart from its policy, used to pair rows.  By default `x`,
        ``"seed"`` and whichever of ``"experiment"``, ``"code_version"`` and ``"cell_seed"`` the
        table has: ``cell_seed`` is derived from all parameters and the replicate seed and is the
        same for every policy, so it stands in for the parameter columns.  Pass the parameter
        columns explicitly for a table without it.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or the figure holding `ax`.

    Raises
    ------
    ValueError
        If a named column is missing, no row has status ``"ok"``, `y` is not numeric, a policy has
        no rows, two rows of one policy share a pairing key, a row has no partner (the message
        names the `x` value and seed), a denominator is 0, or `ci` is not in (0, 1).

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"n_jobs": [4, 4, 4, 4], "seed": [0, 0, 1, 1],
    ...                       "policy": ["fifo", "gadget"] * 2, "status": "ok",
    ...                       "makespan": [10.0, 5.0, 10.0, 7.0]})
    >>> fig = ratio_plot(table, "n_jobs", "makespan", numerator="gadget", denominator="fifo")
    >>> fig.axes[0].get_lines()[0].get_ydata().tolist()
    [0.6]
    """
    fn = "ratio_plot"
    _check_ci(ci, fn)
    numerators = [numerator] if isinstance(numerator, str) else list(numerator)
    if not numerators:
        raise ValueError(f"{fn}: numerator is empty; expected a {by} value or a list of them")
    if on is None:
        keys = list(dict.fromkeys([x, "seed", *(c for c in _CELL_ID_COLUMNS if c in table.columns)]))
        shown: list[str] = []
    else:
        keys = list(dict.fromkeys([x, "seed", *on]))
        shown = [c for c in keys if c not in _CELL_ID_COLUMNS]
    columns = [("x", x), ("y", y), ("by", by)] + [("on", c) for c in keys if c != x]
    data = _prepare(table, fn, columns, numeric=[y], nonnull=[x, by, y])
    present = _ordered(data[by])
    for role, member in [("numerator", m) for m in numerators] + [("denominator", denominator)]:
        if member not in present:
            raise ValueError(
                f"{fn}: {role} = {_plain(member)!r} has no rows with status {_OK!r} in column {by!r}; "
                f"values present: {', '.join(f'{m}' for m in present)}"
            )
    involved = data.loc[data[by].isin([*numerators, denominator])]
    duplicated = involved.duplicated(subset=[*keys, by], keep=False)
    if duplicated.any():
        first = involved.loc[duplicated].iloc[0]
        at = ", ".join(f"{c} = {_plain(first[c])!r}" for c in keys)
        raise ValueError(
            f"{fn}: {int(duplicated.sum())} rows share a pairing key, e.g. {by} = {_plain(first[by])!r} at {at}; "
            "pass on=[...] naming the parameter columns that tell the cells apart"
        )
    data["_x"], categories = _x_positions(data, x, fn, logx)
    below = data.loc[data[by] == denominator, [*keys, "_x", y]]
    fig, ax = _axes(ax)
    start, banded = len(ax.get_lines()), False
    for k, member in enumerate(numerators):
        above = data.loc[data[by] == member, [*keys, y]]
        paired = above.merge(below, on=keys, how="outer", suffixes=("_num", "_den"), indicator=True)
        unpaired = paired.loc[paired["_merge"] != "both"]
        if not unpaired.empty:
            row = unpaired.iloc[0]
            lacking = denominator if row["_merge"] == "left_only" else member
            key = {c: row[c] for c in keys}
            raise ValueError(
                f"{fn}: no row of {by} = {lacking!r} with status {_OK!r} to pair with at "
                f"{_describe_key(key, x, shown)} ({_status_of(table, key, by, lacking)}); "
                f"{len(unpaired)} pairing(s) missing for {member!r} / {denominator!r}, pairing on {keys}"
            )
        zero = paired[f"{y}_den"] == 0
        if zero.any():
            key = {c: paired.loc[zero, c].iloc[0] for c in keys}
            raise ValueError(
                f"{fn}: {y} of denominator {denominator!r} is 0 at {_describe_key(key, x, shown)}; "
                "cannot divide by it"
            )
        paired["_ratio"] = paired[f"{y}_num"] / paired[f"{y}_den"]
        style = policy_style(member) or value_style(start + k, start + len(numerators))
        banded |= _mean_line(ax, paired, "_ratio", ci, label=f"{label_of(member)} / {label_of(denominator)}",
                             style=style)
    ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8)
    _set_categories(ax, categories)
    if logx:
        ax.set_xscale("log")
    ax.legend(title=_band_note("ci", ci, MIN_BAND_VALUES) if banded else None, fontsize="small",
              title_fontsize="small")
    _finish(ax, title=title, xlabel=x, ylabel=f"{y} relative to {denominator}" if ylabel is None else ylabel)
    return fig


# --------------------------------------------------------------------------------------------
# saving
# --------------------------------------------------------------------------------------------


def save_figure(
    fig: Figure,
    path: str | os.PathLike,
    *,
    formats: Sequence[str] = ("png", "svg"),
    dpi: int = 150,
) -> list[Path]:
    """Write a figure in one or more formats, byte-identically every time.

    The image is cut to the bounding box of everything the figure draws plus a small margin
    (``bbox_inches="tight"``), so a label that a layout pushes past the figure's edge is still in
    the file.  The files carry no date and no software version, SVG element ids are derived from
    the content with a fixed salt and text is drawn as paths, so saving the same figure again (in
    this process or another, with the same matplotlib and fonts) gives the same bytes.  Each file is written to
    a temporary file in the target directory and then renamed over the target, so a reader never
    sees a half-written file.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, e.g. from :func:`line_plot`.
    path : str or os.PathLike
        Stem of the files: ``results/fig4`` writes ``results/fig4.png`` and ``results/fig4.svg``.
        A suffix naming one of the formats (``results/fig4.png``) is replaced; any other suffix is
        kept as part of the stem (``load0.5`` gives ``load0.5.png``).  Missing directories are made.
    formats : sequence of str, default ("png", "svg")
        Any of ``"png"``, ``"svg"``, ``"pdf"``.
    dpi : int, default 150
        Resolution of raster output.

    Returns
    -------
    list of pathlib.Path
        The files written, in the order of `formats`.

    Raises
    ------
    ValueError
        If a format is unknown or `formats` is empty.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> table = pd.DataFrame({"policy": "fifo", "status": "ok", "delay": [3.0, 1.0, 2.0]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     paths = save_figure(cdf_plot(table, "delay"), Path(tmp) / "delay_cdf", formats=["svg"])
    ...     [p.name for p in paths]
    ['delay_cdf.svg']
    """
    if isinstance(formats, str):
        formats = [formats]
    wanted = list(dict.fromkeys(str(f).lower().lstrip(".") for f in formats))
    unknown = [f for f in wanted if f not in _SAVE_OPTIONS]
    if unknown or not wanted:
        raise ValueError(
            f"save_figure: formats = {list(formats)!r}; unknown format(s) {unknown or 'none given'}; "
            f"allowed: {', '.join(FIGURE_FORMATS)}"
        )
    stem = Path(path)
    if stem.suffix.lower().lstrip(".") in _SAVE_OPTIONS:
        stem = stem.with_suffix("")
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    with matplotlib.rc_context(_SAVE_RC):
        for fmt in wanted:
            target = stem.with_name(f"{stem.name}.{fmt}")
            tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
            try:
                with open(tmp, "xb") as fh:
                    fig.savefig(fh, format=fmt, dpi=dpi, bbox_inches="tight", pad_inches=_PAD_INCHES,
                                **_SAVE_OPTIONS[fmt])
                os.replace(tmp, target)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
            logger.debug("save_figure: wrote %s", target)
            written.append(target)
    return written
