"""``clusteropt run`` on paper 003 (mlBroker) instances: the four policies, the JSON, bad input."""

from __future__ import annotations

import json

import pytest

from clusteropt.algorithms.broker.decision import BrokerSchedule
from clusteropt.cli import main
from clusteropt.instances import load_instance
from clusteropt.verify import check_broker_schedule


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def small(tmp_path, capsys):
    path = tmp_path / "b.json"
    code, out, _ = run(capsys, "generate", "broker", "--preset", "small", "--seed", "1", "-o", path)
    assert code == 0 and "8 jobs over T = 10" in out
    return path


@pytest.mark.parametrize("policy", ["mlbroker", "local", "central", "oasis"])
def test_run_writes_a_checkable_run(small, tmp_path, capsys, policy):
    out_path = tmp_path / "out.json"
    code, out, _ = run(capsys, "run", small, "--policy", policy, "--json", out_path)
    assert code == 0 and "verified True" in out and out.startswith(policy)
    data = json.loads(out_path.read_text())
    inst = load_instance(small)
    # anyone can re-check the file: the instance file and the schedule in the JSON are enough
    check = check_broker_schedule(inst, BrokerSchedule.from_dict(data["schedule"]))
    assert check.ok and data["verified"] is True and data["violations"] == []
    assert data["total_cost"] == pytest.approx(check.total_cost, rel=1e-12)
    assert data["costs"] == pytest.approx(check.cost_totals(), rel=1e-12)
    assert data["policy"] == policy and len(data["slots"]) == inst.horizon
    assert sum(s["costs"]["total"] for s in data["slots"]) == pytest.approx(check.total_cost, rel=1e-9)
    for slot in data["slots"]:
        assert set(slot["jobs"]) == {str(i) for i in inst.active(slot["slot"])}
        for entry in slot["jobs"].values():
            assert set(entry) == {"workers", "ps", "data_moved", "connections"}
            assert sum(n for _, _, n in entry["connections"]) == sum(entry["workers"].values())


def test_epsilon_and_price_form_reach_mlbroker(small, tmp_path, capsys):
    costs = {}
    for form in ("tight", "bigm"):
        out_path = tmp_path / f"{form}.json"
        code, out, _ = run(capsys, "run", small, "--epsilon", "0.5", "--price-form", form, "--json", out_path)
        assert code == 0 and "verified True" in out
        costs[form] = json.loads(out_path.read_text())["total_cost"]
    assert costs["tight"] != costs["bigm"]


def test_bad_input_is_one_line(small, capsys):
    code, _, err = run(capsys, "run", small, "--policy", "local", "--epsilon", "0.2")
    assert code == 2 and "--epsilon is a parameter of mlbroker" in err and "Traceback" not in err
    code, _, err = run(capsys, "run", small, "--policy", "gadget")
    assert code == 2 and "mlbroker, local, central or oasis" in err
    code, _, err = run(capsys, "run", small, "--epsilon", "-1")
    assert code == 2 and "epsilon" in err and "Traceback" not in err
