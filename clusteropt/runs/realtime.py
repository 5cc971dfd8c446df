"""Runs of the real-time scheduling policies (paper 002): simulate frames, verify, count completions.

The run's random inputs (the jobs ``J_ij(t)`` generated and the task outcomes drawn for every
frame) are written into ``out.json`` as bit arrays, so an outside checker replays the decisions
against exactly the frames the policy saw: ``{"shape": [T, N, M], "packbits": <base64>}`` is
``numpy.packbits`` of the C-order flattened booleans, base64-encoded.
"""

from __future__ import annotations

import base64
from types import SimpleNamespace
from typing import Any

import numpy as np

from clusteropt.runs import OptionError, Run, RunFailed, RunnerSpec, register_runner, require

__all__ = ["SPEC", "check_output", "pack_bits", "run_realtime_policy", "unpack_bits"]

_POLICIES = {
    "sqrt-greedy": "Alg. 2: greedy on sqrt-weighted virtual queues",
    "max-weight": "Alg. 1: the max-weight schedule of the virtual queues (an ILP per frame)",
    "weight-greedy": "baseline: greedy on the virtual queues",
    "random": "baseline: a random interference-free set",
}

_OPTIONS = {
    "frames": "frames to simulate (default 10,000)",
    "requirement": "requirement r, one per application (default: the instance's)",
}


def pack_bits(arr) -> dict[str, Any]:
    """A boolean array as ``{"shape", "packbits"}`` (module docstring).

    >>> unpack_bits(pack_bits(np.array([[True, False, True]]))).tolist()
    [[True, False, True]]
    """
    a = np.asarray(arr, dtype=bool)
    return {"shape": list(a.shape), "packbits": base64.b64encode(np.packbits(a.ravel()).tobytes()).decode()}


def unpack_bits(data, where: str = "bits") -> np.ndarray:
    """Inverse of :func:`pack_bits`; a malformed entry is a ValueError naming ``where``."""
    try:
        shape = tuple(int(n) for n in data["shape"])
        raw = np.frombuffer(base64.b64decode(data["packbits"], validate=True), dtype=np.uint8)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"output: {where}: expected {{'shape': [...], 'packbits': base64}} ({exc})") from None
    size = int(np.prod(shape)) if shape else 1
    if any(n < 0 for n in shape) or raw.size != (size + 7) // 8:
        raise ValueError(f"output: {where}: {raw.size} bytes do not hold an array of shape {list(shape)}")
    return np.unpackbits(raw, count=size).astype(bool).reshape(shape)


def run_realtime_policy(inst, policy: str, *, seed=0, progress=False, frames=None, requirement=None) -> Run:
    """Simulate ``frames`` frames (:func:`clusteropt.online.run_online`), checked by
    :func:`clusteropt.verify.check_realtime_run`.
    """
    from clusteropt.online import run_online
    from clusteropt.online.realtime.policies import make_policy
    from clusteropt.verify import check_realtime_run

    frames = 10_000 if frames is None else frames
    if isinstance(frames, bool) or not isinstance(frames, int | np.integer) or frames < 1:
        raise OptionError(f"{{frames}} = {frames!r}; expected an integer >= 1")
    if requirement is not None:
        inst = inst.with_requirement(list(requirement))
    try:
        result = run_online(make_policy(policy), inst, horizon=int(frames), seed=seed, progress=progress,
                            unit="frame")
    except RuntimeError as exc:  # the max-weight ILP of a frame not proved optimal: no fallback
        raise RunFailed(str(exc)) from None
    chk = check_realtime_run(inst, result)
    assert chk.rates is not None and inst.requirement is not None  # always recounted / set by validation
    rates = ", ".join(f"{x:.4f}" for x in chk.rates)
    summary = (f"{policy}: {frames} frames, completion rates [{rates}] vs requirement "
               f"{inst.requirement.tolist()}; fulfilled (within 0.01) {result.fulfilled()}; "
               f"verified {chk.feasible}")
    out = {"system": "realtime", "seed": seed, **result.to_json_dict()}
    out["completion_rate"] = chk.rates.tolist()  # the verifier's recount
    out["verified"] = chk.feasible
    out["jobs"] = pack_bits(result.jobs)
    out["task_done"] = pack_bits(result.task_done)
    failure = None if chk.feasible else (
        f"the run failed verification: {'; '.join(str(v) for v in chk.violations[:3])}")
    costs = {"completion_rate": chk.rates.tolist(), "completed": float(chk.value),
             "fulfilled": bool(result.fulfilled())}
    return Run(kind="realtime", policy=policy, seed=seed,
               params={"frames": int(frames), "requirement": inst.requirement.tolist()}, summary=summary,
               costs=costs, ok=bool(chk.feasible), check=chk, result=result, instance=inst, out=out,
               failure=failure)


def check_output(inst, data) -> Any:
    """Replay an ``out.json``'s decisions on its recorded frames (:func:`check_realtime_run`)."""
    from clusteropt.verify import check_realtime_run

    jobs = unpack_bits(require(data, "jobs", "realtime"), "jobs")
    done = unpack_bits(require(data, "task_done", "realtime"), "task_done")
    t = jobs.shape[0] if jobs.ndim == 3 else 0
    n = inst.n_apps
    rows = {}
    for key in ("decisions", "completed"):
        lists = require(data, key, "realtime")
        if not isinstance(lists, list) or len(lists) != t:
            raise ValueError(f"output: {key}: expected a list of {t} frames (one list of applications each)")
        arr = np.zeros((t, n), dtype=bool)
        for k, apps in enumerate(lists):
            try:
                idx = np.asarray(apps, dtype=np.int64).reshape(-1)
            except (TypeError, ValueError):
                raise ValueError(f"output: {key}[{k}] = {apps!r}; expected a list of application "
                                 "indices") from None
            if idx.size and (idx.min() < 0 or idx.max() >= n):
                raise ValueError(f"output: {key}[{k}] = {apps!r}; expected indices in 0..{n - 1}")
            arr[k, idx] = True
        rows[key] = arr
    replay = SimpleNamespace(jobs=jobs, task_done=done, decisions=rows["decisions"], completed=rows["completed"])
    if "requirement" in data and inst.requirement is not None:
        inst = inst.with_requirement(list(data["requirement"]))
    return check_realtime_run(inst, replay)


SPEC = register_runner(RunnerSpec("realtime", _POLICIES, _OPTIONS, run_realtime_policy, check_output))
