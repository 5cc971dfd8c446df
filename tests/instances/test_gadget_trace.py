"""GPU job trace readers (clusteropt.instances.gadget.trace).

``tests/data/philly_sample.csv`` (slot 60 s), hand-computed; sorted by timestamp, ties in file order:

====  =========  ========  ====  =======  ==========================
line  timestamp  duration  N_i   a_i      F_i = max(1, ceil(d/60) N)
====  =========  ========  ====  =======  ==========================
2     0          3600      1     1        60
3     45         125       2     1        3 * 2 = 6
9     61         60        1     2        1
5     120        7200      8     3        120 * 8 = 960
4     300        59        4     6        1 * 4 = 4
6     300        0         1     6        max(1, 0) = 1
8     660        61        16    12       2 * 16 = 32
7     1800.5     600       2     31       10 * 2 = 20
====  =========  ========  ====  =======  ==========================

``tests/data/alibaba_sample.csv`` (slot 60 s): pods 0001 and 0005 are CPU-only (skipped); 0003 and
0006 ask for half / a quarter of a GPU (one worker); 0003 and 0007 have no deletion time (F drawn):

====  ====  ========  =========  ==========================  ====  ====  ==================
line  pod   creation  num_gpu    run (deletion - scheduled)  N_i   a_i   F_i
====  ====  ========  =========  ==========================  ====  ====  ==================
2     0000  1000      1 (1000)   3600                        1     1     60
6     0004  1080      8 (1000)   7190                        8     2     120 * 8 = 960
10    0008  1080      2 (1000)   0                           2     2     1
4     0002  1100      2 (1000)   270                         2     2     5 * 2 = 10
5     0003  1200      1 (500)    missing                     1     4     drawn
8     0006  1700      1 (250)    60                          1     12    1
9     0007  1900      4 (1000)   missing (not scheduled)     4     16    drawn
====  ====  ========  =========  ==========================  ====  ====  ==================
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from clusteropt.instances import read_alibaba_jobs as exported_alibaba
from clusteropt.instances import read_philly_jobs as exported_philly
from clusteropt.instances.base import load_instance
from clusteropt.instances.coflow.trace import TraceError
from clusteropt.instances.gadget.instance import Cluster, GadgetInstance, _draw_job_params, fat_tree_cluster
from clusteropt.instances.gadget.trace import read_alibaba_jobs, read_philly_jobs

DATA = Path(__file__).resolve().parents[1] / "data"
PHILLY = DATA / "philly_sample.csv"
ALIBABA = DATA / "alibaba_sample.csv"
PHILLY_HEAD = "timestamp,duration,num_gpus,gpu_time,cluster"
ALIBABA_HEAD = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
                "scheduled_time")


def small_cluster() -> Cluster:
    return fat_tree_cluster(6, n_racks=2, seed=0)


def write(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return path


def philly(tmp_path: Path, rows: list[str], head: str = PHILLY_HEAD) -> Path:
    return write(tmp_path, "jobs.csv", [head, *rows])


def alibaba(tmp_path: Path, rows: list[str], head: str = ALIBABA_HEAD) -> Path:
    return write(tmp_path, "pods.csv", [head, *rows])


def pod(num_gpu="1", gpu_milli="1000", creation="0", deletion="60", scheduled="0", name="p") -> str:
    return f"{name},1000,1024,{num_gpu},{gpu_milli},,LS,Succeeded,{creation},{deletion},{scheduled}"


# -- the sample files ---------------------------------------------------------------------------

def test_philly_sample_arrivals_workers_budgets():
    inst = read_philly_jobs(PHILLY, seed=0)
    assert isinstance(inst, GadgetInstance)
    assert inst.arrival.tolist() == [1, 1, 2, 3, 6, 6, 12, 31]
    assert inst.max_workers.tolist() == [1, 2, 1, 8, 4, 1, 16, 2]
    assert inst.budget.tolist() == [60, 6, 1, 960, 4, 1, 32, 20]
    assert inst.horizon == 31  # the last arrival, nothing added
    assert inst.name == "philly-philly_sample"
    assert inst.utility == "sigmoid"
    assert inst.cluster.n_servers == 50  # default: the paper's fat-tree cluster
    assert inst.cluster.resources == ("gpu",)
    assert inst.per_worker.tolist() == [[1.0]] * 8
    assert inst.limit[:, 0].tolist() == [60, 6, 1, 960, 4, 1, 32, 20]
    # no id column: each job is named after its line (the table above), in arrival order
    assert inst.job_ids == tuple(f"line {n}" for n in (2, 3, 9, 5, 4, 6, 8, 7))


def test_alibaba_sample_arrivals_workers_budgets(caplog):
    with caplog.at_level(logging.INFO, logger="clusteropt.instances.gadget.trace"):
        inst = read_alibaba_jobs(ALIBABA, seed=0)
    assert inst.arrival.tolist() == [1, 2, 2, 2, 4, 12, 16]
    assert inst.max_workers.tolist() == [1, 8, 2, 2, 1, 1, 4]
    budget = inst.budget.tolist()
    assert [budget[k] for k in (0, 1, 2, 3, 5)] == [60, 960, 1, 10, 1]
    assert all(1000 <= budget[k] <= 6000 for k in (4, 6))  # no deletion time: drawn
    assert inst.horizon == 16
    assert inst.name == "alibaba-alibaba_sample"
    assert [j[-4:] for j in inst.job_ids] == ["0000", "0004", "0008", "0002", "0003", "0006", "0007"]
    assert "skipped 2 CPU-only pods" in caplog.text
    assert "2 pods ask for a fraction of a GPU" in caplog.text
    assert "2 jobs have no run time" in caplog.text


def test_exported_from_package():
    assert exported_philly is read_philly_jobs
    assert exported_alibaba is read_alibaba_jobs


@pytest.mark.parametrize("reader, path", [(read_philly_jobs, PHILLY), (read_alibaba_jobs, ALIBABA)])
@pytest.mark.parametrize("utility", ["sigmoid", "sqrt", "log", "quadratic"])
def test_json_round_trip(reader, path, utility, tmp_path):
    inst = reader(path, utility=utility, seed=3)
    back = GadgetInstance.from_json(inst.to_json())
    assert back == inst
    assert back.to_json() == inst.to_json()
    inst.to_json(tmp_path / "inst.json")
    assert load_instance(tmp_path / "inst.json") == inst


# -- seeds and drawn parameters -----------------------------------------------------------------

@pytest.mark.parametrize("reader, path", [(read_philly_jobs, PHILLY), (read_alibaba_jobs, ALIBABA)])
def test_seed_reproduces(reader, path):
    a, b = reader(path, seed=7), reader(path, seed=7)
    assert a == b
    c = reader(path, seed=8)
    assert c != a
    assert c.arrival.tolist() == a.arrival.tolist()  # from the trace, not the seed
    assert c.max_workers.tolist() == a.max_workers.tolist()
    assert not np.array_equal(c.zeta, a.zeta)
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    assert reader(path, seed=g1) == reader(path, seed=g2)  # a Generator works as the seed


@pytest.mark.parametrize("utility", ["sigmoid", "sqrt", "log", "quadratic"])
def test_drawn_parameters_are_random_gadgets(utility):
    """With a given cluster (no cluster draw) the draws are exactly the shared helper's."""
    cluster = small_cluster()
    inst = read_philly_jobs(PHILLY, cluster=cluster, utility=utility, seed=11)
    z, b, params = _draw_job_params(np.random.default_rng(11), inst.limit[:, 0], utility)
    assert inst.zeta.tolist() == z.tolist()
    assert inst.bandwidth.tolist() == b.tolist()
    assert inst.utility_params.tolist() == params.tolist()
    assert ((inst.zeta >= 50) & (inst.zeta <= 500)).all()
    assert ((inst.bandwidth >= 0.1) & (inst.bandwidth <= 5.0)).all()
    l1 = inst.utility_params[:, 0]
    assert ((l1 >= 1) & (l1 <= 100)).all()
    if utility == "sigmoid":
        assert ((inst.utility_params[:, 1] > 0) & (inst.utility_params[:, 1] < 1)).all()
        assert ((inst.utility_params[:, 2] >= 300) & (inst.utility_params[:, 2] <= 3000)).all()
    if utility == "quadratic":
        np.testing.assert_allclose(inst.utility_params[:, 1], l1 / (inst.zeta * inst.limit[:, 0]))
    assert inst.cluster is cluster


def test_missing_budgets_drawn_first():
    cluster = small_cluster()
    inst = read_alibaba_jobs(ALIBABA, cluster=cluster, seed=2)
    rng = np.random.default_rng(2)
    drawn = rng.integers(1000, 6001, 2).astype(float)
    assert inst.limit[[4, 6], 0].tolist() == drawn.tolist()
    z, _, _ = _draw_job_params(rng, inst.limit[:, 0], "sigmoid")
    assert inst.zeta.tolist() == z.tolist()


def test_default_cluster_drawn_from_the_seed():
    inst = read_philly_jobs(PHILLY, seed=4)
    rng = np.random.default_rng(4)
    assert inst.cluster == fat_tree_cluster(seed=rng)


# -- options ------------------------------------------------------------------------------------

def test_slot_seconds():
    inst = read_philly_jobs(PHILLY, slot_seconds=300.0, cluster=small_cluster(), seed=0)
    assert inst.arrival.tolist() == [1, 1, 1, 1, 2, 2, 3, 7]
    # ceil(d / 300) * N, at least 1
    assert inst.budget.tolist() == [12 * 1, 1 * 2, 1 * 1, 24 * 8, 1 * 4, 1, 1 * 16, 2 * 2]


def test_max_jobs_keeps_the_earliest():
    full = read_philly_jobs(PHILLY, cluster=small_cluster(), seed=0)
    inst = read_philly_jobs(PHILLY, cluster=small_cluster(), max_jobs=5, seed=0)
    assert inst.n_jobs == 5
    assert inst.arrival.tolist() == full.arrival[:5].tolist()
    assert inst.max_workers.tolist() == full.max_workers[:5].tolist()
    assert inst.horizon == 6


def test_horizon_drops_later_jobs(caplog):
    with caplog.at_level(logging.INFO, logger="clusteropt.instances.gadget.trace"):
        inst = read_philly_jobs(PHILLY, cluster=small_cluster(), horizon=6, seed=0)
    assert inst.horizon == 6
    assert inst.arrival.tolist() == [1, 1, 2, 3, 6, 6]
    assert inst.max_workers.tolist() == [1, 2, 1, 8, 4, 1]
    assert "dropped 2 jobs arriving after the horizon T = 6" in caplog.text
    longer = read_philly_jobs(PHILLY, cluster=small_cluster(), horizon=100, seed=0)
    assert longer.horizon == 100 and longer.n_jobs == 8


def test_cluster_with_other_resources(tmp_path):
    cluster = Cluster([[4, 16], [2, 8]], links=[[0, 2], [2, 0], [1, 2], [2, 1]], bandwidth=[10] * 4,
                      n_switches=1, resources=("cpu", "gpu"))
    inst = read_philly_jobs(PHILLY, cluster=cluster, seed=0)
    assert inst.per_worker.tolist() == [[0.0, 1.0]] * 8
    assert inst.limit[:, 0].tolist() == [0.0] * 8
    assert inst.budget.tolist() == [60, 6, 1, 960, 4, 1, 32, 20]
    no_gpu = Cluster([[4]], links=[], bandwidth=[], resources=("cpu",))
    with pytest.raises(ValueError, match="'gpu'"):
        read_philly_jobs(PHILLY, cluster=no_gpu)


@pytest.mark.parametrize("kwargs, match", [
    ({"slot_seconds": 0}, "slot_seconds"),
    ({"slot_seconds": float("nan")}, "slot_seconds"),
    ({"horizon": 0}, "horizon"),
    ({"horizon": 2.5}, "horizon"),
    ({"max_jobs": 0}, "max_jobs"),
    ({"utility": "linear"}, "utility"),
])
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        read_philly_jobs(PHILLY, **kwargs)
    with pytest.raises(ValueError, match=match):
        read_alibaba_jobs(ALIBABA, **kwargs)


def test_extra_and_reordered_columns(tmp_path):
    path = philly(tmp_path, ["x,2,120,90,a", "y,1,60,60,b"], head="user,num_gpus,timestamp,duration,vc")
    inst = read_philly_jobs(path, cluster=small_cluster(), seed=0)
    assert inst.arrival.tolist() == [1, 2]
    assert inst.max_workers.tolist() == [1, 2]
    assert inst.budget.tolist() == [1, 4]  # y: 1 slot x 1 worker; x: ceil(90 / 60) x 2 workers


def test_blank_lines_and_whole_float_gpus(tmp_path):
    path = write(tmp_path, "jobs.csv", [PHILLY_HEAD, "0,60,2.0,120,0", "", "60,60,1,60,0"])
    inst = read_philly_jobs(path, cluster=small_cluster(), seed=0)
    assert inst.max_workers.tolist() == [2, 1]
    path = write(tmp_path, "jobs.csv", [PHILLY_HEAD, "0,60,2,120,0", "", "60,x,1,60,0"])
    with pytest.raises(TraceError, match=r"jobs\.csv:4: duration = 'x'"):
        read_philly_jobs(path)


def test_cpu_only_pods(tmp_path, caplog):
    path = alibaba(tmp_path, [pod(creation="0", num_gpu="0", gpu_milli="0"), pod(creation="120"),
                              pod(creation="180", num_gpu="0", gpu_milli="0")])
    with caplog.at_level(logging.INFO, logger="clusteropt.instances.gadget.trace"):
        inst = read_alibaba_jobs(path, cluster=small_cluster(), seed=0)
    assert inst.n_jobs == 1
    assert inst.arrival.tolist() == [1]  # t0 is the first GPU pod
    assert "skipped 2 CPU-only pods" in caplog.text
    with pytest.raises(TraceError, match=r"pods\.csv:2: num_gpu = '0'; expected >= 1 .*skip_cpu_only") as exc:
        read_alibaba_jobs(path, skip_cpu_only=False)
    assert (exc.value.path, exc.value.lineno) == (str(path), 2)
    only_cpu = alibaba(tmp_path, [pod(num_gpu="0", gpu_milli="0")])
    with pytest.raises(ValueError, match="no GPU jobs"):
        read_alibaba_jobs(only_cpu)


def test_fractional_gpu_is_one_worker(tmp_path):
    path = alibaba(tmp_path, [pod(num_gpu="1", gpu_milli="500", deletion="600"),
                              pod(num_gpu="2", gpu_milli="300", deletion="600"),
                              pod(num_gpu="3", gpu_milli="1000", deletion="600"),
                              pod(num_gpu="1", gpu_milli="0", deletion="600")])
    inst = read_alibaba_jobs(path, cluster=small_cluster(), seed=0)
    assert inst.max_workers.tolist() == [1, 1, 3, 1]
    assert inst.budget.tolist() == [10, 10, 30, 10]


@pytest.mark.parametrize("deletion, scheduled", [("", "10"), ("600", ""), ("nan", "10"), ("NaN", "NaN"), ("", "")])
def test_missing_run_time_drawn(tmp_path, deletion, scheduled):
    path = alibaba(tmp_path, [pod(deletion=deletion, scheduled=scheduled), pod(creation="60")])
    inst = read_alibaba_jobs(path, cluster=small_cluster(), seed=0)
    assert 1000 <= inst.budget[0] <= 6000
    assert inst.budget[1] == 1


# -- malformed files ----------------------------------------------------------------------------

def raises_at(path: Path, lineno: int, pattern: str, reader, **kwargs) -> TraceError:
    with pytest.raises(TraceError, match=pattern) as exc:
        reader(path, **kwargs)
    assert str(exc.value).startswith(f"{path}:{lineno}: ")
    assert (exc.value.path, exc.value.lineno) == (str(path), lineno)
    return exc.value


@pytest.mark.parametrize("row, pattern", [
    ("60,60,1,60", r"column count = 4; expected 5"),
    ("60,60,1,60,0,extra", r"column count = 6; expected 5"),
    ("sixty,60,1,60,0", r"timestamp = 'sixty'; expected a finite number"),
    ("60,1h,1,60,0", r"duration = '1h'; expected a finite number"),
    ("60,60,two,60,0", r"num_gpus = 'two'; expected a finite number"),
    ("-60,60,1,60,0", r"timestamp = '-60'; expected a finite number >= 0"),
    ("60,-1,1,60,0", r"duration = '-1'; expected a finite number >= 0"),
    ("60,60,-2,60,0", r"num_gpus = '-2'; expected a finite number >= 0"),
    ("nan,60,1,60,0", r"timestamp = 'nan'; expected a finite number"),
    ("60,inf,1,60,0", r"duration = 'inf'; expected a finite number"),
    (",60,1,60,0", r"timestamp = ''; expected a finite number"),
    ("60,60,0,0,0", r"num_gpus = '0'; expected a whole number >= 1"),
    ("60,60,1.5,60,0", r"num_gpus = '1.5'; expected a whole number >= 1"),
])
def test_philly_bad_row(tmp_path, row, pattern):
    path = philly(tmp_path, ["0,60,1,60,0", "30,60,1,60,0", row])
    raises_at(path, 4, pattern, read_philly_jobs)


@pytest.mark.parametrize("row, pattern", [
    (pod()[: pod().rindex(",")], r"column count = 10; expected 11"),
    (pod() + ",x", r"column count = 12; expected 11"),
    (pod(creation=""), r"creation_time = ''; expected a finite number \(creation_time is required"),
    (pod(creation="NaN"), r"creation_time = 'NaN'; expected a finite number \(creation_time is required"),
    (pod(creation="-5"), r"creation_time = '-5'; expected a finite number >= 0"),
    (pod(num_gpu="x"), r"num_gpu = 'x'; expected a finite number"),
    (pod(num_gpu="-1"), r"num_gpu = '-1'; expected a finite number >= 0"),
    (pod(num_gpu="0.5"), r"num_gpu = '0.5'; expected a whole number >= 0"),
    (pod(gpu_milli=""), r"gpu_milli = ''; expected a finite number"),
    (pod(gpu_milli="1500"), r"gpu_milli = '1500'; expected a per-GPU share in \[0, 1000\]"),
    (pod(gpu_milli="-100"), r"gpu_milli = '-100'; expected a finite number >= 0"),
    (pod(deletion="-1"), r"deletion_time = '-1'; expected a finite number >= 0"),
    (pod(scheduled="soon"), r"scheduled_time = 'soon'; expected a finite number"),
    (pod(deletion="50", scheduled="100"), r"deletion_time = '50'; expected >= scheduled_time = 100"),
])
def test_alibaba_bad_row(tmp_path, row, pattern):
    path = alibaba(tmp_path, [pod(), row])
    raises_at(path, 3, pattern, read_alibaba_jobs)


def test_empty_file(tmp_path):
    path = write(tmp_path, "empty.csv", [])
    raises_at(path, 1, r"header = ''; expected a CSV header .*the file is empty", read_philly_jobs)
    raises_at(path, 1, r"the file is empty", read_alibaba_jobs)
    path = write(tmp_path, "blank.csv", ["", ""])
    raises_at(path, 1, r"the file is empty", read_philly_jobs)


def test_header_only(tmp_path):
    raises_at(philly(tmp_path, []), 1, r"at least one job row after it; the file has none", read_philly_jobs)
    raises_at(alibaba(tmp_path, []), 1, r"at least one job row after it", read_alibaba_jobs)


def test_missing_header_columns_named(tmp_path):
    path = philly(tmp_path, ["0,1,60"], head="timestamp,gpu_time,cluster")
    err = raises_at(path, 1, r"header = 'timestamp,gpu_time,cluster'; expected the columns "
                             r"timestamp, duration, num_gpus; missing: duration, num_gpus", read_philly_jobs)
    assert "missing: duration, num_gpus" in str(err)
    head = ALIBABA_HEAD.replace(",scheduled_time", "").replace("gpu_milli,", "")
    path = alibaba(tmp_path, ["p,1,1,1,,LS,Running,0,60"], head=head)
    raises_at(path, 1, r"missing: gpu_milli, scheduled_time", read_alibaba_jobs)


def test_repeated_header_column(tmp_path):
    path = philly(tmp_path, ["0,60,1,60"], head="timestamp,duration,num_gpus,duration")
    raises_at(path, 1, r"distinct column names \(duration repeated\)", read_philly_jobs)


def test_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_philly_jobs(tmp_path / "nope.csv")


# -- hostile files (issue 18, item 5): one TraceError at <file>:<line>, nothing else --------------------

def test_outlier_timestamp_needs_an_explicit_horizon(tmp_path, caplog):
    # one time stamp of 1e20 s made a horizon of 1.7e18 slots that `clusteropt run` never finished
    path = philly(tmp_path, ["0,60,1,60,0", "1e20,60,1,60,0", "120,60,2,120,0"])
    err = raises_at(path, 3, r"timestamp = 1e\+20; expected a time at most MAX_HORIZON = 1000000 slots of "
                             r"slot_seconds = 60\.0 after the earliest timestamp 0\.0 \(line 2\)",
                    read_philly_jobs)
    assert "pass horizon=" in str(err)
    with caplog.at_level(logging.INFO, logger="clusteropt.instances.gadget.trace"):
        inst = read_philly_jobs(path, cluster=small_cluster(), horizon=10, seed=0)
    assert inst.horizon == 10 and inst.arrival.tolist() == [1, 3]
    assert "dropped 1 jobs arriving after the horizon T = 10" in caplog.text
    assert read_philly_jobs(path, cluster=small_cluster(), max_jobs=2, seed=0).horizon == 3
    # an early outlier: the first later job is named, with the early one's line
    path = alibaba(tmp_path, [pod(creation="1700000000"), pod(creation="0"), pod(creation="1700000060")])
    raises_at(path, 2, r"creation_time = 1700000000\.0; expected .* after the earliest creation_time 0\.0 "
                       r"\(line 3\)", read_alibaba_jobs)
    # 10**6 slots are allowed: the last arrival is slot 1 + 999999
    path = philly(tmp_path, ["0,60,1,60,0", "59999940,60,1,60,0"])
    assert read_philly_jobs(path, cluster=small_cluster(), seed=0).horizon == 10**6


def test_huge_timestamp_with_tiny_slot_is_refused_not_wrapped(tmp_path):
    path = philly(tmp_path, ["0,0,1,60,0", "1e300,0,1,60,0"])  # run time 0: F_i = 1 at any slot length
    raises_at(path, 3, r"timestamp = 1e\+300; .* arrives in slot inf", read_philly_jobs, slot_seconds=1e-300)
    inst = read_philly_jobs(path, cluster=small_cluster(), slot_seconds=1e-300, horizon=5, seed=0)
    assert inst.arrival.tolist() == [1]


@pytest.mark.parametrize("reader, make, col", [
    (read_philly_jobs, lambda p, v: philly(p, [f"0,60,{v},60,0"]), "num_gpus"),
    (read_alibaba_jobs, lambda p, v: alibaba(p, [pod(num_gpu=v)]), "num_gpu"),
])
def test_gpu_count_is_range_checked(tmp_path, reader, make, col):
    # was an OverflowError converting 1e20 to int64
    raises_at(make(tmp_path, "1e20"), 2, rf"{col} = '1e20'; expected a whole number in \[\d, 1000000\] "
                                         r"\(MAX_GPUS\)", reader)
    assert reader(make(tmp_path, "1000000"), cluster=small_cluster(), seed=0).max_workers.tolist() == [10**6]


def test_run_time_is_range_checked(tmp_path):
    # F_i = ceil(1e300 / 60) * 4 was accepted, and its budget wrapped around int64
    raises_at(philly(tmp_path, ["0,1e300,4,0,0"]), 2, r"duration = '1e300'; expected a run time of at most "
              r"MAX_MAGNITUDE = 1e7 worker-slots \(the limit F_i is a field\): ceil\(run time / slot_seconds\) "
              r"\* 4 GPUs = 6\.67e\+298", read_philly_jobs)
    raises_at(alibaba(tmp_path, [pod(deletion="1e300")]), 2, r"deletion_time = '1e300'; expected a run time of at "
              "most MAX_MAGNITUDE", read_alibaba_jobs)


@pytest.mark.parametrize(("duration", "refused"), [(60 * 2_500_000, False), (60 * 2_500_000 + 1, True)])
def test_run_time_stops_at_max_magnitude_worker_slots(tmp_path, duration, refused):
    # 4 GPUs for 2.5e6 one-minute slots is F_i = 1e7 = MAX_MAGNITUDE: read; one second more is refused
    # at its line, not later by the instance (which would not name the line)
    path = philly(tmp_path, [f"0,{duration},4,0,0"])
    if refused:
        raises_at(path, 2, r"F_i is a field\): ceil\(run time / slot_seconds\) \* 4 GPUs = 1e\+07 with "
                  r"slot_seconds = 60\.0; a larger slot_seconds", read_philly_jobs)
        assert read_philly_jobs(path, slot_seconds=120.0).budget.tolist() == [5_000_004]
    else:
        assert read_philly_jobs(path).budget.tolist() == [10_000_000]


def test_field_over_the_csv_limit_names_the_line(tmp_path):
    path = philly(tmp_path, ["0,60,1,60,0", "0,60,1,60," + "x" * 200_000])  # was a bare _csv.Error
    raises_at(path, 3, r"CSV record = 'field larger than field limit \(131072\)'; expected well-formed CSV",
              read_philly_jobs)


def test_invalid_utf8_names_byte_and_line(tmp_path):
    path = tmp_path / "pods.csv"
    path.write_bytes(f"{ALIBABA_HEAD}\n{pod()}\n{pod(name='caf')}".encode() + b"\xe9" + b"\n")
    # was a UnicodeDecodeError without the file name
    raises_at(path, 3, r"byte \d+ = b'\\xe9'; expected UTF-8 text", read_alibaba_jobs)


def test_utf8_bom_is_accepted(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + PHILLY.read_bytes())
    inst = read_philly_jobs(path, cluster=small_cluster(), seed=0)
    assert inst.arrival.tolist() == read_philly_jobs(PHILLY, cluster=small_cluster(), seed=0).arrival.tolist()


def test_no_gpu_job_is_a_trace_error(tmp_path):
    # was a bare ValueError
    raises_at(alibaba(tmp_path, [pod(num_gpu="0", gpu_milli="0")]), 1, r"job rows = 0; expected at least one GPU "
              r"job; no GPU jobs", read_alibaba_jobs)


def test_subnormal_slot_seconds_is_refused_up_front():
    with pytest.raises(ValueError, match=r"^slot_seconds = 1e-320; expected a positive finite number >= 2\.2"):
        read_philly_jobs(PHILLY, slot_seconds=1e-320)


def test_many_repeated_header_columns_give_a_short_message(tmp_path):
    head = ",".join([f"c{k}" for k in range(50)] * 2) + "," + PHILLY_HEAD
    pattern = r"distinct column names \(c0, c1, c10, c11, c12, c13, c14, c15, c16, c17, \.\.\. repeated\)"
    err = raises_at(philly(tmp_path, [], head=head), 1, pattern, read_philly_jobs)
    assert len(str(err)) < 400


def test_job_id_column_and_repeated_ids(tmp_path):
    p = tmp_path / "philly.csv"
    p.write_text("jobid,timestamp,duration,num_gpus\napp_7,60,60,1\napp_3,0,60,2\n,120,60,1\napp_7,180,60,1\n")
    inst = read_philly_jobs(p, seed=0)
    # arrival order; an empty id is the line; a repeated id (a resubmitted job) gets its line appended
    assert inst.job_ids == ("app_3", "app_7 (line 2)", "line 4", "app_7 (line 5)")
    back = GadgetInstance.from_json(inst.to_json())
    assert back.job_ids == inst.job_ids
