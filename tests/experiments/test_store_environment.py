"""The store keys cells by the library versions they ran under (issue 42): never reused across them."""

import json
import logging
import sqlite3

import pytest

from clusteropt.experiments import ResultsStore, run_sweep
from clusteropt.experiments import store as store_module
from clusteropt.provenance import environment, environment_id, environment_text, git_commit
from tests.experiments import specs

OLD_ENV = {**environment(), "highspy": "0.0.1"}  # the same code under another solver version
OLD = (environment_id(OLD_ENV), json.dumps(OLD_ENV))


def _record_old(path, cells):
    with ResultsStore(path) as db:
        for cell in cells:
            db.record("test-sample", "v1", cell, {"status": "ok", "metrics": {"value": -1.0}}, environment=OLD)


def test_rows_carry_the_versions_and_the_commit(tmp_path):
    table = run_sweep(specs.SAMPLE, quick=True, store=tmp_path / "s.sqlite", progress=False, version="v1")
    assert set(table.environment) == {environment_id()}
    assert set(table.versions) == {environment_text(environment())}
    assert "highspy" in table.versions.iloc[0] and "numpy" in table.versions.iloc[0]
    assert set(table.git_commit) == {git_commit() or ""}


def test_cells_of_other_versions_are_not_reused_and_are_kept(tmp_path, caplog):
    path = tmp_path / "s.sqlite"
    quick = specs.SAMPLE.quick_variant()
    _record_old(path, quick.cells())
    table = run_sweep(specs.SAMPLE, quick=True, store=path, progress=False, version="v1")
    assert "8 cells of this code version are stored under other library versions and are not reused" in caplog.text
    assert "highspy 0.0.1" in caplog.text
    assert len(table) == 8 and (table.value != -1.0).all()  # computed again, not the other environment's
    with ResultsStore(path) as db:
        assert db.count("test-sample") == 16  # both kept
        old = db.table(quick, environment=OLD[0])
        assert set(old.value) == {-1.0} and set(old.versions) == {environment_text(OLD_ENV)}
        envs = db.environments("test-sample", "v1")
    assert set(envs.environment) == {OLD[0], environment_id()}
    # a second sweep in this environment reuses its own cells and runs nothing
    caplog.clear()
    with caplog.at_level(logging.INFO, "clusteropt.experiments.sweep"):
        run_sweep(specs.SAMPLE, quick=True, store=path, progress=False, version="v1")
    assert "8 in store" in caplog.text and "0 to run" in caplog.text and "not reused" not in caplog.text


def test_a_table_holds_one_environment_the_newest_by_default(tmp_path, caplog):
    path = tmp_path / "s.sqlite"
    quick = specs.SAMPLE.quick_variant()
    run_sweep(specs.SAMPLE, quick=True, store=path, progress=False, version="v1")
    _record_old(path, quick.cells()[:3])  # recorded last: the newest environment
    with ResultsStore(path) as db:
        table = db.table(quick)
    assert set(table.environment) == {OLD[0]} and len(table) == 3
    assert "under 2 environments" in caplog.text and "highspy 0.0.1" in caplog.text


def _v1_store(path):
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE cells (experiment TEXT NOT NULL, params TEXT NOT NULL, seed INTEGER NOT NULL,
            policy TEXT NOT NULL, code_version TEXT NOT NULL, cell_seed INTEGER NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'timeout')), metrics TEXT NOT NULL,
            error TEXT NOT NULL DEFAULT '', traceback TEXT NOT NULL DEFAULT '', seconds REAL,
            worker TEXT NOT NULL DEFAULT '', finished_at TEXT NOT NULL,
            PRIMARY KEY (experiment, params, seed, policy, code_version));
        PRAGMA user_version = 1;""")
    cell = specs.SAMPLE.quick_variant().cells()[0]
    conn.execute("INSERT INTO cells VALUES (?, ?, ?, ?, 'v1', ?, 'ok', '{\"value\": 2.5}', '', '', 1.0, 'w', 't')",
                 ("test-sample", store_module.params_key(cell.params), cell.seed, cell.policy, cell.cell_seed))
    conn.commit()
    conn.close()
    return cell


def test_a_version_1_store_is_upgraded_in_place_keeping_its_rows(tmp_path):
    path = tmp_path / "old.sqlite"
    _v1_store(path)
    with ResultsStore(path) as db:
        table = db.table("test-sample")
    assert table.value.tolist() == [2.5] and table.environment.tolist() == [""] and table.versions.tolist() == [""]
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == store_module.SCHEMA_VERSION
    pk = [r[1] for r in conn.execute("PRAGMA table_info(cells)") if r[5]]
    conn.close()
    assert "environment" in pk
    # a resumed sweep does not reuse the row whose versions were not recorded
    out = run_sweep(specs.SAMPLE, quick=True, store=path, progress=False, version="v1")
    assert len(out) == 8 and 2.5 not in set(out.value)


def test_a_version_1_store_read_only_is_read_as_it_is(tmp_path):
    path = tmp_path / "old.sqlite"
    _v1_store(path)
    before = path.read_bytes()
    with ResultsStore(path, read_only=True) as db:
        table = db.table("test-sample")
        assert db.finished("test-sample", "v1", environment="") != set()
    assert table.value.tolist() == [2.5] and table.environment.tolist() == [""]
    assert path.read_bytes() == before


@pytest.mark.parametrize("name", ["environment", "versions", "git_commit"])
def test_the_environment_columns_are_reserved(name):
    from clusteropt.experiments.spec import RESERVED_COLUMNS

    assert name in RESERVED_COLUMNS
