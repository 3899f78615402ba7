"""Large dump directories keep per rank only the last collectives plus a compact history
(triage.parsing.flight_recorder.compact): the report must be the one the full parse gives."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.synthetic import fr_dump, write_dumps
from triage.analysis.analyze import analyze
from triage.load import fr_files as load_files
from triage.load.inputs import load_inputs
from triage.model import Report
from triage.parsing.flight_recorder.compact import TAIL, parse_fr_compact
from triage.parsing.flight_recorder.parse import parse_fr_json


def _both(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Report, Report]:
    monkeypatch.setattr(load_files, "COMPACT_MIN_FILES", 10**9)
    full = analyze(load_inputs([root]))
    assert not any(r.histories for r in load_inputs([root]).ranks)
    monkeypatch.setattr(load_files, "COMPACT_MIN_FILES", 1)
    evidence = load_inputs([root])
    assert all(r.histories for r in evidence.ranks)
    return full, analyze(evidence)


def _same(full: Report, compact: Report) -> None:
    assert compact.to_json() == full.to_json()
    assert compact.verdict == full.verdict


def _write(root: Path, dumps: list[dict[str, Any]]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for rank, data in enumerate(dumps):
        (root / f"nccl_trace_rank_{rank}").write_bytes(pickle.dumps(data))


def test_hang_at_the_end_matches_full_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_dumps(tmp_path, 6, 300, culprit=4, mismatch_at=295, fmt="pickle")
    full, compact = _both(tmp_path, monkeypatch)
    _same(full, compact)
    assert compact.verdict.culprit_ranks == (4,)


def test_tp_subgroups_match_full_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_dumps(tmp_path, 16, 400, culprit=9, mismatch_at=195, tp=8, fmt="json")
    _same(*_both(tmp_path, monkeypatch))


def test_early_size_mismatch_outside_the_kept_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dumps = [fr_dump(rank, 5, 400) for rank in range(5)]
    odd = dumps[2]["entries"][19]
    assert odd["collective_seq_id"] == 20
    odd["input_sizes"] = odd["output_sizes"] = [[512]]
    _write(tmp_path, dumps)
    full, compact = _both(tmp_path, monkeypatch)
    assert 400 - TAIL > 20
    assert compact.verdict.culprit_ranks == (2,) and compact.verdict.seq == 20
    assert compact.verdict.summary == full.verdict.summary
    assert compact.findings[0].detail == full.findings[0].detail


def test_gloo_style_unretired_entries_and_odd_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries the fast path does not take (string seq, p2p, junk) still count, as in the full parse."""
    dumps = [fr_dump(rank, 4, 200, culprit=1, mismatch_at=150) for rank in range(4)]
    for data in dumps:
        for entry in data["entries"]:
            entry["profiling_name"] = entry["profiling_name"].replace("nccl:", "gloo:")
            entry["retired"] = entry["state"] == "completed" and entry["collective_seq_id"] < 120
            entry["state"] = "scheduled"
        data["entries"][3]["collective_seq_id"] = "4"
        data["entries"].append("junk")
    _write(tmp_path, dumps)
    full, compact = _both(tmp_path, monkeypatch)
    _same(full, compact)
    assert "not an object" in " ".join(compact.extra["skipped"])


def test_compact_dump_keeps_tail_and_whole_history() -> None:
    data = fr_dump(0, 2, 500)
    full = parse_fr_json(data, 0, "x")
    compact = parse_fr_compact(data, 0, "x")
    assert compact.problems == full.problems and compact.pg_config == full.pg_config
    assert len(compact.collectives) < len(full.collectives) // 4
    assert compact.collectives == full.collectives[-len(compact.collectives):]
    (pg, history), = compact.histories
    assert pg == "0" and tuple(history.seqs) == tuple(range(1, 501))
    assert {history.table[i] for i in history.sig_ids} == {(("all_reduce", 1024, "float32", None),)}
    assert len(pickle.dumps(history)) < 800   # a range and one byte per seq, not 1,000 pickled ints
