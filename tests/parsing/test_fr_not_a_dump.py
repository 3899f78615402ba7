"""An object with none of a Flight Recorder dump's keys (``{}``, as a crashed writer or a stray file leaves)
is refused with a one-line error naming the file, never read as a dump of no entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.errors import InputError
from triage.parsing.flight_recorder.parse import load_fr_file


@pytest.mark.parametrize("content", [{}, {"rank": 3}, {"some": "other tool's json"}])
def test_an_object_that_is_no_dump_is_refused(tmp_path: Path, content: dict[str, object]) -> None:
    path = tmp_path / "fr-exit.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(InputError, match="not a Flight Recorder dump"):
        load_fr_file(path, 0)


def test_a_dump_with_no_entries_is_still_a_dump(tmp_path: Path) -> None:
    path = tmp_path / "fr-exit.json"
    path.write_text(json.dumps({"version": "2.4", "pg_config": {}, "entries": []}), encoding="utf-8")
    assert load_fr_file(path, 0).collectives == ()
