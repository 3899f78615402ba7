"""§6: bounded by size, not by trust. Tiny (or sparse) hostile inputs that name huge numbers, deep
nesting or endless lines: each is answered with exit 2 and one line on stderr, under a 4 GiB
address-space limit and a time bound, by every command that reads them (report, top, postmortem)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

LIMIT_S = 60.0          # generous for a loaded 2-core machine; the answer itself takes well under 10 s
ADDRESS_SPACE = 4 << 30
GOLDEN = REPO / "tests" / "golden" / "stuck_outside" / "run"


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _triage(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIAGE_")}
    try:
        return subprocess.run([sys.executable, "-m", "triage", *args], capture_output=True, text=True,
                              timeout=LIMIT_S, cwd=REPO, env=env, stdin=subprocess.DEVNULL, check=False,
                              preexec_fn=_limit)
    except subprocess.TimeoutExpired:
        pytest.fail(f"triage {' '.join(args)}: no answer in {LIMIT_S:.0f} s")


def _refused(run: subprocess.CompletedProcess[str], *words: str) -> None:
    lines = [line for line in run.stderr.splitlines() if line.startswith("triage: error:")]
    assert run.returncode == 2, (run.returncode, run.stderr[-800:])
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr[-800:]
    for word in words:
        assert word in lines[0], lines[0]


def _skipped_and_named(run: subprocess.CompletedProcess[str], name: str) -> None:
    """One bad file inside a run directory: skipped and named; the rest of the report is written."""
    assert run.returncode in (1, 2), (run.returncode, run.stderr[-800:])
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr[-800:]
    assert name in run.stdout + run.stderr


def _fr_dump() -> dict[str, object]:
    data = json.loads(next(GOLDEN.rglob("fr.json")).read_text())
    assert isinstance(data, dict)
    return data


def test_tiny_fr_file_naming_a_huge_rank(tmp_path: Path) -> None:
    dump = tmp_path / "nccl_trace_rank_99999999"
    dump.write_text(json.dumps(_fr_dump()))
    assert dump.stat().st_size < 64 * 1024
    _refused(_triage("report", str(dump)), "99999999")


def test_fr_dump_naming_a_huge_group(tmp_path: Path) -> None:
    data = _fr_dump()
    for key in ("pg_config", "pg_status"):
        data.pop(key, None)
    data["pg_config"] = {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 99999999]"}}
    dump = tmp_path / "nccl_trace_rank_0"
    dump.write_text(json.dumps(data))
    run = _triage("report", str(dump))
    assert run.returncode in (1, 2) and "Traceback" not in run.stderr, run.stderr[-800:]


def test_worker_json_naming_a_huge_world_size(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(GOLDEN, run_dir)
    worker = next(run_dir.rglob("worker.json"))
    data = json.loads(worker.read_text())
    data["world_size"] = 99_999_999
    worker.write_text(json.dumps(data))
    run = _triage("report", str(run_dir))
    assert run.returncode in (1, 2) and "Traceback" not in run.stderr, run.stderr[-800:]


def test_sparse_8_gib_fr_json_is_refused_by_size(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(GOLDEN, run_dir)
    fr = next(run_dir.rglob("fr.json"))
    with open(fr, "r+b") as handle:
        handle.truncate(8 << 30)
    _skipped_and_named(_triage("report", str(run_dir)), "fr.json")
    dump = tmp_path / "nccl_trace_rank_0"
    os.link(fr, dump)
    _refused(_triage("report", str(dump)), "too large")


@pytest.mark.parametrize("where", ["fr", "worker", "manifest"])
def test_deep_json_is_refused(tmp_path: Path, where: str) -> None:
    deep = "[" * 200_000 + "]" * 200_000
    run_dir = tmp_path / "run"
    shutil.copytree(GOLDEN, run_dir)
    name = {"fr": "fr.json", "worker": "worker.json", "manifest": "manifest.json"}[where]
    target = next(run_dir.rglob(name))
    target.write_text('{"a": ' + deep + "}")
    _skipped_and_named(_triage("report", str(run_dir)), name)
    if where == "fr":
        dump = tmp_path / "nccl_trace_rank_0"
        dump.write_text('{"version": "2.4", "entries": ' + deep + "}")
        _refused(_triage("report", str(dump)), "nccl_trace_rank_0")


def test_top_on_deep_json(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(GOLDEN, run_dir)
    for worker in run_dir.rglob("worker.json"):
        worker.write_text('{"a": ' + "[" * 200_000 + "]" * 200_000 + "}")
    run = _triage("top", str(run_dir), "--once")
    assert run.returncode in (0, 1, 2) and "Traceback" not in run.stderr, run.stderr[-800:]
    assert "internal error" not in run.stderr


def test_rank_directory_named_a_unicode_digit(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(GOLDEN, run_dir)
    ranks = next(run_dir.rglob("ranks"))
    shutil.copytree(next(ranks.iterdir()), ranks / "\u00b2")
    run = _triage("report", str(run_dir))
    assert run.returncode in (1, 2) and "Traceback" not in run.stderr, run.stderr[-800:]
    run = _triage("top", str(run_dir), "--once")
    assert run.returncode in (0, 1, 2) and "Traceback" not in run.stderr, run.stderr[-800:]


def test_a_long_single_line_is_capped_while_read(tmp_path: Path) -> None:
    """A log of one line of 600 MB (the 2 GB attack, scaled to the test machine's disk): read under
    the 4 GiB address-space limit, never a MemoryError."""
    log = tmp_path / "job.log"
    chunk = b"a" * (1 << 20)
    with open(log, "wb") as handle:
        handle.write(b"[rank0]: RuntimeError: boom\n")
        handle.writelines(chunk for _ in range(600))
        handle.write(b"\n")
    run = _triage("report", str(log))
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr[-800:]
    assert "RuntimeError: boom" in run.stdout


def test_a_15_mb_line_in_a_small_log_is_cut(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_bytes(b"[rank0]: RuntimeError: boom\n" + b"x" * (15 << 20) + b"\n[rank1]: step 3\n")
    run = _triage("report", str(log))
    assert run.returncode == 1 and "RuntimeError: boom" in run.stdout, run.stderr[-800:]
