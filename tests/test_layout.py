"""The package's layout: no import circles, no private imports across packages, old paths kept.

A system with several files in a room is a subpackage (``clusteropt.models.gadget``); a helper two
modules share lives where both may import it, never as one module's private name imported by a
module of another package; and the module paths from before the subpackages keep importing
(``clusteropt._moved``) with every public name they had.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import networkx as nx
import pytest

import clusteropt
from clusteropt._moved import MOVED

PACKAGE = Path(clusteropt.__file__).parent

#: Public names of every module path that moved or became a package, as they were before.
OLD_NAMES: dict[str, list[str]] = {
    "clusteropt.models.gadget": [
        "SlotProblem", "TreeLayout", "allocation_from_solution", "build_gvne", "slot_problem",
        "tree_allocation", "tree_layout", "worker_bound"
    ],
    "clusteropt.models.gadget_offline": [
        "build_ddljs", "ddljs_optimum", "schedule_from_solution"
    ],
    "clusteropt.models.gadget_embedding": [
        "build_embedding_lp", "check_kappa", "decompose_embedding", "server_fit"
    ],
    "clusteropt.models.gadget_extended": [
        "build_extended_lp", "decompose_extended"
    ],
    "clusteropt.models.gadget_matrix": [
        "EmbeddingSolution", "MatrixLP", "allocation_from_matrix", "build_embedding_matrix",
        "build_gvne_matrix", "capacity_relaxation", "certify_extension", "extend_capacity_solution",
        "server_classes", "solve_matrix"
    ],
    "clusteropt.models.gadget_colgen": [
        "ColgenResult", "MASTER_STRATEGIES", "PlacementPrices", "price_placements", "solve_embedding_colgen"
    ],
    "clusteropt.models.broker": [
        "BrokerSlotModel", "DEFAULT_EPSILON", "DEFAULT_PRICE_FORM", "PRICE_FORMS", "broker_lp_bound",
        "broker_offline_optimum", "build_broker_milp", "build_broker_regularized",
        "decision_from_regularized", "decisions_from_solution", "price_bound", "schedule_from_solution"
    ],
    "clusteropt.models.broker_matrix": [
        "build_broker_arrays", "decisions_from_arrays", "solve_broker_arrays"
    ],
    "clusteropt.models.coflow": [
        "CosData", "PER_MACHINE", "PURGE_AFTER", "ParallelCuts", "build_coflow_milp", "build_cos_lp",
        "build_cos_milp", "cos_data", "cos_lower_bound", "full_set_rows", "parallel_cut_rows",
        "parallel_rhs", "separate_parallel_inequalities"
    ],
    "clusteropt.models.coflow_matrix": [
        "cos_lower_bound_matrix", "cos_start_rows"
    ],
    "clusteropt.models.ring": [
        "MAX_DYNAMIC_BINARIES", "MAX_DYNAMIC_STEPS", "RingOptimum", "build_ring_dynamic_opt",
        "build_ring_static_opt", "contiguous_arcs_cost", "placements_from_model", "ring_dynamic_optimum",
        "ring_static_optimum"
    ],
    "clusteropt.models.ring_cut": [
        "CHUNK", "CutLPBound", "IPM_OPTIONS", "OVERLAP", "SWEEPS", "build_ring_cut_lp", "cut_lp_arrays",
        "cut_lp_scaffold", "dynamic_cut_lp_bound", "previous_cut"
    ],
    "clusteropt.models.ring_move": [
        "MoveLPBound", "build_ring_move_lp", "dynamic_move_lp_bound", "move_lp_arrays", "move_lp_point"
    ],
    "clusteropt.instances.coflow": [
        "CoflowInstance", "ConcurrentOpenShopInstance"
    ],
    "clusteropt.instances.coflow_random": [
        "random_coflows"
    ],
    "clusteropt.instances.coflow_trace": [
        "MAX_FLOWS", "MAX_INT", "MAX_PORTS", "TraceError", "read_coflow_benchmark"
    ],
    "clusteropt.instances.gadget": [
        "Cluster", "GadgetInstance", "MAX_HORIZON", "PRESETS", "ServerPaths", "UTILITIES",
        "bursty_arrivals", "fat_tree_cluster", "gadget_preset", "iterations_per_slot", "k_ary_fat_tree",
        "random_gadget", "utility_value"
    ],
    "clusteropt.instances.gadget_trace": [
        "MAX_GPUS", "MAX_HORIZON", "read_alibaba_jobs", "read_alibaba_nodes", "read_philly_jobs"
    ],
    "clusteropt.rounding.broker": [
        "BROKER_ROUNDINGS", "BrokerRoundingInfo", "DEFAULT_TOL", "ROUNDING_VARIANTS", "RoundingShortError",
        "TRANSPORT_BUILDERS", "a_round", "build_transport_model", "complete_placement", "greedy_round",
        "independent_round", "round1_y", "round2_y", "sample_ps"
    ],
    "clusteropt.rounding.broker_slot": [
        "DEFAULT_SLOT_FIX", "DEFAULT_SLOT_GAP", "FIX_MODES", "FIX_TOL", "SlotMilpInfo", "slot_milp_round"
    ],
    "clusteropt.algorithms.ring.mts": [
        "LineMTS", "MTS_CLASSES", "SoftWorkFunctionLine", "WorkFunctionLine", "chase", "make_line_mts"
    ],
    "clusteropt.algorithms.ring.mts_hst": [
        "EntropicHSTLine", "hst_line_opt"
    ],
    "clusteropt.algorithms.ring.mts_mix": [
        "CombinedLine", "DEFAULT_EXPERTS", "DEFAULT_RATE", "check_rate"
    ],
    "clusteropt.algorithms.gadget.allocation": [
        "GadgetSchedule", "Mapping", "PackedSlots", "Ring", "SlotAllocation"
    ],
    "clusteropt.algorithms.broker.decision": [
        "BrokerDecision", "BrokerSchedule", "FIELDS", "decision_cost"
    ],
    "clusteropt.algorithms.coflow.schedule": [
        "CoflowSchedule", "ScheduleBuilder"
    ],
    "clusteropt.online.realtime": [
        "POLICIES", "MaxWeight", "RandomPolicy", "RealtimeEnvironment", "RealtimeObservation", "RealtimeRun",
        "SqrtGreedy", "StationaryPolicy", "WeightGreedy", "make_policy",
    ],
    "clusteropt.online.regions": [
        "ExactRegion", "RegionFraction", "estimate_theta", "exact_region", "quadrant_directions",
        "region_fraction",
    ],
}

def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path):
    """``(imported module, imported name or None, line)`` of every import of a clusteropt module in
    ``path``, at module level or inside a function alike.
    """
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "clusteropt":
                continue
            for alias in node.names:
                yield target, alias.name, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "clusteropt":
                    yield alias.name, None, node.lineno


def test_no_import_circles():
    """No two modules import each other, directly or round a longer circle (function-level imports
    count: they only move the circle to run time).  A module importing its own package's
    ``__init__`` is not an edge (the package is imported first anyway).
    """
    graph = nx.DiGraph()
    for name, path in MODULES.items():
        for target, attr, _ in _imports(name, path):
            sub = f"{target}.{attr}"
            module = sub if sub in MODULES else target
            if module in MODULES and module != name and not name.startswith(module + "."):
                graph.add_edge(name, module)
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert circles == []


def test_no_private_import_from_another_package():
    """A ``_private`` name is imported only by modules of the package that defines it."""
    bad = []
    for name, path in MODULES.items():
        here = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for target, attr, line in _imports(name, path):
            if attr is None or not attr.startswith("_") or attr.startswith("__") or f"{target}.{attr}" in MODULES:
                continue
            there = target if MODULES.get(target, Path()).name == "__init__.py" else target.rsplit(".", 1)[0]
            if there != here:
                bad.append(f"{name}:{line} imports {target}.{attr}")
    assert bad == []


def test_decisions_import_only_instances():
    """The decision types may be imported by models, rounding, online and verify alike: they import
    nothing of the package but the instances.
    """
    bad = [f"{name} imports {target}" for name, path in MODULES.items() if name.startswith("clusteropt.decisions")
           for target, _, _ in _imports(name, path)
           if not target.startswith(("clusteropt.decisions", "clusteropt.instances"))]
    assert bad == []


def test_rooms_show_their_systems():
    """Where a room has a system's subpackage, no module beside it still carries the system's prefix."""
    stray = []
    for room in PACKAGE.iterdir():
        if not room.is_dir() or room.name.startswith("_"):
            continue
        systems = {p.name for p in room.iterdir() if (p / "__init__.py").exists()}
        stray += [f"{room.name}/{p.name}" for p in room.glob("*.py")
                  if any(p.stem.startswith(s + "_") for s in systems)]
    assert stray == []


@pytest.mark.parametrize("old", sorted(MOVED))
def test_moved_path_is_the_module(old):
    """An old path gives the module itself (one object: attributes and patches are shared)."""
    module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])
    assert module.__spec__.name == MOVED[old]


def test_moved_table_names_no_existing_file():
    """An entry of the table is a path no file serves any more, and its target exists."""
    for old, new in MOVED.items():
        assert old not in MODULES, old
        assert new in MODULES, new


@pytest.mark.parametrize("old", sorted(OLD_NAMES))
def test_old_paths_keep_their_names(old):
    module = importlib.import_module(old)
    missing = [n for n in OLD_NAMES[old] if not hasattr(module, n)]
    assert missing == []


def test_from_import_of_an_old_path():
    from clusteropt.models.gadget_matrix import build_gvne_matrix

    from clusteropt.models.gadget.matrix import build_gvne_matrix as new

    assert build_gvne_matrix is new
