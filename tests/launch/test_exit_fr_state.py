"""exit.json's ``fr_state`` says whether the Flight Recorder recorded any collective, read off the dump's
``"entries": [`` without parsing the dump: at exit, a full parse of a 20,000-entry dump (9.4 MB) held the GIL
another 0.3-0.7 s after the dump itself (bench/bench_exit_dump.py). The real dump at exit of a gloo rank:
tests/launch/test_flight_fallback.py and bench/bench_exit_dump.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
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


def test_a_rank_that_destroyed_its_group_before_any_collective_says_so_in_plain_words(tmp_path: Path) -> None:
    """A real rank (the bootstrap, torch, gloo) that destroys its process group before any collective: no backend is
    left to name, so the record says none ('recorded no collective', never 'no this backend collective')."""
    program = tmp_path / "no_collective.py"
    program.write_text("import torch.distributed as dist\n"
                       "dist.init_process_group('gloo', init_method='tcp://127.0.0.1:0', rank=0, world_size=1)\n"
                       "dist.destroy_process_group()\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "triage" / "worker" / "bootstrap"), "TRIAGE_RUN_DIR": str(tmp_path),
           "TRIAGE_RANK_VARS": "RANK", "RANK": "0", "TRIAGE_HOST": "h", "TRIAGE_JOB_ID": "fr-state"}
    env.pop("TRIAGE_WORKER_PID", None)
    done = subprocess.run([sys.executable, str(program)], env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    records = list(tmp_path.glob("*/ranks/0/exit.json"))
    assert len(records) == 1, records
    record = json.loads(records[0].read_text())
    assert record["fr_state"].startswith("unavailable: torch "), record
    assert record["fr_state"].endswith("'s Flight Recorder recorded no collective"), record
