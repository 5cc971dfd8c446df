"""The results store: one SQLite file (stdlib ``sqlite3``, WAL journal), one row per finished cell.

Rows are keyed by (experiment, params, seed, policy, code version, environment) and written by
the process driving the sweep the moment a cell's result arrives, each in its own transaction with
``synchronous=FULL``: killing the sweep at any moment, ``kill -9`` included, loses at most the
cells still running, and a re-run with ``resume=True`` skips what is stored.  Many readers may
open the file while a sweep writes it (WAL).

The *environment* is :func:`clusteropt.provenance.environment_id`, a hash of the versions of
Python, the solvers and the numerical libraries; each row also keeps those versions in full
(``versions``, JSON) and the git commit of the sources (``git_commit``, where there is one).  The
same code under another highspy is another environment: its cells are stored beside the others,
never reused for it (a resumed sweep runs them again and logs how many it did not reuse), and a
table holds one environment only (the newest, unless one is named), so no export mixes two.
A store of schema version 1 (before environments) is upgraded in place when opened for writing,
its rows kept with an empty environment ("not recorded").

The tidy table (:meth:`ResultsStore.table`) has one row per cell with the columns
``experiment, code_version, <params...>, seed, cell_seed, policy, status, <metrics...>, error,
environment, versions, git_commit`` (``versions`` as one line, ``numpy 2.4.6, highspy 1.15.1, ...``);
``timing=True`` adds ``seconds, worker, finished_at`` and the metrics ending in ``_seconds``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import logging
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pandas as pd

from clusteropt.experiments.spec import Cell, Experiment, params_key

__all__ = ["ENVIRONMENT_COLUMNS", "SCHEMA_VERSION", "STATUSES", "ResultsStore", "StoreError",
           "versions_text"]

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
#: Cell outcomes: the function returned metrics / raised / ran past the per-cell time limit.
STATUSES = ("ok", "failed", "timeout")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cells (
    experiment   TEXT    NOT NULL,
    params       TEXT    NOT NULL,
    seed         INTEGER NOT NULL,
    policy       TEXT    NOT NULL,
    code_version TEXT    NOT NULL,
    cell_seed    INTEGER NOT NULL,
    status       TEXT    NOT NULL CHECK (status IN ('ok', 'failed', 'timeout')),
    metrics      TEXT    NOT NULL,
    error        TEXT    NOT NULL DEFAULT '',
    traceback    TEXT    NOT NULL DEFAULT '',
    seconds      REAL,
    worker       TEXT    NOT NULL DEFAULT '',
    finished_at  TEXT    NOT NULL,
    environment  TEXT    NOT NULL DEFAULT '',
    versions     TEXT    NOT NULL DEFAULT '',
    git_commit   TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (experiment, params, seed, policy, code_version, environment)
);
"""
#: The tidy table's columns after ``error`` that say under which libraries and commit a cell ran.
ENVIRONMENT_COLUMNS = ("environment", "versions", "git_commit")
#: The columns of schema version 1, which an upgrade copies (the new ones start empty).
_V1_COLUMNS = ("experiment, params, seed, policy, code_version, cell_seed, status, metrics, error, traceback, "
               "seconds, worker, finished_at")


def versions_text(versions: str) -> str:
    """A row's ``versions`` JSON as one line (:func:`clusteropt.provenance.environment_text`); "" stays "".

    >>> versions_text('{"python":"3.11.7","highspy":"1.15.1"}')
    'python 3.11.7, highspy 1.15.1'
    """
    from clusteropt.provenance import environment_text

    return environment_text(json.loads(versions)) if versions else ""


def _current_environment() -> tuple[str, str]:
    """``(environment id, versions JSON)`` of this process (:mod:`clusteropt.provenance`)."""
    from clusteropt.provenance import environment, environment_id

    env = environment()
    return environment_id(env), json.dumps(env, separators=(",", ":"))


class StoreError(RuntimeError):
    """The results store cannot be opened, read or written: not a store this version can read, a
    directory, a read-only file, a full disk (the message names the file and says why).
    """


def _reason(exc: OSError | sqlite3.Error) -> str:
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc)


class ResultsStore:
    """An open results store.  Use as a context manager or call :meth:`close`.

    Parameters
    ----------
    path : str or Path
        The SQLite file; created (with its parent directory) if missing.
    read_only : bool
        Open for reading only (``mode=ro``): the file must exist, and may be on a read-only disk or
        belong to someone else.  Without it, a store that exists but cannot be written is opened
        for reading, and :meth:`check_writable` (or the first write) says why it cannot be written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with ResultsStore(pathlib.Path(tempfile.mkdtemp()) / "r.sqlite") as store:
    ...     store.count("nothing")
    0
    """

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        #: Why this store cannot be written (None: it may be, as far as opening it could tell).
        self.write_error: str | None = "opened read-only" if read_only else None
        if self.path.is_dir():
            raise StoreError(f"results store {self.path} is a directory; expected a SQLite file")
        if read_only and not self.path.is_file():
            raise StoreError(f"no such results store: {self.path}")
        if read_only:
            self._conn = self._open_read_only()
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            except (OSError, sqlite3.OperationalError) as exc:
                raise StoreError(f"cannot open results store {self.path}: {_reason(exc)}") from None
            try:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=FULL")
            except sqlite3.OperationalError as exc:
                # an existing store on a read-only disk or not ours: readable, not writable
                self._conn.close()
                if not self.path.is_file():
                    raise StoreError(f"cannot create results store {self.path}: {exc}") from None
                self.write_error = str(exc)
                self._conn = self._open_read_only()
            except sqlite3.DatabaseError as exc:
                self._conn.close()
                raise StoreError(f"{self.path} is not a clusteropt results store ({exc})") from None
        try:
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: results store schema version {version}; this clusteropt reads "
                    f"up to {SCHEMA_VERSION} (upgrade clusteropt)"
                )
            if self.write_error is None:
                if version == 1 and self._columns():
                    self._upgrade_v1()
                self._conn.executescript(_SCHEMA)
                if version < SCHEMA_VERSION:
                    self._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif self._conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'cells'").fetchone() is None:
                raise StoreError(f"{self.path} is not a clusteropt results store (it has no cells table)")
            if "environment" not in self._columns():  # a version-1 store read as it is: empty environments
                self._conn.execute("CREATE TEMP VIEW cells AS SELECT *, '' AS environment, '' AS versions, "
                                   "'' AS git_commit FROM main.cells")
        except sqlite3.OperationalError as exc:
            self._conn.close()
            raise StoreError(f"cannot open results store {self.path}: {exc}") from None
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise StoreError(f"{self.path} is not a clusteropt results store ({exc})") from None
        except StoreError:
            self._conn.close()
            raise

    def _columns(self) -> list[str]:
        return [r[1] for r in self._conn.execute("PRAGMA table_info(cells)")]

    def _upgrade_v1(self) -> None:
        """Schema 1 -> 2 in one transaction: the rows kept, their environment empty (not recorded)."""
        create = _SCHEMA.replace("IF NOT EXISTS ", "").strip().rstrip(";")
        with self._transaction():
            self._conn.execute("ALTER TABLE cells RENAME TO cells_v1")
            self._conn.execute(create)
            self._conn.execute(f"INSERT INTO cells ({_V1_COLUMNS}) SELECT {_V1_COLUMNS} FROM cells_v1")
            self._conn.execute("DROP TABLE cells_v1")
            self._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        log.info("results store %s upgraded to schema %d (its cells have no recorded environment)", self.path,
                 SCHEMA_VERSION)

    def _open_read_only(self) -> sqlite3.Connection:
        """``mode=ro``; in a directory SQLite cannot write (a read-only disk), where it cannot make
        the WAL index beside the file, ``immutable=1`` (nobody can be writing the store there).
        """
        uri = f"file:{quote(str(self.path.absolute()))}?mode=ro"
        for options in ("", "&immutable=1"):
            conn = None
            try:
                conn = sqlite3.connect(uri + options, uri=True, timeout=60.0, isolation_level=None)
                conn.execute("PRAGMA user_version").fetchone()
                return conn
            except sqlite3.OperationalError as exc:
                if conn is not None:
                    conn.close()
                error = exc
            except sqlite3.DatabaseError as exc:
                if conn is not None:
                    conn.close()
                raise StoreError(f"{self.path} is not a clusteropt results store ({exc})") from None
        raise StoreError(f"cannot open results store {self.path}: {error}")

    def check_writable(self) -> None:
        """Raise :class:`StoreError` (saying why) unless a cell could be written now.

        Takes the write lock and lets it go, writing nothing: call it before computing results
        that could not be stored.
        """
        if self.write_error is not None:
            raise StoreError(f"cannot write to results store {self.path}: {self.write_error}")
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")  # a write, never committed
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write to results store {self.path}: {exc}") from None
        finally:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (the data is already on disk)."""
        self._conn.close()

    # -- writing -------------------------------------------------------------------------------

    def record(
        self, experiment: str, code_version: str, cell: Cell, outcome: Mapping[str, Any], *,
        environment: tuple[str, str] | None = None, git_commit: str | None = None,
    ) -> None:
        """Write one finished cell in its own transaction (replacing an earlier row of the key).

        ``outcome`` has ``status`` (one of :data:`STATUSES`), ``metrics`` (dict), and optionally
        ``error``, ``traceback``, ``seconds``, ``worker``.  ``environment`` is ``(id, versions
        JSON)`` (default: this process's, :func:`clusteropt.provenance.environment`), ``git_commit``
        the commit of the sources (default: none recorded).
        """
        status = outcome["status"]
        if status not in STATUSES:
            raise ValueError(f"outcome status = {status!r}; expected one of {', '.join(STATUSES)}")
        env_id, versions = _current_environment() if environment is None else environment
        row = (
            experiment, params_key(cell.params), cell.seed, cell.policy, code_version, cell.cell_seed,
            status, json.dumps(dict(outcome.get("metrics") or {})), str(outcome.get("error", "")),
            str(outcome.get("traceback", "")), outcome.get("seconds"), str(outcome.get("worker", "")),
            _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds"), env_id, versions, git_commit or "",
        )
        if self.write_error is not None:
            raise StoreError(f"cannot write to results store {self.path}: {self.write_error}")
        try:
            with self._transaction():
                self._conn.execute(
                    "INSERT OR REPLACE INTO cells (experiment, params, seed, policy, code_version, cell_seed, "
                    "status, metrics, error, traceback, seconds, worker, finished_at, environment, versions, "
                    "git_commit) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
        except sqlite3.Error as exc:  # a full disk, a store made read-only meanwhile: earlier rows stay
            raise StoreError(f"cannot write to results store {self.path}: {exc}") from None

    @contextlib.contextmanager
    def _transaction(self):
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._conn.execute("COMMIT")
        except BaseException:
            if self._conn.in_transaction:  # SQLite may have rolled back already (a full disk)
                self._conn.execute("ROLLBACK")
            raise

    # -- reading -------------------------------------------------------------------------------

    def finished(
        self, experiment: str, code_version: str, statuses: Iterable[str] = STATUSES, *,
        environment: str | None = None,
    ) -> set[tuple[str, int, str]]:
        """Keys ``(params JSON, seed, policy)`` stored for this experiment, code version and
        environment (default: this process's; cells of another environment are never reused).
        """
        environment = _current_environment()[0] if environment is None else environment
        statuses = tuple(statuses)
        marks = ", ".join("?" * len(statuses))
        rows = self._conn.execute(
            f"SELECT params, seed, policy FROM cells WHERE experiment = ? AND code_version = ? "
            f"AND environment = ? AND status IN ({marks})",
            (experiment, code_version, environment, *statuses),
        )
        return {(p, int(s), pol) for p, s, pol in rows}

    def elsewhere(self, experiment: str, code_version: str, environment: str | None = None) -> pd.DataFrame:
        """Cells of this experiment and code version stored under *other* environments than
        ``environment`` (default: this process's): ``environment, versions, cells`` per environment.
        """
        environment = _current_environment()[0] if environment is None else environment
        return pd.read_sql_query(
            "SELECT environment, MAX(versions) AS versions, COUNT(*) AS cells FROM cells "
            "WHERE experiment = ? AND code_version = ? AND environment != ? GROUP BY environment",
            self._conn, params=(experiment, code_version, environment),
        )

    def count(self, experiment: str | None = None) -> int:
        """Number of stored cells (of one experiment, or all)."""
        if experiment is None:
            return self._conn.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
        return self._conn.execute(
            "SELECT COUNT(*) FROM cells WHERE experiment = ?", (experiment,)
        ).fetchone()[0]

    def versions(self, experiment: str) -> pd.DataFrame:
        """Code versions stored for ``experiment``: cells and last finish time, newest first."""
        return pd.read_sql_query(
            "SELECT code_version, COUNT(*) AS cells, MAX(finished_at) AS last_finished FROM cells "
            "WHERE experiment = ? GROUP BY code_version ORDER BY last_finished DESC",
            self._conn, params=(experiment,),
        )

    def environments(self, experiment: str, code_version: str) -> pd.DataFrame:
        """Environments stored for ``experiment`` at ``code_version``: ``environment, versions,
        cells, last_finished``, newest first (``versions`` as one line).
        """
        out = pd.read_sql_query(
            "SELECT environment, MAX(versions) AS versions, COUNT(*) AS cells, MAX(finished_at) AS last_finished "
            "FROM cells WHERE experiment = ? AND code_version = ? GROUP BY environment "
            "ORDER BY last_finished DESC",
            self._conn, params=(experiment, code_version),
        )
        out["versions"] = out.versions.map(versions_text)
        return out

    def experiments(self) -> pd.DataFrame:
        """Every (experiment, code version, environment) in the store with its counts by status."""
        return pd.read_sql_query(
            "SELECT experiment, code_version, environment, COUNT(*) AS cells, "
            "SUM(status = 'ok') AS ok, SUM(status = 'failed') AS failed, "
            "SUM(status = 'timeout') AS timeout, MAX(finished_at) AS last_finished "
            "FROM cells GROUP BY experiment, code_version, environment ORDER BY experiment, last_finished",
            self._conn,
        )

    def resolve_version(self, experiment: str, code_version: str | None = None) -> str | None:
        """``code_version`` if given, else the newest stored one (logging the others)."""
        if code_version is not None:
            return code_version
        versions = self.versions(experiment)
        if versions.empty:
            return None
        if len(versions) > 1:
            log.warning(
                "store %s holds %s under %d code versions; using the newest, %s (others: %s)",
                self.path, experiment, len(versions), versions.code_version[0],
                ", ".join(versions.code_version[1:]),
            )
        return str(versions.code_version[0])

    def resolve(self, experiment: str, code_version: str | None = None,
                environment: str | None = None) -> tuple[str | None, str | None]:
        """``(code_version, environment)`` of a table: each as given, else the newest stored (the
        others logged, so a table never mixes two code versions or two environments).
        """
        version = self.resolve_version(experiment, code_version)
        if version is None or environment is not None:
            return version, environment
        envs = self.environments(experiment, version)
        if envs.empty:
            return version, None
        if len(envs) > 1:
            log.warning(
                "store %s holds %s (%s) under %d environments; using the newest, %s (%s); others: %s",
                self.path, experiment, version, len(envs), envs.environment[0] or "not recorded",
                envs.versions[0] or "versions not recorded",
                "; ".join(f"{e or 'not recorded'} ({v or 'versions not recorded'})"
                          for e, v in zip(envs.environment[1:], envs.versions[1:], strict=True)),
            )
        return version, str(envs.environment[0])

    def table(
        self,
        spec: Experiment | str,
        *,
        code_version: str | None = None,
        environment: str | None = None,
        timing: bool = False,
        cells: Iterable[Cell] | None = None,
    ) -> pd.DataFrame:
        """The tidy results table of ``spec``: one code version, one environment.

        Parameters
        ----------
        spec : Experiment or str
            An experiment (its cells, in its order, that are stored) or a name (every stored
            cell of that name, ordered by key).
        code_version : str, optional
            Default: the newest version stored for the experiment.
        environment : str, optional
            :func:`clusteropt.provenance.environment_id` of the cells; default: the newest stored
            for that code version ("" is that of cells stored before environments were).
        timing : bool
            Add ``seconds``, ``worker``, ``finished_at`` and the ``*_seconds`` metrics; without
            them the table is a pure function of the code, the spec and the seeds.
        cells : iterable of Cell, optional
            Restrict to these cells (default: all of ``spec``'s).
        """
        name = spec if isinstance(spec, str) else spec.name
        version, env = self.resolve(name, code_version, environment)
        raw = self._conn.execute(
            "SELECT params, seed, policy, code_version, cell_seed, status, metrics, error, seconds, "
            "worker, finished_at, environment, versions, git_commit FROM cells "
            "WHERE experiment = ? AND code_version = ? AND environment = ? ORDER BY params, seed, policy",
            (name, version, env),
        ).fetchall()
        by_key = {(r[0], int(r[1]), r[2]): r for r in raw}
        if isinstance(spec, str):
            keys = list(by_key)
        else:
            keys = [c.key for c in (spec.cells() if cells is None else cells)]
        rows, metric_names = [], {}
        param_names = {} if isinstance(spec, str) else dict.fromkeys(spec.grid)
        for key in keys:
            r = by_key.get(key)
            if r is None:
                continue
            params, metrics = json.loads(r[0]), json.loads(r[6])
            param_names.update(dict.fromkeys(params))
            metric_names.update(dict.fromkeys(metrics))
            rows.append((params, r, metrics))
        metric_cols = [m for m in metric_names if timing or not m.endswith("_seconds")]
        columns = ["experiment", "code_version", *param_names, "seed", "cell_seed", "policy", "status",
                   *metric_cols, "error", *ENVIRONMENT_COLUMNS]
        if timing:
            columns += ["seconds", "worker", "finished_at"]
        records = []
        for params, r, metrics in rows:
            rec = {"experiment": name, "code_version": r[3], **params, "seed": int(r[1]),
                   "cell_seed": int(r[4]), "policy": r[2], "status": r[5], "error": r[7],
                   "environment": r[11], "versions": versions_text(r[12]), "git_commit": r[13]}
            rec.update({m: metrics.get(m) for m in metric_cols})
            if timing:
                rec.update({"seconds": r[8], "worker": r[9], "finished_at": r[10]})
            records.append(rec)
        return pd.DataFrame.from_records(records, columns=columns)

    def failures(self, experiment: str, code_version: str | None = None,
                 environment: str | None = None) -> pd.DataFrame:
        """Failed and timed-out cells with their error text and traceback."""
        version, env = self.resolve(experiment, code_version, environment)
        return pd.read_sql_query(
            "SELECT params, seed, policy, status, error, traceback, seconds FROM cells "
            "WHERE experiment = ? AND code_version = ? AND environment = ? AND status != 'ok' "
            "ORDER BY params, seed, policy",
            self._conn, params=(experiment, version, env),
        )

