"""exit.json's ``fr_state`` says whether the Flight Recorder recorded any collective, read off the dump's
``"entries": [`` without parsing the dump: at exit, a full parse of a 20,000-entry dump (9.4 MB) held the GIL
another 0.3-0.7 s after the dump itself (bench/bench_exit_dump.py). The real dump at exit of a gloo rank:
tests/launch/test_flight_fallback.py and bench/bench_exit_dump.py."""

from __future__ import annotations

import json

import pytest

from triage.worker.flight import has_entries

ENTRY = {"record_id": 0, "pg_id": 0, "collective_seq_id": 1, "profiling_name": "gloo:all_reduce",
         "description": 'a "entries": [] text inside a string', "state": "scheduled"}


@pytest.mark.parametrize("doc, expected", [
    ({"version": "2.10", "pg_config": {}, "pg_status": {}, "entries": [ENTRY]}, True),
    ({"version": "2.10", "pg_config": {}, "pg_status": {}, "entries": []}, False),
    ({"version": "2.10", "pg_config": {"0": {"desc": '"entries": [1]'}}, "entries": []}, False),
    ({"version": "2.10", "pg_config": {}}, False),
    ({"entries": [ENTRY, ENTRY]}, True),
])
def test_has_entries_agrees_with_a_full_parse(doc: dict[str, object], expected: bool) -> None:
    for indent in (None, 2):
        data = json.dumps(doc, indent=indent).encode()
        assert has_entries(data) is expected
        assert has_entries(data) is bool(json.loads(data).get("entries"))


def test_nothing_or_no_json_has_no_entries() -> None:
    assert not has_entries(None) and not has_entries(b"") and not has_entries(b'"entries"')
    assert not has_entries(b'{"entries": null}')
