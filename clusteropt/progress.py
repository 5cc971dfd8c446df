"""Progress of long runs: a bar on a terminal, a log line a minute otherwise.

A run of thousands of slots, requests or cells can take minutes; without a sign of life a slow
run cannot be told from a hung one.  :class:`Progress` shows a ``tqdm`` bar (done / total, rate,
ETA) on standard error when it is a terminal, and otherwise logs one line at INFO on the
``clusteropt.progress`` logger at most every ``interval`` seconds (and one at the end), with the
same facts.  Nothing is ever written to standard output, so ``--json -`` output stays clean.
The command line shows the ``clusteropt.progress`` lines without ``-v``; library users see them
when they enable INFO logging.

tqdm is used because it is the maintained, dependency-free bar with rate and ETA built in;
``click.progressbar`` (which the experiment sweep used before) shows no rate.

>>> with Progress("demo", total=3, unit="slot", enabled=False) as bar:
...     for _ in range(3):
...         bar.update()
>>> bar.done
3
"""

from __future__ import annotations

import logging
import sys
import time
from typing import IO, Any

log = logging.getLogger("clusteropt.progress")

__all__ = ["Progress"]

LOG_INTERVAL = 60.0
"""Seconds between two log lines when standard error is not a terminal."""


class Progress:
    """Count work done; a bar on a terminal, a log line a minute otherwise (module docstring).

    Parameters
    ----------
    label : str
        What runs (``"gadget sjf-bco"``).
    total : int or None
        Units of work in all (None: unknown, no ETA).
    unit : str
        What a unit is (``"slot"``, ``"request"``, ``"cell"``).
    enabled : bool
        False: count only (no bar, no log line).
    interval : float, optional
        Seconds between log lines on a non-terminal (default :data:`LOG_INTERVAL`).
    stream : file, optional
        Where the bar goes (default ``sys.stderr``); a bar is drawn only if it is a terminal.
    """

    def __init__(self, label: str, total: int | None, unit: str = "it", *, enabled: bool = True,
                 interval: float | None = None, stream: IO[str] | None = None) -> None:
        self.label, self.total, self.unit = label, total, unit
        self.enabled = enabled
        self.interval = LOG_INTERVAL if interval is None else float(interval)
        self.done = 0
        self.start = time.monotonic()
        self._last_log = self.start
        self._logged = -1  # ``done`` at the last log line
        self._bar: Any = None
        stream = sys.stderr if stream is None else stream
        if enabled and _is_terminal(stream):
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=label, unit=unit, file=stream, dynamic_ncols=True, leave=False)

    @property
    def has_bar(self) -> bool:
        """Whether a bar is drawn (enabled, on a terminal)."""
        return self._bar is not None

    def update(self, n: int = 1) -> None:
        """Record ``n`` more units done."""
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
            return
        if self.enabled:
            now = time.monotonic()
            if now - self._last_log >= self.interval:
                self._last_log, self._logged = now, self.done
                log.info("%s", self.line(now))

    def line(self, now: float | None = None) -> str:
        """``label: done / total unit(s), rate, ETA`` as one line.

        >>> p = Progress("ring dynamic", 1000, "request", enabled=False)
        >>> p.start, p.done = 0.0, 250
        >>> p.line(now=10.0)
        'ring dynamic: 250 / 1000 requests (25%), 25 requests/s, 10 s elapsed, ETA 30 s'
        """
        now = time.monotonic() if now is None else now
        elapsed = max(now - self.start, 1e-9)
        rate = self.done / elapsed
        units = self.unit + ("es" if self.unit.endswith(("s", "sh", "ch", "x")) else "s")
        if self.total:
            text = f"{self.label}: {self.done} / {self.total} {units} ({100 * self.done / self.total:.0f}%)"
        else:
            text = f"{self.label}: {self.done} {units}"
        text += f", {rate:.3g} {units}/s, {elapsed:.0f} s elapsed"
        if self.total and rate > 0 and self.done < self.total:
            text += f", ETA {(self.total - self.done) / rate:.0f} s"
        return text

    def close(self) -> None:
        """Remove the bar; on a non-terminal, log the final line if the run took a log interval."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self.enabled and self._logged != self.done and time.monotonic() - self.start >= self.interval:
            log.info("%s", self.line())

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or not a file
        return False
