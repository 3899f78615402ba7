"""Flight Recorder parsing, against real gloo dumps (fixtures made by data/make_fr_fixtures.py
under torchrun, and one made live) plus hand-made entries for NCCL-only fields."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.processes import kill_tree
from tests.helpers.synthetic import fr_dump
from triage.analysis.diff import history_of, index_by_pg
from triage.errors import InputError
from triage.model import CollectiveState
from triage.parsing.flight_recorder.compact import parse_fr_compact
from triage.parsing.flight_recorder.parse import (
    UNKNOWN_RANK,
    decode_fr_bytes,
    load_fr_file,
    parse_fr_json,
    rank_from_filename,
)
from triage.parsing.safe_pickle import safe_unpickle

DATA = Path(__file__).parent / "data"


def _check_hang_dump(dump_path: Path, rank: int) -> None:
    dump = load_fr_file(dump_path, rank)
    assert dump.version == "2.10"
    assert dump.rank == rank
    ops = [(c.pg, c.seq, c.op, c.count, c.dtype, c.state) for c in dump.collectives]
    done = CollectiveState.COMPLETED
    assert ops[:4] == [
        ("0", 1, "all_reduce", 4, "float32", done),
        ("0", 2, "broadcast", 4, "float32", done),
        ("1", 1, "all_gather", 2, "bfloat16", done),
        ("0", 3, "barrier", None, None, done),
    ]
    last = dump.collectives[-1]
    expected_op = "all_reduce" if rank == 0 else "all_gather"
    assert (last.pg, last.seq, last.op, last.count, last.dtype) == ("0", 4, expected_op, 8, "float32")
    assert last.state is CollectiveState.IN_FLIGHT  # gloo keeps "scheduled"; not retired
    assert last.pg_name == "default_pg"
    assert all(c.rank == rank and c.source == "fr" and not c.is_p2p for c in dump.collectives)
    # send/recv are not recorded but advance op_id and pg_status (formats.md)
    assert dump.pg_status["0"].last_completed == 4
    assert dump.pg_status["0"].last_enqueued == 5
    assert dump.entries[-1].op_id == 5
    assert dump.entries[-1].retired is False
    # gloo in 2.13 writes an empty-named pg_config with "[]" ranks on subgroup members
    assert all(info.ranks is None for info in dump.pg_config.values())
    if rank == 1:
        assert last.output_sizes == ((2, 8),)


@pytest.mark.parametrize("kind", ["json", "pickle"])
@pytest.mark.parametrize("rank", [0, 1])
def test_real_gloo_hang_dumps(kind: str, rank: int) -> None:
    _check_hang_dump(DATA / f"fr_{kind}_{rank}", rank)


def test_pickle_has_frames_json_has_none() -> None:
    pickled = load_fr_file(DATA / "fr_pickle_1", 1)
    as_json = load_fr_file(DATA / "fr_json_1", 1)
    assert as_json.frames_by_record == {}
    frames = pickled.frames_by_record[4]
    assert frames[0].function == "all_gather"
    assert "distributed_c10d.py" in frames[0].filename
    assert any(f.filename.endswith("make_fr_fixtures.py") and f.function == "main" for f in frames)
    # the same collectives whatever the encoding (pickle has None for unset times, JSON 0)
    assert [c.op for c in pickled.collectives] == [c.op for c in as_json.collectives]
    assert [c.state for c in pickled.collectives] == [c.state for c in as_json.collectives]


def test_unknown_rank_is_minus_one() -> None:
    dump = load_fr_file(DATA / "fr_json_0")
    assert dump.rank is None
    assert {c.rank for c in dump.collectives} == {UNKNOWN_RANK}


@pytest.mark.slow
def test_live_torchrun_dump(tmp_path: Path) -> None:
    """Produce dumps from a real hung 2-rank gloo job and parse them."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         str(DATA / "make_fr_fixtures.py"), str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=120)
    finally:
        kill_tree(proc.pid)
        proc.wait()
    assert proc.returncode == 0, out[-2000:]
    for rank in (0, 1):
        _check_hang_dump(tmp_path / f"fr_json_{rank}", rank)
        _check_hang_dump(tmp_path / f"fr_pickle_{rank}", rank)


def _nccl_entry(**over: object) -> dict[str, object]:
    entry: dict[str, object] = {
        "record_id": 7, "pg_id": 2, "process_group": ["2", "tp_group"], "collective_seq_id": 0,
        "p2p_seq_id": 3, "op_id": 9, "profiling_name": "nccl:send 0->1", "time_created_ns": 1_700_000_000_000,
        "input_sizes": [[16, 4]], "input_dtypes": ["BFloat16"], "output_sizes": [[16, 4]],
        "output_dtypes": ["BFloat16"], "state": "started", "time_discovered_started_ns": 1,
        "time_discovered_completed_ns": None, "retired": False, "timeout_ms": 600000, "is_p2p": True,
        "duration_ms": 1.5,
    }
    entry.update(over)
    return entry


def test_nccl_p2p_and_states() -> None:
    data = {
        "version": "2.10", "pg_config": {"2": {"name": "2", "desc": "tp_group", "ranks": "[0, 1, 2, 3]"}},
        "pg_status": {"2": {"last_enqueued_collective": 4, "last_started_collective": 3,
                            "last_completed_collective": -1}},
        "entries": [
            _nccl_entry(),
            _nccl_entry(record_id=8, profiling_name="nccl:recv 0<-3", p2p_seq_id=4, state="scheduled",
                        time_discovered_started_ns=None),
            _nccl_entry(record_id=9, profiling_name="nccl:all_reduce", is_p2p=False, collective_seq_id=5,
                        state="completed", input_sizes=[[3], [5]], input_dtypes=["Float", "Float"]),
        ],
    }
    dump = parse_fr_json(data, 2, "mem")
    send, recv, allreduce = dump.collectives
    assert (send.op, send.is_p2p, send.seq, send.peer, send.count, send.dtype) == ("send", True, 3, 1, 64, "bfloat16")
    assert send.state is CollectiveState.IN_FLIGHT
    assert (recv.op, recv.peer, recv.seq, recv.state) == ("recv", 3, 4, CollectiveState.SCHEDULED)
    assert (allreduce.op, allreduce.seq, allreduce.count, allreduce.state) == (
        "all_reduce", 5, 8, CollectiveState.COMPLETED)
    assert dump.pg_config["2"].ranks == (0, 1, 2, 3)
    assert dump.pg_status["2"].last_completed is None  # -1 means none
    assert dump.entries[0].duration_ms == 1.5
    assert send.pg_name == "tp_group"


def test_odd_entries_are_reported_not_raised() -> None:
    data = {"version": "9.9", "entries": [1, "x", {"profiling_name": 5, "input_sizes": "bad"},
                                          {"collective_seq_id": "nan", "state": None}]}
    dump = parse_fr_json(data, 0, "odd")
    assert dump.problems[0] == "unknown format version '9.9', read as 2.x"
    assert len(dump.problems) == 3
    assert len(dump.collectives) == 2
    assert parse_fr_json({"version": "2.4", "entries": "nope"}, 0, "x").problems == ("entries is not a list",)
    assert parse_fr_json([], 0, "x").problems  # type: ignore[arg-type]


class _Evil:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("touch /tmp/triage_pwned_by_pickle",))


def test_restricted_unpickler_refuses_code(tmp_path: Path) -> None:
    path = tmp_path / "evil_rank_0"
    path.write_bytes(pickle.dumps({"version": "2.10", "entries": [_Evil()]}))
    with pytest.raises(InputError) as err:
        load_fr_file(path, 0)
    assert str(path) in err.value.message
    assert "refus" in err.value.message
    assert not Path("/tmp/triage_pwned_by_pickle").exists()
    with pytest.raises(pickle.UnpicklingError):
        safe_unpickle(pickle.dumps(Path("/x")))
    for evil in (eval, exec, getattr, __import__, subprocess.Popen, os.system, open):
        with pytest.raises(pickle.UnpicklingError):
            safe_unpickle(pickle.dumps(evil))
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):  # old protocols name set/bytes by globals
        data = {"a": [1, 2.5, None, True, "s", b"by\xfftes", (3, 4), {5}, frozenset({6}), bytearray(b"x")]}
        assert safe_unpickle(pickle.dumps(data, protocol=proto)) == data
    # plain containers and scalars are fine, including sets/bytes/tuples
    assert safe_unpickle(pickle.dumps({"a": (1, 2.5, None, True, b"x", {3})})) == {"a": (1, 2.5, None, True, b"x", {3})}


@pytest.mark.parametrize("content", [
    b"", b"   \n", b"\x80\x04\x95", b"garbage that is no dump", b'{"version": "2.10", "entries": [',
    b"[1, 2, 3]", b"\x80\x04K\x01.", b"\x00\x01\x02",
])
def test_bad_files_raise_input_error_naming_the_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "nccl_trace_rank_3"
    path.write_bytes(content)
    with pytest.raises(InputError) as err:
        load_fr_file(path, 3)
    assert str(path) in err.value.message
    assert "\n" not in err.value.one_line()


def test_truncated_real_dumps(tmp_path: Path) -> None:
    for name in ("fr_pickle_0", "fr_json_0"):
        data = (DATA / name).read_bytes()
        for cut in (1, 10, len(data) // 2, len(data) - 1):
            path = tmp_path / f"{name}_{cut}"
            path.write_bytes(data[:cut])
            with pytest.raises(InputError):
                load_fr_file(path, 0)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        load_fr_file(tmp_path / "nope", 0)
    assert "nope" in err.value.message


def test_json_and_pickle_told_apart_by_content() -> None:
    json_bytes = (DATA / "fr_json_0").read_bytes()
    assert decode_fr_bytes(b"  \n" + json_bytes, "x")["version"] == "2.10"
    assert decode_fr_bytes((DATA / "fr_pickle_0").read_bytes(), "x")["version"] == "2.10"
    assert json.loads(json_bytes)["version"] == "2.10"


@pytest.mark.parametrize(("name", "prefix", "rank"), [
    ("nccl_trace_rank_3", "nccl_trace_rank_", 3), ("nccl_trace_rank_12.json", "nccl_trace_rank_", 12),
    ("/dumps/fr_7.pkl", "fr_", 7), ("other_3", "nccl_trace_rank_", None), ("nccl_trace_rank_x", "nccl_trace_rank_", None),
    ("dump-rank-5", "", 5), ("/tmp/fr/nccl_trace_rank_2", "/tmp/fr/nccl_trace_rank_", 2), ("dump", "", None), ("nccl_trace_rank_", "nccl_trace_rank_", None),
])
def test_rank_from_filename(name: str, prefix: str, rank: int | None) -> None:
    assert rank_from_filename(name, prefix) == rank


def test_member_lists_are_parsed_once_and_shared() -> None:
    first = parse_fr_json(fr_dump(0, 64, 3), 0, "a").pg_config["0"].ranks
    second = parse_fr_json(fr_dump(1, 64, 3), 1, "b").pg_config["0"].ranks
    assert first == tuple(range(64)) and first is second


@pytest.mark.parametrize("name", ["fr_pickle_0", "fr_pickle_1", "fr_json_0", "fr_json_1"])
def test_compact_parse_of_real_dumps_matches_the_full_parse(name: str) -> None:
    """The fast path reads real gloo dumps exactly as parse_fr_json does: same histories, and the
    kept Collectives are the full parse's own."""
    data = decode_fr_bytes((DATA / name).read_bytes(), name)
    full = parse_fr_json(data, 0, name)
    compact = parse_fr_compact(data, 0, name)
    expected = {pg: history_of(table) for pg, table in index_by_pg(full.collectives).items()}
    assert dict(compact.histories) == expected and expected
    assert set(compact.collectives) <= set(full.collectives)
    assert compact.problems == full.problems and compact.pg_config == full.pg_config
