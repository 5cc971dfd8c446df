"""The shared ring state (paper 004): one net migration per process per step, loads, reasons."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusteropt.algorithms.ring.state import RingAssignment

MOVE = st.tuples(st.integers(0, 3), st.integers(0, 7), st.integers(0, 2), st.sampled_from(["", "a", "b"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(MOVE, max_size=40), st.booleans())
def test_log_is_the_net_change_of_each_step(moves, scalar):
    """Against a replay: per step, the processes whose end server differs from their start one,
    the loads after every move, ``moved`` and the per-reason counts (reason of the last move)."""
    initial = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    a = RingAssignment(initial, 3)
    server = initial.tolist()
    want, reasons, moved = [], {}, 0
    steps = sorted(moves, key=lambda m: m[0])  # request indices only grow
    i = 0
    while i < len(steps):
        t = steps[i][0]
        a.now = t
        start, last = {}, {}
        while i < len(steps) and steps[i][0] == t:
            _, v, to, why = steps[i]
            i += 1
            if server[v] != to:
                start.setdefault(v, server[v])
                last[v] = why
            server[v] = to
            got = a.assign_one(v, to, why) if scalar else a.assign(np.array([v]), to, reason=why)
            assert got in (-1, 0, 1)
            assert a.server_of.tolist() == server
            assert a.load.tolist() == np.bincount(server, minlength=3).tolist()
        for v in sorted(start):
            if server[v] != start[v]:
                want.append([t, v, server[v]])
                reasons[last[v]] = reasons.get(last[v], 0) + 1
                moved += 1
        assert a.moved == moved
        assert a.by_reason() == reasons
    assert a.migrations().tolist() == want
    assert a.by_reason() == reasons


def test_out_and_back_is_free_and_a_chain_is_one():
    a = RingAssignment(np.array([0, 0, 1, 1, 2, 2]), 3)
    a.now = 0
    assert a.assign_one(1, 1, "moving") == 1 and a.assign_one(1, 0, "merging") == -1
    assert a.assign_one(2, 2, "moving") == 1 and a.assign_one(2, 0, "colour_join") == 0
    assert a.moved == 1 and a.by_reason() == {"colour_join": 1}
    a.now = 1
    assert a.assign(np.array([2, 4]), np.array([1, 0])) == 2
    assert a.migrations().tolist() == [[0, 2, 0], [1, 2, 1], [1, 4, 0]]
    assert a.load.tolist() == [3, 2, 1]


def test_a_process_listed_twice_in_one_assign_is_refused():
    a = RingAssignment(np.array([0, 0, 1, 1]), 2)
    with pytest.raises(ValueError, match="listed twice"):
        a.assign(np.array([0, 0]), np.array([1, 1]))
    assert a.server_of.tolist() == [0, 0, 1, 1] and a.moved == 0
