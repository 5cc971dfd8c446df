import json
import logging
import os
import runpy
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from scipy import stats

from clusteropt.experiments.plots import (
    LINE_MARKERS,
    cdf_plot,
    label_of,
    line_plot,
    line_style,
    normalized_bars,
    ratio_plot,
    save_figure,
)

LOGGER = "clusteropt.experiments.plots"
POLICIES = ("fifo", "gadget", "las")


def make_table(seed=7):
    """A tidy results table: n_jobs x load x 4 seeds x 3 policies, all ok."""
    rng = np.random.default_rng(seed)
    rows = []
    for n_jobs in (4, 8, 16):
        for load in (0.5, 0.9):
            for s in range(4):
                for k, policy in enumerate(POLICIES):
                    rows.append({
                        "experiment": "demo-fig1",
                        "code_version": "abc123",
                        "n_jobs": n_jobs,
                        "load": load,
                        "seed": s,
                        "cell_seed": 1000 * n_jobs + int(10 * load) * 10 + s,
                        "policy": policy,
                        "status": "ok",
                        "makespan": float(n_jobs * (1.0 + 0.3 * k) * (1 + load) + rng.uniform(0, 3)),
                        "solver": "highs",
                        "error": "",
                    })
    return pd.DataFrame(rows)


def with_failures(table):
    """Mark some 'las' rows failed / timed out, with absurd values that would distort any mean using them."""
    table = table.copy()
    idx = table.index[table["policy"] == "las"][:3]
    table.loc[idx[:2], "status"] = "failed"
    table.loc[idx[2:], "status"] = "timeout"
    table.loc[idx, "makespan"] = 1e9
    table.loc[idx, "error"] = "boom"
    return table


def lines_by_label(fig, ax_index=0):
    """The Axes' labelled lines by code name: legends show readable names (label_of), mapped back here."""
    names = {label_of(p): p for p in POLICIES}
    ax = fig.axes[ax_index]
    return {" / ".join(names.get(part, part) for part in line.get_label().split(" / ")): line
            for line in ax.get_lines() if not line.get_label().startswith("_")}


# --------------------------------------------------------------------------------------------
# line_plot
# --------------------------------------------------------------------------------------------


def test_line_plot_plots_means_per_x():
    table = make_table()
    fig = line_plot(table, "n_jobs", "makespan")
    assert isinstance(fig, Figure)
    lines = lines_by_label(fig)
    assert sorted(lines) == list(POLICIES)
    for policy in POLICIES:
        expected = table[table.policy == policy].groupby("n_jobs")["makespan"].mean()
        np.testing.assert_array_equal(lines[policy].get_xdata(), expected.index.to_numpy(dtype=float))
        np.testing.assert_allclose(lines[policy].get_ydata(), expected.to_numpy(), rtol=1e-12)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "n_jobs" and ax.get_ylabel() == "makespan"


def test_line_plot_band_is_t_interval():
    table = make_table()
    fig = line_plot(table, "n_jobs", "makespan", ci=0.9)
    ax = fig.axes[0]
    assert len(ax.collections) == len(POLICIES)
    # bands are drawn in policy order; look at gadget's band at n_jobs = 8
    vertices = ax.collections[POLICIES.index("gadget")].get_paths()[0].vertices
    values = table[(table.policy == "gadget") & (table.n_jobs == 8)]["makespan"].to_numpy()
    n = len(values)
    assert n == 8  # 2 loads x 4 seeds
    half = stats.t.ppf(0.95, n - 1) * values.std(ddof=1) / np.sqrt(n)
    at8 = np.sort(vertices[np.isclose(vertices[:, 0], 8.0)][:, 1])
    np.testing.assert_allclose([at8.min(), at8.max()], [values.mean() - half, values.mean() + half], rtol=1e-12)


def test_line_plot_no_band_where_single_row_or_ci_none():
    table = pd.DataFrame({
        "x": [1, 1, 2, 2, 3], "policy": "a", "status": "ok", "y": [1.0, 3.0, 2.0, 6.0, 5.0],
    })
    ax = line_plot(table, "x", "y", min_band=2).axes[0]
    xs = np.unique(ax.collections[0].get_paths()[0].vertices[:, 0])
    assert 3.0 not in xs and {1.0, 2.0} <= set(xs)
    assert len(line_plot(table, "x", "y", ci=None).axes[0].collections) == 0
    # the default asks for MIN_BAND_VALUES (5) rows at a point: two seeds draw no band, and say none
    ax = line_plot(table, "x", "y").axes[0]
    assert len(ax.collections) == 0 and ax.get_legend().get_title().get_text() == "policy"


def test_line_plot_band_only_where_enough_runs_and_labelled():
    table = pd.DataFrame({"x": [1] * 5 + [2] * 4, "policy": "a", "status": "ok",
                          "y": [1.0, 2.0, 3.0, 4.0, 10.0, 5.0, 6.0, 7.0, 8.0]})
    ax = line_plot(table, "x", "y", band="range").axes[0]
    vertices = ax.collections[0].get_paths()[0].vertices
    assert set(np.unique(vertices[:, 0])) == {1.0}  # 4 runs at x = 2 are too few
    np.testing.assert_allclose(sorted(set(vertices[:, 1])), [1.0, 10.0])  # min and max, never below the data
    assert "min-max" in ax.get_legend().get_title().get_text()
    ax = line_plot(table, "x", "y").axes[0]
    assert "95% t-interval" in ax.get_legend().get_title().get_text()
    with pytest.raises(ValueError, match="band = 'sd'"):
        line_plot(table, "x", "y", band="sd")
    with pytest.raises(ValueError, match="min_band = 1"):
        line_plot(table, "x", "y", min_band=1)


def test_line_plot_lines_differ_in_marker_and_style_and_use_readable_names():
    fig = line_plot(make_table(), "n_jobs", "makespan")
    lines = fig.axes[0].get_lines()
    assert len({(line.get_marker(), line.get_linestyle()) for line in lines}) == len(POLICIES)
    assert [line.get_label() for line in lines] == ["FIFO", "GADGET (greedy slots)", "LAS"]
    assert line_style(len(LINE_MARKERS))["marker"] == LINE_MARKERS[0]
    fig = line_plot(make_table(), "n_jobs", "makespan", labels={"las": "least attained service"})
    assert "least attained service" in [line.get_label() for line in fig.axes[0].get_lines()]


def test_line_plot_drops_failed_rows_with_warning(caplog):
    table = with_failures(make_table())
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        fig = line_plot(table, "n_jobs", "makespan")
    messages = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert any("dropped 3 of" in m and "failed: 2" in m and "timeout: 1" in m for m in messages), messages
    ok = table[table.status == "ok"]
    expected = ok[ok.policy == "las"].groupby("n_jobs")["makespan"].mean()
    np.testing.assert_allclose(lines_by_label(fig)["las"].get_ydata(), expected.to_numpy(), rtol=1e-12)
    assert max(lines_by_label(fig)["las"].get_ydata()) < 1e3


def test_line_plot_all_failed_and_bad_values():
    table = make_table()
    table["status"] = "failed"
    with pytest.raises(ValueError, match="no rows with status 'ok'"):
        line_plot(table, "n_jobs", "makespan")
    with pytest.raises(ValueError, match="'solver' holds non-numeric"):
        line_plot(make_table(), "n_jobs", "solver")
    with pytest.raises(ValueError, match=r"ci = 1\.5"):
        line_plot(make_table(), "n_jobs", "makespan", ci=1.5)


def test_line_plot_text_x_and_existing_axes():
    table = pd.DataFrame({"size": ["small", "large", "small", "large"], "policy": "a", "status": "ok",
                          "y": [1.0, 10.0, 3.0, 20.0]})
    fig = Figure()
    axes = fig.subplots(1, 2)
    assert line_plot(table, "size", "y", ax=axes[1]) is fig
    line = axes[1].get_lines()[0]
    assert line.get_ydata().tolist() == [15.0, 2.0]  # sorted categories: large, small
    assert [t.get_text() for t in axes[1].get_xticklabels()] == ["large", "small"]
    assert axes[0].get_lines() == []


# --------------------------------------------------------------------------------------------
# errors naming columns
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "column"),
    [
        (lambda t: line_plot(t, "n_jobs", "latency"), "latency"),
        (lambda t: line_plot(t, "jobs", "makespan"), "jobs"),
        (lambda t: line_plot(t, "n_jobs", "makespan", hue="algo"), "algo"),
        (lambda t: normalized_bars(t, "makespan", baseline="fifo", group="size"), "size"),
        (lambda t: normalized_bars(t, "latency", baseline="fifo"), "latency"),
        (lambda t: cdf_plot(t, "latency"), "latency"),
        (lambda t: ratio_plot(t, "n_jobs", "makespan", numerator="gadget", denominator="fifo", by="algo"), "algo"),
        (lambda t: ratio_plot(t, "n_jobs", "makespan", numerator="gadget", denominator="fifo", on=["size"]),
         "size"),
    ],
)
def test_missing_column_is_named(call, column):
    with pytest.raises(ValueError, match=f"'{column}': no such column") as err:
        call(make_table())
    assert "available columns: experiment, code_version, n_jobs" in str(err.value)


# --------------------------------------------------------------------------------------------
# normalized_bars
# --------------------------------------------------------------------------------------------


def bar_heights(fig):
    return {c.get_label(): [float(p.get_height()) for p in c.patches] for c in fig.axes[0].containers}


def test_normalized_bars_grouped():
    table = make_table()
    fig = normalized_bars(table, "makespan", baseline="fifo", group="n_jobs")
    heights = bar_heights(fig)
    assert heights["fifo"] == [1.0, 1.0, 1.0]
    means = table.groupby(["n_jobs", "policy"])["makespan"].mean().unstack()
    np.testing.assert_allclose(heights["gadget"], (means["gadget"] / means["fifo"]).to_numpy(), rtol=1e-12)
    # all bars are in ax.patches too, policy by policy
    assert len(fig.axes[0].patches) == 9
    assert [float(p.get_height()) for p in fig.axes[0].patches[:3]] == [1.0, 1.0, 1.0]
    reference = [line for line in fig.axes[0].get_lines() if line.get_label().startswith("_")]  # not in legend
    assert len(reference) == 1 and set(reference[0].get_ydata()) == {1.0} and reference[0].get_linestyle() == "--"
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["4", "8", "16"]


def test_normalized_bars_single_cluster():
    table = make_table()
    heights = [float(p.get_height()) for p in normalized_bars(table, "makespan", baseline="las").axes[0].patches]
    means = table.groupby("policy")["makespan"].mean()
    np.testing.assert_allclose(heights, (means / means["las"]).to_numpy(), rtol=1e-12)
    assert heights[POLICIES.index("las")] == 1.0


def test_normalized_bars_baseline_errors():
    table = make_table()
    with pytest.raises(ValueError, match=r"baseline = 'sebf' not found in column 'policy'.*fifo, gadget, las"):
        normalized_bars(table, "makespan", baseline="sebf")
    table.loc[(table.policy == "fifo") & (table.n_jobs == 8), "status"] = "failed"
    with pytest.raises(ValueError, match=r"'fifo' has no rows .* in group n_jobs = 8;"):
        normalized_bars(table, "makespan", baseline="fifo", group="n_jobs")
    table = make_table()
    table.loc[(table.policy == "fifo") & (table.n_jobs == 16), "makespan"] = 0.0
    with pytest.raises(ValueError, match=r"baseline 'fifo' is 0\.0 in group n_jobs = 16;"):
        normalized_bars(table, "makespan", baseline="fifo", group="n_jobs")


# --------------------------------------------------------------------------------------------
# cdf_plot
# --------------------------------------------------------------------------------------------


def test_cdf_plot_steps_to_one():
    table = with_failures(make_table())
    lines = lines_by_label(cdf_plot(table, "makespan"))
    ok = table[table.status == "ok"]
    for policy in POLICIES:
        xs, ys = lines[policy].get_xdata(), lines[policy].get_ydata()
        assert ys[-1] == 1.0 and ys[0] == 0.0
        assert np.all(np.diff(xs) >= 0) and np.all(np.diff(ys) > 0)
        np.testing.assert_array_equal(xs[1:], np.sort(ok[ok.policy == policy]["makespan"].to_numpy()))
        assert lines[policy].get_drawstyle() == "steps-post"


# --------------------------------------------------------------------------------------------
# ratio_plot
# --------------------------------------------------------------------------------------------


def paired_ratios(table, numerator, denominator):
    wide = table.pivot_table(index=["n_jobs", "load", "seed"], columns="policy", values="makespan")
    return (wide[numerator] / wide[denominator]).rename("ratio").reset_index()


def test_ratio_plot_means_of_paired_ratios():
    table = make_table().sample(frac=1.0, random_state=3)  # row order must not matter
    fig = ratio_plot(table, "n_jobs", "makespan", numerator=["gadget", "las"], denominator="fifo", ci=0.95)
    lines = lines_by_label(fig)
    assert set(lines) == {"gadget / fifo", "las / fifo"}
    for numerator in ("gadget", "las"):
        ratios = paired_ratios(table, numerator, "fifo")
        expected = ratios.groupby("n_jobs")["ratio"].mean()
        np.testing.assert_array_equal(lines[f"{numerator} / fifo"].get_xdata(), [4.0, 8.0, 16.0])
        np.testing.assert_allclose(lines[f"{numerator} / fifo"].get_ydata(), expected.to_numpy(), rtol=1e-12)
    # band of gadget / fifo at n_jobs = 16
    values = paired_ratios(table, "gadget", "fifo").query("n_jobs == 16")["ratio"].to_numpy()
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    vertices = fig.axes[0].collections[0].get_paths()[0].vertices
    at16 = vertices[np.isclose(vertices[:, 0], 16.0)][:, 1]
    np.testing.assert_allclose([at16.min(), at16.max()], [values.mean() - half, values.mean() + half], rtol=1e-12)
    reference = [line for line in fig.axes[0].get_lines() if line.get_label().startswith("_")]  # not in legend
    assert len(reference) == 1 and set(reference[0].get_ydata()) == {1.0} and reference[0].get_linestyle() == "--"


def test_ratio_plot_missing_pair_names_x_and_seed():
    table = make_table()
    table.loc[(table.policy == "fifo") & (table.n_jobs == 8) & (table.seed == 2) & (table.load == 0.9),
              "status"] = "failed"
    with pytest.raises(ValueError, match=r"'fifo'.* at n_jobs = 8, seed = 2 \(its row has status 'failed'\)"):
        ratio_plot(table, "n_jobs", "makespan", numerator="gadget", denominator="fifo")
    table = make_table()
    table = table.drop(table.index[(table.policy == "gadget") & (table.n_jobs == 4) & (table.seed == 1)][:1])
    with pytest.raises(ValueError, match=r"'gadget'.* at n_jobs = 4, seed = 1 \(there is no such row\)"):
        ratio_plot(table, "n_jobs", "makespan", numerator="gadget", denominator="fifo")


def test_ratio_plot_without_cell_seed_needs_on():
    table = make_table().drop(columns=["cell_seed"])
    with pytest.raises(ValueError, match=r"share a pairing key.*pass on="):
        ratio_plot(table, "n_jobs", "makespan", numerator="gadget", denominator="fifo")
    fig = ratio_plot(table, "n_jobs", "makespan", numerator="gadget", denominator="fifo", on=["load"])
    expected = paired_ratios(table, "gadget", "fifo").groupby("n_jobs")["ratio"].mean()
    np.testing.assert_allclose(lines_by_label(fig)["gadget / fifo"].get_ydata(), expected.to_numpy(), rtol=1e-12)


def test_ratio_plot_unknown_policy_and_zero_denominator():
    with pytest.raises(ValueError, match="numerator = 'sebf' has no rows"):
        ratio_plot(make_table(), "n_jobs", "makespan", numerator="sebf", denominator="fifo")
    table = make_table()
    table.loc[(table.policy == "fifo") & (table.n_jobs == 16) & (table.seed == 3), "makespan"] = 0.0
    with pytest.raises(ValueError, match="is 0 at n_jobs = 16, seed = 3"):
        ratio_plot(table, "n_jobs", "makespan", numerator="gadget", denominator="fifo")


# --------------------------------------------------------------------------------------------
# save_figure
# --------------------------------------------------------------------------------------------

BUILD_SCRIPT = textwrap.dedent(
    """
    import json
    import sys

    import numpy as np
    import pandas as pd
    from matplotlib.figure import Figure

    from clusteropt.experiments.plots import line_plot, normalized_bars, save_figure


    def build():
        rng = np.random.default_rng(11)
        n = 4 * 3 * 2
        table = pd.DataFrame({
            "n_jobs": np.repeat([4, 8, 16, 32], 6),
            "seed": np.tile([0, 1, 2], 8),
            "policy": np.tile(np.repeat(["fifo", "gadget"], 3), 4),
            "status": "ok",
            "makespan": rng.uniform(1.0, 10.0, n),
        })
        fig = Figure(layout="constrained", figsize=(8, 3))
        left, right = fig.subplots(1, 2)
        line_plot(table, "n_jobs", "makespan", ax=left, logx=True, title="Makespan (µs) vs jobs")
        normalized_bars(table, "makespan", baseline="fifo", group="n_jobs", ax=right)
        return fig


    if __name__ == "__main__":
        paths = save_figure(build(), sys.argv[1], formats=("png", "svg", "pdf"))
        # pyomo's import hook imports pyplot along with matplotlib; what matters is that no figure
        # is registered with it
        plt = sys.modules.get("matplotlib.pyplot")
        print(json.dumps({"paths": [str(p) for p in paths], "fignums": plt.get_fignums() if plt else []}))
    """
)


def test_save_figure_is_byte_identical(tmp_path):
    script = tmp_path / "build_figure.py"
    script.write_text(BUILD_SCRIPT)
    # the second process (another hash seed) runs while this one builds and saves twice
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "c" / "fig")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        build = runpy.run_path(str(script), run_name="build_figure")["build"]
        first = save_figure(build(), tmp_path / "a" / "fig.png", formats=("png", "svg", "pdf"))
        second = save_figure(build(), tmp_path / "b" / "fig", formats=("png", "svg", "pdf"))
        assert [p.name for p in first] == ["fig.png", "fig.svg", "fig.pdf"]
        assert sorted(os.listdir(tmp_path / "a")) == ["fig.pdf", "fig.png", "fig.svg"]  # no temp files left
        for p, q in zip(first, second):
            assert p.read_bytes() == q.read_bytes(), p.name
        assert first[0].read_bytes().startswith(b"\x89PNG")
        assert b"<svg" in first[1].read_bytes() and first[2].read_bytes().startswith(b"%PDF")
        stdout, stderr = other.communicate(timeout=120)
    finally:
        if other.poll() is None:
            other.kill()
            other.communicate()
    assert other.returncode == 0, stderr
    report = json.loads(stdout.strip().splitlines()[-1])
    assert report["fignums"] == []  # figures are not attached to pyplot
    for p, path in zip(first, report["paths"]):
        assert p.read_bytes() == open(path, "rb").read(), p.name


def test_save_figure_paths_and_errors(tmp_path):
    fig = cdf_plot(make_table(), "makespan")
    paths = save_figure(fig, tmp_path / "deep" / "load0.5", formats="svg")
    assert paths == [tmp_path / "deep" / "load0.5.svg"] and paths[0].exists()
    with pytest.raises(ValueError, match="allowed: png, svg, pdf"):
        save_figure(fig, tmp_path / "x", formats=("png", "jpg"))
    with pytest.raises(ValueError, match="allowed"):
        save_figure(fig, tmp_path / "x", formats=())
    assert not (tmp_path / "x.png").exists()


def test_figures_are_not_registered_with_pyplot():
    table = make_table()
    figures = [
        line_plot(table, "n_jobs", "makespan"),
        normalized_bars(table, "makespan", baseline="fifo"),
        cdf_plot(table, "makespan"),
        ratio_plot(table, "n_jobs", "makespan", numerator="gadget", denominator="fifo"),
    ]
    for fig in figures:
        assert isinstance(fig, Figure) and fig.canvas.manager is None
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        assert all(plt.figure(n) not in figures for n in plt.get_fignums())
