"""The magnitude rule of real-valued fields (issue 42, part 3): at most MAX_MAGNITUDE = 1e7.

A fuzzing review found coefficients of 1e16 accepted by every loader: HiGHS then answered
"objective 0" (or ``infeasible_or_unbounded``) on feasible models SCIP solved, SCIP crashed on 1e20
and a broker price of 1.8e308 failed the run's verification.  Every float field of every kind is
refused beyond the limit, named with its index, value and the limit; the trace readers refuse such
numbers at their line; the package's own instances and presets stay within it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from clusteropt.instances import (
    Instance,
    InstanceError,
    TraceError,
    broker_preset,
    gadget_preset,
    load_instance,
    random_broker,
    random_coflows,
    random_gadget,
    random_realtime,
    random_ring,
    random_worker_placement,
    read_alibaba_nodes,
    read_prices_csv,
    read_transfer_costs_csv,
    realtime_preset,
)
from clusteropt.instances.base import MAX_MAGNITUDE, as_number_array, check_number
from tests.instances.test_fuzz_instances import BASES

LIMIT_TEXT = "of magnitude <= 1e7 (MAX_MAGNITUDE: solvers mishandle coefficients near 1e15)"
INSTANCES = Path(__file__).resolve().parents[2] / "instances"


@pytest.mark.parametrize("value", [MAX_MAGNITUDE, -MAX_MAGNITUDE, 0.5, 10**7])
def test_the_limit_itself_is_accepted(value):
    assert as_number_array("w", [1.0, value]).tolist() == [1.0, float(value)]
    assert check_number("w", value) == float(value)


@pytest.mark.parametrize("value", [math.nextafter(MAX_MAGNITUDE, math.inf), -1.5e7, 1e16, 1e20, 1.79e308, 10**8])
def test_beyond_the_limit_is_refused_with_field_index_value_and_limit(value):
    with pytest.raises(InstanceError) as info:
        as_number_array("price", [[1.0, 2.0], [3.0, value]])
    assert str(info.value) == f"price[1, 1] = {float(value)!r}; expected a finite number {LIMIT_TEXT}"
    message = f"alpha = {value!r}; expected a finite number, {LIMIT_TEXT}"
    with pytest.raises(InstanceError, match=re.escape(message)):
        check_number("alpha", value)


def test_integer_fields_keep_their_own_limits():
    # ids, slots and counts are not coefficients: exactness (2**53, 2**62) bounds them, not 1e7
    assert as_number_array("ids", [2**60, 3], dtype=np.int64).tolist() == [2**60, 3]


def _float_fields(inst: object, prefix: str = "") -> list[tuple[str, tuple]]:
    """``(where, JSON path)`` of the first entry of every real-valued field, nested ones included."""
    out = []
    for f in dataclasses.fields(inst):  # type: ignore[arg-type]
        value = getattr(inst, f.name)
        if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size:
            index = (0,) * value.ndim
            out.append((f"{prefix}{f.name}[{', '.join('0' * value.ndim)}]", (f.name, *index)))
        elif isinstance(value, float):
            out.append((f"{prefix}{f.name}", (f.name,)))
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            out.extend((w, (f.name, *p)) for w, p in _float_fields(value, f"{prefix}{f.name}."))
    return out


FIELDS = [(kind, where, path) for kind, inst in BASES.items() for where, path in _float_fields(inst)]


def test_every_kind_has_real_valued_fields_under_the_rule():
    kinds = {kind for kind, _, _ in FIELDS}
    assert kinds >= {"worker-placement", "gpu-cluster", "gadget", "broker", "realtime", "ring", "coflow"}, kinds


@pytest.mark.parametrize("value", [1e16, 1.79e308])
@pytest.mark.parametrize(("kind", "where", "path"), FIELDS, ids=[f"{k}-{w}" for k, w, _ in FIELDS])
def test_every_real_valued_field_refuses_huge_values(tmp_path, kind, where, path, value):
    data = BASES[kind].to_dict()
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    file = tmp_path / "case.json"
    file.write_text(json.dumps(data))
    with pytest.raises(InstanceError) as info:
        load_instance(file)
    assert str(info.value).startswith(f"{where} = {value!r}; expected a finite number"), str(info.value)
    assert str(info.value).endswith(LIMIT_TEXT)


@pytest.mark.parametrize("build", [
    lambda: broker_preset("paper", seed=0), lambda: random_broker(seed=1), lambda: gadget_preset("paper", seed=0),
    lambda: random_gadget(seed=1), lambda: realtime_preset("paper"), lambda: random_realtime(seed=0),
    lambda: random_ring(16, 4, 100, seed=0), lambda: random_worker_placement(seed=0),
    lambda: random_coflows(seed=0),
])
def test_the_package_generators_stay_within_the_limit(build):
    assert isinstance(build(), Instance)


@pytest.mark.parametrize("name", sorted(p.name for p in INSTANCES.glob("*.json")))
def test_the_shipped_instance_files_stay_within_the_limit(name):
    assert isinstance(load_instance(INSTANCES / name), Instance)


# -- readers: at the line -----------------------------------------------------------------------

@pytest.mark.parametrize(("column", "row"), [("a", "0,gpu,1e16,1,10"), ("a", "0,gpu,2e7,1.5e7,10"),
                                              ("threshold", "0,gpu,2,1,1.7e308")])  # b < a bounds b
def test_price_tables_refuse_huge_numbers_at_their_line(tmp_path, column, row):
    path = tmp_path / "prices.csv"
    path.write_text("dc,resource,a,b,threshold\n0,cpu,2,1,10\n" + row + "\n")
    with pytest.raises(TraceError, match=rf"^{re.escape(str(path))}:3: {column} = .*; expected a finite number in "
                       r"0 \.\. 1e\+07 \(MAX_MAGNITUDE"):
        read_prices_csv(path)


def test_transfer_costs_refuse_huge_numbers_at_their_line(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("0,0.01\n1e16,0\n")
    at = re.escape(str(path))
    with pytest.raises(TraceError, match=rf"^{at}:2: d\[1, 0\] = '1e16'; expected a finite number in 0 \.\. 1e7 "
                       r"\(MAX_MAGNITUDE"):
        read_transfer_costs_csv(path)
    path.write_text("0,0.01\n1e7,0\n")
    assert read_transfer_costs_csv(path)[1, 0] == 1e7


@pytest.mark.parametrize(("resources", "refused"), [(("gpu", "memory"), True), (("gpu",), False)])
def test_node_capacities_refuse_huge_numbers_at_their_line(tmp_path, resources, refused):
    path = tmp_path / "nodes.csv"
    path.write_text("sn,cpu_milli,memory_mib,gpu,model\na,64000,262144,2,P100\nb,96000,1e16,8,G2\n")
    if refused:  # 1e16 MiB of memory is a 9.8e12 GiB capacity
        at = re.escape(str(path))
        with pytest.raises(TraceError, match=rf"^{at}:3: memory_mib = '1e16'; expected a capacity GiB "
                           r"\(memory_mib / 1024\) of at most MAX_MAGNITUDE = 1e7"):
            read_alibaba_nodes(path, resources=resources)
    else:  # a column that becomes no field is not a field's business
        assert read_alibaba_nodes(path, resources=resources)[0].capacity.tolist() == [[2.0], [8.0]]
