"""GADGET (paper 000) on the real Alibaba GPU cluster trace 2023: its nodes and its pods.

The input is the public trace (github.com/alibaba/clusterdata, ``cluster-trace-gpu-v2023/csv/``), not
in this repository: ``--nodes openb_node_list_gpu_node.csv --pods openb_pod_list_default.csv``; the
SHA-256 of both files is recorded, so a reader can tell whether they hold the same trace.

- The nodes become the cluster (:func:`clusteropt.instances.read_alibaba_nodes` with its defaults:
  one server per GPU node with its GPU count, racks of at most 16 servers of one GPU model under
  one core switch, 100 Gbps server links and 800 Gbps rack links; the trace has no topology).
- The GPU pods become the jobs (:func:`clusteropt.instances.read_alibaba_jobs`): arrival from
  ``creation_time``, ``N_i = num_gpu`` workers (one whole GPU for a pod asking for a fraction), the
  budget ``F_i`` from the run time ``deletion_time - scheduled_time``, in slots of ``--slot-seconds``
  (default one hour); CPU-only pods are skipped; the utility parameters (and ``F_i`` of a pod that
  never ran) are drawn with the seed.  The whole trace: every GPU pod, every slot to the last arrival.
- Policies (``--policies``, :data:`POLICIES`): GADGET with its greedy slot solver (Alg. 1 and the
  package's fill), FIFO, DRF and LAS by default, each over the whole horizon; ``gadget-lp-rs-mde``
  (Alg. 1 with Alg. 2, on column generation and the certified capacity relaxation) on request.
  Another set of policies is written as ``gadget_alibaba_<policies joined by +>``.  Every schedule
  is checked by :func:`clusteropt.verify.check_gadget_schedule` (block by block: the trace's
  ``T x I x S`` does not fit in memory as one array), whose recount of the total utility is what
  is reported, next to the alone bound (every job alone on the cluster; no policy exceeds it).

Recorded: the trace's counts (pods, GPU pods, skipped CPU-only pods, fractional-GPU pods, pods
without a run time, servers, GPUs, GPU models), the horizon, and per policy the total utility, its
ratio to the alone bound, the worker-slots, the run's wall time, the policy's time per slot
(median, p90, max; the driver and recording excluded) and the active jobs per slot (median, max).

``--node-stride K`` keeps every K-th GPU node of the node list (file order; the package's setting,
not the trace's): the same pods on a K times smaller cluster, where they contend (written as
``gadget_alibaba_stride<K>``).

``--utility sqrt`` (or ``log``) draws non-saturating utilities instead of the paper's sigmoid (written as
``gadget_alibaba_<utility>``).  With the paper's sigmoid ranges a job saturates after a few
worker-slots, so policies that serve the same jobs at different times can all reach
the alone bound; with ``sqrt`` every further worker-slot still counts.

``--topology fat-tree`` puts the nodes on the smallest k-ary fat-tree that holds them
(``read_alibaba_nodes(topology="fat-tree")``: 100 Gbps host links, 800 Gbps switch links) instead of
racks under one core switch; GADGET then solves each slot on the quotient tree and lifts its rings
to fat-tree paths (``quotient=True``), the baselines place rings on the fat-tree's shortest paths,
and every schedule is verified on the fat-tree itself (written as ``gadget_alibaba_fattree``).

``--last-days D`` keeps the pods created in the trace's last D days (a documented subsample, for a
policy too slow to run the whole trace here; written as ``gadget_alibaba_last<D>d``).

``--slots N`` runs only slots ``1 .. N`` of the horizon (a partial run, checked as far as it goes:
the rate of a policy whose whole-trace run is too long; written as ``gadget_alibaba_first<N>``).

``--quick`` writes a small node list and pod list in the trace's format (12 nodes, 40 pods, drawn
with the seed) and runs the same readers, policies and checks on them (print only).

Run ``python -m benchmarks.gadget_alibaba --nodes N.csv --pods P.csv`` (writes ``benchmarks/results/``).
"""

from __future__ import annotations

import csv
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.instances.gadget.instance import UTILITIES
from clusteropt.instances.gadget.trace import read_alibaba_jobs, read_alibaba_nodes
from clusteropt.online import run_online
from clusteropt.online.gadget import make_policy
from clusteropt.provenance import file_sha256
from clusteropt.verify import check_gadget_schedule

NAME = "gadget_alibaba"
SOURCE = "github.com/alibaba/clusterdata, cluster-trace-gpu-v2023/csv/"
FULL = {"slot_seconds": 3600.0, "utility": "sigmoid", "seed": 0, "policies": ["gadget", "fifo", "drf", "las"]}
QUICK = {**FULL, "slot_seconds": 600.0}
#: Each policy name: the package's policy and its options.  ``gadget-lp-rs-mde`` is Alg. 1 with Alg. 2
#: as its slot solver, on the routes that scale (column generation, the certified capacity relaxation).
POLICIES = {"gadget": ("gadget", {"slot_solver": "greedy"}),
            "gadget-lp-rs-mde": ("gadget", {"slot_solver": "lp-rs-mde", "embed_route": "colgen",
                                            "select_route": "capacity"}),
            "fifo": ("fifo", {}), "drf": ("drf", {}), "las": ("las", {})}


class Timed:
    """A policy whose ``step`` is timed (``times[t - 1]``, seconds): the policy's own work per slot."""

    def __init__(self, policy):
        self.policy = policy
        self.name = getattr(policy, "name", type(policy).__name__)
        self.times: list[float] = []

    def reset(self, instance, rng) -> None:
        self.times = []
        self.policy.reset(instance, rng)

    def step(self, t, observation):
        start = time.perf_counter()
        out = self.policy.step(t, observation)
        self.times.append(time.perf_counter() - start)
        return out

    def get_params(self) -> dict:
        return self.policy.get_params() if hasattr(self.policy, "get_params") else {}


def write_sample(folder: Path, seed: int) -> tuple[Path, Path]:
    """A 12-node list and a 40-pod list in the trace's columns (``--quick``)."""
    rng = np.random.default_rng(seed)
    nodes, pods = folder / "nodes.csv", folder / "pods.csv"
    models = [("G2", 8, 96000), ("T4", 2, 104000), ("P100", 2, 64000)]
    with open(nodes, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["sn", "cpu_milli", "memory_mib", "gpu", "model"])
        for k in range(12):
            model, gpus, cpu = models[int(rng.integers(len(models)))]
            w.writerow([f"node-{k:02d}", cpu, 393216, gpus, model])
    with open(pods, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase",
                    "creation_time", "deletion_time", "scheduled_time"])
        created = np.sort(rng.integers(0, 6 * 3600, 40))
        for k, c in enumerate(created.tolist()):
            gpus = int(rng.choice([0, 1, 1, 1, 2, 4, 8]))
            milli = 1000 if gpus != 1 or rng.random() < 0.5 else int(rng.choice([320, 470, 810]))
            run = int(rng.integers(60, 4 * 3600))
            done = rng.random() < 0.8
            w.writerow([f"pod-{k:03d}", 4000, 16384, gpus, milli if gpus else 0, "", "LS",
                        "Succeeded" if done else "Running", c, c + 5 + run if done else "", c + 5])
    return nodes, pods


def trace_counts(pods: Path) -> dict:
    """Counts read straight from the pod list (not through the reader)."""
    with open(pods, newline="") as fh:
        rows = list(csv.DictReader(fh))
    gpu = [r for r in rows if float(r["num_gpu"]) > 0]
    return {"pods": len(rows), "gpu_pods": len(gpu), "cpu_only_pods": len(rows) - len(gpu),
            "fractional_gpu_pods": sum(float(r["gpu_milli"]) < 1000 for r in gpu),
            "gpu_pods_without_run_time": sum(not (r["deletion_time"].strip() and r["scheduled_time"].strip())
                                             for r in gpu),
            "multi_gpu_pods": sum(float(r["num_gpu"]) > 1 and float(r["gpu_milli"]) >= 1000 for r in gpu)}


def run_policy(inst, name: str, seed: int, slots: int | None = None, quotient: bool = False) -> dict:
    base, options = POLICIES[name]
    if quotient and base == "gadget":
        options = {**options, "quotient": True}
    policy = Timed(make_policy(base, **options))
    start = time.perf_counter()
    run = run_online(policy, inst, horizon=min(slots or inst.horizon, inst.horizon), seed=seed, progress=True)
    wall = time.perf_counter() - start
    t0 = time.perf_counter()
    check = check_gadget_schedule(inst, run.schedule)
    verify_s = time.perf_counter() - t0
    if not check.ok:
        raise AssertionError(f"{name}: the schedule failed verification: {[str(v) for v in check.violations[:3]]}")
    times = np.asarray(policy.times)
    active = [int(i["jobs"]) for i in run.slot_info if "jobs" in i]
    label = f"{name} ({options['slot_solver']})" if name == "gadget" else name
    if options.get("quotient"):
        label += " on the quotient tree"
    out = {"policy": label, "params": run.params,
           "total_utility": float(check.total_utility), "worker_slots": int(np.sum(check.worker_slots)),
           "wall_s": wall, "verify_s": verify_s, "verified": True,
           "slot_s": {"median": float(np.median(times)), "p90": float(np.quantile(times, 0.9)),
                      "max": float(times.max()), "sum": float(times.sum())}}
    if active:
        out["active_jobs"] = {"median": float(np.median(active)), "max": int(max(active))}
    print(f"  {out['policy']}: total utility {out['total_utility']:.6g}, {wall:.1f} s, "
          f"verified in {verify_s:.1f} s", flush=True)
    return out


def keep_every(nodes: Path, stride: int, folder: Path) -> Path:
    """The node list with every ``stride``-th GPU node (file order), as a new file in ``folder``."""
    with open(nodes, newline="") as fh:
        rows = list(csv.DictReader(fh))
    gpu = [r for r in rows if float(r["gpu"]) > 0]
    out = folder / f"{nodes.stem}-stride{stride}.csv"
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(gpu[::stride])
    return out


def last_days(pods: Path, days: float, folder: Path) -> Path:
    """The pod list with the pods created in its last ``days`` days, as a new file in ``folder``."""
    with open(pods, newline="") as fh:
        rows = list(csv.DictReader(fh))
    end = max(float(r["creation_time"]) for r in rows)
    out = folder / f"{pods.stem}-last{days:g}d.csv"
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(r for r in rows if float(r["creation_time"]) >= end - days * 86400)
    return out


def run_trace(nodes: Path, pods: Path, params: dict, source: str = SOURCE) -> dict:
    stride = int(params.get("node_stride", 1))
    days = params.get("last_days")
    with tempfile.TemporaryDirectory() as d:
        cluster, node_list = read_alibaba_nodes(keep_every(nodes, stride, Path(d)) if stride > 1 else nodes,
                                                topology=params.get("topology", "tree"))
        sample = last_days(pods, days, Path(d)) if days else pods
        inst = read_alibaba_jobs(sample, cluster=cluster, slot_seconds=params["slot_seconds"],
                                 utility=params["utility"], seed=params["seed"])
        counts = trace_counts(sample)
    models = sorted(set(node_list.models))
    report = {
        "inputs": {"source": source, "nodes": {"file": nodes.name, "sha256": file_sha256(nodes)},
                   "pods": {"file": pods.name, "sha256": file_sha256(pods)}},
        "trace": {**counts, "servers": cluster.n_servers, "switches": cluster.n_switches,
                  "gpus": int(cluster.capacity[:, cluster.resources.index("gpu")].sum()),
                  "gpu_models": {m: int(sum(x == m for x in node_list.models)) for m in models},
                  "jobs": inst.n_jobs, "horizon": inst.horizon},
        "alone_bound": float(inst.alone_bound()),
    }
    print(f"{report['trace']}", flush=True)
    quotient = params.get("topology", "tree") == "fat-tree"
    report["runs"] = [run_policy(inst, name, params["seed"], params.get("slots"), quotient)
                      for name in params["policies"]]
    return report


def to_markdown(report: dict) -> str:
    p, tr, inp = report["parameters"], report["trace"], report["inputs"]
    lines = [f"# {report['benchmark']}", "",
             f"recorded {report['created']} (code version {report['code_version']}) on "
             f"{report['machine']['platform']}, {report['machine']['cpu_count']} CPUs, load average after "
             f"{report['machine'].get('load_average_after')}; parameters {p}", "",
             f"Trace: {inp['source']} (`{inp['nodes']['file']}` sha256 `{inp['nodes']['sha256']}`, "
             f"`{inp['pods']['file']}` sha256 `{inp['pods']['sha256']}`).", "",
             f"{tr['pods']} pods: {tr['gpu_pods']} with a GPU ({tr['fractional_gpu_pods']} asking for a "
             f"fraction of one, {tr['multi_gpu_pods']} for several, {tr['gpu_pods_without_run_time']} without a "
             "run time), "
             f"{tr['cpu_only_pods']} CPU-only (skipped).  {tr['servers']} servers with {tr['gpus']} GPUs "
             f"({', '.join(f'{m} {n}' for m, n in tr['gpu_models'].items())}), {tr['switches']} switches.  "
             f"{tr['jobs']} jobs over T = {tr['horizon']} slots of {p['slot_seconds']:g} s.", "",
             *([f"A partial run: slots 1 .. {p['slots']} of the {tr['horizon']} (utilities of what they got by "
                "then; the alone bound is the whole horizon's).", ""] if p.get("slots") else []),
             *([f"A subsample: the pods created in the trace's last {p['last_days']:g} days (counts above are "
                "of the subsample).", ""] if p.get("last_days") else []),
             *(["The nodes sit on the smallest k-ary fat-tree that holds them (`--topology fat-tree`); GADGET "
                "solves each slot on its quotient tree and lifts the rings to fat-tree paths; every schedule is "
                "verified on the fat-tree.", ""] if p.get("topology") == "fat-tree" else []),
             *([f"The cluster keeps one GPU node in {p['node_stride']} of the node list (file order): the "
                "package's setting, a smaller cluster for the same pods, not the trace's.", ""]
               if p.get("node_stride", 1) > 1 else []),
             f"Alone bound (no policy can exceed it): {report['alone_bound']:.6g}.", "",
             "<a id=\"runs\"></a>", "",
             "| policy | total utility | / alone bound | worker-slots | slot median s | slot p90 s | slot max s "
             "| active jobs median / max | run s | verify s | verified |",
             "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | :--- | ---: | ---: | :--- |"]
    for r in report["runs"]:
        act = r.get("active_jobs")
        active = f"{act['median']:.0f} / {act['max']}" if act else ""
        ratio = r["total_utility"] / report["alone_bound"]
        lines.append(f"| {r['policy']} | {r['total_utility']:.6g} | {ratio:.4f} "
                     f"| {r['worker_slots']} | {r['slot_s']['median']:.4f} | {r['slot_s']['p90']:.4f} "
                     f"| {r['slot_s']['max']:.3f} | {active} "
                     f"| {r['wall_s']:.1f} | {r['verify_s']:.1f} | {r['verified']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = parser(NAME, __doc__, "a 12-node, 40-pod sample in the trace's format; print only")
    ap.add_argument("--nodes", type=Path, help="the trace's openb_node_list_gpu_node.csv")
    ap.add_argument("--pods", type=Path, help="the trace's openb_pod_list_default.csv (or another pod list)")
    ap.add_argument("--slot-seconds", type=float, default=None, help="slot length (default 3600; --quick 600)")
    ap.add_argument("--policies", default=None, help="comma-separated (default gadget,fifo,drf,las)")
    ap.add_argument("--utility", choices=sorted(UTILITIES), default=None,
                    help="the jobs' utility family (default sigmoid, the paper's)")
    ap.add_argument("--topology", choices=["tree", "fat-tree"], default="tree",
                    help="racks under one core switch (default), or the smallest k-ary fat-tree")
    ap.add_argument("--node-stride", type=int, default=1, help="keep every K-th GPU node (default 1: all)")
    ap.add_argument("--last-days", type=float, default=None, help="keep the pods created in the last D days")
    ap.add_argument("--slots", type=int, default=None, help="run only slots 1 .. N (a partial run)")
    args = ap.parse_args(argv)
    params = dict(QUICK if args.quick else FULL)
    if args.slot_seconds is not None:
        params["slot_seconds"] = args.slot_seconds
    name = NAME
    if args.policies:
        params["policies"] = args.policies.split(",")
        unknown = sorted(set(params["policies"]) - set(POLICIES))
        if unknown:
            ap.error(f"--policies: unknown {unknown}; expected some of {sorted(POLICIES)}")
        if params["policies"] != FULL["policies"]:
            name = f"{NAME}_{'+'.join(params['policies'])}"
    if args.utility is not None and args.utility != params["utility"]:
        params["utility"] = args.utility
        name = f"{name}_{args.utility}"
    if args.topology != "tree":
        params["topology"] = args.topology
        name = f"{name}_fattree"
    if args.node_stride < 1:
        ap.error(f"--node-stride {args.node_stride}; expected an integer >= 1")
    if args.node_stride > 1:
        params["node_stride"] = args.node_stride
        name = f"{name}_stride{args.node_stride}"
    if args.last_days is not None:
        if not args.last_days > 0:
            ap.error(f"--last-days {args.last_days}; expected a number > 0")
        params["last_days"] = args.last_days
        name = f"{name}_last{args.last_days:g}d"
    if args.slots is not None:
        if args.slots < 1:
            ap.error(f"--slots {args.slots}; expected an integer >= 1")
        params["slots"] = args.slots
        name = f"{name}_first{args.slots}"
    out = output_dir(args)
    report = {**header(name, ("clusteropt", "highspy", "numpy")), "parameters": params}
    start = time.perf_counter()
    if args.quick:
        with tempfile.TemporaryDirectory() as d:
            nodes, pods = write_sample(Path(d), params["seed"])
            report.update(run_trace(nodes, pods, params, "a sample written in the trace's format (--quick)"))
    else:
        if args.nodes is None or args.pods is None:
            print(f"{NAME}: skipped: give --nodes and --pods (the public trace, {SOURCE}; not in the repository)")
            return 0
        report.update(run_trace(args.nodes, args.pods, params))
    finish(name, report, to_markdown, out, start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
