"""§4: root reads another user's directory as that user could, never as root.

The attacker (uid 65534) plants symlinks (and a hard link where the kernel allows it) in their own
run, log and dump directories, pointing at a root-only file whose content looks like a failure
(``RuntimeError: ROOTONLY-CANARY-7731``). Root's ``triage report``, ``top`` and ``postmortem`` on
those directories must never show it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.security.sec_util import NOBODY, attacker_dir, can_drop_privileges, triage
from triage.regular_files import NotTheOwnersFile, open_regular

pytestmark = pytest.mark.skipif(not can_drop_privileges(), reason="needs root and setpriv")

CANARY = "ROOTONLY-CANARY-7731"
GOLDEN = REPO / "tests" / "golden" / "crash" / "run"


@pytest.fixture
def secret(tmp_path: Path) -> Iterator[Path]:
    """A root-only file (in a 0700 directory of root's), as /etc/shadow or /root/.netrc would be."""
    vault = tmp_path / "vault"
    vault.mkdir(mode=0o700)
    path = vault / "secret.log"
    path.write_text(f"[rank0]: RuntimeError: {CANARY}\n" * 3)
    path.chmod(0o600)
    yield path


def _give(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        os.lchown(path, NOBODY, NOBODY)


def _never_shows(*runs: object) -> None:
    for run in runs:
        text = run.stdout + run.stderr  # type: ignore[attr-defined]
        assert CANARY not in text, text[-1500:]
        assert "Traceback" not in text and "internal error" not in text, text[-1500:]


def test_open_regular_refuses_a_symlink_out_of_another_users_directory(secret: Path) -> None:
    with attacker_dir() as evil:
        (evil / "job.log").symlink_to(secret)
        (evil / "own.log").write_text("[rank0]: fine\n")
        _give(evil)
        with pytest.raises(NotTheOwnersFile, match="leads out of"):
            open_regular(evil / "job.log")
        with open_regular(evil / "own.log") as handle:
            assert handle.read() == b"[rank0]: fine\n"
        root_only = evil / "root-only.log"        # in their directory, but not theirs to read
        root_only.write_text(CANARY)
        root_only.chmod(0o600)
        with pytest.raises(NotTheOwnersFile, match="cannot read"):
            open_regular(root_only)


def test_report_on_a_log_directory_with_a_symlink(secret: Path) -> None:
    with attacker_dir() as evil:
        logs = evil / "logs"
        logs.mkdir()
        (logs / "rank0.log").symlink_to(secret)
        (logs / "rank1.log").write_text("[rank1]: step 1\n")
        _give(evil)
        _never_shows(triage("report", str(logs / "rank0.log")), triage("report", str(logs)),
                     triage("report", str(logs / "rank0.log"), "--format", "json"))


def test_report_top_and_postmortem_on_a_run_directory_with_symlinks(secret: Path) -> None:
    exit_json = secret.with_name("exit.json")
    exit_json.write_text(json.dumps({"exception": {"type": "RuntimeError", "message": CANARY}, "exit_code": 1,
                                     "how": "exception", "rank": 0, "time": 1795309700.0}))
    exit_json.chmod(0o600)
    with attacker_dir() as evil:
        run_dir = evil / "run"
        shutil.copytree(GOLDEN, run_dir, symlinks=True)
        for rank in sorted(run_dir.glob("*/ranks/*")):
            (rank / "output.log").symlink_to(secret)         # a rank's log, read by report and top
        for path in run_dir.rglob("exit.json"):
            path.unlink()
            path.symlink_to(exit_json)
        fault = next(run_dir.rglob("faulthandler.log"))
        fault.unlink()
        fault.symlink_to(secret)
        worker = next(run_dir.rglob("worker.json"))
        worker.unlink()
        worker.symlink_to(secret)
        (run_dir / "escape").symlink_to(secret.parent)      # a directory link out of the run dir
        _give(evil)
        core = evil / "core"
        core.write_bytes(b"\x7fELF")
        _never_shows(triage("report", str(run_dir)), triage("report", str(run_dir), "--format", "html"),
                     triage("top", str(run_dir), "--once"),
                     triage("postmortem", str(core), "--run-dir", str(run_dir)))


def test_report_on_a_dump_directory_with_a_symlinked_dump(secret: Path, tmp_path: Path) -> None:
    fr = json.loads(next(REPO.joinpath("tests/golden/stuck_outside/run").rglob("fr.json")).read_text())
    fr["pg_config"] = {"0": {"name": "0", "desc": f"RuntimeError: {CANARY}", "ranks": "[0, 1]"}}
    secret.write_text(json.dumps(fr))
    with attacker_dir() as evil:
        dumps = evil / "dumps"
        dumps.mkdir()
        (dumps / "nccl_trace_rank_0").write_text(json.dumps(json.loads(
            next(REPO.joinpath("tests/golden/stuck_outside/run").rglob("fr.json")).read_text())))
        (dumps / "nccl_trace_rank_1").symlink_to(secret)
        _give(evil)
        _never_shows(triage("report", str(dumps)), triage("report", str(dumps / "nccl_trace_rank_1")))
