"""Paper 003 (mlBroker): the inputs every mlBroker formulation checks, and the price bound ``H_k(t)``.

The MILP (8) and P_f (9) (:mod:`clusteropt.models.broker.milp`, and its array form
:mod:`clusteropt.models.broker.matrix`) and the regularized slot problem (10)
(:mod:`clusteropt.models.broker.regularized`) take the same arguments: the slots of the model, the
previous slot's deployment ``v_i^r(t - 1)``, and the form of the volume-discount price (7)
(:data:`PRICE_FORMS`).  The convex-hull price form bounds ``h_k^r(t)`` by :func:`price_bound`.

References
----------
X. Li, R. Zhou, L. Jiao, C. Wu, Y. Deng, Z. Li, "Online Placement and Scaling of Geo-distributed
Machine Learning Jobs via Volume-discounting Brokerage" (paper 003): Sec. 3.2-3.3 (Eqs. (2), (3), (7)).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import numpy as np

from clusteropt.instances.broker import BrokerInstance

__all__ = ["DEFAULT_PRICE_FORM", "PRICE_FORMS", "check_prev_v", "check_price_form", "check_slots", "price_bound"]

#: Formulations of the volume-discount price (7): the paper's big-M rows or the convex hull.
PRICE_FORMS = ("bigm", "tight")
#: The price form of every entry point unless given (models, policies, CLI): the convex hull, which
#: has the MILP's optimum and a tighter relaxation (:mod:`clusteropt.models.broker.milp`); ``"bigm"`` is
#: the paper's.
DEFAULT_PRICE_FORM = "tight"


def check_slots(inst: BrokerInstance, slots) -> tuple[int, ...]:
    """``None`` -> ``1 .. T``; an int -> that slot; an iterable -> consecutive increasing slots."""
    if slots is None:
        return tuple(range(1, inst.horizon + 1))
    if isinstance(slots, int | np.integer) and not isinstance(slots, bool):
        out: tuple[int, ...] = (int(slots),)
    elif isinstance(slots, Iterable) and not isinstance(slots, str):
        out = tuple(int(t) for t in slots)
    else:
        raise ValueError(f"slots = {slots!r}; expected None, a slot or consecutive slots in "
                         f"1 .. T = {inst.horizon}")
    if not out:
        raise ValueError("slots is empty; expected at least one slot")
    bad = [t for t in out if not 1 <= t <= inst.horizon]
    if bad:
        raise ValueError(f"slot {bad[0]}; expected slots in 1 .. T = {inst.horizon}")
    if any(b != a + 1 for a, b in itertools.pairwise(out)):
        raise ValueError(f"slots = {list(out)}; expected consecutive increasing slots (e.g. range(3, 7))")
    return out


def check_prev_v(inst: BrokerInstance, prev_v) -> np.ndarray:
    """``v_i^r(t - 1)`` as an (I, R) float array (``None``: nothing deployed); ``ValueError`` otherwise."""
    if prev_v is None:
        return np.zeros((inst.n_jobs, inst.n_dcs))
    prev = np.asarray(prev_v, dtype=float)
    if prev.shape != (inst.n_jobs, inst.n_dcs):
        raise ValueError(f"prev_v has shape {prev.shape}; expected (I, R) = ({inst.n_jobs}, {inst.n_dcs})")
    if not np.isfinite(prev).all() or (prev < 0).any():
        raise ValueError("prev_v must be finite and >= 0 (v_i^r(t - 1) of the previous slot)")
    return prev


def check_price_form(price_form: str) -> str:
    """``price_form`` if it is one of :data:`PRICE_FORMS`; ``ValueError`` naming them otherwise."""
    if price_form not in PRICE_FORMS:
        raise ValueError(f"price_form = {price_form!r}; expected one of {', '.join(PRICE_FORMS)}")
    return price_form


def price_bound(inst: BrokerInstance, t: int) -> np.ndarray:
    """``H_k(t) = sum_{i in I_t} (n_{i,k} N_i(t) + m_{i,k})``, (K,): a bound of ``h_k^r(t)`` when
    ``y_i^r(t) <= N_i(t)`` (the bounds both builders put on ``y``; :mod:`clusteropt.models.broker.milp`).

    >>> from clusteropt.instances.broker import broker_preset
    >>> inst = broker_preset("tiny", seed=0)
    >>> bool((price_bound(inst, 2) >= 0).all()), price_bound(inst, 2).shape
    (True, (4,))
    """
    act = inst.active(t)
    n_w = inst.required_workers(t)[act].astype(float)
    return (inst.worker_demand[act] * n_w[:, None] + inst.ps_demand[act]).sum(axis=0)
