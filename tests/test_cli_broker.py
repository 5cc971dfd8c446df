"""``clusteropt generate broker`` on paper 003 (mlBroker) instances."""

from __future__ import annotations

import pytest

from clusteropt.cli import main
from clusteropt.instances import BrokerInstance, broker_preset, load_instance


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_generate_paper_preset_is_the_generators_instance(tmp_path, capsys):
    path = tmp_path / "inst.json"
    code, out, _ = run(capsys, "generate", "broker", "--preset", "paper", "--seed", "7", "-o", path)
    assert code == 0
    assert "paper-100: 100 jobs over T = 50, 15 data centers, 4 resources (gpu, vcpu, memory, storage)" in out
    inst = load_instance(path)
    assert isinstance(inst, BrokerInstance) and inst == broker_preset("paper", seed=7)


@pytest.mark.parametrize(("preset", "shape"), [("small", (8, 5, 10)), ("tiny", (3, 3, 4))])
def test_generate_small_presets_and_options(tmp_path, capsys, preset, shape):
    path = tmp_path / "inst.json"
    assert run(capsys, "generate", "broker", "--preset", preset, "-o", path)[0] == 0
    inst = load_instance(path)
    assert (inst.n_jobs, inst.n_dcs, inst.horizon) == shape
    code, out, _ = run(capsys, "generate", "broker", "--preset", preset, "--jobs", "2", "--horizon", "6",
                       "--seed", "3", "-o", path)
    assert code == 0 and "2 jobs over T = 6" in out
    assert load_instance(path) == broker_preset(preset, jobs=2, horizon=6, seed=3)
    code, _, _ = run(capsys, "generate", "broker", "--preset", preset, "--deploy-per", "data", "--seed", "3", "-o",
                     path)
    assert code == 0 and load_instance(path) == broker_preset(preset, seed=3, deploy_per="data")


def test_generate_with_price_and_transfer_files(tmp_path, capsys):
    prices = tmp_path / "prices.csv"
    prices.write_text("dc,resource,a,b,threshold\n" + "".join(
        f"{r},{k},{2 + r},1,{10 * (r + 1)}\n" for r in range(3) for k in ("vcpu", "gpu", "storage", "memory")))
    costs = tmp_path / "d.csv"
    costs.write_text("0,0.01,0.02\n0.01,0,0.03\n0.02,0.03,0\n")
    path = tmp_path / "inst.json"
    code, out, _ = run(capsys, "generate", "broker", "--preset", "tiny", "--prices", prices, "--transfer-costs",
                       costs, "-o", path)
    assert code == 0 and "3 data centers" in out
    inst = load_instance(path)
    assert inst.price_a[:, 0].tolist() == [2.0, 3.0, 4.0] and inst.threshold[:, 3].tolist() == [10.0, 20.0, 30.0]
    assert inst.transfer_cost[1, 2] == 0.03


def test_bad_input_is_one_line(tmp_path, capsys):
    code, _, err = run(capsys, "generate", "broker", "--jobs", "0", "-o", tmp_path / "x.json")
    assert code == 2 and "n_jobs" in err and "Traceback" not in err
    bad = tmp_path / "d.csv"
    bad.write_text("0,0.1\n0.2,-1\n")
    code, _, err = run(capsys, "generate", "broker", "--transfer-costs", bad, "-o", tmp_path / "x.json")
    assert code == 2 and "d.csv:2: d[1, 1] = '-1'" in err
    code, _, err = run(capsys, "generate", "broker", "--prices", tmp_path / "none.csv", "-o", tmp_path / "x.json")
    assert code == 2 and "cannot read" in err and "none.csv" in err
    code, _, err = run(capsys, "generate", "broker", "--preset", "tiny", "--horizon", "0",
                       "-o", tmp_path / "x.json")
    assert code == 2 and "horizon" in err
