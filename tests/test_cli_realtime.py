"""``clusteropt generate realtime``, ``run`` and ``region`` on paper 002 instances."""

from __future__ import annotations

import json
import re

import pytest

from clusteropt.cli import main
from clusteropt.instances import load_instance


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, err):
    assert code == 2 and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    return lines[0]


@pytest.fixture
def fig3(tmp_path, capsys):
    path = tmp_path / "fig3.json"
    code, out, _ = run(capsys, "generate", "realtime", "--preset", "fig3", "--generation", "0.5",
                       "--requirement", "0.3,0.3", "-o", path)
    assert code == 0 and "2 applications, 2 workers" in out
    return path


def test_generate_writes_the_presets(tmp_path, capsys, fig3):
    inst = load_instance(fig3)
    assert inst.kind == "realtime" and inst.requirement.tolist() == [0.3, 0.3]
    path = tmp_path / "fig5.json"
    assert run(capsys, "generate", "realtime", "--preset", "fig5", "--n", "6", "-o", path)[0] == 0
    assert load_instance(path).n_apps == 6
    path = tmp_path / "rnd.json"
    assert run(capsys, "generate", "realtime", "--preset", "random", "--n", "3", "--workers", "5",
               "--seed", "4", "-o", path)[0] == 0
    assert load_instance(path).success.shape == (3, 5)


def test_run_writes_verified_rates(tmp_path, capsys, fig3):
    out_path = tmp_path / "out.json"
    code, out, _ = run(capsys, "run", fig3, "--policy", "max-weight", "--frames", 1500, "--json", out_path)
    assert code == 0 and "verified True" in out
    data = json.loads(out_path.read_text())
    assert data["policy"] == "max-weight" and data["frames"] == 1500 and data["verified"] is True
    assert len(data["decisions"]) == 1500 and len(data["completion_rate"]) == 2
    # the completions listed recount to the rates reported
    counts = [sum(i in c for c in data["completed"]) / 1500 for i in range(2)]
    assert counts == pytest.approx(data["completion_rate"])
    assert all(set(c) <= set(d) for c, d in zip(data["completed"], data["decisions"], strict=True))


def test_region_with_exact(tmp_path, capsys, fig3):
    out_path = tmp_path / "region.json"
    code, out, _ = run(capsys, "region", fig3, "--policy", "sqrt-greedy", "--direction", "1,2", "--exact",
                       "--frames", 2000, "--json", out_path)
    assert code == 0 and "exact theta" in out
    data = json.loads(out_path.read_text())
    assert data["direction"] == [1.0, 2.0]
    assert 0.8 * data["exact_theta"] <= data["theta"] <= data["exact_theta_with_tol"] + 0.02


@pytest.mark.parametrize(("args", "match"), [
    (["run", "{f}", "--policy", "nope"], "unknown --policy 'nope'; realtime instances take sqrt-greedy"),
    (["run", "{f}", "--frames", "0"], "'--frames': 0 is not in the range"),
    (["run", "{f}", "--requirement", "0.1,x"], r"--requirement\[1\] = 'x'"),
    (["run", "{f}", "--requirement", "0.1"], "requirement.shape"),
    (["region", "{f}", "--direction", "1,-1"], r"direction\[1\] = -1.0"),
    (["region", "{f}", "--policy", "stationary"], "--policy 'stationary'"),
    (["generate", "realtime", "--preset", "fig3", "--success", "0.2", "-o", "x.json"], "takes generation"),
])
def test_bad_input_is_one_line(capsys, fig3, args, match):
    code, _, err = run(capsys, *[a.format(f=fig3) for a in args])
    assert re.search(match, one_line_error(code, err)), err


def test_region_refuses_other_kinds(tmp_path, capsys):
    from clusteropt.instances import random_worker_placement

    path = tmp_path / "wp.json"
    random_worker_placement(3, 2, seed=0).to_json(path)
    code, _, err = run(capsys, "region", path)
    assert "takes realtime instances" in one_line_error(code, err)
