"""The report's fixed cost at its start and its exit (docs/performance.md, Parsing, session 51).

At exit, the program's objects are moved out of the cyclic garbage collector's reach (``gc.freeze``) so that the
interpreter's shutdown does not walk them all once more: done only where ``main`` is the program (no ``argv`` given:
the console script, ``python -m triage``), never where a caller (a test, a library) goes on after it. The report is
the same either way."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import triage
from triage.cli import main

CASE = Path(__file__).resolve().parents[1] / "realworld" / "cases" / "3dem__relion__194" / "log.txt"

FAILURE = ("[rank1]:[E1001 10:00:00.1 901 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation "
           "timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600010 "
           "milliseconds before timing out.\n"
           "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")

PROBE = ("import gc, sys; from triage.cli import main; before = gc.get_freeze_count(); sys.argv[0] = 'triage'; "
         "code = main(); sys.stderr.write(f'\\nFROZE {gc.get_freeze_count() - before}\\n'); sys.exit(code)")


def _as_program(log: Path, tmp_path: Path) -> tuple[str, int]:
    # (this checkout's triage, wherever the installed one is)
    env = dict(os.environ, PYTHONPATH=str(Path(triage.__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", PROBE, "report", str(log), "--format", "json"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 1, out.stderr
    return out.stdout, int(out.stderr.rsplit("FROZE ", 1)[1].split("\n", 1)[0])


def _in_process(log: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, int]:
    capsys.readouterr()
    before = gc.get_freeze_count()
    assert main(["report", str(log), "--format", "json"]) == 1
    frozen = gc.get_freeze_count() - before
    return capsys.readouterr().out, frozen


@pytest.mark.parametrize("which", ["made", "corpus"])
def test_the_program_freezes_its_objects_at_exit_and_a_caller_never(which: str, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    if which == "made":
        log = tmp_path / "job.log"
        log.write_text("[rank0]: step 1 loss 2.0\n" * 20 + FAILURE, encoding="utf-8")
    else:
        log = CASE
    printed, frozen = _as_program(log, tmp_path)
    assert frozen > 1000, "the program's objects were not frozen before its exit"
    again, in_process = _in_process(log, capsys)
    assert in_process == 0, "main(argv) froze its caller's objects"
    assert printed == again     # the same report, byte for byte
    report = json.loads(printed)
    assert report["verdict"]["culprit_ranks"] == ([0] if which == "made" else [1])


COUNTED = ("import gc, sys; from triage.cli import main; runs = []; "
           "gc.callbacks.append(lambda phase, info: runs.append(info['generation']) if phase == 'start' else None); "
           "sys.argv[0] = 'triage'; code = main(); "
           "sys.stderr.write(f'\\nCOLLECTED {len(runs)}\\n'); sys.exit(code)")


def test_the_programs_report_runs_without_the_cyclic_collector_from_its_start(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # the command's imports included (~100 classes, ~200 modules: each collection rescanned what they made); never in
    # a caller
    log = tmp_path / "job.log"
    log.write_text("[rank0]: step 1 loss 2.0\n" * 20 + FAILURE, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(Path(triage.__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", COUNTED, "report", str(log), "--format", "json"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 1, out.stderr
    assert int(out.stderr.rsplit("COLLECTED ", 1)[1].split("\n", 1)[0]) == 0
    assert gc.isenabled()
    _, _ = _in_process(log, capsys)
    assert gc.isenabled(), "main(argv) left its caller's collector disabled"
    printed, _ = _as_program(log, tmp_path)
    assert printed == _in_process(log, capsys)[0]
