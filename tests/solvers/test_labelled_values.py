"""Solutions read back with their index labels: the model's own keys for Pyomo, positions for CVXPY."""

import json

import numpy as np
import pyomo.environ as pyo
import pytest

from clusteropt.instances import random_worker_placement
from clusteropt.models import build_broker_milp
from clusteropt.models.worker_placement import build_worker_placement, build_worker_placement_cvxpy
from clusteropt.solvers import solve
from clusteropt.solvers.direct import solve_highs_direct


@pytest.mark.parametrize("route", ["registry", "direct"])
def test_pyomo_values_carry_the_models_own_index(route):
    from clusteropt.instances.broker import broker_preset

    inst = broker_preset("tiny", seed=1)
    model = build_broker_milp(inst)
    res = solve(model, "highs") if route == "registry" else solve_highs_direct(model)
    y = res.labelled("y")
    assert set(y) == set(model.y.keys())  # (job, slot, dc) as the model indexes it
    for key, value in y.items():
        assert value == pytest.approx(pyo.value(model.y[key]))
    s = res.series("y")
    assert s.index.nlevels == 3 and s.loc[next(iter(y))] == pytest.approx(y[next(iter(y))])


def test_dense_variables_keep_their_shape_and_get_labels():
    inst = random_worker_placement(4, 3, seed=0)
    model = build_worker_placement(inst)
    res = solve(model, "highs")
    assert np.asarray(res.values["y"]).shape == (4, 3)
    labelled = res.labelled("y")
    assert list(labelled) == list(model.y.keys())
    assert [labelled[k] for k in model.y.keys()] == pytest.approx(np.asarray(res.values["y"]).ravel().tolist())
    rows = res.to_dict()["labelled_values"]["y"]
    assert json.loads(json.dumps(rows))[0][:2] == list(next(iter(model.y.keys())))


def test_cvxpy_values_are_labelled_by_position():
    res = solve(build_worker_placement_cvxpy(random_worker_placement(4, 3, seed=0)), "highs")
    labelled = res.labelled("y")
    assert list(labelled)[:2] == [(0, 0), (0, 1)] and len(labelled) == 12
    with pytest.raises(KeyError, match="no variable 'nope'"):
        res.labelled("nope")
