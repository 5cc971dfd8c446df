"""Paper 003 (mlBroker) instances: validation, helpers, JSON, the Sec. 6.1 generator, presets, CSV readers."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from clusteropt.instances import (
    BrokerInstance,
    InstanceError,
    TraceError,
    broker_preset,
    load_instance,
    random_broker,
    read_prices_csv,
    read_transfer_costs_csv,
)
from clusteropt.instances.broker import (
    EXCHANGES_PER_SLOT,
    PAPER_PRICE_A,
    PAPER_PS_DEMAND,
    PAPER_THRESHOLD,
    PAPER_WORKER_DEMAND,
    PRESETS,
    volume_price,
)

GOOD = {
    "horizon": 3,
    "price_a": [[3.0, 1.0], [4.0, 2.0]],
    "price_b": [[2.0, 0.5], [3.0, 1.0]],
    "threshold": [[4.0, 10.0], [2.0, 6.0]],
    "transfer_cost": [[0.0, 0.1], [0.2, 0.0]],
    "arrival": [1, 2],
    "last_slot": [2, 3],
    "data": [[[25.0, 5.0], [0.0, 12.0], [0.0, 0.0]], [[0.0, 0.0], [10.0, 10.0], [40.0, 0.0]]],
    "capacity": [10.0, 20.0],
    "worker_demand": [[1.0, 2.0], [2.0, 1.0]],
    "ps_demand": [[0.0, 1.0], [0.0, 2.0]],
    "traffic": [0.5, 1.0],
    "deploy_cost": [4.0, 3.0],
    "resources": ("gpu", "cpu"),
}


def make(**kw) -> BrokerInstance:
    return BrokerInstance(**{**GOOD, **kw})


def test_good_instance_and_helpers():
    inst = make()
    assert (inst.n_jobs, inst.n_dcs, inst.n_resources, inst.horizon) == (2, 2, 2, 3)
    np.testing.assert_allclose(inst.price_e, [[4.0, 5.0], [2.0, 6.0]])  # e = a l - b l
    assert [inst.active(t).tolist() for t in (1, 2, 3)] == [[0], [0, 1], [1]]
    assert inst.active_mask(2).tolist() == [True, True]
    assert [inst.required_workers(t).tolist() for t in (1, 2, 3)] == [[3, 0], [2, 1], [0, 2]]
    np.testing.assert_allclose(inst.slot_data(2), [[0, 12], [10, 10]])
    # h = n y + m s: job 0 three workers in DC 0, its PS in DC 1
    h = inst.resource_amount([[3, 0], [0, 0]], [[0, 1], [0, 0]])
    np.testing.assert_allclose(h, [[3, 6], [0, 1]])
    np.testing.assert_allclose(inst.resource_price(h), [[9, 6], [0, 2]])
    assert inst.big_u == 4  # max N_i(t) = 3, plus 1
    # h_max = n (U - 1) + m summed over jobs = (1*3 + 2*3, 2*3 + 1*3 + 1 + 2) = (9, 12)
    np.testing.assert_allclose(inst.big_m, [[1 * max(4, 5), 0.5 * max(10, 2)], [1 * max(2, 7), 1 * max(6, 6)]])
    for a in (inst.data, inst.price_a, inst.arrival):
        assert not a.flags.writeable
    assert inst.arrival.dtype == np.int64 and inst.last_slot.dtype == np.int64
    with pytest.raises(ValueError, match=r"1 \.\. T = 3"):
        inst.active(4)


def test_required_workers_ignores_floating_point_noise():
    data = np.zeros((1, 1, 2))
    data[0, 0] = [0.1, 0.2]  # 0.30000000000000004
    inst = make(horizon=1, arrival=[1], last_slot=[1], data=data, capacity=[0.3], worker_demand=[[1, 1]],
                ps_demand=[[0, 0]], traffic=[0.0], deploy_cost=[0.0])
    assert inst.required_workers(1).tolist() == [1]
    inst2 = dataclasses.replace(inst, capacity=[0.29])
    assert inst2.required_workers(1).tolist() == [2]


def test_price_function_is_eq2_continuous_and_concave():
    a, b, ell = 3.0, 2.0, 4.0
    e = a * ell - b * ell
    h = np.linspace(0, 10, 101)
    piecewise = np.where(h <= ell, a * h, b * h + e)  # Eq. (2)
    np.testing.assert_allclose(volume_price(h, a, b, ell), piecewise)
    assert volume_price(ell, a, b, ell) == pytest.approx(a * ell) == pytest.approx(b * ell + e)
    slopes = np.diff(volume_price(h, a, b, ell))
    assert (slopes >= 0).all() and (np.diff(slopes) <= 1e-12).all()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"resources": "gpu"}, "resources = 'gpu'; expected a non-empty list of resource names"),
    ({"resources": ("gpu", "")}, "resources[1] = ''; expected a non-empty string"),
    ({"resources": ("gpu", "gpu")}, "resources[1] = 'gpu'; expected a name distinct from resources[0]"),
    ({"resources": ("gpu",)}, "price_a.shape[1] = 2; expected 1"),
    ({"price_a": [[3.0, 1.0], [4.0, 0.0]]}, "price_a[1, 1] = 0.0; expected > 0"),
    ({"price_b": [[2.0, 0.5], [3.0, -1.0]]}, "price_b[1, 1] = -1.0; expected >= 0"),
    ({"price_b": [[2.0, 1.0], [3.0, 1.0]]},
     "price_b[0, 1] = 1.0; expected < price_a[0, 1] = 1.0 (the discounted price, b < a)"),
    ({"price_b": [[2.0, 0.5]]}, "price_b.shape[0] = 1; expected 2"),
    ({"threshold": [[4.0, -10.0], [2.0, 6.0]]}, "threshold[0, 1] = -10.0; expected >= 0"),
    ({"transfer_cost": [[0.0, -0.1], [0.2, 0.0]]}, "transfer_cost[0, 1] = -0.1; expected >= 0"),
    ({"transfer_cost": [[0.0, 0.1], [0.2, 0.3]]},
     "transfer_cost[1, 1] = 0.3; expected 0 (d^{rr} = 0 on the diagonal)"),
    ({"transfer_cost": [[0.0, 0.1]]}, "transfer_cost.shape[0] = 1; expected 2"),
    ({"horizon": 0}, "horizon = 0; expected an integer >= 1"),
    ({"arrival": [1, 4]}, "arrival[1] = 4; expected a slot in 1 .. T = 3"),
    ({"arrival": [1.5, 2]}, "arrival[0] = 1.5; expected an integer"),
    ({"last_slot": [2, 1]}, "last_slot[1] = 1; expected a slot in arrival[1] .. T = 2 .. 3"),
    ({"last_slot": [2, 4]}, "last_slot[1] = 4; expected a slot in arrival[1] .. T = 2 .. 3"),
    ({"data": np.ones((2, 2, 2))}, "data.shape[1] = 2; expected 3"),
    ({"data": np.array(GOOD["data"]) * [[[1.0]], [[-1.0]]]}, "data[1, 1, 0] = -10.0; expected >= 0"),
    ({"data": np.array(GOOD["data"]) + np.array([0, 0, 0.5])[None, :, None] * [[[1.0]], [[0.0]]]},
     "data[0, 2, 0] = 0.5; expected 0 outside the active slots 1 .. 2 of job 0 (axis 1 is slot - 1)"),
    ({"data": [[[25.0, 5.0], [0.0, 12.0], [0.0, 0.0]], [[1.0, 0.0], [10.0, 10.0], [40.0, 0.0]]]},
     "data[1, 0, 0] = 1.0; expected 0 outside the active slots 2 .. 3 of job 1 (axis 1 is slot - 1)"),
    ({"data": [[[25.0, math.nan], [0.0, 12.0], [0.0, 0.0]], [[0.0, 0.0], [10.0, 10.0], [40.0, 0.0]]]},
     "data[0, 0, 1] = nan; expected a finite number"),
    ({"capacity": [10.0, 0.0]}, "capacity[1] = 0.0; expected > 0 (data one worker trains per slot)"),
    ({"worker_demand": [[1.0, 2.0], [2.0, -1.0]]}, "worker_demand[1, 1] = -1.0; expected >= 0"),
    ({"ps_demand": [[0.0, 1.0]]}, "ps_demand.shape[0] = 1; expected 2"),
    ({"traffic": [0.5, -1.0]}, "traffic[1] = -1.0; expected >= 0"),
    ({"deploy_cost": [-4.0, 3.0]}, "deploy_cost[0] = -4.0; expected >= 0"),
    ({"name": 3}, "name = 3; expected a string"),
])
def test_errors_name_field_and_index(kwargs, message):
    with pytest.raises(InstanceError) as err:
        make(**kwargs)
    assert str(err.value) == message


def test_at_least_one_job():
    with pytest.raises(InstanceError, match=r"arrival.shape\[0\] = 0; expected at least one job"):
        make(arrival=np.zeros(0, dtype=int), last_slot=np.zeros(0, dtype=int), data=np.zeros((0, 3, 2)),
             capacity=np.zeros(0), worker_demand=np.zeros((0, 2)), ps_demand=np.zeros((0, 2)),
             traffic=np.zeros(0), deploy_cost=np.zeros(0))


def test_json_round_trip_and_load_instance(tmp_path):
    inst = make(name="hand")
    data = json.loads(inst.to_json())
    assert list(data)[:2] == ["kind", "schema_version"] and data["kind"] == "broker"
    back = BrokerInstance.from_json(inst.to_json())
    assert back == inst and back.resources == ("gpu", "cpu")
    assert back.arrival.dtype == np.int64 and back.data.shape == (2, 3, 2)
    path = tmp_path / "b.json"
    inst.to_json(path)
    assert load_instance(path) == inst
    rand = broker_preset("small", seed=4)
    path2 = tmp_path / "small.json"
    rand.to_json(path2)
    loaded = load_instance(path2)
    assert isinstance(loaded, BrokerInstance) and loaded == rand
    np.testing.assert_array_equal(loaded.data, rand.data)
    with pytest.raises(InstanceError, match="kind"):
        BrokerInstance.from_dict({**data, "kind": "gadget"})


# -- the Sec. 6.1 generator --------------------------------------------------------------------------


def test_generator_defaults_are_the_papers_settings():
    inst = random_broker(seed=11)
    assert (inst.horizon, inst.n_dcs, inst.n_resources, inst.n_jobs) == (50, 15, 4, 100)
    assert inst.resources == ("gpu", "vcpu", "memory", "storage")
    daily = inst.price_a / 0.5  # slots are half a day; prices are quoted per day
    for k, (lo, hi) in enumerate(PAPER_PRICE_A):
        assert ((daily[:, k] >= lo) & (daily[:, k] <= hi)).all()
    ratio = inst.price_b / inst.price_a
    assert ((ratio >= 0.7) & (ratio <= 0.8)).all()
    for k, (lo, hi) in enumerate(PAPER_THRESHOLD):
        col = inst.threshold[:, k]
        assert ((col >= lo) & (col <= hi)).all() and np.array_equal(col, np.round(col))
    for demand, ranges in ((inst.worker_demand, PAPER_WORKER_DEMAND), (inst.ps_demand, PAPER_PS_DEMAND)):
        assert np.array_equal(demand, np.round(demand))
        for k, (lo, hi) in enumerate(ranges):
            assert ((demand[:, k] >= lo) & (demand[:, k] <= hi)).all()
    assert (inst.ps_demand[:, 0] == 0).all()  # a PS needs no GPU
    assert ((inst.capacity >= 16) & (inst.capacity <= 66)).all()
    assert ((inst.traffic >= 4.32 - 1e-9) & (inst.traffic <= 82.8 + 1e-9)).all()
    model_gb = inst.traffic / EXCHANGES_PER_SLOT
    rate = inst.deploy_cost / model_gb
    assert ((rate >= 0.05 - 1e-9) & (rate <= 0.1 + 1e-9)).all()
    d = inst.transfer_cost
    off = ~np.eye(inst.n_dcs, dtype=bool)
    assert ((d[off] >= 0.01) & (d[off] <= 0.02)).all() and np.array_equal(d, d.T)
    # every active slot of a job totals 500 GB, from 2-5 origin DCs
    slots = np.arange(1, 51)
    active = (slots[None] >= inst.arrival[:, None]) & (slots[None] <= inst.last_slot[:, None])
    totals = inst.data.sum(axis=2)
    np.testing.assert_allclose(totals[active], 500.0)
    assert (totals[~active] == 0).all()
    origins = (inst.data > 0).any(axis=1).sum(axis=1)
    assert ((origins >= 2) & (origins <= 5)).all()
    length = inst.last_slot - inst.arrival + 1
    assert ((length >= 1) & (length <= 30)).all()
    assert (length[inst.arrival + 29 <= 50] >= 10).all()  # windows shorter than 10 only when cut at T


def test_generator_options():
    inst = random_broker(20, horizon=8, n_dcs=4, data_per_slot=(100.0, 700.0), arrivals="zero", duration=3,
                         slot_days=1.0, image_gb=2.0, seed=2)
    totals = inst.data.sum(axis=2)[:, :3]
    assert ((totals >= 100) & (totals <= 700)).all() and totals.std() > 0
    assert (inst.arrival == 1).all() and (inst.last_slot == 3).all()
    for k, (lo, hi) in enumerate(PAPER_PRICE_A):
        assert ((inst.price_a[:, k] >= lo) & (inst.price_a[:, k] <= hi)).all()
    np.testing.assert_array_less(inst.deploy_cost, 0.1 * 2.0 + 1e-12)
    np.testing.assert_array_less(0.05 * 2.0 - 1e-12, inst.deploy_cost)
    with pytest.raises(ValueError, match="arrivals"):
        random_broker(3, arrivals="poisson", seed=0)
    with pytest.raises(ValueError, match="n_jobs"):
        random_broker(0)
    with pytest.raises(ValueError, match="duration"):
        random_broker(3, duration=(0, 2))
    with pytest.raises(ValueError, match="worker_demand"):
        random_broker(3, worker_demand=((0, 4),))


def test_deploy_per_data_reads_the_rate_per_gb_of_data_per_slot():
    model = random_broker(10, horizon=8, n_dcs=4, data_per_slot=(100.0, 700.0), seed=4)
    data = random_broker(10, horizon=8, n_dcs=4, data_per_slot=(100.0, 700.0), deploy_per="data", seed=4)
    per_slot = data.data.sum(axis=(1, 2)) / (data.data.sum(axis=2) > 0).sum(axis=1)
    rate = data.deploy_cost / per_slot
    assert ((rate >= 0.05 - 1e-12) & (rate <= 0.1 + 1e-12)).all()
    np.testing.assert_allclose(rate, model.deploy_cost / (model.traffic / 144.0))  # the same drawn rates
    assert np.array_equal(model.data, data.data) and np.array_equal(model.traffic, data.traffic)
    with pytest.raises(ValueError, match="deploy_per = 'image'"):
        random_broker(3, deploy_per="image", seed=0)
    with pytest.raises(ValueError, match="image_gb sizes the model image"):
        random_broker(3, deploy_per="data", image_gb=2.0, seed=0)


def test_generator_is_reproducible_with_its_seed():
    a, b = random_broker(30, seed=123), random_broker(30, seed=123)
    assert a == b
    assert a != random_broker(30, seed=124)
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    assert random_broker(5, seed=rng_a) == random_broker(5, seed=rng_b)


@pytest.mark.parametrize(("preset", "shape"), [
    ("paper", (100, 15, 50)), ("small", (8, 5, 10)), ("tiny", (3, 3, 4)),
])
def test_preset_sizes(preset, shape):
    inst = broker_preset(preset, seed=0)
    assert (inst.n_jobs, inst.n_dcs, inst.horizon) == shape
    assert inst.n_resources == 4 and inst.name.startswith(preset)
    assert broker_preset(preset, seed=0) == inst
    assert broker_preset(preset, jobs=2, horizon=5, seed=0).n_jobs == 2


def test_small_presets_scale_thresholds():
    for name in ("small", "tiny"):
        inst = broker_preset(name, seed=1)
        for k, (lo, hi) in enumerate(PAPER_THRESHOLD):
            assert ((inst.threshold[:, k] >= 0.1 * lo - 1e-9) & (inst.threshold[:, k] <= 0.1 * hi + 1e-9)).all()
    assert PRESETS == ("paper", "small", "tiny")
    with pytest.raises(ValueError, match="unknown preset 'huge'"):
        broker_preset("huge")
    with pytest.raises(ValueError, match="horizon"):
        broker_preset("tiny", horizon=0)


# -- CSV readers -------------------------------------------------------------------------------------------

PRICES = """dc,resource,a,b,threshold
0,gpu,3,2,4
0,cpu,1,0.5,10
1,gpu,4,3,2
1,cpu,2,1,6
"""


def test_read_prices_csv(tmp_path):
    p = tmp_path / "prices.csv"
    p.write_text(PRICES)
    pr = read_prices_csv(p)
    assert pr.resources == ("gpu", "cpu") and pr.n_dcs == 2
    np.testing.assert_allclose(pr.a, GOOD["price_a"])
    np.testing.assert_allclose(pr.b, GOOD["price_b"])
    np.testing.assert_allclose(pr.threshold, GOOD["threshold"])
    # order given by the caller; extra columns ignored; rows in any order
    p.write_text("note,dc,resource,a,b,threshold\nx,1,cpu,2,1,6\ny,0,gpu,3,2,4\nz,0,cpu,1,0.5,10\nw,1,gpu,4,3,2\n")
    pr2 = read_prices_csv(p, resources=("cpu", "gpu"))
    np.testing.assert_allclose(pr2.a, [[1, 3], [2, 4]])


@pytest.mark.parametrize(("text", "message"), [
    (PRICES.replace("1,gpu,4,3,2", "1,gpu,4,5,2"),
     "prices.csv:4: b = '5'; expected < a = 4.0 (the discounted price)"),
    (PRICES.replace("0,cpu,1,0.5,10", "0,cpu,1,0.5,-10"), "prices.csv:3: threshold = '-10'; expected a finite"),
    (PRICES.replace("0,cpu,1,0.5,10", "0,cpu,x,0.5,10"), "prices.csv:3: a = 'x'; expected a finite number"),
    (PRICES.replace("0,cpu,1,0.5,10", "0,cpu,0,0,10"), "prices.csv:3: a = '0'; expected > 0"),
    (PRICES.replace("1,gpu,4,3,2", "1.5,gpu,4,3,2"), "prices.csv:4: dc = '1.5'; expected a whole number >= 0"),
    (PRICES.replace("1,gpu,4,3,2", "1,,4,3,2"), "prices.csv:4: resource = ''; expected a resource name"),
    (PRICES.replace("1,gpu,4,3,2", "0,gpu,4,3,2"),
     "prices.csv:4: dc, resource = '0, gpu'; expected a pair listed"),
    (PRICES.replace("1,gpu,4,3,2\n", ""), "prices.csv:4: dc, resource = '1, gpu'; expected a row for every dc"),
    (PRICES.replace("1,gpu,4,3,2", "1,gpu,4,3"),
     "prices.csv:4: column count = 4; expected 5 (the header's column count)"),
    ("dc,resource,a,b\n0,gpu,1,0.5\n",
     "prices.csv:1: header = 'dc,resource,a,b'; expected the columns dc, resource, a, b, threshold; "
     "missing: threshold"),
    ("", "prices.csv:1: header = ''; expected a CSV header"),
    ("dc,resource,a,b,threshold\n", "prices.csv:1: header"),
])
def test_read_prices_csv_bad_line(tmp_path, text, message):
    p = tmp_path / "prices.csv"
    p.write_text(text)
    with pytest.raises(TraceError) as err:
        read_prices_csv(p)
    assert str(err.value).startswith(str(tmp_path / message.split(":")[0]) + ":")
    assert message in str(err.value)


def test_read_prices_csv_unknown_resource(tmp_path):
    p = tmp_path / "prices.csv"
    p.write_text(PRICES)
    with pytest.raises(TraceError, match=r"prices.csv:2: resource = 'gpu'; expected one of \['cpu'\]"):
        read_prices_csv(p, resources=("cpu",))


def test_read_transfer_costs_csv(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("# USD per GB\n0, 0.1\n\n0.2,0\n")
    np.testing.assert_allclose(read_transfer_costs_csv(p), GOOD["transfer_cost"])


@pytest.mark.parametrize(("text", "message"), [
    ("0,0.1\n0.2,x\n", "d.csv:2: d[1, 1] = 'x'; expected a finite number >= 0"),
    ("0,0.1\n-0.2,0\n", "d.csv:2: d[1, 0] = '-0.2'; expected a finite number >= 0"),
    ("0,0.1\n0.2\n", "d.csv:2: entry count = 1; expected 2 (as the first row)"),
    ("# c\n0,0.1\n0.2,0.5\n", "d.csv:3: d[1, 1] = '0.5'; expected 0 (d^{rr} = 0 on the diagonal)"),
    ("0,0.1\n0.2,0\n0.1,0.1\n", "d.csv:3: row count = 3; expected 2 (a square matrix"),
    ("0,0.1,0.2\n0.2,0,0.1\n", "d.csv:2: row count = 2; expected 3 (a square matrix"),
    ("# nothing\n", "d.csv:1: matrix = ''; expected an R x R matrix"),
])
def test_read_transfer_costs_csv_bad_line(tmp_path, text, message):
    p = tmp_path / "d.csv"
    p.write_text(text)
    with pytest.raises(TraceError) as err:
        read_transfer_costs_csv(p)
    assert str(err.value).startswith(str(tmp_path / "d.csv") + ":")
    assert message in str(err.value)


def test_csv_files_override_the_generator(tmp_path):
    p = tmp_path / "prices.csv"
    p.write_text(PRICES)
    d = tmp_path / "d.csv"
    d.write_text("0,0.1\n0.2,0\n")
    prices, costs = read_prices_csv(p), read_transfer_costs_csv(d)
    inst = random_broker(4, horizon=6, resources=("gpu", "cpu"), worker_demand=((0, 4), (1, 10)),
                         ps_demand=((0, 0), (1, 10)), prices=prices, transfer_costs=costs, seed=0)
    assert inst.n_dcs == 2
    np.testing.assert_allclose(inst.price_a, prices.a)  # used as written: per-slot prices
    np.testing.assert_allclose(inst.transfer_cost, costs)
    tiny = broker_preset("tiny", transfer_costs=costs, seed=0)
    assert tiny.n_dcs == 2
    with pytest.raises(ValueError, match="resources"):
        random_broker(4, prices=prices, seed=0)  # the CSV has 2 resources, the generator 4
    with pytest.raises(ValueError, match="data center counts disagree"):
        random_broker(4, n_dcs=3, transfer_costs=costs, seed=0)
