"""The paper 002 checker flags every kind of bad frame and recounts completions itself."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from clusteropt.instances import RealtimeInstance, realtime_preset
from clusteropt.online import run_online
from clusteropt.online.realtime.policies import SqrtGreedy
from clusteropt.verify import check_realtime_run


@pytest.fixture
def setting():
    inst = realtime_preset("fig5", n=4, generation=0.5).with_requirement(np.full(4, 0.2))
    return inst, run_online(SqrtGreedy(), inst, horizon=300, seed=1)


def constraints(check):
    return {v.constraint for v in check.violations}


def test_a_real_run_passes_and_the_recount_agrees(setting):
    inst, run = setting
    check = check_realtime_run(inst, run)
    assert check.feasible and check.value == run.completed.sum()
    assert np.allclose(check.rates, run.rates)


def test_interference_is_flagged(setting):
    inst, run = setting
    shared = (run.jobs[:, :, None] & run.jobs[:, None]).any(axis=3).sum(axis=(1, 2))  # pairs incl. self
    t = int(np.flatnonzero(shared > run.jobs.any(axis=2).sum(axis=1))[0])  # two jobs share a worker
    dec = run.decisions.copy()
    dec[t] = run.jobs[t].any(axis=1)  # every generated job: some share a worker in this frame
    check = check_realtime_run(inst, dataclasses.replace(run, decisions=dec, completed=dec & False))
    assert "interference-free (one task per worker)" in constraints(check)
    assert any(v.where.startswith(f"frame {t + 1}, worker") for v in check.violations)


def test_scheduling_a_job_that_was_not_generated_is_flagged(setting):
    inst, run = setting
    t, i = map(int, np.argwhere(~run.jobs.any(axis=2))[0])
    dec = run.decisions.copy()
    dec[t] = False
    dec[t, i] = True
    check = check_realtime_run(inst, dataclasses.replace(run, decisions=dec))
    assert "only generated jobs are scheduled" in constraints(check)


def test_a_falsified_completion_is_flagged(setting):
    inst, run = setting
    comp = run.completed.copy()
    t, i = map(int, np.argwhere(~run.decisions)[0])
    comp[t, i] = True  # counted although not run
    check = check_realtime_run(inst, dataclasses.replace(run, completed=comp))
    assert constraints(check) == {"completion recount e_i(t)"}
    assert check.violations[0].where == f"frame {t + 1}, app {i}"
    assert check.value == run.completed.sum()  # the recount ignores the claim


def test_a_job_with_a_failed_task_does_not_complete(setting):
    inst, run = setting
    t, i = map(int, np.argwhere(run.completed)[0])
    done = run.task_done.copy()
    j = int(np.flatnonzero(run.jobs[t, i])[0])
    done[t, i, j] = False
    check = check_realtime_run(inst, dataclasses.replace(run, task_done=done))
    assert constraints(check) == {"completion recount e_i(t)"}


def test_impossible_inputs_are_flagged():
    inst = RealtimeInstance(success=[[1.0, 0.0]], generation=[[1.0, 0.0]])
    run = run_online(SqrtGreedy(), inst, horizon=5, seed=0)
    assert check_realtime_run(inst, run).feasible
    jobs, done = run.jobs.copy(), run.task_done.copy()
    jobs[0, 0, 1] = True
    done[1, 0, 0] = False
    done[2, 0, 1] = True
    check = check_realtime_run(inst, dataclasses.replace(run, jobs=jobs, task_done=done))
    assert {"job pattern possible (task with generation 0)", "task outcome possible (P_ij = 1 always completes)",
            "task outcome possible (P_ij = 0 never completes)"} <= constraints(check)
    paper = realtime_preset("paper")
    prun = run_online(SqrtGreedy(), paper, horizon=3, seed=0)
    jobs = prun.jobs.copy()
    jobs[1] = ~jobs[1]
    check = check_realtime_run(paper, dataclasses.replace(prun, jobs=jobs))
    assert "job pattern is one of the instance's patterns" in constraints(check)


def test_shapes_are_checked(setting):
    inst, run = setting
    with pytest.raises(ValueError, match=r"decisions has shape \(300, 3\)"):
        check_realtime_run(inst, dataclasses.replace(run, decisions=run.decisions[:, :3]))
    with pytest.raises(ValueError, match="jobs has shape"):
        check_realtime_run(inst, dataclasses.replace(run, jobs=run.jobs[:, :2]))
