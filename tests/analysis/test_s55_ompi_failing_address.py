"""Session 55 (fix55a item 3): Open MPI's signal handler's report cut before its head ("*** Process received signal
***" and "Signal: Segmentation fault (11)" lost): its "[host:pid] Failing at address: 0x.." line, which
opal/util/stacktrace.c prints for SIGSEGV, SIGBUS, SIGFPE and SIGILL only, is a fatal signal of that process (SIGSEGV,
the usual one, its note saying the rest), of no known rank on that host; it was refused. Under its own "Signal:" line
it stays that line's detail."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log
from triage.parsing.crashlog import OMPI_ADDRESS_NOTE, CrashLineKind, parse_crash_line

FRAMES = ("[{h}:{p}] [ 0] /lib/x86_64-linux-gnu/libpthread.so.0(+0x12980)[0x7f3b2c8a1980]\n"
          "[{h}:{p}] [ 1] /opt/app/lib/libsolver.so(_ZN6solver5stepEv+0x2a)[0x7f3b2a10452a]\n"
          "[{h}:{p}] [ 2] /opt/app/bin/solve(main+0x91)[0x55d0e1a2f0b1]\n")


@pytest.mark.parametrize("line", ["Failing at address: 0xb8", "Failing at address: (nil)",
                                  "[gpu-node-17:00412] Failing at address: 0x7f3b2a10452a"])
def test_the_line_is_a_fatal_signal(line: str) -> None:
    got = parse_crash_line(line)
    assert got is not None and got.kind is CrashLineKind.FATAL_SIGNAL and got.signal == "SIGSEGV"
    assert got.text.endswith(OMPI_ADDRESS_NOTE)


@pytest.mark.parametrize("line", ["I keep getting Failing at address: 0x0 from mpirun",
                                  "Failing at address: 0x0 seems to be a null pointer"])
def test_the_words_in_a_sentence_are_none(line: str) -> None:
    got = parse_crash_line(line)
    assert got is None or not got.text.endswith(OMPI_ADDRESS_NOTE)


@pytest.mark.parametrize(("host", "pid"), [("cn042", "28871"), ("ip-10-0-3-17", "00412")])
def test_cut_report_is_a_crash_of_no_rank_on_that_host(host: str, pid: str, tmp_path: Path) -> None:
    text = f"[{host}:{pid}] Failing at address: 0x10\n" + FRAMES.format(h=host, p=pid)
    code, got = report_log(text, tmp_path)
    assert code not in (0, 2, 70)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [] and verdict["culprit_host"] == host


def test_a_tagged_process_is_that_rank(tmp_path: Path) -> None:
    text = "[1,3]<stderr>:[cn7:9121] Failing at address: 0x18\n[1,3]<stderr>:[cn7:9121] [ 0] /lib64/libc.so.6(+0x36400)[0x2b]\n"
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "crash" and got["verdict"]["culprit_ranks"] == [3]


def test_under_its_signal_line_it_is_only_detail(tmp_path: Path) -> None:
    text = ("[cn7:9121] *** Process received signal ***\n"
            "[cn7:9121] Signal: Bus error (7)\n"
            "[cn7:9121] Signal code: Non-existent physical address (2)\n"
            "[cn7:9121] Failing at address: 0x2b33e6f43000\n" + FRAMES.format(h="cn7", p="9121")
            + "[cn7:9121] *** End of error message ***\n")
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "crash" and "Bus error" in got["verdict"]["summary"]
    assert OMPI_ADDRESS_NOTE not in got["verdict"]["summary"]
    assert len(got["findings"]) == 1


def test_real_cut_report(tmp_path: Path) -> None:
    # mindspore-lab/mindyolo#238: the frames through HCCL's HcomOpsKernelInfoStore, the handler's head not pasted
    log = (REPO / "tests/realworld/cases/mindspore-lab__mindyolo__238/log.txt").read_text(encoding="utf-8")
    _code, got = report_log(log, tmp_path)
    assert got["verdict"]["kind"] == "crash" and got["verdict"]["culprit_ranks"] == []
    assert got["verdict"]["culprit_host"] == "notebook-2a7fcf5e-9744-41c7-9c1c-5e37eeafdf60"


def test_real_full_report_keeps_its_signal(tmp_path: Path) -> None:
    # QuarkContainer/Quark#1281: mpirun's own SIGFPE, its failing address the faulting instruction's
    log = (REPO / "tests/realworld/cases/QuarkContainer__Quark__1281/log.txt").read_text(encoding="utf-8")
    _code, got = report_log(log, tmp_path)
    assert "Floating point exception" in got["verdict"]["summary"]
    assert OMPI_ADDRESS_NOTE not in got["verdict"]["summary"]
