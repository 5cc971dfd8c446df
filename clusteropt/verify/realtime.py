"""Checker for paper 002 runs: every frame's decision, and the completions recounted.

Only the instance and the run's recorded inputs (job patterns ``J(t)``, task outcomes) and
decisions are read; nothing the policy or the environment computed is trusted:

* ``interference-free`` (Sec. II-A): no worker gets two tasks in a frame;
* ``only generated jobs``: a scheduled application generated a job in that frame (``|J_i(t)| != 0``);
* ``completion recount``: ``e_i(t) = 1`` exactly when application i's job was scheduled, exists,
  and every one of its tasks completed (Sec. II-B); the recorded completions must agree;
* ``task outcomes``: only drawn where ``P_ij`` allows (never a success with ``P_ij = 0`` nor a
  failure with ``P_ij = 1``), and job patterns only where the instance generates tasks.

``value`` is the total number of completed jobs (recounted); ``rates`` the recounted Eq. (1)
averages per application.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from clusteropt.verify.base import Check, Violation

__all__ = ["RealtimeCheck", "check_realtime_run"]


@dataclasses.dataclass(frozen=True)
class RealtimeCheck(Check):
    """:class:`Check` plus the recounted completions ``completed`` (T, N) and ``rates`` (N,)."""

    completed: np.ndarray | None = None
    rates: np.ndarray | None = None


def _where(idx) -> str:
    t, rest = int(idx[0]), [int(x) for x in idx[1:]]
    names = ("app", "worker")
    return ", ".join([f"frame {t + 1}"] + [f"{n} {v}" for n, v in zip(names, rest, strict=False)])


def _add(out: list[Violation], constraint: str, bad: np.ndarray, limit: int) -> None:
    for idx in np.argwhere(bad)[: max(0, limit - len(out))]:
        out.append(Violation(constraint, _where(idx), 1.0))


def check_realtime_run(inst, run, *, max_violations: int = 50) -> RealtimeCheck:
    """Check a :class:`~clusteropt.online.realtime.policies.RealtimeRun` (or anything with ``jobs``,
    ``task_done``, ``decisions``, ``completed``) against ``inst``.

    Examples
    --------
    >>> from clusteropt.instances import realtime_preset
    >>> from clusteropt.online import run_online
    >>> from clusteropt.online.realtime.policies import SqrtGreedy
    >>> inst = realtime_preset("paper")
    >>> run = run_online(SqrtGreedy(), inst, horizon=100, seed=0)
    >>> chk = check_realtime_run(inst, run)
    >>> chk.feasible, chk.value == float(run.completed.sum())
    (True, True)
    """
    jobs = np.asarray(run.jobs)
    done = np.asarray(run.task_done)
    dec = np.asarray(run.decisions)
    rec = np.asarray(run.completed)
    n, m = inst.n_apps, inst.n_workers
    if jobs.ndim != 3 or jobs.shape[1:] != (n, m):
        raise ValueError(f"jobs has shape {jobs.shape}; expected (T, {n}, {m})")
    t = jobs.shape[0]
    shapes = (("task_done", done, (t, n, m)), ("decisions", dec, (t, n)), ("completed", rec, (t, n)))
    for name, arr, shape in shapes:
        if arr.shape != shape:
            raise ValueError(f"{name} has shape {arr.shape}; expected {shape}")
    jobs, done, dec, rec = (a.astype(bool) for a in (jobs, done, dec, rec))
    out: list[Violation] = []
    # interference-free: tasks per worker and frame among the scheduled jobs
    load = (jobs & dec[:, :, None]).sum(axis=1)                     # (T, M)
    for idx in np.argwhere(load > 1)[:max_violations]:
        out.append(Violation("interference-free (one task per worker)", f"frame {idx[0] + 1}, worker {idx[1]}",
                             float(load[tuple(idx)] - 1)))
    _add(out, "only generated jobs are scheduled", dec & ~jobs.any(axis=2), max_violations)
    p = np.asarray(inst.success)
    _add(out, "task outcome possible (P_ij = 0 never completes)", done & (p == 0), max_violations)
    _add(out, "task outcome possible (P_ij = 1 always completes)", ~done & (p == 1), max_violations)
    if inst.generation is not None:
        g = np.asarray(inst.generation)
        _add(out, "job pattern possible (task with generation 0)", jobs & (g == 0), max_violations)
        _add(out, "job pattern possible (task with generation 1 missing)", ~jobs & (g == 1), max_violations)
    else:
        known = {np.ascontiguousarray(pat.astype(bool)).tobytes()
                 for pat, q in zip(inst.patterns, inst.pattern_prob, strict=True) if q > 0}
        for k in range(t):
            if np.ascontiguousarray(jobs[k]).tobytes() not in known and len(out) < max_violations:
                out.append(Violation("job pattern is one of the instance's patterns", f"frame {k + 1}", 1.0))
    recount = dec & jobs.any(axis=2)
    for j in range(m):  # every task of a scheduled job must complete
        recount &= ~jobs[:, :, j] | done[:, :, j]
    _add(out, "completion recount e_i(t)", recount != rec, max_violations)
    return RealtimeCheck(violations=tuple(out[:max_violations]), value=float(recount.sum()), completed=recount,
                         rates=recount.mean(axis=0) if t else np.zeros(n))
