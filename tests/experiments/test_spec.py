"""Experiment specs: validation, cells, seeds, quick variants, code version."""

import numpy as np
import pytest

from clusteropt.experiments import EXPERIMENTS, Experiment, cell_seed, code_version, register_experiment
from clusteropt.experiments.spec import params_key
from tests.experiments import specs


def _spec(**over):
    base = {"name": "t", "run": specs.sample_cell, "grid": {"n": [1, 2]}, "seeds": [0], "policies": ["mean"]}
    return Experiment(**{**base, **over})


def test_cells_are_grid_then_seeds_then_policies():
    spec = _spec(grid={"n": [1, 2], "delay": [0.0]}, seeds=[5, 6], policies=["mean", "max"])
    cells = spec.cells()
    assert [(c.params["n"], c.seed, c.policy) for c in cells] == [
        (n, s, p) for n in (1, 2) for s in (5, 6) for p in ("mean", "max")
    ]
    assert len({c.key for c in cells}) == len(cells) == 8


def test_cell_seeds_shared_by_policies_and_independent_of_the_grid():
    small = _spec(grid={"n": [2]}, seeds=[0, 1], policies=["mean", "max"]).cells()
    big = _spec(grid={"n": [1, 2, 3]}, seeds=[1, 0, 7], policies=["max"]).cells()
    seeds_small = {(c.params["n"], c.seed): c.cell_seed for c in small}
    seeds_big = {(c.params["n"], c.seed): c.cell_seed for c in big}
    assert seeds_small[2, 0] == seeds_big[2, 0] and seeds_small[2, 1] == seeds_big[2, 1]
    by_policy = {}
    for c in small:
        by_policy.setdefault((c.params["n"], c.seed), set()).add(c.cell_seed)
    assert all(len(v) == 1 for v in by_policy.values())
    assert len(set(seeds_big.values())) == len(seeds_big)  # distinct across cells
    assert all(0 <= s < 2**63 for s in seeds_big.values())


def test_cell_seed_is_seedsequence_of_root_params_and_replicate():
    expected = np.random.SeedSequence(3, spawn_key=(*_words({"n": 4}), 2)).generate_state(1, np.uint64)[0] >> 1
    assert cell_seed(3, {"n": 4}, 2) == int(expected)
    assert cell_seed(3, {"n": 4}, 2) != cell_seed(4, {"n": 4}, 2)


def _words(params):
    import hashlib

    digest = hashlib.sha256(params_key(params).encode()).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))


def test_quick_variant_merges_grid_and_keeps_name():
    spec = _spec(grid={"n": [1, 2, 3], "delay": [0.0]}, seeds=[0, 1, 2], timeout=10.0,
                 quick={"grid": {"n": [1]}, "seeds": [0], "timeout": 1.0})
    quick = spec.quick_variant()
    assert quick.name == spec.name and quick.variant == "quick"
    assert quick.grid == {"n": (1,), "delay": (0.0,)} and quick.seeds == (0,) and quick.timeout == 1.0
    assert quick.quick_variant() is quick
    assert _spec().quick_variant().cells() == _spec().cells()  # no overrides: the same cells


def local_function():
    def inner(params, seed, policy):
        return {}

    return inner


@pytest.mark.parametrize(
    ("over", "match"),
    [
        ({"name": "Bad Name"}, "Experiment.name = 'Bad Name'"),
        ({"run": lambda p, s, q: {}}, "module level"),
        ({"run": local_function()}, "module level"),
        ({"grid": {}}, "grid = {}"),
        ({"grid": {"seed": [1]}}, "grid key 'seed'"),
        ({"grid": {"n": []}}, r"grid\['n'\] = \[\]"),
        ({"grid": {"n": "abc"}}, r"grid\['n'\] = 'abc'"),
        ({"grid": {"n": [1, [2]]}}, r"grid\['n'\]\[1\] = \[2\]"),
        ({"grid": {"n": [1.0, float("nan")]}}, r"grid\['n'\]\[1\] = nan"),
        ({"grid": {"n": [1, 1]}}, "distinct values"),
        ({"seeds": []}, "seeds = \\[\\]"),
        ({"seeds": [0, -1]}, "non-negative"),
        ({"seeds": [1, 1]}, "distinct seeds"),
        ({"policies": "mean"}, "policies = 'mean'"),
        ({"policies": ["a", "a"]}, "distinct names"),
        ({"timeout": 0}, "timeout = 0"),
        ({"quick": {"n_seeds": 1}}, "quick has n_seeds"),
        ({"quick": {"grid": {"m": [1]}}}, "quick grid names m"),
        ({"figures": {"f": 3}}, r"figures\['f'\] = 3"),
    ],
)
def test_bad_specs_are_refused_with_the_field_named(over, match):
    with pytest.raises(ValueError, match=match):
        _spec(**over)


def test_register_twice_is_refused(monkeypatch):
    monkeypatch.setattr("clusteropt.experiments.spec.EXPERIMENTS", dict(EXPERIMENTS))
    from clusteropt.experiments import spec as spec_module

    a = register_experiment(_spec(name="test-twice"))
    assert register_experiment(a) is a
    with pytest.raises(ValueError, match="registered twice"):
        register_experiment(_spec(name="test-twice"))
    assert "test-twice" in spec_module.EXPERIMENTS and "test-twice" not in EXPERIMENTS


def test_code_version_hashes_the_sources():
    version = code_version()
    assert version.startswith("0.1.0+") and len(version.split("+")[1]) == 12
    assert code_version(specs.SAMPLE) != version  # the spec's module is outside the package
    assert code_version(EXPERIMENTS["worker-placement-gap"]) == version


def test_describe_counts_cells():
    row = EXPERIMENTS["worker-placement-gap"].describe()
    assert row["cells"] == 4 * 4 * 10 * 2 and row["quick cells"] == 2 * 2 * 2 * 2
    assert row["policies"] == list(EXPERIMENTS["worker-placement-gap"].policies)
