"""§5: one terminal sanitizer (triage.console) for everything triage prints.

Escape sequences are planted where an attacker (uid 65534) controls text that triage prints: a
directory name that a core's NT_FILE note names (postmortem), a host name in worker.json (top), a
log file name (report's ``next:`` line), a bad option value (every command's error line). With
colour off, no ESC, BEL or CSI byte may reach either stream.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.security.sec_util import NOBODY, SYSTEM_PYTHON, as_nobody, attacker_dir, can_drop_privileges, triage
from triage.console import safe_stream, terminal_safe, visible

EVIL = "\x1b]0;pwned\x07\x1b[2J\x1b[31m\x9b1m"
NO_COLOUR = {"NO_COLOR": "1", "TERM": "dumb"}


def _clean(*runs: object) -> None:
    for run in runs:
        for text in (run.stdout, run.stderr):  # type: ignore[attr-defined]
            assert not any(c in text for c in "\x1b\x07\x9b"), repr(text[-1500:])


def test_the_sanitizer_itself() -> None:
    assert visible(EVIL) == "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31m\\x9b1m"
    assert visible("a\tb\nc") == "a\tb\nc"
    assert terminal_safe({"host": [EVIL]}) == {"host": [visible(EVIL)]}

    class Sink:
        text = ""

        def write(self, text: str) -> None:
            self.text += text

    sink = Sink()
    safe_stream(sink).write(EVIL)  # type: ignore[arg-type]
    assert sink.text == visible(EVIL)


def test_top_host_column(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(REPO / "tests" / "golden" / "stuck_outside" / "run", run_dir)
    for worker in run_dir.rglob("worker.json"):
        data = json.loads(worker.read_text())
        data["host"] = f"node{EVIL}"
        worker.write_text(json.dumps(data))
    run = triage("top", str(run_dir), "--once", env=NO_COLOUR)
    assert "pwned" in run.stdout, run.stdout
    _clean(run)


def test_report_next_line_and_error_lines(tmp_path: Path) -> None:
    log = tmp_path / f"job{EVIL}.log"
    log.write_text("[rank0]: RuntimeError: boom\n")
    report = triage("report", str(log), env=NO_COLOUR)
    assert "next:" in report.stderr
    missing = triage("report", str(tmp_path / f"none{EVIL}"), env=NO_COLOUR)
    assert missing.returncode == 2
    bad = [triage(*args, env=NO_COLOUR) for args in (("check", "--timeout", EVIL), ("top", "--interval", EVIL),
                                                     ("dump", "--pid", EVIL), ("postmortem", str(log) + EVIL))]
    assert all(run.returncode == 2 for run in bad), [(r.returncode, r.stderr) for r in bad]
    _clean(report, missing, *bad)


@pytest.mark.skipif(not can_drop_privileges() or not SYSTEM_PYTHON.is_file(), reason="needs root, setpriv, python3.11")
def test_postmortem_of_a_core_whose_files_have_escapes_in_their_names() -> None:
    with attacker_dir() as evil:
        where = evil / f"bin{EVIL}"
        where.mkdir()
        exe = where / "python3.11"
        shutil.copy2(SYSTEM_PYTHON, exe)
        for path in (where, exe):
            os.chown(path, NOBODY, NOBODY)
        as_nobody([str(exe), "-c", "import os; os.abort()"], cwd=evil)
        cores = sorted(evil.glob("core*"))
        assert cores, sorted(p.name for p in evil.iterdir())
        exe.unlink()                                  # the core's executable is gone: postmortem warns, naming it
        runs = [triage("postmortem", str(cores[0]), env=NO_COLOUR),
                triage("postmortem", str(cores[0]), "--format", "json", env=NO_COLOUR)]
        assert "pwned" in runs[0].stdout + runs[0].stderr
        _clean(*runs)
