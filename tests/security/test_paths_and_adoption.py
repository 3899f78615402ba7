"""§2: predictable /tmp paths, symlinks, foreign directories, and whose processes triage adopts.

Each attack is set up by uid 65534 (files it owns in /tmp) and then root runs the real CLI.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from tests.helpers.processes import running_program
from tests.security.sec_util import AS_NOBODY, NOBODY, attacker_dir, can_drop_privileges, triage
from triage.collectors.common import may_touch, write_private
from triage.errors import InputError
from triage.layout import short_hostname
from triage.private_files import UnsafeDirectoryError, directory_problem, make_private_dir

pytestmark = pytest.mark.skipif(not can_drop_privileges(), reason="needs root and setpriv")

QUICK = ("--strace-seconds", "0", "--collector-timeout", "20")


def _sleeper(tag: str) -> list[str]:
    return [sys.executable, "-c", f"import time; print('READY', flush=True); time.sleep(120)  # {tag}"]


def _one_line_error(run_stderr: str) -> None:
    assert "Traceback" not in run_stderr, run_stderr
    errors = [line for line in run_stderr.splitlines() if line.startswith("triage: error:")]
    assert len(errors) == 1, run_stderr


def test_node_side_collect_never_uses_a_predictable_tmp_tree(tmp_path: Path) -> None:
    """The old /tmp/triage-collect-node tree, pre-made by the attacker with a symlink to a root dir (in the
    temporary directory triage uses: the test session's TMPDIR, tests/conftest.py)."""
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    planted = Path(tempfile.gettempdir()) / "triage-collect-node"
    with attacker_dir() as evil:
        made = not (planted.exists() or planted.is_symlink())
        if made:                              # (another run may have left one: then it is only checked)
            os.symlink(evil, planted)
            os.lchown(planted, NOBODY, NOBODY)
        (evil / short_hostname()).mkdir()
        (evil / short_hostname() / "bundles").symlink_to(tmp_path)
        try:
            runs = []
            with running_program(_sleeper("p"), env={**os.environ, "RANK": "0"}) as proc:
                for _ in range(2):
                    run = triage("collect", "--node-side", "--pids", str(proc.pid), "--no-stream", *QUICK)
                    assert run.returncode == 0, run.stderr
                    runs.append(json.loads(run.stdout.strip().splitlines()[-1]))
            try:
                assert victim.read_text() == "precious\n" and sorted(p.name for p in tmp_path.iterdir()) == ["victim"]
                assert runs[0]["run_dir"] != runs[1]["run_dir"]
                for line in runs:
                    run_dir, bundle = Path(line["run_dir"]), Path(line["bundle"])
                    assert not bundle.is_relative_to(planted) and not bundle.resolve().is_relative_to(evil)
                    assert run_dir.name.startswith("triage-collect-node-")
                    assert run_dir.stat().st_uid == 0 and run_dir.stat().st_mode & 0o777 == 0o700
                    assert directory_problem(bundle) is None
            finally:
                for line in runs:
                    shutil.rmtree(line["run_dir"], ignore_errors=True)
        finally:
            if made:
                planted.unlink()


def test_out_dir_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    with attacker_dir() as evil, running_program(_sleeper("x")) as proc:
        run = triage("dump", "--pid", str(proc.pid), "--out", str(evil), *QUICK)
        assert run.returncode == 2, run.stderr
        _one_line_error(run.stderr)
        assert "belongs to uid 65534" in run.stderr
        assert list(evil.iterdir()) == []


def test_group_writable_and_symlinked_dirs_are_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o775)
    with pytest.raises(UnsafeDirectoryError, match="group- or world-writable"):
        make_private_dir(shared)
    with pytest.raises(UnsafeDirectoryError, match="group- or world-writable"):
        make_private_dir(shared / "run" / "bundles")       # nothing is created under it either
    assert not (shared / "run").exists()
    assert issubclass(UnsafeDirectoryError, InputError)
    with attacker_dir() as evil:
        link = evil / "run"
        link.symlink_to(tmp_path)
        os.lchown(link, NOBODY, NOBODY)
        with pytest.raises(UnsafeDirectoryError, match="symlink owned by uid 65534"):
            make_private_dir(link / "bundles")
        with pytest.raises(UnsafeDirectoryError, match="belongs to uid 65534"):
            make_private_dir(evil / "new-run")
    mine = make_private_dir(tmp_path / "a" / "b")
    assert mine.stat().st_mode & 0o777 == 0o700


def test_files_are_never_written_through_a_symlink(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    victim.chmod(0o644)
    out = make_private_dir(tmp_path / "bundle" / "rank-0")
    (out / "gdb.txt").symlink_to(victim)
    with pytest.raises(OSError):
        write_private(out / "gdb.txt", "overwritten")
    assert victim.read_text() == "precious\n" and victim.stat().st_mode & 0o777 == 0o644


def test_other_users_rank_processes_are_not_adopted_without_all_users(tmp_path: Path) -> None:
    tag = f"sec-adopt-{uuid.uuid4().hex}"
    env = {"RANK": "0", "PATH": "/usr/bin:/bin"}
    argv = [*AS_NOBODY, "/usr/bin/python3", "-c", f"import time; print('READY', flush=True); time.sleep(120)  # {tag}"]
    with running_program(argv, env=env, cwd="/") as proc:
        pid = proc.pid                       # setpriv execs: same pid
        assert os.stat(f"/proc/{pid}").st_uid == NOBODY
        assert not may_touch(pid) and may_touch(pid, all_users=True)
        run = triage("dump", "--match", tag, "--out", str(tmp_path / "a"), *QUICK)
        assert run.returncode == 2, run.stderr
        _one_line_error(run.stderr)
        assert "no Python process matches" in run.stderr
        run = triage("dump", "--pid", str(pid), "--out", str(tmp_path / "b"), *QUICK)
        assert run.returncode == 2 and "belongs to another user" in run.stderr, run.stderr
        _one_line_error(run.stderr)
        run = triage("collect", "--node-side", "--match", tag, "--no-stream", *QUICK)
        assert run.returncode == 0, run.stderr
        line = json.loads(run.stdout.strip().splitlines()[-1])
        manifest = json.loads((Path(line["bundle"]) / "manifest.json").read_text())
        assert manifest["ranks"] == []
        shutil.rmtree(line["run_dir"], ignore_errors=True)
        run = triage("dump", "--match", tag, "--all-users", "--gdb", "never", "--out", str(tmp_path / "c"), *QUICK)
        assert run.returncode == 0, run.stderr
        assert f"pid {pid}" in run.stderr


def test_a_foreign_triage_run_dir_declared_by_a_process_is_not_written(tmp_path: Path) -> None:
    tag = f"sec-rundir-{uuid.uuid4().hex}"
    with attacker_dir() as evil:
        (evil / "run.json").write_text(json.dumps({"layout": "triage.run/1", "job_id": "x"}))
        os.chown(evil / "run.json", NOBODY, NOBODY)
        env = {"RANK": "0", "PATH": "/usr/bin:/bin", "TRIAGE_RUN_DIR": str(evil)}
        argv = [*AS_NOBODY, "/usr/bin/python3", "-c",
                f"import time; print('READY', flush=True); time.sleep(120)  # {tag}"]
        with running_program(argv, env=env, cwd="/"):
            run = triage("collect", "--node-side", "--all-users", "--match", tag, "--no-stream", *QUICK)
        assert run.returncode == 0, run.stderr
        line = json.loads(run.stdout.strip().splitlines()[-1])
        try:
            assert not Path(line["bundle"]).is_relative_to(evil)
            assert sorted(p.name for p in evil.iterdir()) == ["run.json"]
            assert "not using the run directory" in run.stderr
        finally:
                shutil.rmtree(line["run_dir"], ignore_errors=True)
