"""One style per policy in every figure: the mapping in plots.py, the plotting functions that use it,
the recorded figures drawn again from their results.csv, the ring legends' capacities and the
saved file's bounding box.
"""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from PIL import Image

import clusteropt.experiments  # noqa: F401  (registers every experiment)
from clusteropt.experiments.plots import (
    HATCHES,
    POLICY_LABELS,
    POLICY_STYLES,
    cdf_plot,
    label_of,
    line_plot,
    normalized_bars,
    policy_of,
    policy_style,
    ratio_plot,
    save_figure,
)
from clusteropt.experiments.report import ReportError, export_table, read_results, remake_figures, write_figures
from clusteropt.experiments.spec import EXPERIMENTS

RECORDED = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "experiments"
RECORDED_NAMES = sorted(name for name in EXPERIMENTS if (RECORDED / name / "results.csv").is_file())


def pair(name):
    """A policy's (colour as RGBA, marker), the pair no other policy may have."""
    style = POLICY_STYLES[name]
    return to_rgba(style.color), style.marker


def assert_line_style(line, name):
    style = POLICY_STYLES[name]
    where = f"line {line.get_label()!r} ({name})"
    assert to_rgba(line.get_color()) == to_rgba(style.color), where
    assert line.get_marker() == style.marker, where
    assert line.get_linestyle() == style.linestyle, where


def labelled_lines(fig):
    return [line for ax in fig.axes for line in ax.get_lines() if not line.get_label().startswith("_")]


def policy_of_line(label):
    """The policy a line draws: its label, the numerator of a ratio line ``A / B``, or the label
    without a last remark in parentheses (``primal-dual+greedy (offline)``)."""
    label = label.split(" / ")[0]
    return policy_of(label) or policy_of(re.sub(r" \([^()]*\)$", "", label))


# --------------------------------------------------------------------------------------------
# the mapping
# --------------------------------------------------------------------------------------------


#: The package's experiments (other test modules register test-only ones with made-up policies).
PACKAGE_EXPERIMENTS = sorted(n for n, e in EXPERIMENTS.items() if e.run.__module__.startswith("clusteropt."))


@pytest.mark.parametrize("name", PACKAGE_EXPERIMENTS)
def test_every_registered_policy_has_a_style(name):
    missing = [p for p in EXPERIMENTS[name].policies if p not in POLICY_STYLES]
    assert not missing, f"{name}: no style for {missing}"


def test_no_two_policies_share_colour_and_marker():
    seen: dict = {}
    for name in POLICY_STYLES:
        seen.setdefault(pair(name), []).append(name)
    shared = {k: v for k, v in seen.items() if len(v) > 1}
    assert not shared, shared


def test_styles_are_valid_and_leave_black_and_grey_to_reference_lines():
    from matplotlib.lines import Line2D

    reserved = {to_rgba(c) for c in ("black", "grey", "gray", "tab:gray")}
    for name, style in POLICY_STYLES.items():
        assert to_rgba(style.color) not in reserved, name
        assert style.marker in Line2D.markers, name
        assert style.linestyle in HATCHES, name


def test_legend_names_lead_back_to_one_policy():
    labels = list(POLICY_LABELS.values())
    assert len(labels) == len(set(labels))
    for name, label in POLICY_LABELS.items():
        if name in POLICY_STYLES:
            assert policy_of(label) == name and policy_of(name) == name
    assert policy_of("700 GB") is None and policy_style("700 GB") is None
    assert policy_of("first come", {"fifo": "first come"}) == "fifo"


# --------------------------------------------------------------------------------------------
# the plotting functions use it
# --------------------------------------------------------------------------------------------


def table_of(policies, xs=(1, 2, 3), seeds=(0, 1)):
    rows = [{"x": x, "seed": s, "cell_seed": 10 * x + s, "policy": p, "status": "ok",
             "y": float(1 + k + x + 0.1 * s)}
            for k, p in enumerate(policies) for x in xs for s in seeds]
    return pd.DataFrame(rows)


def test_a_policy_keeps_its_style_whatever_else_is_on_the_axes():
    """The fig. 8 case: the same policies with and without the optimum in two panels."""
    everything = ["mlbroker", "central", "local", "opt"]
    fig = Figure()
    left, right = fig.subplots(1, 2)
    line_plot(table_of(everything), "x", "y", ax=left, ci=None)
    line_plot(table_of(everything[:-1]), "x", "y", ax=right, ci=None)
    for ax in (left, right):
        lines = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
        assert len(lines) == len(everything) - (ax is right)
        for line in lines:
            assert_line_style(line, policy_of(line.get_label()))


def test_line_plot_styles_hue_values_given_by_legend_name():
    table = table_of(["mlbroker", "opt"]).assign(algorithm=lambda t: t.policy.map(label_of))
    fig = line_plot(table, "x", "y", hue="algorithm", ci=None)
    names = {line.get_label(): line for line in labelled_lines(fig)}
    assert set(names) == {"mlBroker", "Opt (P_f)"}
    assert_line_style(names["mlBroker"], "mlbroker")
    assert_line_style(names["Opt (P_f)"], "opt")


def test_values_that_are_no_policy_get_sequential_colours_apart_from_the_policies():
    table = table_of(["100 GB", "300 GB", "700 GB"])
    lines = labelled_lines(line_plot(table, "x", "y", ci=None))
    colours = [to_rgba(line.get_color()) for line in lines]
    assert len(set(colours)) == 3
    assert not set(colours) & {to_rgba(s.color) for s in POLICY_STYLES.values()}


def test_ratio_cdf_and_bars_use_the_mapped_style():
    table = table_of(["dynamic", "static", "never"])
    fig = ratio_plot(table, "x", "y", numerator=["dynamic", "static"], denominator="never", ci=None)
    lines = labelled_lines(fig)
    assert len(lines) == 2
    for line in lines:
        assert_line_style(line, policy_of_line(line.get_label()))
    for line in labelled_lines(cdf_plot(table, "y")):
        assert_line_style(line, line.get_label())
    coflow = table_of(["primal-dual+greedy", "primal-dual+paper", "sincronia+greedy"])
    bars = normalized_bars(coflow, "y", baseline="primal-dual+greedy").axes[0].patches
    assert len(bars) == 3
    for bar, name in zip(bars, ["primal-dual+greedy", "primal-dual+paper", "sincronia+greedy"], strict=True):
        style = POLICY_STYLES[name]
        assert to_rgba(bar.get_facecolor()) == to_rgba(style.color)
        assert (bar.get_hatch() or "") == HATCHES[style.linestyle]
    # the two primal-dual bars share a colour and differ in hatch
    assert bars[0].get_hatch() != bars[1].get_hatch()


# --------------------------------------------------------------------------------------------
# the recorded figures, drawn again from their results.csv
# --------------------------------------------------------------------------------------------


#: Recorded experiments whose figures draw no policy (lines per data size, per generation, bars per
#: cost part).
NO_POLICY_DRAWN = ("broker-rounding", "realtime-fig5", "ring-cost-split")
#: Figures drawn by the experiment's own code in styles of its own, not yet from POLICY_STYLES.
#: Experiments whose figures keep styles of their own, and why (none today).
OWN_STYLES: dict[str, str] = {}


def _recorded(names):
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=OWN_STYLES[n])) if n in OWN_STYLES else n
            for n in names]


@pytest.mark.parametrize("name", _recorded([n for n in RECORDED_NAMES if EXPERIMENTS[n].figures]))
def test_recorded_figures_draw_every_policy_in_its_style(name):
    table = read_results(RECORDED / name / "results.csv")
    checked = 0
    for plot in EXPERIMENTS[name].figures.values():
        fig = plot(table)
        for line in labelled_lines(fig):
            policy = policy_of_line(line.get_label())
            if policy is not None:
                assert_line_style(line, policy)
                checked += 1
        for ax in fig.axes:
            for bars in ax.containers:
                policy = policy_of(bars.get_label())
                if policy is not None:
                    for bar in bars:
                        assert to_rgba(bar.get_facecolor()) == to_rgba(POLICY_STYLES[policy].color), policy
                    checked += 1
    assert checked or name in NO_POLICY_DRAWN, f"{name}: no line or bar names a policy"


#: Figures titled "vs n" that show a single n.
#: Experiments allowed a "vs n" title over one n, and why (none today).
ONE_N: dict[str, str] = {}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=ONE_N[n]))
                                  if n in ONE_N else n for n in RECORDED_NAMES if EXPERIMENTS[n].figures])
def test_a_figure_titled_vs_n_shows_several_n(name):
    table = read_results(RECORDED / name / "results.csv")
    for figure, plot in EXPERIMENTS[name].figures.items():
        fig = plot(table)
        titles = [fig.get_suptitle(), *(ax.get_title() for ax in fig.axes)]
        if any(re.search(r"\bvs n\b", t, re.IGNORECASE) for t in titles):
            xs = {float(x) for line in labelled_lines(fig) for x in np.atleast_1d(line.get_xdata())}
            assert len(xs) > 1, f"{name}/{figure}: titled vs n, drawn at n = {sorted(xs)}"


@pytest.mark.parametrize("name", RECORDED_NAMES)
def test_a_report_can_be_made_from_results_csv_alone(name, tmp_path):
    """The file reads back to the same table: written again it is the same bytes, and every
    table the experiment declares comes out as recorded (to 1e-12: a fitted 0 may be 1e-17)."""
    csv = RECORDED / name / "results.csv"
    table = read_results(csv)
    assert export_table(table, tmp_path / "results.csv").read_bytes() == csv.read_bytes()
    for tname, make in EXPERIMENTS[name].tables.items():
        again = pd.read_csv(export_table(make(table), tmp_path / f"{tname}.csv"))
        recorded = pd.read_csv(RECORDED / name / f"{tname}.csv")
        pd.testing.assert_frame_equal(again, recorded, check_exact=False, rtol=1e-12, atol=1e-12)


def test_write_figures_and_remake_touch_only_figures(tmp_path):
    name = "realtime-fig4"
    (tmp_path / name).mkdir()
    (tmp_path / name / "results.csv").write_bytes((RECORDED / name / "results.csv").read_bytes())
    index = ["# Recorded experiment results", "", "Code version: 0.1.0+abc.  Re-create with ...", "", "| table |"]
    _write(tmp_path / "index.md", "\n".join(index) + "\n")
    written = remake_figures(tmp_path)
    assert sorted(p.name for p in written) == ["regions.png", "regions.svg"]
    assert sorted(p.name for p in (tmp_path / name).iterdir()) == ["regions.png", "regions.svg", "results.csv"]
    for _ in range(2):  # the index gains one line saying which code drew the figures, once
        lines = (tmp_path / "index.md").read_text().splitlines()
        (note,) = [line for line in lines if line.startswith("Figures drawn again")]
        assert lines == [*index[:3], "", note, *index[3:]]
        assert "by code version 0.1.0+" in note and "matplotlib" in note
        remake_figures(tmp_path, [name])
    assert "(of realtime-fig4)" in (tmp_path / "index.md").read_text()
    again = write_figures(EXPERIMENTS[name], read_results(tmp_path / name / "results.csv"), tmp_path / "b")
    assert [p.read_bytes() for p in again] == [p.read_bytes() for p in written]
    with pytest.raises(ValueError, match="no recorded results"):
        remake_figures(tmp_path, ["realtime-fig3"])
    with pytest.raises(ValueError, match="not a results table"):
        read_results(_write(tmp_path / "x.csv", "a,b\n1,2\n"))
    broken = read_results(tmp_path / name / "results.csv").drop(columns=["r1"])
    with pytest.raises(ReportError, match="figure regions"):
        write_figures(EXPERIMENTS[name], broken, tmp_path / "c")


def _write(path, text):
    path.write_text(text)
    return path


# --------------------------------------------------------------------------------------------
# ring: theorems and capacities in the legends
# --------------------------------------------------------------------------------------------


def test_ring_legends_name_the_theorems_of_paper_004():
    # Sec. 2: Theorem 2.1 compares with the optimal dynamic algorithm, Theorem 2.2 with the static one
    assert "Thm 2.1" in POLICY_LABELS["dynamic"] and "Thm 2.2" in POLICY_LABELS["static"]
    assert not any("Thm" in label for name, label in POLICY_LABELS.items() if name not in ("dynamic", "static"))


#: The load factors the ring legends write, as functions of (epsilon, cluster_cap).
LOAD_FACTORS = {"(2+ε)": lambda eps, cap: 2 + eps, "(1+ε+cluster_cap)": lambda eps, cap: 1 + eps + cap,
                "(1+ε)": lambda eps, cap: 1 + eps, "": lambda eps, cap: 1.0}


@pytest.mark.parametrize("name", ["dynamic", "dynamic-soft", "dynamic-wfa", "dynamic-mix", "static", "greedy",
                                  "never", "static-best"])
def test_ring_legends_say_the_load_each_run_may_use(name):
    """The factor in the legend ("load ≤ (2+ε)k") is the run's own augmentation c."""
    from clusteropt.instances import random_ring
    from clusteropt.online.ring import run_ring

    match = re.search(r"load ≤ (.*)k$", POLICY_LABELS[name])
    assert match, POLICY_LABELS[name]
    factor = LOAD_FACTORS[match.group(1).strip()]
    inst = random_ring(24, 3, 40, "uniform", seed=0)
    for eps, cap in ((0.5, 1.0), (1.0, 2.0)):
        params = {}
        if name != "never" and name != "static-best":
            params["epsilon"] = eps
        if name == "static":
            params["cluster_cap"] = cap
        run = run_ring(name, inst, seed=0, **params)
        assert run.augmentation == pytest.approx(factor(eps, cap)), (name, match.group(1), eps, cap)


# --------------------------------------------------------------------------------------------
# no label cut at the figure's edge
# --------------------------------------------------------------------------------------------


def test_saved_figure_holds_a_label_past_the_edge(tmp_path):
    fig = Figure(figsize=(4.0, 3.0))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1])
    fig.text(0.5, -0.25, "a label below the figure's edge", ha="center")
    (png,) = save_figure(fig, tmp_path / "edge", formats=["png"], dpi=100)
    height = Image.open(png).size[1]
    assert height > 3.0 * 100 * 1.15  # grown to hold the text a quarter height below the edge
    assert np.asarray(Image.open(png).convert("L"))[-20:].min() < 128  # and the text is drawn there


def test_bar_names_do_not_overlap():
    """Slanted names are parallel strips: apart when the bars' spacing times sin(angle) exceeds a
    line of text; upright names are apart when their boxes are."""
    import itertools
    import math

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    for names in (["a", "b", "c"], [f"{o}+greedy" for o in ("primal-dual", "sincronia", "sebf", "lp-order", "fifo",
                                                             "smallest-first", "largest-first")]):
        fig = normalized_bars(table_of(names), "y", baseline=names[0])
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        renderer = canvas.get_renderer()
        labels = fig.axes[0].get_xticklabels()
        assert [t.get_text() for t in labels] == sorted(names)
        angle = math.radians(labels[0].get_rotation())
        if angle == 0:
            boxes = [t.get_window_extent(renderer) for t in labels]
            assert not any(a.overlaps(b) for k, a in enumerate(boxes) for b in boxes[k + 1:])
            continue
        height = max(renderer.get_text_width_height_descent(t.get_text(), t.get_fontproperties(), ismath=False)[1]
                     for t in labels)  # a line of text, upright
        anchors = sorted(fig.axes[0].transData.transform((float(x), 0.0))[0] for x in fig.axes[0].get_xticks())
        spacing = min(b - a for a, b in itertools.pairwise(anchors))
        assert spacing * math.sin(angle) > height, (spacing, angle, height)
