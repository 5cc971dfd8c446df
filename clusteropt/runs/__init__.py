"""One way to run every system: ``run(instance, policy, seed=..., **options) -> Run``.

Each system registers a :class:`RunnerSpec` (its policies, its options, how to run one and how
to re-check an output) in its own module of this package; :data:`RUNNER_MODULES` is the one line
per system that makes it known.  ``clusteropt run`` and :func:`clusteropt.run` both go through
:func:`run`, so the CLI's line, its ``out.json`` and the Python :class:`Run` are the same thing.

A :class:`Run` is checked by ``clusteropt.verify`` as it is made (``Run.ok``, ``Run.check``), and
:meth:`Run.verify` re-checks it from its JSON form, the decisions as an outside checker reads them
(:func:`check`, which also takes an ``out.json`` path).

Errors.  Bad options raise :class:`OptionError` (a ``ValueError`` naming the option, rendered
with the CLI's flag names by ``clusteropt run``); a solve with no solution where the policy has
no documented fallback raises ``RuntimeError`` (:class:`RunFailed`); a run whose output fails
verification is returned with ``ok`` False and its ``failure`` text (the CLI exits 3 on it).

Examples
--------
>>> import clusteropt
>>> inst = clusteropt.generate("ring", n=8, servers=2, requests=200, seed=0)
>>> r = clusteropt.run(inst, "dynamic", seed=1)
>>> r.kind, r.policy, r.ok
('ring', 'dynamic', True)
>>> r.verify().ok
True
"""

from __future__ import annotations

import importlib
import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clusteropt.registries import register

__all__ = [
    "RUNNERS",
    "RUNNER_MODULES",
    "OptionError",
    "Run",
    "RunFailed",
    "RunnerSpec",
    "check",
    "get_runner",
    "list_policies",
    "read_output",
    "register_runner",
    "run",
]

log = logging.getLogger(__name__)

#: The systems' runner modules, one line per system (imported on first use).
RUNNER_MODULES: tuple[str, ...] = (
    "clusteropt.runs.coflow",
    "clusteropt.runs.realtime",
    "clusteropt.runs.gadget",
    "clusteropt.runs.broker",
    "clusteropt.runs.ring",
)


class OptionError(ValueError):
    """A bad option of a run, naming it.

    ``template`` writes each option as ``{name}``; ``str()`` renders the Python keyword
    (``epsilon``), :meth:`render` any other spelling (the CLI's ``--epsilon``).

    >>> e = OptionError("{epsilon} is a parameter of mlbroker, not of local")
    >>> str(e), e.render(lambda o: "--" + o.replace("_", "-"))
    ('epsilon is a parameter of mlbroker, not of local', '--epsilon is a parameter of mlbroker, not of local')
    """

    def __init__(self, template: str):
        self.template = template
        super().__init__(self.render(str))

    @property
    def options(self) -> list[str]:
        """The options the message names, in order."""
        return re.findall(r"\{(\w+)\}", self.template)

    def render(self, spell: Callable[[str], str]) -> str:
        """The message with every ``{option}`` spelled by ``spell(option)``."""
        return re.sub(r"\{(\w+)\}", lambda m: spell(m.group(1)), self.template)


class RunFailed(RuntimeError):
    """A solve inside the run produced no solution and the policy documents no fallback."""


@dataclass
class Run:
    """One run of a policy on an instance, verified.

    Attributes
    ----------
    kind, policy : str
        The instance's kind and the registered policy name.
    seed : int or None
        The run's seed (None where nothing is drawn at random).
    params : dict
        Every parameter of the policy as it ran (defaults resolved).
    summary : str
        One line: what ``clusteropt run`` prints.
    costs : dict
        The system's headline numbers, as the verifier recounts them.
    ok : bool
        The verifier's verdict on the decisions.
    check :
        The verifier's result (``clusteropt.verify``).
    result :
        The system's own run object (``RingRun``, ``BrokerRun``, ``CoflowRun``, ...).
    instance :
        The instance run on (after any conversion, e.g. concurrent-open-shop -> coflow).
    out : dict
        The ``out.json`` body without its provenance block.
    solver : dict or None
        The solver block of the provenance (name, version, options), where a solver ran.
    failure : str or None
        Why a run that is not ``ok`` failed verification (its first violations).
    warning : str or None
        A run not ``ok`` in the way its options asked for (GADGET's ``rounding="paper"`` may
        overload capacities, as the paper's Theorem 8 allows): reported, not an error.  Options
        are written ``{name}`` (:class:`OptionError`'s templates); :attr:`warning_text` renders it.
    """

    kind: str
    policy: str
    seed: int | None
    params: dict[str, Any]
    summary: str
    costs: dict[str, Any]
    ok: bool
    check: Any
    result: Any
    instance: Any
    out: dict[str, Any]
    solver: dict[str, Any] | None = None
    failure: str | None = None
    warning: str | None = None

    @property
    def warning_text(self) -> str | None:
        """:attr:`warning` with its options as Python keywords."""
        return None if self.warning is None else OptionError(self.warning).render(str)

    def to_dict(self) -> dict[str, Any]:
        """The ``out.json`` content: :attr:`out` and a provenance block (versions, solver)."""
        from clusteropt.provenance import provenance

        return {**self.out, "provenance": provenance(solver=self.solver)}

    def to_json(self, path: str | Path) -> Path:
        """Write :meth:`to_dict` to ``path`` (atomically); returns the path."""
        from clusteropt.instances.base import write_text_atomic

        write_text_atomic(path, json.dumps(self.to_dict()) + "\n")
        return Path(path)

    def verify(self):
        """Re-check the run from its JSON form (what an outside checker reads): the checker's result."""
        return check(self.instance, self)

    def __repr__(self) -> str:
        return f"Run({self.summary!r})"


@dataclass(frozen=True)
class RunnerSpec:
    """How one system runs.

    Attributes
    ----------
    kind : str
        The instance kind it runs; ``also`` lists kinds converted to it first.
    policies : Mapping[str, str]
        Policy name -> one line (paper and algorithm); the first is the default.
    options : Mapping[str, str]
        Keyword option -> one line (the CLI's help says more); ``seed`` is common to all.
    runner : callable
        ``runner(instance, policy, *, seed, progress, **options) -> Run``.
    checker : callable
        ``checker(instance, out) -> check`` for an ``out.json`` read back (a dict).
    also : tuple of str
        Other instance kinds this runner takes, each converted by ``convert``.
    convert : callable or None
        ``convert(instance) -> instance of kind``.
    """

    kind: str
    policies: Mapping[str, str]
    options: Mapping[str, str]
    runner: Callable[..., Run]
    checker: Callable[[Any, Mapping[str, Any]], Any]
    also: tuple[str, ...] = ()
    convert: Callable[[Any], Any] | None = None

    @property
    def name(self) -> str:
        """The registry key: the kind."""
        return self.kind

    @property
    def default(self) -> str:
        """The default policy."""
        return next(iter(self.policies))


RUNNERS: dict[str, RunnerSpec] = {}


def register_runner(spec: RunnerSpec) -> RunnerSpec:
    """Add ``spec`` (a kind may be registered once)."""
    return register(RUNNERS, spec, "runner")


def _load_runners() -> list[RunnerSpec]:
    """Every registered runner, in :data:`RUNNER_MODULES` order (then any registered elsewhere)."""
    for module in RUNNER_MODULES:
        importlib.import_module(module)
    order = {m: k for k, m in enumerate(RUNNER_MODULES)}
    return sorted(RUNNERS.values(), key=lambda s: order.get(s.runner.__module__, len(order)))


def get_runner(kind: str) -> RunnerSpec:
    """The runner of instances of ``kind`` (or of a kind it converts)."""
    specs = _load_runners()
    for spec in specs:
        if kind == spec.kind or kind in spec.also:
            return spec
    kinds = ", ".join(k for s in specs for k in (s.kind, *s.also))
    raise ValueError(f"instances of kind {kind!r} have no runner; runs take {kinds} instances")


def _prepare(instance) -> tuple[RunnerSpec, Any]:
    kind = getattr(instance, "kind", None)
    if not isinstance(kind, str):
        raise TypeError(f"instance: expected a clusteropt instance, got {type(instance).__name__}")
    spec = get_runner(kind)
    if kind != spec.kind:
        assert spec.convert is not None
        instance = spec.convert(instance)
    return spec, instance


def run(instance, policy: str | None = None, *, seed: int | None = 0, progress: bool = False,
        **options) -> Run:
    """Run ``policy`` (default: the kind's default) on ``instance``; the output is verified.

    Parameters
    ----------
    instance
        Any instance with a runner (:func:`list_policies` lists them by kind).
    policy : str, optional
        A registered policy of that kind.
    seed : int or None, default 0
        The run's seed (the random streams of the environment and of the policy).
    progress : bool, default False
        Show a progress bar.
    **options
        The policy's own options (``list_policies(kind)`` lists them per kind).

    Returns
    -------
    Run

    Raises
    ------
    OptionError
        An unknown option, an option of another policy, or a bad value (named).
    RunFailed
        A solve without solution where the policy has no documented fallback.
    """
    spec, instance = _prepare(instance)
    policy = spec.default if policy is None else policy
    if policy not in spec.policies:
        raise OptionError(f"unknown {{policy}} {policy!r}; {spec.kind} instances take {', '.join(spec.policies)}")
    unknown = [k for k in options if k not in spec.options]
    if unknown:
        raise OptionError(f"{{{unknown[0]}}} is not an option of {spec.kind} runs; they take "
                          f"{', '.join(spec.options) or 'none'}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise OptionError(f"{{seed}} = {seed!r}; expected an integer >= 0 or None")
    given = {k: v for k, v in options.items() if v is not None}
    return spec.runner(instance, policy, seed=seed, progress=progress, **given)


def read_output(output) -> dict[str, Any]:
    """An output as a dict: a :class:`Run`, a mapping, or the path of an ``out.json``."""
    if isinstance(output, Run):  # its out.json body as read back (the provenance plays no part)
        return json.loads(json.dumps(output.out))
    if isinstance(output, Mapping):
        return dict(output)
    if isinstance(output, str | Path):
        from clusteropt.instances.base import read_regular_file

        try:
            raw = read_regular_file(output, where="output file")
        except FileNotFoundError:
            raise ValueError(f"no such output file: {output}") from None
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{output}: not JSON ({exc.msg} at line {exc.lineno})") from None
        if not isinstance(data, dict):
            raise ValueError(f"{output}: expected a JSON object (a run's out.json), got {type(data).__name__}")
        return data
    raise TypeError(f"output: expected a Run, a dict or a path, got {type(output).__name__}")


def check(instance, output):
    """Re-check ``output`` (a :class:`Run`, an ``out.json`` path or its dict) on ``instance``.

    Only ``clusteropt.verify`` judges: the decisions are read from the output and replayed
    against the instance; the costs are recounted.  Returns the checker's result (``.ok``).

    Raises
    ------
    ValueError
        The output is not a run of this instance's kind, or lacks what the checker needs (named).
    """
    spec, instance = _prepare(instance)
    data = read_output(output)
    system = data.get("system")
    if system is not None and system != spec.kind:
        raise ValueError(f"output: a {system} run; the instance is a {spec.kind} instance")
    return spec.checker(instance, data)


def list_policies(kind: str | None = None) -> list[dict[str, Any]]:
    """Every registered policy (of ``kind``): dicts of kind, policy, default, description, options.

    >>> rows = list_policies("ring")
    >>> rows[0]["policy"], rows[0]["default"]
    ('static', True)
    """
    specs = _load_runners() if kind is None else [get_runner(kind)]
    return [{"kind": s.kind, "policy": p, "default": p == s.default, "description": text,
             "options": list(s.options)}
            for s in specs for p, text in s.policies.items()]


def require(data: Mapping[str, Any], key: str, kind: str):
    """``data[key]``, or a ValueError naming the key an output of ``kind`` must hold."""
    if key not in data:
        raise ValueError(f"output: no {key!r}; a {kind} run's out.json holds it (written by `clusteropt run "
                         f"--json` or Run.to_json)")
    return data[key]
