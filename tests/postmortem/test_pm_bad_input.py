"""Bad input: one clear line, a partial report when one is possible, never a traceback or a hang."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers.postmortem import crash, report_json, triage_run


def _one_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("triage: error: ")]
    assert errors, stderr
    return errors[0]


def test_not_a_core_text_file(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_text("this is not a core\n")
    run = triage_run("postmortem", str(bogus))
    assert run.returncode == 2
    line = _one_error_line(run.stderr)
    assert str(bogus) in line and "not an ELF file" in line
    assert run.stdout == ""


def test_an_executable_is_not_a_core(built: dict[str, Path]) -> None:
    run = triage_run("postmortem", str(built["pm_assert"]))
    assert run.returncode == 2
    assert "not a core dump" in _one_error_line(run.stderr)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    run = triage_run("postmortem", str(tmp_path / "core.404"), str(tmp_path))
    assert run.returncode == 2
    assert "no such file" in run.stderr and "is a directory" in run.stderr
    assert "Traceback" not in run.stderr


def test_truncated_core_gives_partial_report(built: dict[str, Path], crash_dir: Path) -> None:
    result = crash([str(built["pm_mt_crash"])], crash_dir)
    cut = crash_dir / "core.cut"
    with open(result.core, "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read(result.core.stat().st_size // 3))
    run, data = report_json(str(cut))
    assert run.returncode == 1, run.stderr
    assert "truncated core" in run.stderr
    item = data["extra"]["postmortem"][0]
    assert item["signal"] == "SIGSEGV"             # the notes survive at the start of the file
    assert any("truncated core" in note for note in item["notes"])


def test_missing_executable_is_said_and_exe_flag_fixes_it(built: dict[str, Path], crash_dir: Path) -> None:
    binary = crash_dir / "gone_soon"
    shutil.copy(built["pm_mt_crash"], binary)
    result = crash([str(binary)], crash_dir)
    binary.unlink()
    run, data = report_json(str(result.core))
    assert run.returncode == 1, run.stderr
    assert "is missing here" in run.stderr and "--exe" in run.stderr
    item = data["extra"]["postmortem"][0]
    assert item["signal"] == "SIGSEGV" and item["crash_frame"] is not None
    # with --exe pointing at the same build, the frames get their names back
    _run, data = report_json(str(result.core), "--exe", str(built["pm_mt_crash"]))
    item = data["extra"]["postmortem"][0]
    assert item["crash_frame"].startswith("store_result")


def test_mismatched_exe_uses_the_cores_own(built: dict[str, Path], crash_dir: Path) -> None:
    result = crash([str(built["pm_mt_crash"])], crash_dir)
    run, data = report_json(str(result.core), "--exe", str(built["pm_assert"]))
    assert run.returncode == 1
    assert "does not match the core" in run.stderr
    assert data["extra"]["postmortem"][0]["crash_frame"].startswith("store_result")


def test_exe_that_is_a_shim_script(built: dict[str, Path], crash_dir: Path) -> None:
    result = crash([str(built["pm_mt_crash"])], crash_dir)
    shim = crash_dir / "python"
    shim.write_text("#!/usr/bin/env bash\nexec python3 \"$@\"\n")
    shim.chmod(0o755)
    run, data = report_json(str(result.core), "--exe", str(shim))
    assert run.returncode == 1
    assert "is a script" in run.stderr
    assert data["extra"]["postmortem"][0]["crash_frame"].startswith("store_result")


def test_gdb_missing_from_path(built: dict[str, Path], crash_dir: Path) -> None:
    result = crash([str(built["pm_mt_crash"])], crash_dir)
    empty = crash_dir / "bin"
    empty.mkdir()
    os.symlink(sys.executable, empty / "python3")
    run, data = report_json(str(result.core), env={"PATH": str(empty)})
    assert run.returncode == 3
    assert "gdb is not on PATH" in run.stderr
    item = data["extra"]["postmortem"][0]
    assert item["signal"] == "SIGSEGV" and item["pid"] == result.pid   # from the core's notes alone


def test_gdb_timeout_never_hangs(built: dict[str, Path], crash_dir: Path) -> None:
    result = crash([str(built["pm_mt_crash"])], crash_dir)
    run, data = report_json(str(result.core), "--gdb-timeout", "0.05")
    assert "did not finish" in run.stderr
    assert data["extra"]["postmortem"][0]["signal"] == "SIGSEGV"


def test_run_dir_that_is_not_one(built: dict[str, Path], crash_dir: Path) -> None:
    result = crash([str(built["pm_mt_crash"])], crash_dir)
    run = triage_run("postmortem", str(result.core), "--run-dir", str(crash_dir))
    assert run.returncode == 2
    assert "not a triage run directory" in _one_error_line(run.stderr)


def test_stripped_binary_is_accepted_and_said(built: dict[str, Path], crash_dir: Path) -> None:
    binary = crash_dir / "stripped"
    shutil.copy(built["pm_mt_crash"], binary)
    subprocess.run(["strip", str(binary)], check=True)
    result = crash([str(binary)], crash_dir)
    run, data = report_json(str(result.core))
    assert run.returncode == 1, run.stderr
    assert "is stripped" in run.stderr
    item = data["extra"]["postmortem"][0]
    assert item["kind"] == "segfault_user_extension" and item["library"] == "stripped"
    assert any("is stripped" in note for note in item["notes"])
