"""The heartbeat reads the pending collectives' entries off a Flight Recorder JSON dump's tail: the same
entries a whole parse finds, for real dumps and for dumps written another way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.worker.flight import _entries_parsed_whole, entries_from_tail

DATA = Path(__file__).parent / "data"


def _entry(pg: int, seq: int, **more: object) -> dict[str, object]:
    return {"collective_seq_id": seq, "is_p2p": False, "pg_id": pg, "profiling_name": "gloo:all_reduce", **more}


def _dump(entries: list[dict[str, object]], **more: object) -> bytes:
    return json.dumps({"comm_lib_version": "", "entries": entries, "pg_config": {}, "version": "2.10", **more},
                      separators=(",", ":")).encode()


@pytest.mark.parametrize("name", ["fr_json_0", "fr_json_1"])
def test_real_dumps_give_what_a_whole_parse_gives(name: str) -> None:
    data = (DATA / name).read_bytes()
    entries = json.loads(data)["entries"]
    wanted = sorted({(str(e["pg_id"]), int(e["collective_seq_id"])) for e in entries if not e["is_p2p"]})
    for pick in (wanted[-1:], wanted[:1], wanted):
        assert entries_from_tail(data, pick) == _entries_parsed_whole(data, pick)
        assert {(str(e["pg_id"]), e["collective_seq_id"]) for e in entries_from_tail(data, pick)} == set(pick)


def test_groups_interleave_p2p_is_skipped_and_strings_cannot_fake_an_entry() -> None:
    fake = '{"collective_seq_id":9,"pg_id":0}'
    entries = [_entry(0, s) for s in range(1, 6)] + [_entry(1, 1, thread_name=fake), _entry(0, 6, is_p2p=True),
                                                     _entry(1, 2), _entry(0, 7)]
    data = _dump(entries)
    assert fake.encode() not in data                 # inside a string its quotes are escaped
    found = entries_from_tail(data, [("0", 5), ("1", 1)])
    assert [(e["pg_id"], e["collective_seq_id"]) for e in found] == [(1, 1), (0, 5)]
    assert found[0]["thread_name"] == fake
    assert entries_from_tail(data, [("0", 6)]) == []  # only a p2p entry has that seq
    assert entries_from_tail(data, [("0", 9)]) == []  # newer than any: not in this dump
    assert entries_from_tail(data, [("2", 1)]) == []


def test_an_entry_written_with_other_keys_first_is_parsed_whole() -> None:
    entries = [{"pg_id": 0, "collective_seq_id": s, "is_p2p": False} for s in (1, 2)]
    data = json.dumps({"entries": entries}).encode()
    assert entries_from_tail(data, [("0", 2)]) == [entries[1]]


def test_a_large_entry_decodes_whole() -> None:
    big = _entry(0, 2, input_sizes=[[4096]] * 20000)
    data = _dump([_entry(0, 1), big])
    assert entries_from_tail(data, [("0", 2), ("0", 1)]) == [big, _entry(0, 1)]
