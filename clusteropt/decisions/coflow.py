"""Compressed coflow schedules: blocks of a matching held for a number of slots.

A schedule is a list of *blocks* ``(start, length, flows)``: every flow ``(coflow, input,
output)`` of the block moves one unit in each slot ``start .. start + length - 1`` (slots are
1-based; a coflow released at ``r`` may use slots ``r + 1`` onward).  A block's flows form a
matching (no input and no output twice); blocks may overlap in time as long as no port is used
twice in a slot.  Trace demands reach millions of units, so a schedule is never stored slot by
slot.  Whether a schedule is feasible, and what it costs, is decided by
:func:`clusteropt.verify.check_coflow_schedule`, never by the scheduler that made it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

__all__ = ["CoflowSchedule", "ScheduleBuilder"]


@dataclasses.dataclass(frozen=True, eq=False)
class CoflowSchedule:
    """Blocks as flat arrays: block b holds flows ``ptr[b]:ptr[b+1]``.

    Attributes
    ----------
    start, length : int arrays (B,)
        First slot (1-based) and number of slots of each block.
    ptr : int array (B + 1,)
        CSR pointer into the flow arrays.
    coflow, input, output : int arrays (K,)
        The flows of all blocks, concatenated (coflow *index*, not id).
    order : int array (n,), optional
        The coflow order (indices, highest priority first) the schedule was made from.
    """

    start: np.ndarray
    length: np.ndarray
    ptr: np.ndarray
    coflow: np.ndarray
    input: np.ndarray
    output: np.ndarray
    order: np.ndarray | None = None

    @property
    def n_blocks(self) -> int:
        """Number of blocks B."""
        return int(self.start.shape[0])

    @property
    def makespan(self) -> int:
        """Last busy slot (0 for an empty schedule)."""
        return int((self.start + self.length - 1).max()) if self.n_blocks else 0

    def blocks(self) -> Iterator[tuple[int, int, np.ndarray]]:
        """``(start, length, flows)`` per block; ``flows`` is a (k, 3) array of (coflow, input, output)."""
        flows = np.stack([self.coflow, self.input, self.output], axis=1)
        for b in range(self.n_blocks):
            yield int(self.start[b]), int(self.length[b]), flows[self.ptr[b] : self.ptr[b + 1]]

    def to_json_blocks(self, ids: Sequence[int] | np.ndarray) -> list[dict[str, Any]]:
        """The ``"blocks"`` list of ``clusteropt run --json``: flows name coflows by id."""
        ids = np.asarray(ids)
        rows = np.stack([ids[self.coflow], self.input, self.output], axis=1).astype(np.int64).tolist()
        ptr = np.asarray(self.ptr).tolist()
        return [{"start": s, "length": n, "flows": rows[ptr[b]:ptr[b + 1]]}
                for b, (s, n) in enumerate(zip(np.asarray(self.start).tolist(), np.asarray(self.length).tolist()))]

    @classmethod
    def from_json_blocks(cls, blocks: Sequence[dict[str, Any]], ids: Sequence[int] | np.ndarray) -> CoflowSchedule:
        """Inverse of :meth:`to_json_blocks` (ids mapped back to indices; unknown ids raise)."""
        index = {int(c): k for k, c in enumerate(np.asarray(ids).tolist())}
        builder = ScheduleBuilder()
        for b, block in enumerate(blocks):
            flows = np.asarray(block["flows"], dtype=np.int64).reshape(-1, 3)
            try:
                coflows = [index[int(c)] for c in flows[:, 0]]
            except KeyError as exc:
                raise ValueError(f"blocks[{b}].flows names coflow id {exc.args[0]}, not in the instance") from None
            builder.add(int(block["start"]), int(block["length"]), coflows, flows[:, 1], flows[:, 2])
        return builder.build()


class ScheduleBuilder:
    """Collects blocks, then :meth:`build` makes the arrays once."""

    def __init__(self) -> None:
        self._start: list[int] = []
        self._length: list[int] = []
        self._sizes: list[int] = []
        self._parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, start: int, length: int, coflow, input, output) -> None:
        """Add one block (empty blocks and zero lengths are skipped)."""
        coflow = np.asarray(coflow, dtype=np.int64).ravel()
        if length <= 0 or coflow.size == 0:
            return
        self._start.append(int(start))
        self._length.append(int(length))
        self._sizes.append(coflow.size)
        self._parts.append((coflow, np.asarray(input, dtype=np.int64).ravel(),
                            np.asarray(output, dtype=np.int64).ravel()))

    def build(self, order: np.ndarray | None = None) -> CoflowSchedule:
        """The schedule of the blocks added so far."""
        ptr = np.zeros(len(self._sizes) + 1, dtype=np.int64)
        np.cumsum(self._sizes, out=ptr[1:])
        empty = np.zeros(0, dtype=np.int64)
        cat = [np.concatenate([p[k] for p in self._parts]) if self._parts else empty for k in range(3)]
        return CoflowSchedule(
            start=np.asarray(self._start, dtype=np.int64), length=np.asarray(self._length, dtype=np.int64),
            ptr=ptr, coflow=cat[0], input=cat[1], output=cat[2],
            order=None if order is None else np.asarray(order, dtype=np.int64),
        )
