"""The one time-slotted driver every online system runs on.

An *environment* holds what the world does: it draws the random inputs of every slot from its own
generator, shows the policy a slot's observation, applies the policy's decision and records the
outcome.  A *policy* follows the estimator habit (``__init__`` stores parameters only;
``reset(instance, rng)`` creates its state, whose attributes end in ``_``; ``step(t, observation)``
is the only mutator and returns the decision).  Environments register per instance kind
(:func:`register_environment`), so :func:`run_online` runs any policy on any system.

Randomness: ``seed`` is split once with :class:`numpy.random.SeedSequence` into the environment's
stream and the policy's stream.  Two policies run with the same seed therefore see the very same
inputs (common random numbers), which makes paired comparisons exact.

Failed solves.  A solver that fails inside a slot is never hidden.  Where a policy has no
documented way on, the error propagates: :func:`run_online` adds the slot (``slot 7: ...``) to
the message of a ``RuntimeError`` (every solver error is one) that does not name it yet, and the
command line exits 3 with that line.  Where a policy documents a *fallback* (another rule decides
the slot when its solver gives no usable answer, e.g. ``mlbroker-plus`` keeping A_round's decision
when the slot MILP hits its time limit without a solution), the policy writes why into the slot's
info under :data:`FALLBACK`, and :func:`fallback_summary` counts them for ``out.json``, the
command line's summary line and the experiment rows, so a run decided in part by its fallback is
never reported as if the policy alone had decided it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from clusteropt.progress import Progress
from clusteropt.registries import lookup

__all__ = ["ENVIRONMENTS", "FALLBACK", "Environment", "Policy", "fallback_note", "fallback_summary",
           "register_environment", "run_online"]

#: Key of a slot's info that names the documented fallback that decided the slot (absent or "": none).
FALLBACK = "fallback"

log = logging.getLogger(__name__)


class Environment(Protocol):
    """What :func:`run_online` needs from a system's environment."""

    def observe(self, t: int) -> Any:
        """The observation of slot ``t`` (1-based)."""

    def apply(self, t: int, decision: Any) -> None:
        """Carry out the decision of slot ``t`` and record its outcome."""

    def result(self, policy: Any) -> Any:
        """The run's trace once every slot is done."""


class Policy(Protocol):
    """What :func:`run_online` needs from a policy."""

    name: str

    def reset(self, instance: Any, rng: np.random.Generator) -> None:
        """Create the state for a new run on ``instance``."""

    def step(self, t: int, observation: Any) -> Any:
        """Decide slot ``t``."""


#: Instance kind -> ``factory(instance, horizon, rng) -> Environment``.
ENVIRONMENTS: dict[str, Callable[..., Environment]] = {}

#: The module that registers each instance kind's environment (imported by :func:`run_online` on
#: first use, so a run loads only its own system).
ENVIRONMENT_MODULES = {"broker": "clusteropt.online.broker", "gadget": "clusteropt.online.gadget",
                       "realtime": "clusteropt.online.realtime.policies", "ring": "clusteropt.online.ring"}


def register_environment(kind: str, factory: Callable[..., Environment]) -> Callable[..., Environment]:
    """Register the environment factory of an instance kind (once per kind)."""
    if kind in ENVIRONMENTS and ENVIRONMENTS[kind] is not factory:
        raise ValueError(f"environment {kind!r} is registered twice")
    ENVIRONMENTS[kind] = factory
    return factory


def run_online(policy: Policy, instance: Any, *, horizon: int, seed=None, progress: bool = False,
               unit: str = "slot") -> Any:
    """Run ``policy`` on ``instance`` for slots ``1..horizon`` and return the environment's trace.

    Parameters
    ----------
    policy : Policy
        Reset at the start, so one policy object can run many times.
    instance : Instance
        Its ``kind`` selects the environment.
    horizon : int
        Number of slots (frames), >= 1.
    seed : int, SeedSequence or None
        Split into the environment's and the policy's random streams (module docstring).
    progress : bool
        Show the slots done (:class:`clusteropt.progress.Progress`: a bar on a terminal, a log
        line a minute otherwise).
    unit : str
        What a slot is called in the progress line (``"frame"``, ``"batch"``).

    Raises
    ------
    ValueError
        ``horizon`` < 1, or no environment for the instance's kind.
    """
    if not isinstance(horizon, int | np.integer) or horizon < 1:
        raise ValueError(f"horizon = {horizon!r}; expected an integer >= 1")
    kind = getattr(instance, "kind", type(instance).__name__)
    if kind not in ENVIRONMENTS:  # systems register their environments when their module is imported
        import importlib

        module = ENVIRONMENT_MODULES.get(kind)
        for name in [module] if module else list(ENVIRONMENT_MODULES.values()):
            importlib.import_module(name)
    factory = lookup(ENVIRONMENTS, kind, "environment")
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    env_seq, policy_seq = seq.spawn(2)
    env = factory(instance, int(horizon), np.random.default_rng(env_seq))
    policy.reset(instance, np.random.default_rng(policy_seq))
    label = f"{kind} {getattr(policy, 'name', type(policy).__name__)}"
    with Progress(label, int(horizon), unit, enabled=progress) as bar:
        for t in range(1, int(horizon) + 1):
            try:
                decision = policy.step(t, env.observe(t))
            except RuntimeError as exc:  # a failed solve: say in which slot (module docstring)
                text = str(exc)
                if len(exc.args) == 1 and not text.startswith(f"slot {t}"):
                    exc.args = (f"slot {t} ({label}): {text}",)
                raise
            env.apply(t, decision)
            bar.update()
    return env.result(policy)


def fallback_summary(slot_info: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Count the slots a documented fallback decided (their info's :data:`FALLBACK`).

    ``slot_info`` is a run's per-slot info, slot 1 first.  Returns ``{"count", "slots" (1-based),
    "reasons" (reason -> slots)}``, what ``out.json`` carries under ``"fallbacks"``.

    >>> fallback_summary([{}, {"fallback": "A_round kept"}, {"fallback": ""}, {"fallback": "A_round kept"}])
    {'count': 2, 'slots': [2, 4], 'reasons': {'A_round kept': 2}}
    """
    slots: list[int] = []
    reasons: dict[str, int] = {}
    for t, info in enumerate(slot_info, start=1):
        why = str(info.get(FALLBACK) or "")
        if why:
            slots.append(t)
            reasons[why] = reasons.get(why, 0) + 1
    return {"count": len(slots), "slots": slots, "reasons": reasons}


def fallback_note(summary: Mapping[str, Any], slots: int) -> str:
    """The words a summary line adds for :func:`fallback_summary` (empty when no slot fell back).

    >>> fallback_note({"count": 2, "slots": [2, 4], "reasons": {"A_round kept": 2}}, 5)
    'fallback in 2 of 5 slots: A_round kept x2'
    """
    if not summary["count"]:
        return ""
    why = "; ".join(f"{reason} x{n}" for reason, n in summary["reasons"].items())
    return f"fallback in {summary['count']} of {slots} slots: {why}"
