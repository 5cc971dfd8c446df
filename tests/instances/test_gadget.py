"""Paper 000 (GADGET) instances: the cluster graph, job validation, utilities, Eq. (1), generators."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from clusteropt.instances import InstanceError, load_instance
from clusteropt.instances.gadget.instance import (
    PRESETS,
    UTILITIES,
    Cluster,
    GadgetInstance,
    bursty_arrivals,
    fat_tree_cluster,
    gadget_preset,
    iterations_per_slot,
    k_ary_fat_tree,
    random_gadget,
    utility_value,
)

STAR_LINKS = [[0, 2], [2, 0], [1, 2], [2, 1]]  # servers 0, 1 under switch 2


def star(**kw) -> Cluster:
    args = {"capacity": [[4], [2]], "links": STAR_LINKS, "bandwidth": [10.0] * 4, "n_switches": 1}
    return Cluster(**{**args, **kw})


def jobs(**kw) -> GadgetInstance:
    args = {"cluster": star(), "horizon": 5, "arrival": [1, 5], "max_workers": [2, 3], "per_worker": [[1], [2]],
            "limit": [[10], [7]], "bandwidth": [1.0, 2.0], "zeta": [1.0, 2.0], "utility": "sqrt"}
    return GadgetInstance(**{**args, **kw})


# -- Cluster ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"capacity": [[4], [-2]]}, "capacity[1, 0] = -2.0; expected >= 0"),
    ({"links": [[0, 2], [2, 5]], "bandwidth": [1, 1]}, "links[1, 1] = 5; expected a node in [0, 3)"),
    ({"links": [[0, 2], [-1, 0]], "bandwidth": [1, 1]}, "links[1, 0] = -1; expected a node in [0, 3)"),
    ({"links": [[0, 2], [2, 2]], "bandwidth": [1, 1]}, "links[1, 0] = 2; expected no self-loop (tail != head)"),
    ({"links": [[0, 2], [2, 0], [0, 2]], "bandwidth": [1, 1, 1]},
     "links[2] = [0, 2]; expected a link listed once (links[0] is the same)"),
    ({"bandwidth": [1, 1, 0, 1]}, "bandwidth[2] = 0.0; expected > 0"),
    ({"bandwidth": [1, -3, 1, 1]}, "bandwidth[1] = -3.0; expected > 0"),
    ({"bandwidth": [1, 1, 1]}, "bandwidth.shape[0] = 3; expected 4"),
    ({"resources": "gpu"}, "resources = 'gpu'; expected a non-empty list of resource names"),
    ({"resources": ()}, "resources = (); expected a non-empty list of resource names"),
    ({"resources": ("gpu", "")}, "resources[1] = ''; expected a non-empty string"),
    ({"resources": ("gpu", "cpu")}, "capacity.shape[1] = 1; expected 2"),
    ({"n_switches": -1}, "n_switches = -1; expected an integer >= 0"),
    ({"rack": [0]}, "rack.shape[0] = 1; expected 2"),
    ({"capacity": np.zeros((0, 1))}, "capacity.shape[0] = 0; expected at least one server"),
])
def test_cluster_errors_name_field_and_index(kwargs, message):
    with pytest.raises(InstanceError) as err:
        star(**kwargs)
    assert str(err.value) == message


def test_cluster_basics_and_json():
    c = star(rack=[0, 0])
    assert (c.n_servers, c.n_nodes, c.n_links, c.is_tree()) == (2, 3, 4, True)
    assert c.link_index() == {(0, 2): 0, (2, 0): 1, (1, 2): 2, (2, 1): 3}
    assert c.paths() == {(0, 1): [0, 3], (1, 0): [2, 1]}
    assert Cluster.from_json(c.to_json()) == c
    assert not star(links=STAR_LINKS[:3], bandwidth=[1, 1, 1]).is_tree()  # a link without its reverse
    empty = Cluster([[1], [1]], links=[], bandwidth=[])
    assert empty.links.shape == (0, 2) and empty.paths() == {} and not empty.is_tree()


def test_fat_tree_cluster_shape_and_ranges():
    racks_seen = set()
    for seed in range(40):
        c = fat_tree_cluster(12, seed=seed)
        k = c.n_switches - 1
        racks_seen.add(k)
        assert 2 <= k <= 5
        assert (c.n_servers, c.n_nodes, c.n_links) == (12, 12 + k + 1, 2 * 12 + 2 * k)
        assert c.is_tree()
        assert sorted(set(c.rack.tolist())) == list(range(k))  # every rack has a server
        assert set(c.capacity.ravel().tolist()) <= {1.0, 2.0, 4.0, 8.0}
        assert c.resources == ("gpu",)
        bw = dict(zip(map(tuple, c.links.tolist()), c.bandwidth.tolist(), strict=True))
        for (u, v), b in bw.items():
            assert bw[v, u] == b  # the reverse link has the same bandwidth
            if min(u, v) < c.n_servers:  # server - rack switch
                assert 10 <= b <= 100 and max(u, v) == c.n_servers + c.rack[min(u, v)]
            else:  # rack switch - core switch
                assert 200 <= b <= 3200 and max(u, v) == c.n_nodes - 1
    assert racks_seen == {2, 3, 4, 5}
    c = fat_tree_cluster(50, n_racks=3, gpus=(2,), seed=1)
    assert c.n_servers == 50 and c.n_switches == 4 and c.n_links == 106 and (c.capacity == 2).all()
    assert fat_tree_cluster(20, seed=3) == fat_tree_cluster(20, seed=3)
    assert fat_tree_cluster(20, seed=3) != fat_tree_cluster(20, seed=4)
    with pytest.raises(ValueError, match="n_servers = 0"):
        fat_tree_cluster(0)
    with pytest.raises(ValueError, match=r"n_racks = 5; expected 1 \.\. n_servers = 4"):
        fat_tree_cluster(4, n_racks=5)
    with pytest.raises(ValueError, match="n_racks = 0"):
        fat_tree_cluster(4, n_racks=0)


def test_fat_tree_paths_have_two_or_four_links_and_chain():
    c = fat_tree_cluster(15, n_racks=3, seed=5)
    paths = c.paths()
    assert set(paths) == {(a, b) for a in range(15) for b in range(15) if a != b}
    for (a, b), p in paths.items():
        assert len(p) == (2 if c.rack[a] == c.rack[b] else 4)
        ends = c.links[p]
        assert ends[0, 0] == a and ends[-1, 1] == b
        assert (ends[:-1, 1] == ends[1:, 0]).all()  # head of link j = tail of link j + 1


def test_k_ary_fat_tree():
    c = k_ary_fat_tree(4, seed=0)
    assert (c.n_servers, c.n_switches, c.n_links) == (16, 20, 96)
    assert not c.is_tree()
    assert set(c.capacity.ravel().tolist()) <= {1.0, 2.0, 4.0, 8.0}
    pairs = {tuple(p) for p in c.links.tolist()}
    assert all((v, u) in pairs for u, v in pairs)
    host = (c.links < c.n_servers).any(axis=1)
    assert (c.bandwidth[host] == 100).all() and (c.bandwidth[~host] == 400).all()
    paths = c.paths()
    assert set(paths) == set(itertools.permutations(range(16), 2))
    for (a, b), p in paths.items():
        ends = c.links[p]
        assert ends[0, 0] == a and ends[-1, 1] == b and (ends[:-1, 1] == ends[1:, 0]).all()
        same_edge, same_pod = a // 2 == b // 2, c.rack[a] == c.rack[b]
        assert len(p) == (2 if same_edge else 4 if same_pod else 6)
    assert k_ary_fat_tree(6).n_servers == 54
    for k in (3, 0, 5):
        with pytest.raises(ValueError, match=f"k = {k}; expected an even number"):
            k_ary_fat_tree(k)


# -- GadgetInstance ----------------------------------------------------------------------------------


HORIZON = "expected a slot count in 1 .. 1000000 (MAX_HORIZON: a run visits every slot)"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"arrival": [0, 5]}, "arrival[0] = 0; expected a slot in 1 .. 5"),
    ({"arrival": [1, 6]}, "arrival[1] = 6; expected a slot in 1 .. 5"),
    ({"arrival": [1, 2.5]}, "arrival[1] = 2.5; expected an integer"),
    ({"max_workers": [2, 0]}, "max_workers[1] = 0; expected >= 1"),
    ({"per_worker": [[1], [0]]}, "per_worker[1] = [0.0]; expected at least one positive resource"),
    ({"per_worker": [[1], [-1]]}, "per_worker[1, 0] = -1.0; expected >= 0"),
    ({"limit": [[10], [-1]]}, "limit[1, 0] = -1.0; expected >= 0"),
    ({"bandwidth": [1, -1]}, "bandwidth[1] = -1.0; expected >= 0"),
    ({"zeta": [1, 0]}, "zeta[1] = 0.0; expected > 0"),
    ({"zeta": [-1, 1]}, "zeta[0] = -1.0; expected > 0"),
    ({"zeta": [1, math.nan]}, "zeta[1] = nan; expected a finite number"),
    ({"utility": "cubic"}, "utility = 'cubic'; expected one of ['log', 'quadratic', 'sigmoid', 'sqrt']"),
    ({"utility_params": [[1, 0, 0], [-1, 0, 0]]}, "utility_params[1, 0] = -1.0; expected >= 0"),
    ({"utility_params": [[1, 0, 0]]}, "utility_params.shape[0] = 1; expected 2"),
    ({"per_worker": [[1, 1], [1, 1]]}, "per_worker.shape[1] = 2; expected 1"),
    ({"max_workers": [1, 2, 3]}, "max_workers.shape[0] = 3; expected 2"),
    ({"limit": [[1]]}, "limit.shape[0] = 1; expected 2"),
    ({"zeta": [1.0]}, "zeta.shape[0] = 1; expected 2"),
    ({"horizon": 0}, f"horizon = 0; {HORIZON}"),
    ({"horizon": 2.5}, f"horizon = 2.5; {HORIZON}"),
    ({"horizon": 10**7}, f"horizon = 10000000; {HORIZON}"),
    ({"cluster": 5}, "cluster = 'int'; expected a Cluster or its dict"),
    ({"job_ids": ["a", "a"]}, "job_ids[1] = 'a'; expected a name distinct from job_ids[0]"),
    ({"job_ids": ["a"]}, "job_ids = '1 names'; expected 2 (one per job)"),
    ({"job_ids": ["a", ""]}, "job_ids[1] = ''; expected a non-empty string"),
    ({"job_ids": ["a", 7]}, "job_ids[1] = 7; expected a non-empty string"),
    ({"job_ids": "ab"}, "job_ids = 'ab'; expected a list of 2 distinct job names"),
    ({"cluster": {**star().to_dict(), "bandwidth": [10, 10, 10, -1]}},
     "cluster.bandwidth[3] = -1.0; expected > 0"),
])
def test_instance_errors_name_field_and_index(kwargs, message):
    with pytest.raises(InstanceError) as err:
        jobs(**kwargs)
    assert str(err.value) == message


def test_job_ids_default_and_round_trip():
    assert jobs().job_ids == ("0", "1")
    named = jobs(job_ids=["pod-b", "pod-a"])
    back = GadgetInstance.from_json(named.to_json())
    assert back.job_ids == ("pod-b", "pod-a") and back == named


def test_cluster_as_dict_and_json_round_trip(tmp_path):
    inst = jobs(cluster=star().to_dict())
    assert isinstance(inst.cluster, Cluster) and inst.cluster == star()
    assert inst == jobs()
    assert inst.utility_params.tolist() == [[1.0, 0.0, 0.0]] * 2  # the default for "sqrt"
    for one in (inst, gadget_preset("small", jobs=6, seed=3), random_gadget(4, utility="quadratic", seed=1)):
        again = GadgetInstance.from_json(one.to_json())
        assert again == one and isinstance(again.cluster, Cluster)
        path = tmp_path / "gadget.json"
        one.to_json(path)
        assert load_instance(path) == one
    path = tmp_path / "cluster.json"
    k_ary_fat_tree(4, seed=2).to_json(path)
    assert load_instance(path) == k_ary_fat_tree(4, seed=2)


def test_budget_is_the_floored_min_over_used_resources():
    c = Cluster([[8, 16, 4]], links=[], bandwidth=[], resources=("gpu", "cpu", "mem"))
    inst = GadgetInstance(cluster=c, horizon=3, arrival=[1, 2, 3, 1],
                          max_workers=[1, 2, 3, 4],
                          per_worker=[[1, 2, 0], [0, 0, 0.1], [3, 0, 0], [2, 1, 1]],
                          limit=[[10, 15, 0], [0, 0, 0.3], [7, 100, 100], [0, 50, 50]],
                          bandwidth=[0, 0, 0, 0], zeta=[1, 1, 1, 1])
    # job 0: min(10/1, 15/2) = 7.5 -> 7 (l = 0 on mem: F = 0 does not matter); job 1: 0.3/0.1 -> 3
    # job 2: 7/3 -> 2 (cpu and mem unused); job 3: gpu limit 0 -> 0
    assert inst.budget.tolist() == [7, 3, 2, 0]
    assert inst.budget.dtype == np.int64
    g = random_gadget(10, seed=0)
    assert g.budget.tolist() == g.limit[:, 0].astype(int).tolist()  # one GPU per worker


# -- utilities -------------------------------------------------------------------------------------------


def test_utility_values_match_the_formulas():
    x = np.array([[0.0, 1.0, 50.0, 400.0]] * 2)
    sig = np.array([[10.0, 0.1, 50.0], [3.0, 0.02, 0.0]])
    want = [[p[0] / (1 + math.exp(-p[1] * (v - p[2]))) for v in row] for p, row in zip(sig, x, strict=True)]
    assert utility_value("sigmoid", sig, x) == pytest.approx(np.array(want))
    assert utility_value("sigmoid", sig, x)[0, 2] == pytest.approx(5.0)  # half of lambda_1 at lambda_3
    p = np.array([[2.0, 0.0, 0.0], [0.5, 0.0, 0.0]])
    assert utility_value("sqrt", p, x) == pytest.approx(p[:, :1] * np.sqrt(x))
    assert utility_value("log", p, x) == pytest.approx(p[:, :1] * np.log(1 + x))
    assert utility_value("log", p, [3.0, 0.0]).tolist() == pytest.approx([2 * math.log(4), 0.0])
    q = np.array([[4.0, 0.5, 0.0]])
    assert utility_value("quadratic", q, [[0.0, 2.0, 8.0, 10.0]]) == pytest.approx(
        np.array([[0.0, 8.0 - 1.0, 32.0 - 16.0, 40.0 - 25.0]]))
    # negative x is clamped for sqrt and log (no nan)
    assert utility_value("sqrt", p, [-4.0, -1.0]).tolist() == [0.0, 0.0]
    assert utility_value("log", p, [-4.0, -1.0]).tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="unknown utility 'exp'"):
        utility_value("exp", p, x)
    assert set(UTILITIES) == {"sigmoid", "sqrt", "log", "quadratic"}


def test_sigmoid_does_not_overflow():
    p = np.array([[10.0, 0.9, 3000.0], [1.0, 1.0, 0.0]])
    with np.errstate(all="raise"):
        v = utility_value("sigmoid", p, [[-1e6, 0.0, 1e6], [-1e300, -1e5, 1e300]])
    assert np.isfinite(v).all()
    assert v[:, 0].tolist() == [0.0, 0.0] and v[0, 2] == 10.0 and v[1, 2] == 1.0


def test_utilities_are_monotone_and_quadratic_peaks():
    rng = np.random.default_rng(0)
    x = np.linspace(0, 5000, 2001)
    for kind in ("sigmoid", "sqrt", "log"):
        params = np.column_stack([rng.uniform(1, 100, 20), rng.uniform(0.001, 0.999, 20),
                                  rng.uniform(300, 3000, 20)])
        v = utility_value(kind, params, np.tile(x, (20, 1)))
        assert (np.diff(v, axis=1) >= 0).all(), kind
    q = np.array([[4.0, 0.5, 0.0], [30.0, 0.01, 0.0]])
    v = utility_value("quadratic", q, np.tile(x, (2, 1)))
    peak = x[np.argmax(v, axis=1)]
    assert peak.tolist() == pytest.approx([8.0, 3000.0], abs=x[1] - x[0])
    assert utility_value("quadratic", q, [[8.0], [3000.0]]).ravel().tolist() == pytest.approx([16.0, 45000.0])
    # the instance applies mu_i to zeta_i * z_i
    inst = jobs(utility_params=[[2.0, 0, 0], [3.0, 0, 0]])
    assert inst.utility_of([4, 8]).tolist() == pytest.approx([2 * math.sqrt(4), 3 * math.sqrt(16)])
    assert inst.utility_of([[0, 1], [2, 8]]) == pytest.approx(np.array([[0, 2], [6, 12]]))


# -- Eq. (1) ------------------------------------------------------------------------------------------------


def test_iterations_per_slot_is_eq_1():
    d, w, b, g, tf, m, tb, gamma = 2e6, 4, 5e8, 1e9, 0.002, 16, 0.04, 0.01
    tau = d * (w - 1) / w * (2 / b + 1 / g) + tf * m + tb + gamma  # 1.5e6 * 5e-9 = 0.0075; total 0.0895
    assert tau == pytest.approx(0.0895)
    assert iterations_per_slot(d, w, b, g, tf, m, tb, gamma) == pytest.approx(1 / tau)
    assert iterations_per_slot(d, w, b, g, tf, m, tb, gamma, slot_seconds=60.0) == pytest.approx(60 / tau)
    # one worker: no ring all-reduce, whatever the bandwidth and model size
    one = iterations_per_slot(d, 1, b, g, tf, m, tb, gamma)
    assert one == pytest.approx(1 / (tf * m + tb + gamma))
    assert iterations_per_slot(1e12, 1, 1.0, 1.0, tf, m, tb, gamma) == pytest.approx(one)
    # vectorised over workers; more workers -> longer iterations
    z = iterations_per_slot(d, np.array([1, 2, 4, 8]), b, g, tf, m, tb, gamma)
    assert z.shape == (4,) and (np.diff(z) < 0).all()


def test_iterations_per_slot_rejects_bad_inputs():
    with pytest.raises(ValueError, match="workers must be >= 1"):
        iterations_per_slot(1e6, 0, 1e9, 1e9, 0.001, 32, 0.05, 0.0)
    with pytest.raises(ValueError, match="workers must be >= 1"):
        iterations_per_slot(1e6, [2, 0], 1e9, 1e9, 0.001, 32, 0.05, 0.0)
    with pytest.raises(ValueError, match="non-positive iteration time"):
        iterations_per_slot(1e6, 1, 1e9, 1e9, 0.0, 32, 0.0, 0.0)
    with pytest.raises(ValueError, match="non-positive iteration time"):
        iterations_per_slot(1e6, 1, 1e9, 1e9, 0.001, 32, 0.05, -1.0)


# -- generators ------------------------------------------------------------------------------------------------


def test_bursty_arrivals_basics():
    for seed in range(5):
        a = bursty_arrivals(40, 30, seed=seed)
        assert a.shape == (40,) and a.min() >= 1 and a.max() <= 30
        assert (np.diff(a) >= 0).all()
        assert np.array_equal(a, bursty_arrivals(40, 30, seed=seed))
    assert not np.array_equal(bursty_arrivals(40, 30, seed=0), bursty_arrivals(40, 30, seed=1))
    assert bursty_arrivals(0, 5, seed=0).shape == (0,)
    assert bursty_arrivals(7, 1, seed=0).tolist() == [1] * 7
    with pytest.raises(ValueError, match="n_jobs = -1"):
        bursty_arrivals(-1, 5)
    with pytest.raises(ValueError, match="horizon = 0"):
        bursty_arrivals(3, 0)


def test_bursts_raise_the_variance_of_per_slot_counts():
    def mean_var(rate):
        counts = [np.bincount(bursty_arrivals(200, 50, burst_rate=rate, seed=s), minlength=51)[1:]
                  for s in range(20)]
        return float(np.mean([c.var() for c in counts]))

    calm, bursty = mean_var(1.0), mean_var(20.0)
    # burst_rate = 1 is a plain multinomial: variance ~ n/T (1 - 1/T) = 3.92 per slot
    assert calm == pytest.approx(200 / 50 * (1 - 1 / 50), rel=0.3)
    assert bursty > 4 * calm  # observed ~ 42 vs ~ 3.8


def test_random_gadget_follows_the_paper_ranges():
    g = random_gadget(300, seed=1)
    assert g.n_jobs == 300 and g.horizon == 200 and g.utility == "sigmoid"
    assert g.cluster.n_servers == 50 and 2 <= g.cluster.n_switches - 1 <= 5
    assert 1 <= g.max_workers.min() and g.max_workers.max() <= 5
    assert set(g.max_workers.tolist()) == {1, 2, 3, 4, 5}
    assert 1000 <= g.limit.min() and g.limit.max() <= 6000 and (g.limit == np.round(g.limit)).all()
    assert 50 <= g.zeta.min() and g.zeta.max() <= 500 and (g.zeta == np.round(g.zeta)).all()
    assert 0.1 <= g.bandwidth.min() and g.bandwidth.max() <= 5.0
    assert (g.per_worker == 1).all()
    l1, l2, l3 = g.utility_params.T
    assert 1 <= l1.min() and l1.max() <= 100
    assert 0 < l2.min() and l2.max() < 1
    assert 300 <= l3.min() and l3.max() <= 3000
    assert (np.diff(g.arrival) >= 0).all() and 1 <= g.arrival.min() and g.arrival.max() <= 200
    assert random_gadget(10, seed=7) == random_gadget(10, seed=7)
    assert random_gadget(10, seed=7) != random_gadget(10, seed=8)


def test_random_gadget_options():
    uni = random_gadget(30, arrivals="uniform", horizon=10, seed=0)
    assert (np.diff(uni.arrival) >= 0).all() and 1 <= uni.arrival.min() and uni.arrival.max() <= 10
    assert random_gadget(6, arrivals="zero", seed=0).arrival.tolist() == [1] * 6
    for kind in ("sqrt", "log"):
        p = random_gadget(20, utility=kind, seed=2).utility_params
        assert (p[:, 1:] == 0).all() and 1 <= p[:, 0].min() and p[:, 0].max() <= 100
    q = random_gadget(20, utility="quadratic", seed=2)
    # lambda_2 = lambda_1 / (zeta F): the utility peaks at the job's full budget
    peak = q.utility_params[:, 0] / q.utility_params[:, 1]
    assert peak == pytest.approx(q.zeta * q.budget)
    c = Cluster([[4, 1], [2, 3]], links=STAR_LINKS, bandwidth=[10] * 4, n_switches=1, resources=("gpu", "cpu"))
    two = random_gadget(5, cluster=c, workers=(2, 2), limit=(3, 3), seed=0)
    assert two.cluster is c and (two.per_worker == 1).all() and (two.limit == 3).all()
    assert two.max_workers.tolist() == [2] * 5 and two.budget.tolist() == [3] * 5
    assert random_gadget(3, name="x", seed=0).name == "x"
    with pytest.raises(ValueError, match="n_jobs = 0"):
        random_gadget(0)
    with pytest.raises(ValueError, match="utility = 'cubic'"):
        random_gadget(3, utility="cubic")
    with pytest.raises(ValueError, match="arrivals = 'poisson'"):
        random_gadget(3, arrivals="poisson")


def test_presets():
    assert PRESETS == ("paper", "small", "tiny")
    paper = gadget_preset("paper", jobs=7, seed=2)
    assert (paper.n_jobs, paper.cluster.n_servers, paper.horizon, paper.name) == (7, 50, 200, "paper-7")
    assert 2 <= paper.cluster.n_switches - 1 <= 5
    small = gadget_preset("small", jobs=5, seed=2)
    assert (small.n_jobs, small.cluster.n_servers, small.cluster.n_switches, small.horizon) == (5, 8, 3, 20)
    tiny = gadget_preset("tiny", jobs=6, seed=2)
    assert (tiny.n_jobs, tiny.cluster.n_servers, tiny.cluster.n_switches, tiny.horizon) == (6, 4, 3, 4)
    assert set(tiny.cluster.capacity.ravel().tolist()) <= {1.0, 2.0, 4.0}
    assert 2 <= tiny.budget.min() and tiny.budget.max() <= 12
    assert gadget_preset("tiny", jobs=20, seed=2, utility="log", horizon=9).horizon == 9
    assert gadget_preset("small", seed=4) == gadget_preset("small", seed=4)
    assert gadget_preset("small", utility="sqrt", seed=4).utility == "sqrt"
    with pytest.raises(ValueError, match="unknown preset 'huge'"):
        gadget_preset("huge")


def test_iteration_time_needs_positive_speeds_and_presets_a_positive_horizon():
    from clusteropt.instances.gadget.instance import gadget_preset as _preset
    from clusteropt.instances.gadget.instance import iterations_per_slot as _ips

    with pytest.raises(ValueError, match="bandwidth"):
        _ips(1e6, 2, 0.0, 1e9, 0.001, 32, 0.05, 0.0)
    with pytest.raises(ValueError, match="gpu_speed"):
        _ips(1e6, 2, 1e9, -1.0, 0.001, 32, 0.05, 0.0)
    with pytest.raises(ValueError, match="horizon"):
        _preset("small", jobs=2, horizon=0)


@pytest.mark.parametrize("utility", ["sigmoid", "sqrt", "log", "quadratic"])
def test_alone_bound_bounds_every_policy(utility):
    from clusteropt.online import run_online
    from clusteropt.online.gadget import make_policy
    from clusteropt.verify import check_gadget_schedule

    inst = gadget_preset("small", jobs=12, seed=3, utility=utility)
    cap = np.minimum(inst.budget, inst.max_workers * (inst.horizon - inst.arrival + 1))
    bound = inst.alone_bound()
    assert bound >= inst.utility_of(cap).sum() - 1e-9  # the maximum over z, not only the end point
    for name in ("gadget", "las", "fifo"):
        run = run_online(make_policy(name), inst, horizon=inst.horizon, seed=0)
        assert check_gadget_schedule(inst, run.schedule).total_utility <= bound + 1e-9 * abs(bound)


@pytest.mark.parametrize("utility", ["sigmoid", "sqrt", "log", "quadratic"])
def test_alone_bound_equals_the_maximum_over_every_worker_slot_count(utility):
    # the bound takes four candidates per job instead of a jobs x budget grid (a Philly budget is
    # ~10^5 worker-slots); here it is checked against that grid
    import dataclasses

    for seed in range(3):
        inst = gadget_preset("small", jobs=12, seed=seed, utility=utility)
        cap = np.minimum(inst.budget, inst.max_workers * (inst.horizon - inst.arrival + 1))
        if utility == "quadratic":  # the presets put the vertex at the budget; move it inside the range
            par = np.array(inst.utility_params)
            par[:, 1] = par[:, 0] / (inst.zeta * (cap / 2 + 0.3))
            inst = dataclasses.replace(inst, utility_params=par)
        grid = np.minimum(np.arange(int(cap.max()) + 1)[None, :], cap[:, None])
        assert inst.alone_bound() == pytest.approx(float(inst.utility_of(grid).max(axis=1).sum()), rel=1e-12)


def test_presets_take_n_jobs_like_the_generators():
    import clusteropt.instances as ci

    by_name = ci.gadget_preset("small", n_jobs=5, seed=1)
    assert by_name == ci.gadget_preset("small", jobs=5, seed=1) and by_name.n_jobs == 5
    assert ci.broker_preset("tiny", n_jobs=2, seed=0) == ci.broker_preset("tiny", jobs=2, seed=0)
    with pytest.raises(TypeError, match="pass one of them"):
        ci.gadget_preset("small", n_jobs=5, jobs=5)
    with pytest.raises(TypeError, match="pass one of them"):
        ci.broker_preset("tiny", n_jobs=2, jobs=3)


def _eager_paths(c):
    """All pairs at once, as networkx finds them (the lazy mapping must agree)."""
    import itertools

    import networkx as nx

    g = c.graph()
    out = {}
    for s in range(c.n_servers):
        for t, nodes in nx.single_source_shortest_path(g, s).items():
            if t < c.n_servers and t != s:
                out[s, t] = [g[a][b]["index"] for a, b in itertools.pairwise(nodes)]
    return out


@pytest.mark.parametrize("cluster", [fat_tree_cluster(30, seed=1), fat_tree_cluster(7, n_racks=3, seed=2),
                                     k_ary_fat_tree(4, seed=0)], ids=["tree-30", "tree-7", "fat-tree-4"])
def test_lazy_paths_equal_all_pairs_shortest_paths(cluster):
    paths = cluster.paths()
    eager = _eager_paths(cluster)
    assert len(paths) == len(eager) and set(paths) == set(eager)
    assert all(paths[key] == value for key, value in eager.items())
    assert paths.get((0, 0)) is None and paths.get((0, cluster.n_servers)) is None and (0, -1) not in paths
    with pytest.raises(KeyError):
        paths["a", 1]
