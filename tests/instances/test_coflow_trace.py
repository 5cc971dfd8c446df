"""Coflow-benchmark reader (clusteropt.instances.coflow.trace).

``clusteropt/data/coflow/small_benchmark.txt`` (6 ports, 5 coflows), hand-computed with the default
``unit_mb = 1`` and ``slot_ms = 1000``:

====  =======  ============  ==============================  ===========================  =======
line  id       arrival (ms)  mappers / reducers               flows (input, output, units)  release
====  =======  ============  ==============================  ===========================  =======
2     1        0             [2] / 4:1.0                      (2,4,1)                       0
3     2        1500          [0 1 2] / 3:10.0 5:2.0           10/3 -> 4, 2/3 -> 1 each      1
4     3        2999          [1 3] / 1:4.0 3:6.0 (rack-local) (1,1,2) (1,3,3) (3,1,2) (3,3,3) 2
5     10       3000          [5] / 0:0.5 2:0.0 4:7.5          (5,0,1) (5,4,8); 2:0.0 no flow 3
6     7        12345         [4 0] / 4:3.0 (4 is rack-local)  (0,4,2) (4,4,2)               12
====  =======  ============  ==============================  ===========================  =======
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

import clusteropt.instances.coflow.instance  # noqa: F401  (registers the coflow kind for load_instance)
from clusteropt.data import sample_path
from clusteropt.instances.base import InstanceError, load_instance
from clusteropt.instances.coflow.instance import CoflowInstance
from clusteropt.instances.coflow.trace import TraceError, read_coflow_benchmark

SMALL = sample_path("coflow/small_benchmark.txt")
GOOD_LINES = SMALL.read_text().splitlines()


def flows(inst: CoflowInstance) -> list[tuple[int, int, int, int]]:
    return list(zip(inst.coflow.tolist(), inst.input.tolist(), inst.output.tolist(), inst.units.tolist()))


def expected_flows(units: dict[str, list[int]]) -> list[tuple[int, int, int, int]]:
    """The small file's flows with per-coflow units given in (input, output) order."""
    pairs = [
        [(2, 4)],
        [(0, 3), (0, 5), (1, 3), (1, 5), (2, 3), (2, 5)],
        [(1, 1), (1, 3), (3, 1), (3, 3)],
        [(5, 0), (5, 4)],
        [(0, 4), (4, 4)],
    ]
    out = []
    for j, (ps, us) in enumerate(zip(pairs, units.values(), strict=True)):
        out += [(j, i, o, u) for (i, o), u in zip(ps, us, strict=True)]
    return out


def test_small_file_default_units_and_releases():
    inst = read_coflow_benchmark(SMALL)
    assert (inst.n_inputs, inst.n_outputs, inst.n_coflows) == (6, 6, 5)
    assert inst.ids.tolist() == [1, 2, 3, 10, 7]  # file order, trace ids
    assert inst.release.tolist() == [0, 1, 2, 3, 12]
    assert inst.weight.tolist() == [1.0] * 5
    assert flows(inst) == expected_flows({
        "1": [1],
        "2": [4, 1, 4, 1, 4, 1],  # ceil(10/3), ceil(2/3): M = 3 makes the rounding matter
        "3": [2, 3, 2, 3],
        "10": [1, 8],  # ceil(0.5), ceil(7.5); 2:0.0 gives no flow
        "7": [2, 2],  # ceil(3/2) each, the rack-local (4, 4) kept
    })


def test_unit_mb_and_slot_ms_follow_ceil_and_floor():
    inst = read_coflow_benchmark(SMALL, unit_mb=0.5, slot_ms=500)
    assert inst.release.tolist() == [0, 3, 5, 6, 24]  # floor(1500/500), floor(2999/500), floor(12345/500)
    assert flows(inst) == expected_flows({
        "1": [2],
        "2": [7, 2, 7, 2, 7, 2],  # ceil(6.67), ceil(1.33)
        "3": [4, 6, 4, 6],
        "10": [1, 15],  # 0.5 / 0.5 is exactly 1
        "7": [3, 3],
    })
    assert inst.slot_seconds == 0.5  # the slot length travels with the instance (and its JSON)
    assert CoflowInstance.from_json(inst.to_json()).slot_seconds == 0.5
    inst = read_coflow_benchmark(SMALL, unit_mb=4, slot_ms=3000.0)
    assert inst.release.tolist() == [0, 0, 0, 1, 4]
    assert flows(inst) == expected_flows({"1": [1], "2": [1] * 6, "3": [1] * 4, "10": [1, 2], "7": [1, 1]})


def test_rack_local_flows_use_the_port_pair():
    inst = read_coflow_benchmark(SMALL)
    local = inst.input == inst.output
    assert sorted(zip(inst.coflow[local].tolist(), inst.input[local].tolist())) == [(2, 1), (2, 3), (4, 4)]
    loads = inst.loads()
    assert loads[4, 4] == 2 and loads[4, 6 + 4] == 4  # input 4 carries the local flow, output 4 both


def test_quotients_that_are_integers_are_not_rounded_up(tmp_path):
    path = tmp_path / "snap.txt"
    path.write_text("2 1\n1 0 1 0 1 1:0.3\n")
    assert read_coflow_benchmark(path, unit_mb=0.1).units.tolist() == [3]  # 0.3 / 0.1 = 2.9999999999999996
    path.write_text("3 1\n1 0 3 0 1 2 1 0:2.7\n")
    assert read_coflow_benchmark(path, unit_mb=0.3).units.tolist() == [3, 3, 3]  # 2.7 / 0.9 = 3.0000000000000004


def test_duplicate_ports_are_summed(tmp_path, caplog):
    path = tmp_path / "dup.txt"
    # mapper 0 listed twice (M = 3), reducer 1 listed twice: d[0, .] = 2 * 6 / 3, d[1, .] = 6 / 3
    path.write_text("2 1\n5 0 3 0 0 1 3 1:3.0 1:3.0 0:6.0\n")
    with caplog.at_level(logging.WARNING, logger="clusteropt.instances.coflow.trace"):
        inst = read_coflow_benchmark(path)
    assert flows(inst) == [(0, 0, 0, 4), (0, 0, 1, 4), (0, 1, 0, 2), (0, 1, 1, 2)]
    assert f"{path}:2:" in caplog.text and "summed" in caplog.text
    # summed before rounding up: two 0.4 MB entries are one unit, not two
    path.write_text("2 1\n5 0 1 0 2 1:0.4 1:0.4\n")
    assert flows(read_coflow_benchmark(path)) == [(0, 0, 1, 1)]


def test_weights_blank_lines_and_info_log(tmp_path, caplog):
    path = tmp_path / "w.txt"
    path.write_text("\n".join(GOOD_LINES[:3]) + "\n\n   \n" + "\n".join(GOOD_LINES[3:]) + "\n\n")
    with caplog.at_level(logging.INFO, logger="clusteropt.instances.coflow.trace"):
        inst = read_coflow_benchmark(path, weights=[1, 2, 3, 4, 5])
    assert inst.weight.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert inst == read_coflow_benchmark(SMALL, weights=np.arange(1.0, 6.0))
    assert "5 coflows, 15 flows (3 rack-local)" in caplog.text
    with pytest.raises(ValueError, match=r"^weights has shape \(4,\); expected \(5,\)"):
        read_coflow_benchmark(SMALL, weights=[1, 2, 3, 4])


@pytest.mark.parametrize("name", ["unit_mb", "slot_ms"])
@pytest.mark.parametrize("value", [0, -1.0, float("nan"), float("inf"), "1", True])
def test_bad_unit_or_slot_names_the_parameter(name, value):
    with pytest.raises(ValueError, match=rf"^{name} = .*; expected a positive finite number"):
        read_coflow_benchmark(SMALL, **{name: value})


def test_json_round_trip(tmp_path):
    inst = read_coflow_benchmark(SMALL, unit_mb=0.5)
    path = tmp_path / "small.json"
    inst.to_json(path)
    back = load_instance(path)
    assert isinstance(back, CoflowInstance) and back == inst
    assert back.ids.tolist() == [1, 2, 3, 10, 7]


def replace_line(k: int, text: str) -> list[str]:
    """The good file with (1-based) line k replaced."""
    lines = list(GOOD_LINES)
    lines[k - 1] = text
    return lines


MALFORMED = {
    # name: (file lines, 1-based line in the message, fragment of the message)
    "empty file": ([], 1, "empty"),
    "blank file": (["", "  "], 1, "empty"),
    "header one token": (replace_line(1, "6"), 1, "header"),
    "header three tokens": (replace_line(1, "6 5 1"), 1, "header"),
    "header not numeric": (replace_line(1, "six 5"), 1, "header port count"),
    "header zero ports": (replace_line(1, "0 5"), 1, "header port count"),
    "header count too big": (replace_line(1, "6 6"), 1, "header coflow count = 6; expected the number of "
                             "coflow lines in the file, 5 found"),
    "header count too small": (replace_line(1, "6 4"), 1, "5 found"),
    "too few tokens": (replace_line(3, "2 1500 3"), 3, "token count"),
    "M says more mappers": (replace_line(2, "1 0 3 2 1 4:1.0"), 2, "token count = 6; expected at least 7"),
    "M says fewer mappers": (replace_line(3, "2 1500 2 0 1 2 2 3:10.0 5:2.0"), 3, "token count = 9; expected 8"),
    "missing R": (replace_line(2, "1 0 1 2 4:1.0"), 2,
                  "reducer count R (token 5, after M = 1 mapper ports) = '4:1.0'"),
    "R says more reducers": (replace_line(3, "2 1500 3 0 1 2 3 3:10.0 5:2.0"), 3, "token count = 9; expected 10"),
    "R says fewer reducers": (replace_line(3, "2 1500 3 0 1 2 1 3:10.0 5:2.0"), 3, "token count = 9; expected 8"),
    "non-numeric id": (replace_line(4, "x3 2999 2 1 3 2 1:4.0 3:6.0"), 4, "coflow id = 'x3'"),
    "non-numeric arrival": (replace_line(4, "3 soon 2 1 3 2 1:4.0 3:6.0"), 4, "arrival = 'soon'"),
    "nan arrival": (replace_line(4, "3 nan 2 1 3 2 1:4.0 3:6.0"), 4, "arrival = 'nan'"),
    "negative arrival": (replace_line(4, "3 -1 2 1 3 2 1:4.0 3:6.0"), 4, "arrival = '-1'; expected a finite "
                         "number of milliseconds >= 0"),
    "non-integer M": (replace_line(4, "3 2999 2.0 1 3 2 1:4.0 3:6.0"), 4, "mapper count M = '2.0'"),
    "zero M": (replace_line(2, "1 0 0 1 4:1.0"), 2, "mapper count M = '0'; expected an integer >= 1"),
    "zero R": (replace_line(2, "1 0 1 2 0"), 2, "reducer count R"),
    "non-numeric mapper": (replace_line(4, "3 2999 2 1 three 2 1:4.0 3:6.0"), 4,
                           "mapper port (token 5) = 'three'"),
    "negative mapper": (replace_line(4, "3 2999 2 -1 3 2 1:4.0 3:6.0"), 4, "mapper port (token 4) = '-1'"),
    "mapper port too big": (replace_line(5, "10 3000 1 6 3 0:0.5 2:0.0 4:7.5"), 5,
                            "mapper port (token 4) = '6'; expected a port number in [0, 6)"),
    "reducer port too big": (replace_line(5, "10 3000 1 5 3 0:0.5 9:0.0 4:7.5"), 5,
                             "reducer entry 2 (token 7) = '9:0.0'; expected a port number in [0, 6)"),
    "reducer without colon": (replace_line(6, "7 12345 2 4 0 1 4-3.0"), 6, "expected 'port:MB'"),
    "reducer two colons": (replace_line(6, "7 12345 2 4 0 1 4:3.0:1"), 6, "expected 'port:MB'"),
    "reducer empty size": (replace_line(6, "7 12345 2 4 0 1 4:"), 6, "finite number of megabytes"),
    "reducer empty port": (replace_line(6, "7 12345 2 4 0 1 :3.0"), 6, "port number"),
    "non-numeric size": (replace_line(6, "7 12345 2 4 0 1 4:lots"), 6, "reducer entry 1 (token 7) = '4:lots'"),
    "negative size": (replace_line(6, "7 12345 2 4 0 1 4:-3.0"), 6, "a finite size >= 0 MB"),
    "nan size": (replace_line(6, "7 12345 2 4 0 1 4:nan"), 6, "'4:nan'"),
    "inf size": (replace_line(6, "7 12345 2 4 0 1 4:inf"), 6, "'4:inf'"),
    "overflowing size": (replace_line(6, "7 12345 2 4 0 1 4:1e400"), 6, "a finite size >= 0 MB"),
    "duplicate id": (replace_line(6, "2 12345 2 4 0 1 4:3.0"), 6,
                     "coflow id = 2; expected distinct ids (2 is also the id on line 3)"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_file_names_file_and_line(tmp_path, name):
    lines, lineno, fragment = MALFORMED[name]
    path = tmp_path / "bad.txt"
    path.write_text("\n".join(lines) + ("\n" if lines else ""))
    with pytest.raises(TraceError) as info:
        read_coflow_benchmark(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{lineno}: "), message
    assert fragment in message, message
    assert (info.value.path, info.value.lineno) == (str(path), lineno)
    assert isinstance(info.value, InstanceError) and isinstance(info.value, ValueError)


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        read_coflow_benchmark(SMALL.with_name("no_such_trace.txt"))


def trace_scale_text(seed: int = 0, n: int = 526, ports: int = 150) -> str:
    """A synthetic file in the benchmark format at the public trace's scale (526 lines, up to
    150 x 150 flows per line); about 70 % of the coflows have one mapper or one reducer.
    """
    rng = np.random.default_rng(seed)
    lines = [f"{ports} {n}"]
    arrival = 0
    for cid in range(1, n + 1):
        m, r = rng.integers(1, ports + 1, 2)
        if rng.random() < 0.7:
            m, r = (1, r) if rng.random() < 0.5 else (m, 1)
        mappers = rng.choice(ports, m, replace=False)
        reducers = rng.choice(ports, r, replace=False)
        mb = np.round(rng.lognormal(2.0, 2.0, r), 1)
        lines.append(f"{cid} {arrival} {m} {' '.join(map(str, mappers))} {r} "
                     + " ".join(f"{p}:{s}" for p, s in zip(reducers, mb)))
        arrival += int(rng.exponential(7000))
    return "\n".join(lines) + "\n"


def test_trace_scale_file_reads(tmp_path):
    path = tmp_path / "trace_scale.txt"
    path.write_text(trace_scale_text())
    inst = read_coflow_benchmark(path)
    assert inst.n_coflows == 526 and inst.n_inputs == 150
    # every line's flows: (distinct mappers) x (reducers with MB > 0)
    expected = 0
    for line in path.read_text().splitlines()[1:]:
        tok = line.split()
        m = int(tok[2])
        expected += m * sum(float(t.split(":")[1]) > 0 for t in tok[4 + m :])
    assert inst.n_flows == expected > 200_000


def test_reads_the_public_format_verbatim(tmp_path):
    """The first lines of FB2010-1Hr-150-0.txt, header count adjusted."""
    path = tmp_path / "fb_head.txt"
    path.write_text("150 3\n1 0 1 22 1 65:1.0\n2 10833 2 104 132 1 140:48.0\n3 13122 2 66 138 1 38:4.0\n")
    inst = read_coflow_benchmark(path)
    assert flows(inst) == [(0, 22, 65, 1), (1, 104, 140, 24), (1, 132, 140, 24), (2, 66, 38, 2), (2, 138, 38, 2)]
    assert inst.release.tolist() == [0, 10, 13]


# -- hostile files (issue 18, item 5): one TraceError at <file>:<line>, nothing else --------------------


def raises_at(path: Path, lineno: int, fragment: str, **kwargs) -> TraceError:
    with pytest.raises(TraceError) as info:
        read_coflow_benchmark(path, **kwargs)
    message = str(info.value)
    assert message.startswith(f"{path}:{lineno}: "), message
    assert fragment in message, message
    assert "\n" not in message and len(message) < 1000, message[:200]
    return info.value


def test_header_port_count_is_range_checked_before_allocating(tmp_path):
    path = tmp_path / "ports.txt"
    path.write_text("1000000000000 1\n1 0 1 2 1 4:1.0\n")  # was a MemoryError (7 TiB of per-port arrays)
    raises_at(path, 1, "header port count = '1000000000000'; expected an integer in [1, 1000000] (MAX_PORTS")


@pytest.mark.parametrize("line, fragment", [
    ("100000000000000000000000 0 1 2 1 4:1.0", "coflow id = '100000000000000000000000'; expected an integer in "
                                               "[-9007199254740992, 9007199254740992]"),
    ("9007199254740993 0 1 2 1 4:1.0", "coflow id = '9007199254740993'"),  # 2**53 + 1: not exact in a float64
    ("1 0 100000000000000000000 2 1 4:1.0", "mapper count M = '100000000000000000000'; expected an integer in "),
    ("1 0 -100000000000000000000 2 1 4:1.0", "mapper count M = '-100000000000000000000'; expected an integer >="),
    ("1 0 1 " + "9" * 5000 + " 1 4:1.0", "mapper port (token 4) = '99999"),  # was int()'s 4300-digit ValueError
    ("1 0 1 2 1 " + "4" * 5000 + ":1.0", "reducer entry 1 (token 6) = '44444"),
])
def test_integers_are_range_checked(tmp_path, line, fragment):
    path = tmp_path / "ints.txt"
    path.write_text(f"6 1\n{line}\n")
    raises_at(path, 2, fragment)


def test_coflow_ids_up_to_2_53_are_kept_exactly(tmp_path):
    path = tmp_path / "ids.txt"
    path.write_text("6 2\n9007199254740992 0 1 2 1 4:1.0\n-9007199254740991 0 1 2 1 4:1.0\n")
    assert read_coflow_benchmark(path).ids.tolist() == [2**53, -(2**53) + 1]


def test_release_beyond_the_integer_range_names_line_and_slot_ms(tmp_path):
    path = tmp_path / "arrival.txt"
    path.write_text("6 2\n1 0 1 2 1 4:1.0\n2 1e300 1 2 1 4:1.0\n")  # was "release[1] = -9.2e18" without file
    err = raises_at(path, 3, "arrival = '1e300'; expected at most MAX_INT = 2**53 slots of slot_ms = 1000.0 ms")
    assert "raise slot_ms" in str(err)
    assert read_coflow_benchmark(path, slot_ms=1e290).release.tolist() == [0, 10**10]


def test_units_beyond_the_integer_range_name_line_and_unit_mb(tmp_path):
    path = tmp_path / "size.txt"
    path.write_text("6 1\n1 0 1 2 1 4:1e300\n")  # was "units[0] = -9.2e18" without file
    raises_at(path, 2, "reducer port 4 size (MB) = 1e+300; expected at most MAX_INT = 2**53 units per flow")
    path.write_text("6 1\n1 0 1 2 1 4:1.0\n")
    err = raises_at(path, 2, "reducer port 4 size (MB) = 1.0", unit_mb=1e-300)
    assert "unit_mb = 1e-300" in str(err)
    # each flow fits, their sum does not
    path.write_text("6 2\n1 0 1 2 1 4:8e15\n2 0 1 2 1 4:8e15\n")
    raises_at(path, 3, "total units = 16000000000000000; expected at most MAX_INT = 2**53 units in the file")


def test_subnormal_unit_mb_is_refused_up_front():
    # 1 MB / 1e-320 overflows; was "units[0] = -9.2e18; expected an integer below 2**62"
    with pytest.raises(ValueError, match=r"^unit_mb = 1e-320; expected a positive finite number >= 2\.2250"):
        read_coflow_benchmark(SMALL, unit_mb=1e-320)
    with pytest.raises(ValueError, match=r"^slot_ms = 5e-324; expected a positive finite number"):
        read_coflow_benchmark(SMALL, slot_ms=5e-324)


def test_flow_count_is_bounded(tmp_path, monkeypatch):
    import clusteropt.instances.coflow.trace as coflow_trace

    monkeypatch.setattr(coflow_trace, "MAX_FLOWS", 16)  # 10**7 flows would take too long to write here
    path = tmp_path / "flows.txt"
    path.write_text("6 2\n1 0 2 0 1 3 1:1 2:1 3:1\n2 0 3 0 1 2 4 1:1 2:1 3:1 4:1\n")
    raises_at(path, 3, "flows = '3 mapper ports x 4 reducer ports'; expected at most MAX_FLOWS = 16 flows in the "
                       "file (6 before this line)")


def test_utf8_bom_is_accepted(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf" + SMALL.read_bytes())  # was "header port count = '\ufeff6'"
    assert read_coflow_benchmark(path) == read_coflow_benchmark(SMALL)


def test_invalid_utf8_names_byte_and_line(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"6 1\r\n1 0 1 2 1 4:1.0 \xe9\r\n")  # was a UnicodeDecodeError without the file
    err = raises_at(path, 2, "byte 21 = b'\\xe9'; expected UTF-8 text")  # 0-based offset
    assert isinstance(err, InstanceError)
    path.write_bytes(b"\xef\xbb\xbf6 1\r1 0 1 2 1 4:1.0\r\xff\r")  # offsets count the BOM; \r ends a line
    raises_at(path, 3, "byte 23 = b'\\xff'")


def test_lines_are_counted_as_editors_count_them(tmp_path):
    path = tmp_path / "ff.txt"
    # a form feed is whitespace inside a line, not a line break (str.splitlines() made it one)
    path.write_text("6 2\n1 0 1 2\x0c1 4:1.0\n2 0 1 9 1 4:1.0\n")
    raises_at(path, 3, "mapper port (token 4) = '9'")


def test_long_token_is_shortened_in_the_message(tmp_path):
    path = tmp_path / "long.txt"
    path.write_text("6 1\n1 " + "x" * 200_000 + " 1 2 1 4:1.0\n")
    err = raises_at(path, 2, "arrival = '" + "x" * 40 + "... (200000 characters)'")
    assert len(str(err)) - len(str(path)) < 150  # the message, whatever the temporary path's length


def test_latest_release_plus_total_units_stays_exact(tmp_path):
    # each number fits, but a schedule could end at slot 2**53 + 4: beyond exact float slot numbers
    path = tmp_path / "late.txt"
    path.write_text("6 2\n1 9007199254740992000 1 2 1 4:2.0\n2 0 1 2 1 4:2.0\n")
    raises_at(path, 2, "arrival = '9007199254740992000'; expected a release slot of at most MAX_INT - (the file's "
                       "total units) = 2**53 - 4")
    path.write_text("6 2\n1 9007199254740988000 1 2 1 4:2.0\n2 0 1 2 1 4:2.0\n")
    assert read_coflow_benchmark(path).release.tolist() == [2**53 - 4, 0]


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), float("inf"), "1", True])
def test_slot_seconds_must_be_a_positive_number(value):
    with pytest.raises(InstanceError, match="slot_seconds"):
        CoflowInstance(1, 1, [0], [0], [0], [1], [1.0], [0], slot_seconds=value)
