"""The Alibaba GPU cluster 2023 node list as a GADGET cluster (``read_alibaba_nodes``, issue 22).

Rows in the trace's format (``sn,cpu_milli,memory_mib,gpu,model``), hand-made: capacities per
resource, GPU-less nodes, racks by model or by file order cut at ``rack_size``, the two-level tree
and its bandwidths, the k-ary fat-tree instead (``topology="fat-tree"``), every malformed row
named by line and field; and the node list running together with a pod list through Alg. 1 and the
baselines, verified (on the fat-tree through the quotient tree).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from clusteropt.instances.coflow.trace import TraceError
from clusteropt.instances.gadget.trace import read_alibaba_jobs, read_alibaba_nodes
from clusteropt.online import run_online
from clusteropt.online.gadget import make_policy
from clusteropt.verify import check_gadget_schedule

HEAD = "sn,cpu_milli,memory_mib,gpu,model"
NODES = ["n0,64000,262144,2,P100", "n1,96000,393216,8,G2", "n2,96000,393216,8,G2", "n3,8000,32768,0,",
         "n4,64000,262144,2,P100", "n5,104000,524288,2,T4", "n6,96000,393216,8,G2"]


def nodes(tmp_path: Path, rows: list[str], head: str = HEAD) -> Path:
    path = tmp_path / "nodes.csv"
    path.write_text("\n".join([head, *rows]) + "\n")
    return path


def test_capacities_racks_and_tree(tmp_path):
    cluster, names = read_alibaba_nodes(nodes(tmp_path, NODES), rack_size=2, resources=("gpu", "cpu", "memory"))
    # by model in order of first appearance (P100, G2, T4), file order inside; n3 has no GPU
    assert names.names == ("n0", "n4", "n1", "n2", "n6", "n5")
    assert names.models == ("P100", "P100", "G2", "G2", "G2", "T4")
    assert cluster.capacity.tolist() == [[2, 64, 256], [2, 64, 256], [8, 96, 384], [8, 96, 384], [8, 96, 384],
                                         [2, 104, 512]]
    assert cluster.rack.tolist() == [0, 0, 1, 1, 2, 3]  # G2 cut at rack_size 2
    assert cluster.resources == ("gpu", "cpu", "memory")
    n, k = 6, 4
    assert cluster.n_switches == k + 1 and cluster.is_tree() and cluster.n_links == 2 * n + 2 * k
    bw = dict(zip(map(tuple, cluster.links.tolist()), cluster.bandwidth.tolist(), strict=True))
    assert bw[(0, n + 0)] == bw[(n + 0, 0)] == 100.0 and bw[(n + 3, n + k)] == 800.0
    for r in range(k):  # one model per rack
        assert len({names.models[s] for s in np.flatnonzero(cluster.rack == r)}) == 1


def test_file_order_and_gpuless_nodes(tmp_path, caplog):
    path = nodes(tmp_path, NODES)
    cluster, names = read_alibaba_nodes(path, group_by="file", rack_size=3, server_bw=25.0, rack_bw=200.0)
    assert names.names == ("n0", "n1", "n2", "n4", "n5", "n6") and cluster.rack.tolist() == [0, 0, 0, 1, 1, 1]
    assert cluster.capacity[:, 0].tolist() == [2, 8, 8, 2, 2, 8] and set(cluster.bandwidth) == {25.0, 200.0}
    kept, all_names = read_alibaba_nodes(path, skip_gpuless=False, group_by="file", rack_size=100)
    assert "n3" in all_names.names and kept.n_servers == 7 and kept.n_switches == 2


def test_nodes_and_pods_run_together(tmp_path):
    cluster, _ = read_alibaba_nodes(nodes(tmp_path, NODES), rack_size=2)
    pods = tmp_path / "pods.csv"
    head = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
            "scheduled_time")
    rows = [f"p{j},1000,1024,{g},1000,,LS,Succeeded,{60 * j},{60 * j + 600},{60 * j}"
            for j, g in enumerate([1, 2, 4, 8, 2, 1])]
    pods.write_text("\n".join([head, *rows]) + "\n")
    inst = read_alibaba_jobs(pods, cluster=cluster, seed=0)
    run = run_online(make_policy("gadget"), inst, horizon=inst.horizon, seed=0)
    check = check_gadget_schedule(inst, run.schedule)
    assert check.ok and run.worker_slots.sum() > 0


def test_fat_tree_topology(tmp_path):
    """The same servers, in the same order, on the smallest k-ary fat-tree that holds them: 6 servers
    need k = 4 (16 ports; k = 2 has 2), two per edge switch, pods as racks; the switches in use: 3
    edge switches, the 2 + 2 aggregation switches of pods 0 and 1, the 4 core switches."""
    tree, tree_names = read_alibaba_nodes(nodes(tmp_path, NODES), resources=("gpu", "cpu"))
    fat, names = read_alibaba_nodes(nodes(tmp_path, NODES), resources=("gpu", "cpu"), topology="fat-tree",
                                    server_bw=25.0, rack_bw=40.0)
    assert names == tree_names and np.array_equal(fat.capacity, tree.capacity) and fat.resources == ("gpu", "cpu")
    n = 6
    assert not fat.is_tree() and fat.n_switches == 3 + 4 + 4 and fat.rack.tolist() == [0, 0, 0, 0, 1, 1]
    assert fat.n_links == 2 * (n + 3 * 2 + 4 * 2)  # host, edge-aggregation, aggregation-core links
    edge = {int(u): int(v) for u, v in fat.links.tolist() if u < n}  # server -> its edge switch
    assert [edge[s] - n for s in range(n)] == [0, 0, 1, 1, 2, 2]
    pairs = list(zip(fat.links.tolist(), fat.bandwidth.tolist(), strict=True))
    host = {float(b) for (u, v), b in pairs if min(u, v) < n}
    fabric = {float(b) for (u, v), b in pairs if min(u, v) >= n}
    assert host == {25.0} and fabric == {40.0}


def test_fat_tree_with_given_servers_refuses_bad_capacities():
    from clusteropt.instances.gadget.instance import k_ary_fat_tree

    with pytest.raises(ValueError, match=r"capacity has 17 servers; a 4-ary fat-tree has 1 \.\. 16 host ports"):
        k_ary_fat_tree(4, capacity=np.ones((17, 1)))
    with pytest.raises(ValueError, match=r"capacity has shape \(3, 1\); expected \(servers, 2\)"):
        k_ary_fat_tree(4, capacity=np.ones((3, 1)), resources=("gpu", "cpu"))
    with pytest.raises(ValueError, match="without capacity"):
        k_ary_fat_tree(4, resources=("gpu", "cpu"))


def test_nodes_and_pods_run_together_on_the_fat_tree(tmp_path):
    cluster, _ = read_alibaba_nodes(nodes(tmp_path, NODES), topology="fat-tree")
    pods = Path(__file__).resolve().parents[1] / "data" / "alibaba_sample.csv"
    inst = read_alibaba_jobs(pods, cluster=cluster, slot_seconds=600, utility="sqrt", seed=0)
    for name, options in (("gadget", {"quotient": True}), ("fifo", {}), ("las", {})):
        run = run_online(make_policy(name, **options), inst, horizon=inst.horizon, seed=0)
        check = check_gadget_schedule(inst, run.schedule)
        assert check.ok and run.worker_slots.sum() > 0, name


@pytest.mark.parametrize(("row", "field", "line"), [
    ("n9,1000,1024,2.5,P100", "gpu", 3), ("n9,-5,1024,2,P100", "cpu_milli", 3),
    ("n9,1000,x,2,P100", "memory_mib", 3), ("n0,1000,1024,2,P100", "sn", 3),
    ("n9,1000,1024,2", "column count", 3)])
def test_bad_rows_name_line_and_field(tmp_path, row, field, line):
    with pytest.raises(TraceError, match=rf"nodes.csv:{line}: {field}"):
        read_alibaba_nodes(nodes(tmp_path, [NODES[0], row]))


def test_bad_files_and_options(tmp_path):
    with pytest.raises(TraceError, match="missing: model"):
        read_alibaba_nodes(nodes(tmp_path, ["n0,1,1,1"], head="sn,cpu_milli,memory_mib,gpu"))
    with pytest.raises(TraceError, match="at least one node with a GPU"):
        read_alibaba_nodes(nodes(tmp_path, ["n3,8000,32768,0,"]))
    path = nodes(tmp_path, NODES)
    for kwargs, match in (({"rack_size": 0}, "rack_size"), ({"server_bw": 0.0}, "server_bw"),
                          ({"rack_bw": float("nan")}, "rack_bw"), ({"resources": ("gpu", "disk")}, "resources"),
                          ({"resources": ()}, "resources"), ({"group_by": "rack"}, "group_by"),
                          ({"topology": "torus"}, "topology")):
        with pytest.raises(ValueError, match=match):
            read_alibaba_nodes(path, **kwargs)


def test_cli_import_alibaba_writes_the_instance_the_readers_give(tmp_path):
    """``clusteropt import alibaba PODS --nodes NODES``: the same instance as the two readers with the
    same options, both files' SHA-256 printed; a missing file, a node list given as pods and an
    output that is an input are refused with exit 2, and the input left as it was."""
    from click.testing import CliRunner

    from clusteropt.cli import cli
    from clusteropt.instances.base import load_instance
    from clusteropt.provenance import file_sha256

    pods = Path(__file__).resolve().parents[1] / "data" / "alibaba_sample.csv"
    node_file = nodes(tmp_path, NODES)
    out = tmp_path / "ali.json"
    res = CliRunner().invoke(cli, ["import", "alibaba", str(pods), "--nodes", str(node_file), "--slot-seconds",
                                   "600", "--rack-size", "2", "--utility", "sqrt", "--seed", "3", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert file_sha256(pods) in res.output and file_sha256(node_file) in res.output
    cluster, _ = read_alibaba_nodes(node_file, rack_size=2)
    want = read_alibaba_jobs(pods, cluster=cluster, slot_seconds=600, utility="sqrt", seed=3)
    assert load_instance(out).to_json() == want.to_json()
    fat_out = tmp_path / "ali-fat.json"
    res = CliRunner().invoke(cli, ["import", "alibaba", str(pods), "--nodes", str(node_file), "--topology",
                                   "fat-tree", "-o", str(fat_out)])
    assert res.exit_code == 0, res.output
    fat, _ = read_alibaba_nodes(node_file, topology="fat-tree")
    assert load_instance(fat_out).cluster.to_dict() == fat.to_dict()
    before = node_file.read_bytes()
    for args, target, message in (
            ([str(tmp_path / "none.csv"), "--nodes", str(node_file)], tmp_path / "other.json", "no such file"),
            ([str(node_file), "--nodes", str(node_file)], tmp_path / "other.json", "missing: num_gpu"),
            ([str(pods), "--nodes", str(node_file)], node_file, "is the input file")):
        res = CliRunner().invoke(cli, ["import", "alibaba", *args, "-o", str(target)])
        assert res.exit_code == 2 and message in res.output, res.output
    assert not (tmp_path / "other.json").exists() and node_file.read_bytes() == before
