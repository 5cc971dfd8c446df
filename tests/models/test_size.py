"""Models too large for memory are refused before building, with a line that says what to do."""

from __future__ import annotations

import numpy as np
import pytest

from clusteropt.instances import ConcurrentOpenShopInstance, random_coflows
from clusteropt.instances.broker import broker_preset
from clusteropt.instances.gadget.instance import gadget_preset
from clusteropt.models import get_model
from clusteropt.models.broker.milp import build_broker_milp
from clusteropt.models.coflow.open_shop import build_coflow_milp, build_cos_milp
from clusteropt.models.gadget.ddljs import build_ddljs
from clusteropt.models.size import ENV_MAX_VARIABLES, ModelTooLargeError, check_model_size, max_variables


def test_trace_scale_coflow_milp_is_refused_before_building():
    inst = random_coflows(526, 150, seed=0)  # took minutes and ended in MemoryError at 5-8 GB
    with pytest.raises(ModelTooLargeError, match=r"coflow-milp would have [\d,]+ variables .*coflow-lp"):
        build_coflow_milp(inst)
    with pytest.raises(ModelTooLargeError, match="coflow-milp"):
        get_model("coflow-milp").build(inst)


def test_cos_milp_counts_exactly_the_variables_it_would_build(monkeypatch):
    cos = ConcurrentOpenShopInstance([[2, 0, 1], [1, 3, 0]], [1.0, 1.0, 1.0], [0, 2, 1])
    m = build_cos_milp(cos)
    n_vars = len(m.x) + len(m.C)
    monkeypatch.setenv(ENV_MAX_VARIABLES, str(n_vars))
    assert len(build_cos_milp(cos).x) == len(m.x)  # at the limit: built
    monkeypatch.setenv(ENV_MAX_VARIABLES, str(n_vars - 1))
    with pytest.raises(ModelTooLargeError, match=f"cos-milp would have {n_vars} variables"):
        build_cos_milp(cos)


def test_coflow_milp_counts_exactly_the_variables_it_would_build(monkeypatch):
    inst = random_coflows(4, 3, seed=1)
    m = build_coflow_milp(inst)
    n_vars = len(m.x) + len(m.C)
    monkeypatch.setenv(ENV_MAX_VARIABLES, str(n_vars - 1))
    with pytest.raises(ModelTooLargeError, match=f"would have {n_vars:,} variables"):
        build_coflow_milp(inst)


def test_ddljs_at_a_thousand_jobs_is_refused():
    inst = gadget_preset("paper", jobs=1000, seed=0)
    with pytest.raises(ModelTooLargeError, match=r"ddljs would have .*1000 jobs x 50 servers x 200 slots"):
        build_ddljs(inst)


def test_ddljs_count_never_exceeds_its_variables(monkeypatch):
    inst = gadget_preset("tiny", seed=0)
    m = build_ddljs(inst)
    import pyomo.environ as pyo

    n_vars = sum(len(v) for v in m.component_objects(pyo.Var))
    monkeypatch.setenv(ENV_MAX_VARIABLES, str(n_vars))
    build_ddljs(inst)  # the estimate never exceeds what is built: at the true count it builds


def test_broker_milp_over_a_long_horizon_is_refused_with_the_window_advice(monkeypatch):
    inst = broker_preset("tiny", seed=0)
    m = build_broker_milp(inst)
    import pyomo.environ as pyo

    n_vars = sum(len(v) for v in m.component_objects(pyo.Var))
    monkeypatch.setenv(ENV_MAX_VARIABLES, str(n_vars // 4))
    with pytest.raises(ModelTooLargeError, match="slots="):
        build_broker_milp(inst)
    build_broker_milp(inst, slots=1)  # one slot fits


def test_the_limit_can_be_lifted_and_bad_settings_are_named(monkeypatch):
    monkeypatch.setenv(ENV_MAX_VARIABLES, "0")
    assert max_variables() is None
    check_model_size("x", 10**12, "huge")  # no limit
    monkeypatch.setenv(ENV_MAX_VARIABLES, "many")
    with pytest.raises(ValueError, match="CLUSTEROPT_MAX_VARIABLES = 'many'"):
        max_variables()
    monkeypatch.setenv(ENV_MAX_VARIABLES, "-3")
    with pytest.raises(ValueError, match="expected >= 0"):
        max_variables()


def test_realtime_frames_beyond_memory_are_refused_before_drawing():
    from clusteropt.instances.realtime import random_realtime
    from clusteropt.online.realtime.policies import MAX_FRAME_CELLS, RealtimeEnvironment

    inst = random_realtime(2, 2, seed=0)
    with pytest.raises(ValueError, match=r"frames = 100000000; expected at most 25,000,000"):
        RealtimeEnvironment(inst, 10**8, np.random.default_rng(0))
    assert MAX_FRAME_CELLS // 4 == 25_000_000
