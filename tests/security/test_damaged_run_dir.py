"""A run directory with a damaged file is still a report (the file in "skipped", the verdict's exit
code); one that is nothing but damaged files is a one-line error, exit 2, no traceback."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.security.sec_util import triage

GOLDEN = REPO / "tests/golden"
HANG = "stuck_outside"          # bundles (fr.json, stacks.txt) + ranks (worker.json, faulthandler.log)
EXIT = "silent_dtype"           # ranks with fr-exit.json, output.log, exit.json


def _nested(path: Path) -> None:
    path.write_text("[" * 200_000)


def _not_json(path: Path) -> None:
    path.write_text("not json {\n")


def _binary(path: Path) -> None:
    path.write_bytes(os.urandom(3000) + b"\x00" * 10)


def _huge(path: Path) -> None:
    with path.open("wb") as out:
        out.truncate(400 * 1024 * 1024)          # sparse: 400 MiB of NUL bytes


DAMAGE: dict[str, Callable[[Path], None]] = {"nested": _nested, "not-json": _not_json, "binary": _binary,
                                              "huge": _huge}
FILES = [(HANG, "node01/bundles/20261122T000000.000-hang/rank-0/fr.json"),
         (HANG, "node01/bundles/20261122T000000.000-hang/rank-1/stacks.txt"),
         (HANG, "node01/ranks/0/faulthandler.log"),
         (HANG, "node02/ranks/2/worker.json"),
         (HANG, "node02/bundles/20261122T000000.000-hang/manifest.json"),
         (EXIT, "node01/ranks/0/fr-exit.json"),
         (EXIT, "node01/ranks/0/output.log"),
         (EXIT, "node01/ranks/0/exit.json")]


def _copy(golden: str, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(GOLDEN / golden / "run", run)
    return run


_CLEAN: dict[str, int] = {}


def _clean_exit(golden: str, tmp_path: Path) -> int:
    if golden not in _CLEAN:
        _CLEAN[golden] = triage("report", str(_copy(golden, tmp_path)), "--format", "json").returncode
    return _CLEAN[golden]


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize(("golden", "rel"), FILES)
def test_one_damaged_file_is_skipped_and_the_report_is_made(golden: str, rel: str, damage: str,
                                                            tmp_path: Path) -> None:
    clean = _clean_exit(golden, tmp_path / "clean")
    run = _copy(golden, tmp_path)
    DAMAGE[damage](run / rel)
    result = triage("report", str(run), "--format", "json")
    assert result.returncode in (0, 1), result.stderr          # the verdict's exit code, not bad input
    assert result.returncode == clean or "manifest" in rel or "worker" in rel, result.stdout[:2000]
    assert "Traceback" not in result.stderr and '"verdict"' in result.stdout, result.stdout[:2000]
    text = result.stdout + result.stderr
    name = Path(rel).name
    assert name in text, text[:3000]                 # the damaged file is named (in skipped)


@pytest.mark.parametrize("damage", ["binary", "huge"])     # text garbage in stacks.txt is a log with no stack
def test_a_run_directory_of_nothing_but_damaged_files_is_bad_input(damage: str, tmp_path: Path) -> None:
    run = _copy(HANG, tmp_path)
    for path in run.rglob("*"):
        if path.is_file():
            DAMAGE[damage](path)
    result = triage("report", str(run))
    assert result.returncode == 2, (result.stdout[:2000], result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("triage: error:")]
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    verbose = triage("report", str(run), "-v")
    assert verbose.returncode == 2


def test_only_rank_dumps_all_damaged_is_bad_input_not_missing_ranks(tmp_path: Path) -> None:
    run = tmp_path / "run"
    for rank in (0, 1):
        (run / "h1/ranks" / str(rank)).mkdir(parents=True)
    (run / "h1/ranks/0/fr-exit.json").write_text("[[[[")
    (run / "h1/ranks/1/fr-exit.json").write_bytes(os.urandom(4000))
    result = triage("report", str(run))
    assert result.returncode == 2, result.stdout[:2000]
    assert "nothing in this run directory could be read" in result.stderr and "fr-exit.json" in result.stderr
