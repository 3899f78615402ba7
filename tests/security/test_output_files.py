"""§2: every file a user names (``report -o``, ``postmortem -o``) is written by one safe writer.

The attacker (uid 65534) plants a symlink at the very name triage's ``next:`` line suggests
(``triage-report.html``), or creates the file first to read root's report. Root's triage must leave
the symlink's target untouched, never write into the attacker's file, and create new files 0600.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.security.sec_util import NOBODY, attacker_dir, can_drop_privileges, triage
from triage.errors import InputError
from triage.private_files import user_output

pytestmark = pytest.mark.skipif(not can_drop_privileges(), reason="needs root and setpriv")

LOG = "[rank0]: RuntimeError: boom\n"


def _job(evil: Path) -> Path:
    log = evil / "job.log"
    log.write_text(LOG)
    os.chown(log, NOBODY, NOBODY)
    return log


def _one_error_line(stderr: str) -> None:
    errors = [line for line in stderr.splitlines() if line.startswith("triage: error:")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr


@pytest.mark.parametrize("fmt", ["html", "text", "json"])
def test_symlink_at_the_suggested_name_is_not_followed(tmp_path: Path, fmt: str) -> None:
    victim = tmp_path / "shadow"
    victim.write_text("root:secret\n")
    with attacker_dir() as evil:
        log = _job(evil)
        out = evil / "triage-report.html"
        out.symlink_to(victim)
        os.lchown(out, NOBODY, NOBODY)
        run = triage("report", str(log), "--format", fmt, "-o", str(out), cwd=evil)
        assert run.returncode == 2, (run.returncode, run.stderr)
        _one_error_line(run.stderr)
        assert "uid 65534" in run.stderr
        assert victim.read_text() == "root:secret\n"
        assert out.is_symlink()


def test_postmortem_output_through_a_symlink_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "passwd"
    victim.write_text("untouched\n")
    with attacker_dir() as evil:
        core = evil / "core"
        core.write_bytes(b"\x7fELF" + b"\0" * 60)
        out = evil / "report.txt"
        out.symlink_to(victim)
        os.lchown(out, NOBODY, NOBODY)
        run = triage("postmortem", str(core), "-o", str(out))
        assert victim.read_text() == "untouched\n"
        assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr


def test_file_the_attacker_created_first_is_not_written_into() -> None:
    with attacker_dir() as evil:
        log = _job(evil)
        out = evil / "report.txt"
        out.write_text("")
        os.chown(out, NOBODY, NOBODY)
        out.chmod(0o666)
        run = triage("report", str(log), "-o", str(out))
        assert run.returncode == 2, run.stderr
        _one_error_line(run.stderr)
        assert out.read_text() == ""


def test_new_output_files_are_0600_and_replace_our_own(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text(LOG)
    out = tmp_path / "report.html"
    for _ in range(2):                       # the second run replaces the file root wrote first
        run = triage("report", str(log), "--format", "html", "-o", str(out))
        assert run.returncode in (0, 1), run.stderr
        assert stat.S_IMODE(out.lstat().st_mode) == 0o600 and out.stat().st_uid == os.geteuid()
        assert "<html" in out.read_text().lower()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.log", "report.html"]   # no temporary left


def test_world_writable_directory_without_sticky_bit_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(InputError, match="world-writable"), user_output(shared / "out.txt") as handle:
        handle.write("x")
    assert list(shared.iterdir()) == []
    with attacker_dir() as evil:              # the attacker's own directory: written by rename, 0600
        with user_output(evil / "out.txt") as handle:
            handle.write("report\n")
        assert (evil / "out.txt").read_text() == "report\n"
        assert stat.S_IMODE((evil / "out.txt").stat().st_mode) == 0o600


def _still_a_char_device(path: Path) -> bool:
    return stat.S_ISCHR(os.lstat(path).st_mode)


@pytest.mark.parametrize("command", ["report", "postmortem"])
def test_a_device_is_written_into_never_replaced(tmp_path: Path, command: str) -> None:
    """Root's ``-o /dev/null`` once renamed a 0600 file over /dev/null, for the whole machine (sshd
    could no longer daemonize). Here on a /dev/null of its own (the same device, made with mknod)."""
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    target = tmp_path / "job.log"
    target.write_text(LOG)
    if command == "postmortem":
        target = tmp_path / "core"
        target.write_bytes(b"\x7fELF" + b"\0" * 60)
    run = triage(command, str(target), "-o", str(null))
    assert "Traceback" not in run.stderr and run.returncode in (0, 1, 2), run.stderr
    assert _still_a_char_device(null), "the device was replaced by a file"
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".null.")], "a temporary file was left"


def test_the_process_own_streams_by_name(tmp_path: Path) -> None:
    """``-o /dev/fd/1`` and ``-o /proc/self/fd/1``: the report goes to the process's standard output
    (/dev/stdout is the same link; it is not run here: were the writer to regress, the test would
    replace the machine's /dev/stdout, while procfs refuses a rename)."""
    log = tmp_path / "job.log"
    log.write_text(LOG)
    for name in ("/dev/fd/1", "/proc/self/fd/1"):
        run = triage("report", str(log), "--format", "json", "-o", name)
        assert run.returncode == 1 and '"kind": "exception"' in run.stdout, (name, run.stdout[:300], run.stderr)


def test_a_fifo_of_ones_own_is_written_into_and_one_planted_by_another_is_refused(tmp_path: Path) -> None:
    import threading

    log = tmp_path / "job.log"
    log.write_text(LOG)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo, 0o600)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    run = triage("report", str(log), "--format", "json", "-o", str(fifo))
    reader.join(timeout=120)
    assert run.returncode == 1 and got and '"kind": "exception"' in got[0], (run.stderr, got)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    with attacker_dir() as evil:
        planted = evil / "triage-report.json"
        os.mkfifo(planted, 0o666)
        os.chown(planted, NOBODY, NOBODY)
        run = triage("report", str(log), "--format", "json", "-o", str(planted))
        assert run.returncode == 2 and "a pipe that uid 65534 created" in run.stderr, run.stderr
        _one_error_line(run.stderr)
        assert stat.S_ISFIFO(os.lstat(planted).st_mode)
