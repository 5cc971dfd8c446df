"""Paper 002 instances: validation names the field, JSON round trip, presets, sampling, states."""

from __future__ import annotations

import numpy as np
import pytest

from clusteropt.instances import InstanceError, RealtimeInstance, load_instance, random_realtime, realtime_preset


def test_json_round_trip_and_load(tmp_path):
    for inst in (realtime_preset("paper"), realtime_preset("fig4", success=0.9), random_realtime(3, 5, seed=2)):
        path = tmp_path / "rt.json"
        inst.to_json(path)
        assert load_instance(path) == inst


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"success": [[0.5, 1.5]], "generation": [[0.1, 0.1]]}, r"success\[0, 1\] = 1.5; expected a probability"),
    ({"success": [[0.5]], "generation": [[0.1, 0.1]]}, r"generation.shape\[1\] = 2; expected 1"),
    ({"success": [[0.5]]}, "exactly one of generation"),
    ({"success": [[0.5]], "generation": [[0.2]], "patterns": [[[1]]]}, "exactly one of generation"),
    ({"success": [[0.5]], "generation": [[-0.2]]}, r"generation\[0, 0\] = -0.2"),
    ({"success": [[0.5]], "patterns": [[[2]]], "pattern_prob": [1.0]}, r"patterns\[0, 0, 0\] = 2; expected 0"),
    ({"success": [[0.5]], "patterns": [[[1]], [[0]]], "pattern_prob": [0.5, 0.4]}, r"sum\(pattern_prob\)"),
    ({"success": [[0.5]], "patterns": [[[1]]]}, "pattern_prob = None"),
    ({"success": [[0.5, 0.5]], "patterns": [[[1]]], "pattern_prob": [1.0]}, "patterns.shape"),
    ({"success": [[0.5]], "generation": [[0.2]], "requirement": [-1.0]}, r"requirement\[0\] = -1.0"),
    ({"success": [[0.5]], "generation": [[0.2]], "requirement": [0.1, 0.2]}, r"requirement.shape\[0\] = 2"),
])
def test_bad_fields_are_named(kwargs, match):
    with pytest.raises(InstanceError, match=match):
        RealtimeInstance(**kwargs)


def test_presets_follow_the_paper():
    paper = realtime_preset("paper")
    assert paper.patterns.tolist() == [[[1, 1, 0, 0], [0, 1, 1, 1]]]
    assert paper.success[:, 0].tolist() == [0.8, 0.9]
    fig3 = realtime_preset("fig3", generation=0.5)
    assert fig3.generation.tolist() == [[0.5, 0.5], [0.5, 0.5]] and (fig3.success == 0.9).all()
    fig4 = realtime_preset("fig4")
    assert fig4.success.tolist() == [[0.9, 0.9], [0.7, 0.7]] and (fig4.generation == 0.5).all()
    fig5 = realtime_preset("fig5", n=7, generation=0.4)
    assert fig5.success.shape == (7, 7) and (fig5.generation == 0.4).all()
    # the paper's remark: an application generates a job with probability 1 - (1 - g)^N
    assert fig5.job_probability() == pytest.approx(np.full(7, 1 - 0.6**7))
    with pytest.raises(ValueError, match="preset 'fig3' takes generation; got success"):
        realtime_preset("fig3", success=0.3)
    with pytest.raises(ValueError, match="preset = 'fig9'"):
        realtime_preset("fig9")
    with pytest.raises(ValueError, match="n = 0"):
        realtime_preset("fig5", n=0)


def test_sampling_matches_the_probabilities():
    inst = random_realtime(3, 4, seed=1)
    jobs = inst.sample_jobs(40_000, 5)
    assert np.abs(jobs.mean(axis=0) - inst.generation).max() < 4 * 0.5 / np.sqrt(40_000)
    pat = RealtimeInstance(success=[[0.5, 0.5]], patterns=[[[1, 0]], [[0, 1]], [[1, 1]]],
                           pattern_prob=[0.2, 0.3, 0.5])
    jobs = pat.sample_jobs(40_000, 6)
    assert jobs[:, 0, 0].mean() == pytest.approx(0.7, abs=0.01)
    assert np.array_equal(inst.sample_jobs(10, 3), inst.sample_jobs(10, 3))


def test_states_enumerate_the_distribution():
    inst = RealtimeInstance(success=[[0.9, 0.9], [0.9, 0.9]], generation=[[1.0, 0.5], [0.0, 0.25]])
    masks, prob = inst.states()
    assert masks.shape == (4, 2, 2) and prob.sum() == pytest.approx(1.0)
    assert masks[:, 0, 0].all() and not masks[:, 1, 0].any()
    # explicit patterns that coincide are merged
    pat = RealtimeInstance(success=[[0.5]], patterns=[[[1]], [[0]], [[1]]], pattern_prob=[0.2, 0.3, 0.5])
    masks, prob = pat.states()
    assert sorted(zip(masks.reshape(-1).tolist(), prob.tolist())) == [(False, 0.3), (True, 0.7)]
    with pytest.raises(ValueError, match="exceed max_states"):
        realtime_preset("fig5", n=5).states()


def test_completion_probability_is_eq2s_factor():
    inst = realtime_preset("paper")
    assert inst.completion_probability([[1, 1, 0, 0], [0, 0, 0, 0]]).tolist() == pytest.approx([0.64, 0.0])


def test_random_realtime_checks_its_arguments():
    with pytest.raises(ValueError, match="n_apps = 0"):
        random_realtime(0, 2)
    with pytest.raises(ValueError, match="generation"):
        random_realtime(2, 2, generation=(0.5, 0.2))
    fixed = random_realtime(2, 3, generation=0.3, success=0.8, seed=0)
    assert (fixed.generation == 0.3).all() and (fixed.success == 0.8).all()


@pytest.mark.parametrize(("kwargs", "match"), [
    # BUG (issue 18): booleans and numeric strings passed as numbers (np.array(..., dtype=float)).
    ({"success": [[0.5]], "patterns": [[[True]]], "pattern_prob": [1.0]},
     r"^patterns\[0, 0, 0\] = True; expected a number \(true / false is not one\)$"),
    ({"success": [["0.5"]], "generation": [[0.2]]},
     r"^success\[0, 0\] = '0.5'; expected a number \(not a string\)$"),
    ({"success": [[0.5]], "generation": [[0.2]], "requirement": [False]},
     r"^requirement\[0\] = False; expected a number"),
    ({"success": [[0.5]], "generation": [[0.2]], "name": ["x"]}, r"^name = \['x'\]; expected a string$"),
])
def test_booleans_and_strings_are_not_numbers(kwargs, match):
    with pytest.raises(InstanceError, match=match):
        RealtimeInstance(**kwargs)
