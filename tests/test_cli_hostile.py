"""The ``clusteropt`` command against hostile use (issue 18, item 7): outputs that are inputs,
stdout, devices, FIFOs and links as outputs, full disks, out of memory, solvers that give up, odd
numbers.  Every failure is exit 2 (bad input) or 3 (no solution) with one line, never a traceback,
and never a destroyed input or a torn output.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
import threading
from pathlib import Path

import click
import pytest

import clusteropt.models
import clusteropt.solvers
from clusteropt.cli import Number, cli, main
from clusteropt.data import sample_path
from clusteropt.instances import ConcurrentOpenShopInstance, load_instance, random_worker_placement
from clusteropt.instances import base as base_module
from clusteropt.instances.gadget.instance import gadget_preset

ROOT = Path(__file__).resolve().parents[1]
TRACE = sample_path("coflow/small_benchmark.txt")


@pytest.fixture
def inst_file(tmp_path) -> Path:
    path = tmp_path / "wp.json"
    random_worker_placement(4, 3, seed=1).to_json(path)
    return path


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(code: int, out: str, err: str, expected: int = 2) -> str:
    assert code == expected, (code, out, err)
    assert "Traceback" not in out + err
    lines = err.strip("\n").splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def leftovers(directory: Path) -> list[str]:
    """Temporary files a writer left behind."""
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


# -- a solver that gives up is exit 3 -------------------------------------------------------------------


def test_gadget_exact_slot_solver_without_a_solution_is_exit_3(capsys, tmp_path, monkeypatch):
    """``run --slot-solver exact --time-limit 0.001``: the slot ILP stops at its limit with nothing."""
    from clusteropt.online import gadget as online_gadget

    path = tmp_path / "g.json"
    gadget_preset("tiny", jobs=2, seed=0).to_json(path)
    seen = []

    def out_of_time(policy, problem):
        seen.append(policy.time_limit)
        raise RuntimeError(f"slot {problem.t}: the G-VNE ILP stopped with TIME_LIMIT and no solution")

    monkeypatch.setitem(online_gadget.SLOT_SOLVERS, "exact", out_of_time)
    line = one_line(*run(capsys, "run", path, "--slot-solver", "exact", "--time-limit", "0.001"), expected=3)
    assert "stopped with TIME_LIMIT and no solution" in line and seen == [0.001]


# -- the coflow LP lower bound ------------------------------------------------------------------------


def test_lower_bound_with_all_weights_zero_is_zero(capsys, tmp_path):
    path, out_json = tmp_path / "cos.json", tmp_path / "out.json"
    ConcurrentOpenShopInstance([[2, 1], [1, 3]], [0.0, 0.0], [0, 0]).to_json(path)
    code, out, err = run(capsys, "run", path, "--lower-bound", "--json", out_json)
    assert code == 0, err
    assert "total weighted CCT 0," in out and "LP bound 0 (ratio undefined: the bound is 0)" in out
    result = json.loads(out_json.read_text())
    assert result["lower_bound"] == 0.0 and result["ratio"] is None


@pytest.mark.parametrize("policy", [None, "lp-order"])
def test_lower_bound_with_weights_past_the_solvers_infinity_is_bad_input(capsys, tmp_path, policy):
    """Weights are the LP's costs: the loader refuses them long before HiGHS's infinite cost (1e20)."""
    path = tmp_path / "cos.json"
    ConcurrentOpenShopInstance([[2, 1], [1, 3]], [1.0, 2.0], [0, 0]).to_json(path)
    data = json.loads(path.read_text())
    data["weight"] = [1.0, 1e30]  # written by hand: the constructor refuses it too
    path.write_text(json.dumps(data))
    args = ["--lower-bound"] if policy is None else ["--policy", policy]
    line = one_line(*run(capsys, "run", path, *args))
    assert "weight[1] = 1e+30; expected a finite number of magnitude <= 1e7" in line


def test_lower_bound_solver_failure_is_exit_3(capsys, tmp_path, monkeypatch):
    from clusteropt.models.coflow import bound as coflow_bound
    from clusteropt.solvers import SolverError

    def gives_up(inst, **kw):
        raise SolverError("row generation round 1: highs/pyomo did not prove optimality (unknown)")

    monkeypatch.setattr(coflow_bound, "cos_lower_bound", gives_up)
    path = tmp_path / "cos.json"
    ConcurrentOpenShopInstance([[2, 1], [1, 3]], [1.0, 2.0], [0, 0]).to_json(path)
    line = one_line(*run(capsys, "run", path, "--lower-bound"), expected=3)
    assert line == ("error: the LP lower bound: row generation round 1: highs/pyomo did not prove optimality "
                    "(unknown)")


# -- region --tol -------------------------------------------------------------------------------------


@pytest.mark.parametrize("tol", ["-1", "nan", "inf", "-inf"])
def test_region_tolerance_must_be_finite_and_not_negative(capsys, tmp_path, tol):
    path = tmp_path / "rt.json"
    assert main(["generate", "realtime", "-o", str(path)]) == 0
    line = one_line(*run(capsys, "region", path, "--frames", "50", "--tol", tol))
    assert line.startswith("error: --tol = ") and "expected a finite number >= 0" in line


# -- every numeric option refuses nan and inf (issue 42) ---------------------------------------------------


def _options(group: click.Group, path: tuple[str, ...] = ()):
    """(command path, option) for every option of every command under ``group``."""
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _options(command, (*path, name))
        else:
            for param in command.params:
                if isinstance(param, click.Option):
                    yield (*path, name), param


NUMBER_OPTIONS = [(" ".join(path), param.opts[0], param.type) for path, param in _options(cli)
                  if isinstance(param.type, Number)]


def test_every_float_option_is_a_checked_number():
    # click's FLOAT (and FloatRange) let nan through: `run --time-limit nan` ran with no limit (exit 0)
    plain = [f"{' '.join(path)} {param.opts[0]}" for path, param in _options(cli)
             if isinstance(param.type, click.types.FloatParamType)]
    assert plain == [] and len(NUMBER_OPTIONS) >= 20


@pytest.mark.parametrize(("command", "option", "kind"), NUMBER_OPTIONS)
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "1e400", "twelve"])
def test_numeric_options_refuse_nan_and_inf_naming_the_option(capsys, command, option, kind, value):
    if kind.infinite and value in ("inf", "1e400"):
        pytest.skip(f"{option}: inf is documented as no limit")
    # the option is checked as it is parsed, before the command's arguments and files
    line = one_line(*run(capsys, *command.split(), option, value, "missing.json"))
    assert line == f"error: {option} = {value}; expected {kind.expected}"


@pytest.mark.parametrize("argv", [
    ["run", "{g}", "--slot-solver", "exact", "--time-limit", "nan"],  # was exit 0, no limit at all
    ["run", "{g}", "--slot-solver", "exact", "--mip-gap", "nan"],  # was exit 0, HiGHS given a gap of nan
    ["experiment", "run", "ring-load", "--quick", "--timeout", "inf", "--store", "{d}/s.sqlite"],  # a traceback
    ["solve", "{g}", "--model", "gvne", "--time-limit", "0"],
])
def test_the_reviewers_numbers_are_bad_input(capsys, tmp_path, argv):
    g = tmp_path / "g.json"
    gadget_preset("tiny", jobs=2, seed=0).to_json(g)
    line = one_line(*run(capsys, *[a.format(g=g, d=tmp_path) for a in argv]))
    assert line.startswith(f"error: {argv[-2]} = {argv[-1]}; expected ") or "--timeout = inf" in line
    assert not (tmp_path / "s.sqlite").exists()


def test_inf_is_no_time_limit_where_the_help_says_so(capsys, tmp_path):
    g = tmp_path / "g.json"
    gadget_preset("tiny", jobs=2, seed=0).to_json(g)
    code, out, err = run(capsys, "run", g, "--slot-solver", "exact", "--time-limit", "inf")
    assert code == 0 and "verified True" in out, err


# -- --module: anything but an importable module that registers experiments is one line --------------------


@pytest.mark.parametrize(("module", "source", "message"), [
    ("../../etc/passwd", None, "--module ../../etc/passwd: a file path; expected a dotted module name"),
    ("co42_specs.py", None, "--module co42_specs.py: a file path; expected a dotted module name"),
    ("", None, "--module '': an empty name; expected a dotted module name"),
    (" co42", None, "--module ' co42': not a dotted module name"),
    ("co42..x", None, "--module co42..x: not a dotted module name"),
    ("co42_missing", None, "--module co42_missing: cannot import it (no module 'co42_missing' on the path"),
    ("co42_nothing", "x = 1\n", "--module co42_nothing: it imports but registers no experiment"),
    ("json", None, "--module json: it imports but registers no experiment"),
    ("co42_raises", "raise ValueError('no\\nluck')\n",
     "--module co42_raises: importing it raised ValueError: no luck"),  # on one line
    ("co42_exits", "import sys\nsys.exit(3)\n", "--module co42_exits: importing it raised SystemExit: 3"),
    ("co42_syntax", "def f(:\n", "--module co42_syntax: importing it raised SyntaxError: "),
    ("co42_dep", "import co42_no_such_dependency\n",
     "--module co42_dep: importing it raised ModuleNotFoundError: No module named 'co42_no_such_dependency'"),
])
def test_bad_modules_are_one_line_saying_which(capsys, tmp_path, monkeypatch, module, source, message):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the command puts the current directory first
    if source is not None:
        (tmp_path / f"{module}.py").write_text(source)
    line = one_line(*run(capsys, "experiment", "list", "--module", module))
    assert line.startswith(f"error: {message}"), line


# -- an output that is an input is refused before anything runs -----------------------------------------


def _commands(tmp_path: Path, inst: Path) -> dict[str, tuple[Path, list[str]]]:
    """command -> (its input, argv writing over that input)."""
    trace = tmp_path / "trace.txt"
    trace.write_bytes(TRACE.read_bytes())
    lp_named = tmp_path / "wp.lp"  # an instance file with an LP suffix: `export X.lp X.lp`
    lp_named.write_bytes(inst.read_bytes())
    prices = tmp_path / "prices.csv"
    prices.write_text("dc,resource,a,b,threshold\n" + "".join(
        f"{r},{k},{2 + r},1,{10 * (r + 1)}\n" for r in range(3) for k in ("vcpu", "gpu", "storage", "memory")))
    rt = tmp_path / "rt.json"
    assert main(["generate", "realtime", "-o", str(rt)]) == 0
    return {
        "import": (trace, ["import", "coflow-benchmark", trace, "-o", trace]),
        "solve": (inst, ["solve", inst, "--model", "worker-placement", "--json", inst]),
        "run": (rt, ["run", rt, "--frames", "50", "--json", rt]),
        "export": (lp_named, ["export", lp_named, lp_named, "--model", "worker-placement"]),
        "build": (lp_named, ["build", lp_named, "--model", "worker-placement", "--export", lp_named]),
        "region": (rt, ["region", rt, "--frames", "50", "--json", rt]),
        "generate": (prices, ["generate", "broker", "--preset", "tiny", "--prices", prices, "-o", prices]),
    }


@pytest.mark.parametrize("command", ["import", "solve", "run", "export", "build", "region", "generate"])
@pytest.mark.parametrize("via", ["same path", "symlink", "hard link"])
def test_output_that_is_an_input_is_refused(capsys, tmp_path, inst_file, command, via):
    source, argv = _commands(tmp_path, inst_file)[command]
    before = source.read_bytes()
    capsys.readouterr()
    if via != "same path":  # the output (the last mention) names the input by another path
        other = tmp_path / f"other{source.suffix}"
        (other.symlink_to if via == "symlink" else other.hardlink_to)(source)
        last = max(k for k, a in enumerate(argv) if a == source)
        argv = [*argv[:last], other, *argv[last + 1:]]
    line = one_line(*run(capsys, *argv))
    assert "is the input file" in line and "would destroy the input" in line
    assert source.read_bytes() == before


def test_store_that_is_a_report_file_is_refused(capsys, tmp_path):
    out_dir = tmp_path / "report"
    out_dir.mkdir()
    store = out_dir / "results.csv"
    line = one_line(*run(capsys, "experiment", "run", "worker-placement-gap", "--quick", "--store", store,
                         "--out", out_dir))
    assert "is the report's results.csv" in line
    assert not store.exists()  # nothing ran


# -- stdout, devices, FIFOs and links as outputs ---------------------------------------------------------


def test_dash_writes_json_to_stdout_and_the_summary_to_stderr(capsys, inst_file):
    code, out, err = run(capsys, "solve", inst_file, "--model", "worker-placement", "--json", "-")
    assert code == 0, err
    assert json.loads(out)["termination"] == "optimal" and "optimal" in err
    assert not Path("-").exists()


def test_dash_writes_an_instance_to_stdout(capsys, tmp_path):
    code, out, err = run(capsys, "generate", "realtime", "-o", "-")
    assert code == 0, err
    (tmp_path / "rt.json").write_text(out)
    assert load_instance(tmp_path / "rt.json").kind == "realtime" and "-> -" in err


def test_dash_writes_an_lp_file_to_stdout(capsys, inst_file):
    code, out, err = run(capsys, "export", inst_file, "-", "--model", "worker-placement")
    assert code == 0, err
    assert "workers_limit" in out and out.rstrip().endswith("end")


def test_dash_for_a_run_result(capsys, tmp_path):
    rt = tmp_path / "rt.json"
    assert main(["generate", "realtime", "-o", str(rt)]) == 0
    capsys.readouterr()
    code, out, err = run(capsys, "run", rt, "--frames", "50", "--json", "-")
    assert code == 0, err
    assert "completion_rate" in json.loads(out) and "completion rates" in err


@pytest.mark.skipif(not Path("/proc/self/fd/1").exists(), reason="no /proc/self/fd here")
@pytest.mark.parametrize("command", ["generate", "export"])
def test_a_link_to_stdout_is_our_stdout(tmp_path, inst_file, command):
    """`-o /dev/stdout` (here a private link like it, to /proc/self/fd/1: a broken writer must not
    replace the machine's /dev/stdout) writes to the process's stdout and leaves the link alone."""
    import subprocess

    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    argv = (["generate", "realtime", "-o", link] if command == "generate"
            else ["export", inst_file, link, "--model", "worker-placement"])
    with open(tmp_path / "stdout.txt", "wb") as out:
        done = subprocess.run([sys.executable, "-m", "clusteropt.cli", *map(str, argv)], stdout=out,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "stdout.txt").read_text()
    if command == "generate":
        assert json.loads(text)["kind"] == "realtime" and f"-> {link}" in done.stderr
    else:
        assert "workers_limit" in text and text.rstrip().endswith("end")
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"


def test_symlinked_output_is_written_through_not_replaced(capsys, tmp_path, inst_file):
    target, link = tmp_path / "target.json", tmp_path / "link.json"
    target.write_text("old")
    link.symlink_to(target)
    code, _, err = run(capsys, "solve", inst_file, "--model", "worker-placement", "--json", link)
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["termination"] == "optimal"


def test_symlink_to_a_device_stays_a_symlink_and_the_device_a_device(capsys, tmp_path, inst_file):
    """`-o /dev/stdout` as root used to replace the device link with a file; here a link to /dev/null."""
    link = tmp_path / "null.json"
    link.symlink_to(os.devnull)
    for argv in (["generate", "realtime", "-o", link],
                 ["export", inst_file, tmp_path / "null.lp", "--model", "worker-placement"]):
        if argv[0] == "export":
            (tmp_path / "null.lp").symlink_to(os.devnull)
        code, _, err = run(capsys, *argv)
        assert code == 0, err
    for name in ("null.json", "null.lp"):
        assert (tmp_path / name).is_symlink() and os.readlink(tmp_path / name) == os.devnull
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("command", ["export", "solve"])
def test_fifo_output_is_written_through(capsys, tmp_path, inst_file, command):
    fifo = tmp_path / "pipe.out"
    os.mkfifo(fifo)
    argv = (["export", inst_file, fifo.with_suffix(".lp"), "--model", "worker-placement"] if command == "export"
            else ["solve", inst_file, "--model", "worker-placement", "--json", fifo])
    if command == "export":
        fifo = fifo.rename(fifo.with_suffix(".lp"))
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    try:
        code, _, err = run(capsys, *argv)
    finally:
        if reader.is_alive():  # the writer never opened the FIFO: let the reader go
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError as exc:  # ENXIO: no reader holds it any more (it finished meanwhile)
                if exc.errno != errno.ENXIO:
                    raise
        reader.join(10)
    assert code == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert (b"workers_limit" if command == "export" else b'"termination": "optimal"') in received[0]


# -- full disks, read-only disks, no memory ---------------------------------------------------------------


def test_export_on_a_full_disk_keeps_the_earlier_file(capsys, tmp_path, inst_file, monkeypatch):
    target = tmp_path / "model.lp"
    target.write_text("earlier model\n")

    def full_disk(model, path):
        Path(path).write_text("\\ half an LP file")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(clusteropt.solvers, "write_model", full_disk)
    line = one_line(*run(capsys, "export", inst_file, target, "--model", "worker-placement"))
    assert line == f"error: cannot write {target}: {os.strerror(errno.ENOSPC)}"
    assert target.read_text() == "earlier model\n" and leftovers(tmp_path) == []


class _FullDisk:
    """``os`` for the atomic writer, with a disk that fills after 10 bytes."""

    def __getattr__(self, name):
        return getattr(os, name)

    @staticmethod
    def fdopen(fd, mode="r", *args, **kw):
        fh = os.fdopen(fd, mode, *args, **kw)

        class Full:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                fh.close()

            def write(self, data):
                fh.write(data[:10])
                fh.flush()
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        return Full()


@pytest.mark.parametrize("command", ["generate", "solve"])
def test_writes_on_a_full_disk_are_one_line_and_keep_the_earlier_file(capsys, tmp_path, inst_file,
                                                                       monkeypatch, command):
    target = tmp_path / "out.json"
    target.write_text("earlier\n")
    monkeypatch.setattr(base_module, "os", _FullDisk())
    argv = (["generate", "realtime", "-o", target] if command == "generate"
            else ["solve", inst_file, "--model", "worker-placement", "--json", target])
    line = one_line(*run(capsys, *argv))
    assert line == f"error: cannot write {target}: {os.strerror(errno.ENOSPC)}"
    assert target.read_text() == "earlier\n" and leftovers(tmp_path) == []


def test_unexpected_os_error_is_one_line_naming_the_file(capsys, inst_file, monkeypatch):
    def read_only_disk(model):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), "/mnt/ro/cache")

    monkeypatch.setattr(clusteropt.models, "model_summary", read_only_disk)
    line = one_line(*run(capsys, "build", inst_file, "--model", "worker-placement"))
    assert line == f"error: /mnt/ro/cache: {os.strerror(errno.EROFS)}"


def test_out_of_memory_is_one_line(capsys, inst_file, monkeypatch):
    def no_memory(model):
        raise MemoryError

    monkeypatch.setattr(clusteropt.models, "model_summary", no_memory)
    line = one_line(*run(capsys, "build", inst_file, "--model", "worker-placement"))
    assert line == f"error: out of memory while running clusteropt build {inst_file}; try a smaller instance"


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root writes read-only files")
def test_read_only_output_directory_is_one_line(capsys, tmp_path, inst_file):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        line = one_line(*run(capsys, "solve", inst_file, "--model", "worker-placement", "--json",
                             locked / "out.json"))
    finally:
        locked.chmod(0o700)
    assert line.startswith(f"error: cannot write {locked / 'out.json'}: ")


@pytest.mark.parametrize(("argv", "option", "bad"), [
    (["run", "{rt}", "--frames", "-5"], "--frames", "-5"),
    (["run", "{rt}", "--frames", "0"], "--frames", "0"),
    (["run", "{rt}", "--seed", "-1"], "--seed", "-1"),
    (["generate", "ring", "--n", "8", "--servers", "2", "--requests", "5", "--seed", "-3", "-o", "{out}"],
     "--seed", "-3"),
])
def test_bad_option_values_name_the_option_not_an_internal_field(capsys, tmp_path, argv, option, bad):
    # was "horizon = -5; expected an integer >= 1" and numpy's "expected non-negative integer"
    rt = tmp_path / "rt.json"
    assert main(["generate", "realtime", "-o", str(rt)]) == 0
    capsys.readouterr()
    argv = [a.format(rt=rt, out=tmp_path / "x.json") for a in argv]
    line = one_line(*run(capsys, *argv))
    assert f"'{option}': {bad} is not in the range" in line


@pytest.mark.parametrize("policy", ["local", "mlbroker"])
def test_json_on_stdout_is_all_stdout_holds_even_from_c_solvers(tmp_path, policy):
    # a subprocess, so that a solver's own banner (written by C code to file descriptor 1) would show
    import subprocess

    inst = tmp_path / "b.json"
    assert main(["generate", "broker", "--preset", "tiny", "-o", str(inst)]) == 0
    done = subprocess.run([sys.executable, "-m", "clusteropt.cli", "run", str(inst), "--policy", policy,
                           "--json", "-"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["policy"] == policy
