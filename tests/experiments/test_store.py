"""The results store: schema, transactions, tables, exports."""

import os
import sqlite3

import pandas as pd
import pytest

from clusteropt.experiments import ResultsStore, StoreError, export_table, run_sweep
from clusteropt.experiments import report as report_module
from clusteropt.experiments import store as store_module
from tests.experiments import specs


@pytest.fixture
def filled(tmp_path):
    path = tmp_path / "s.sqlite"
    run_sweep(specs.SAMPLE, quick=True, store=path, progress=False, version="v1")
    return path


def test_store_is_wal_and_keyed(filled):
    conn = sqlite3.connect(filled)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == store_module.SCHEMA_VERSION
    with pytest.raises(sqlite3.IntegrityError):  # one row per (experiment, params, seed, policy, version)
        conn.execute("INSERT INTO cells SELECT * FROM cells LIMIT 1")
    conn.close()


def test_record_replaces_the_row_of_the_same_key(tmp_path):
    cell = specs.SAMPLE.cells()[0]
    with ResultsStore(tmp_path / "s.sqlite") as db:
        db.record("test-sample", "v", cell, {"status": "failed", "metrics": {}, "error": "boom"})
        db.record("test-sample", "v", cell, {"status": "ok", "metrics": {"value": 1.5}})
        assert db.count("test-sample") == 1
        table = db.table(specs.SAMPLE)
        assert table.status.tolist() == ["ok"] and table.value.tolist() == [1.5]
        with pytest.raises(ValueError, match="status = 'done'"):
            db.record("test-sample", "v", cell, {"status": "done", "metrics": {}})


def test_table_columns_and_timing(filled):
    with ResultsStore(filled) as db:
        table = db.table(specs.SAMPLE.quick_variant())
        timed = db.table(specs.SAMPLE.quick_variant(), timing=True)
        by_name = db.table("test-sample")
    assert list(table.columns) == ["experiment", "code_version", "n", "delay", "seed", "cell_seed", "policy",
                                   "status", "value", "n_draws", "label", "error", "environment", "versions",
                                   "git_commit"]
    assert {"draw_seconds", "seconds", "worker", "finished_at"} <= set(timed.columns)
    assert (timed.seconds >= 0).all() and timed.worker.str.contains(":").all()
    assert len(by_name) == len(table) == 8
    # a spec's table holds only the spec's stored cells: the full spec has 18, 8 are stored
    with ResultsStore(filled) as db:
        assert len(db.table(specs.SAMPLE)) == 8


def test_newest_version_is_the_default_and_the_others_are_named(filled, caplog):
    run_sweep(specs.SAMPLE, quick=True, store=filled, progress=False, version="v2")
    with ResultsStore(filled) as db:
        table = db.table("test-sample")
        listing = db.experiments()
    assert set(table.code_version) == {"v2"}
    assert "under 2 code versions" in caplog.text and "v1" in caplog.text
    assert listing[["experiment", "code_version", "cells", "ok"]].values.tolist() == [
        ["test-sample", "v1", 8, 8], ["test-sample", "v2", 8, 8]]


def test_not_a_store_and_newer_schema_are_refused(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="is not a clusteropt results store"):
        ResultsStore(junk)
    newer = tmp_path / "newer.sqlite"
    sqlite3.connect(newer).execute(f"PRAGMA user_version = {store_module.SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match=f"schema version {store_module.SCHEMA_VERSION + 1}; this clusteropt "
                                         f"reads up to {store_module.SCHEMA_VERSION}"):
        ResultsStore(newer)


def test_exports_round_trip(filled, tmp_path):
    with ResultsStore(filled) as db:
        table = db.table(specs.SAMPLE)
    csv = export_table(table, tmp_path / "out" / "t.csv")
    back = pd.read_csv(csv)
    back["error"] = back["error"].astype(object).where(back["error"].notna(), "")
    pd.testing.assert_frame_equal(back, table, check_dtype=False)
    md = export_table(table, tmp_path / "out" / "t.md").read_text()
    header = [c.strip() for c in md.splitlines()[0].strip("|").split("|")]
    assert header == list(table.columns)
    assert len(md.splitlines()) == len(table) + 2
    pytest.importorskip("pyarrow")
    parquet = export_table(table, tmp_path / "out" / "t.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(parquet), table)
    with pytest.raises(ValueError, match=r"suffix '\.xlsx'; expected \.csv, \.parquet or \.md"):
        export_table(table, tmp_path / "t.xlsx")


def test_parquet_without_pyarrow_says_so_and_keeps_the_old_file(filled, tmp_path, monkeypatch):
    with ResultsStore(filled) as db:
        table = db.table("test-sample")
    target = tmp_path / "t.parquet"
    target.write_bytes(b"earlier")
    monkeypatch.setattr(report_module, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match=r"needs pyarrow, which is not installed here \(pip install"):
        export_table(table, target)
    assert target.read_bytes() == b"earlier"


def test_readers_see_cells_while_a_writer_holds_the_store(filled):
    cell = specs.SAMPLE.cells()[-1]
    with ResultsStore(filled) as writer, ResultsStore(filled) as reader:
        before = reader.count()
        writer.record("test-sample", "v1", cell, {"status": "ok", "metrics": {"value": 0.0}})
        assert reader.count() == before + 1


# -- hostile stores: a directory, read-only, a full disk ---------------------------------------------------


@pytest.fixture
def recorded(tmp_path):
    """A store holding the 8 quick test-sample cells (written here: no cell runs)."""
    path = tmp_path / "r.sqlite"
    with ResultsStore(path) as db:
        for cell in specs.SAMPLE.quick_variant().cells():
            db.record("test-sample", "v1", cell, {"status": "ok", "metrics": {"value": 0.5}})
    return path


def test_a_directory_is_not_a_store(tmp_path):
    for read_only in (False, True):
        with pytest.raises(StoreError, match=r"is a directory; expected a SQLite file"):
            ResultsStore(tmp_path, read_only=read_only)
    with pytest.raises(StoreError, match="no such results store"):
        ResultsStore(tmp_path / "missing.sqlite", read_only=True)
    assert not (tmp_path / "missing.sqlite").exists()


def test_read_only_store_reads_and_refuses_writes(recorded):
    filled = recorded
    before = filled.read_bytes()
    with ResultsStore(filled, read_only=True) as db:
        assert len(db.table("test-sample")) == 8
        with pytest.raises(StoreError, match=r"cannot write to results store .*: opened read-only"):
            db.check_writable()
        with pytest.raises(StoreError, match="opened read-only"):
            db.record("test-sample", "v1", specs.SAMPLE.cells()[-1], {"status": "ok", "metrics": {}})
    assert filled.read_bytes() == before


def test_read_only_open_of_junk_is_not_a_store(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="is not a clusteropt results store"):
        ResultsStore(junk, read_only=True)


def test_check_writable_writes_nothing(recorded):
    filled = recorded
    before = filled.read_bytes()
    with ResultsStore(filled) as db:
        db.check_writable()
        assert db.count() == 8
    assert filled.read_bytes() == before


def test_a_full_disk_is_a_store_error_and_keeps_the_rows(tmp_path):
    cells = specs.SAMPLE.cells()
    path = tmp_path / "s.sqlite"
    with ResultsStore(path) as db:
        pages = db._conn.execute("PRAGMA page_count").fetchone()[0]
        db._conn.execute(f"PRAGMA max_page_count = {pages + 1}")  # SQLite's own "disk is full"
        stored = 0
        with pytest.raises(StoreError, match=r"cannot write to results store .*: database or disk is full"):
            for cell in cells:
                db.record("test-sample", "v", cell,
                          {"status": "ok", "metrics": {"value": 1.0}, "error": "x" * 400})
                stored += 1
        assert 0 < stored < len(cells)
        assert db.count() == stored  # the failed write took nothing with it, and the store still works
        db._conn.execute("PRAGMA max_page_count = 1000000")
        db.record("test-sample", "v", cells[-1], {"status": "ok", "metrics": {"value": 1.0}})
        assert db.count() == stored + 1
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes read-only files")
@pytest.mark.parametrize("locked", ["file", "file and directory"])
def test_store_on_a_read_only_disk_is_readable_not_writable(recorded, locked):
    filled = recorded
    filled.chmod(0o444)
    if locked == "file and directory":
        filled.parent.chmod(0o555)
    try:
        with ResultsStore(filled, read_only=True) as db:
            assert len(db.table("test-sample")) == 8
        with ResultsStore(filled) as db:  # opened for reading; writing says why not
            assert db.count() == 8
            with pytest.raises(StoreError, match=r"cannot write to results store .*readonly database"):
                db.check_writable()
    finally:
        filled.parent.chmod(0o755)
        filled.chmod(0o644)
