"""`triage top`'s refreshes reread only what changed: a changed, replaced or re-linked file is read
again (through open_regular's checks), an unchanged one is not opened. And loads_json's depth bound
without the walk where the brackets cannot reach it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.security.sec_util import NOBODY, attacker_dir, can_drop_privileges
from tests.stragglers.test_top import NOW, beat, every_state, rank_files
from triage.regular_files import MAX_JSON_DEPTH, loads_json
from triage.top.snapshot import LagCache, TopState, take_snapshot


def _states(run: Path, cache: LagCache | None) -> tuple[dict[int, TopState], LagCache, tuple[str, ...]]:
    snapshot, cache = take_snapshot(run, NOW, cache=cache)
    return {line.rank: line.state for line in snapshot.ranks}, cache, snapshot.problems


def _replace(path: Path, text: str) -> None:
    tmp = path.with_name(".tmp-" + path.name)
    tmp.write_text(text)
    os.replace(tmp, path)


def test_an_unchanged_run_directory_is_not_read_again(tmp_path: Path) -> None:
    every_state(tmp_path)
    first, cache, _ = _states(tmp_path, None)
    reads = cache.files.reads
    assert reads >= 8
    again, cache, _ = _states(tmp_path, cache)
    assert again == first
    assert cache.files.reads == reads            # nothing opened


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    every_state(tmp_path)
    states, cache, _ = _states(tmp_path, None)
    assert states[0] is TopState.RUNNING and states[4] is TopState.EXITED_OK
    reads = cache.files.reads
    hb = tmp_path / "node0" / "ranks" / "0" / "heartbeat.json"
    _replace(hb, json.dumps(beat(0.5, seq=42, since=NOW - 100.0, pending=True)))     # a new file (rename)
    exit_json = tmp_path / "node1" / "ranks" / "4" / "exit.json"
    text = exit_json.read_text().replace('"exit_code": 0', '"exit_code": 3')           # same size, in place
    stamp = exit_json.stat().st_mtime_ns
    with exit_json.open("r+") as handle:
        handle.write(text)
    os.utime(exit_json, ns=(stamp + 1_000_000, stamp + 1_000_000))
    states, cache, _ = _states(tmp_path, cache)
    assert states[0] is TopState.STUCK
    assert states[4] is TopState.EXITED_ERROR
    assert cache.files.reads == reads + 2        # those two only
    (tmp_path / "node1" / "ranks" / "4" / "exit.json").unlink()      # a removed file is forgotten
    states, cache, _ = _states(tmp_path, cache)
    assert states[4] is TopState.RUNNING          # its heartbeat (9 s old) again


def test_a_file_replaced_by_a_link_or_a_fifo_is_not_served_from_the_cache(tmp_path: Path) -> None:
    every_state(tmp_path)
    _, cache, _ = _states(tmp_path, None)
    rdir = tmp_path / "node0" / "ranks" / "0"
    other = tmp_path / "elsewhere.json"
    other.write_text(json.dumps(beat(100.0)))
    (rdir / "heartbeat.json").unlink()
    (rdir / "heartbeat.json").symlink_to(other)          # in our own directory: followed, as before
    states, cache, _ = _states(tmp_path, cache)
    assert states[0] is TopState.NO_HEARTBEAT
    other.write_text(json.dumps(beat(0.5)))               # the link's target changes, the link does not
    states, cache, _ = _states(tmp_path, cache)
    assert states[0] is TopState.RUNNING                  # a link is never cached
    (rdir / "heartbeat.json").unlink()
    os.mkfifo(rdir / "heartbeat.json")                    # never blocks, never served from the cache
    states, cache, problems = _states(tmp_path, cache)
    assert states[0] is TopState.STARTING
    assert any("heartbeat.json: cannot read" in p for p in problems)


@pytest.mark.skipif(not can_drop_privileges(), reason="needs root and setpriv")
def test_a_cached_file_replaced_by_a_planted_link_is_refused(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir(mode=0o700)
    secret = vault / "exit.json"
    secret.write_text(json.dumps({"how": "exception", "exit_code": 1, "exception": {"type": "RuntimeError"}}))
    secret.chmod(0o600)
    with attacker_dir() as evil:
        run = evil / "run"
        run.mkdir()
        rank_files(run, 0, beat=beat(0.5), exit_info={"how": "exit", "exit_code": 0})
        for path in [run, *run.rglob("*")]:
            os.lchown(path, NOBODY, NOBODY)
        states, cache, _ = _states(run, None)
        assert states[0] is TopState.EXITED_OK
        planted = run / "node0" / "ranks" / "0" / "exit.json"
        planted.unlink()
        planted.symlink_to(secret)
        os.lchown(planted, NOBODY, NOBODY)
        states, cache, problems = _states(run, cache)
        assert states[0] is TopState.RUNNING              # neither the cached exit nor root's file
        assert any("exit.json: cannot read" in p and "leads out of" in p for p in problems), problems


def test_loads_json_bounds_depth_with_or_without_the_walk() -> None:
    deep = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(ValueError, match="nested deeper"):
        loads_json(deep)
    with pytest.raises(ValueError, match="nested deeper"):
        loads_json(deep.encode())
    assert loads_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None
    shallow = json.dumps({"text": "[{" * 500, "items": [[1], [2], {"a": [3]}]})      # brackets in strings
    assert loads_json(shallow)["items"][2] == {"a": [3]}
    assert loads_json(shallow.encode())["text"].startswith("[{")


def test_a_refresh_after_a_heartbeat_rewrite_sees_the_new_time(tmp_path: Path) -> None:
    rank_files(tmp_path, 0, beat=beat(0.5))
    (tmp_path / "run.json").write_text(json.dumps({"layout": "triage.run/1"}))
    snapshot, cache = take_snapshot(tmp_path, NOW)
    assert snapshot.ranks[0].heartbeat_age_s == pytest.approx(0.5)
    hb = tmp_path / "node0" / "ranks" / "0" / "heartbeat.json"
    _replace(hb, json.dumps(beat(0.25)))     # within the same clock tick too: a new inode
    snapshot, cache = take_snapshot(tmp_path, NOW, cache=cache)
    assert snapshot.ranks[0].heartbeat_age_s == pytest.approx(0.25)
