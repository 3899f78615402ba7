"""Crash records are parsed once, by the loaders (triage.load.crash_records): a rank's faulthandler.log,
its log tail and gdb's text become a frozen CrashRecord, and the crash analysis classifies that
record without parsing anything. A run directory's crash record reads the rank's output.log as the
log path does, so gdb's view of a watchdog abort on a CUDA error is that CUDA error."""

from __future__ import annotations

import json
from pathlib import Path

from tests.load.test_run_dir_crash_lines import ABORTED, WATCHDOG_LOG, _run
from tests.postmortem.test_pm_classify import WATCHDOG_BT
from triage.analysis.analyze import analyze
from triage.analysis.crash import CrashKind, analyse_crashes, crash_record_events
from triage.analysis.crash.records import classify_core
from triage.load.crash_records import core_record, live_gdb_record, logs_record, rank_logs
from triage.load.inputs import load_inputs
from triage.model.evidence import CoreOutput, CrashSource, Evidence
from triage.parsing.gdb import parse_gdb_backtrace

TWO_THREADS = """Fatal Python error: Segmentation fault

Thread 0x00007f1c2cffd640 (most recent call first):
  File "/job/loader.py", line 12 in fetch

Current thread 0x00007f1c2d7fe640 (most recent call first):
  File "/job/train.py", line 42 in forward
  File "/job/train.py", line 90 in main
"""
BANNER = '*** Aborted at 1757588325 (unix time) try "date -d @1757588325" if you are using GNU date ***'


def test_rank_logs_are_parsed_once_into_the_record() -> None:
    logs = rank_logs(3, "node07", 4242, f"{BANNER}\n{WATCHDOG_LOG}", TWO_THREADS)
    assert logs.fatal_signal == "Segmentation fault"
    assert [t.thread_id for t in logs.python_threads] == [0x7F1C2CFFD640, 0x7F1C2D7FE640]
    assert logs.banner_time == 1757588325.0
    assert logs.log_facts.watchdog_abort and logs.log_facts.cuda_error == "an illegal memory access was encountered"
    record = logs_record(logs)
    assert record.source is CrashSource.RANK_LOGS and (record.rank, record.host) == (3, "node07")
    assert record.fatal_signal == "Segmentation fault" and record.banner_time == 1757588325.0
    assert record.cuda_error == "an illegal memory access was encountered"
    assert [f.function for f in record.python_frames] == ["fetch"]      # the first thread faulthandler printed


def test_a_core_takes_the_python_stack_of_the_thread_that_faulted() -> None:
    """The core's faulting thread (LWP 4242) is pthread 0x7f1c2d7fe640: its faulthandler stack is the one."""
    output = CoreOutput({"core": "/tmp/core.4242", "notes": {"pid": 4242, "thread_ids": [4242, 4244],
                                                             "signal": "SIGABRT"}},
                        parse_gdb_backtrace(WATCHDOG_BT), "/b/rank-1/core.json", "/b/rank-1/gdb-core.txt", "node07")
    logs = rank_logs(1, "node07", 4242, WATCHDOG_LOG, TWO_THREADS)
    record = core_record(output, 1, "node07", logs=logs)
    assert record.backtrace is output.backtrace
    assert [f.function for f in record.python_frames] == ["forward", "main"]
    item = classify_core(record, ())
    assert item.kind is CrashKind.CUDA_ERROR and item.python_method == "faulthandler.log"
    assert "illegal memory access" in item.summary and "the c10d watchdog aborted on it" in item.summary
    without_logs = classify_core(core_record(output, 1, "node07"), ())
    assert without_logs.kind is CrashKind.WATCHDOG_ABORT and without_logs.python_frames == ()


def test_rank_records_classify_and_the_others_are_collateral() -> None:
    crashed = logs_record(rank_logs(0, "n1", 10, TWO_THREADS, TWO_THREADS, faulthandler_mtime=100.0))
    torn = logs_record(rank_logs(1, "n1", 11, "", "Fatal Python error: Terminated\n", faulthandler_mtime=200.0))
    found = analyse_crashes(Evidence(crashes=(crashed, torn), crashes_only=True))
    [item] = found.classifications
    assert item.rank == 0 and item.signal == "SIGSEGV" and item.time == 100.0
    assert [(o.rank, o.how) for o in found.others] == [(1, "torn down (Terminated)")]


def test_live_gdb_record_reads_the_log_tail_like_the_log_path() -> None:
    plain = live_gdb_record(WATCHDOG_BT, "/b/rank-1/gdb.txt", 1, "node07", signal_name="SIGABRT", time=5.0)
    told = live_gdb_record(WATCHDOG_BT, "/b/rank-1/gdb.txt", 1, "node07", signal_name="SIGABRT", time=5.0,
                           log_text=WATCHDOG_LOG)
    [bare], [read] = crash_record_events((plain,)), crash_record_events((told,))
    assert "watchdog_abort" in bare.detail
    assert "cuda_error" in read.detail and "illegal memory access" in read.detail


def test_a_run_directory_with_gdb_of_a_watchdog_cuda_abort_says_the_cuda_error(tmp_path: Path) -> None:
    """gdb's backtrace of the abort (std::terminate in the c10d watchdog) and the rank's own output.log
    (the watchdog's CUDA error, in ProcessGroupNCCL's words) in one run directory: the verdict and the
    crash analysis both name the CUDA error, as `triage report output.log` does."""
    run = _run(tmp_path, 1, WATCHDOG_LOG, None, ABORTED)
    bundle = run / "node01/bundles/20261124T100103.000-crash"
    (bundle / "rank-1").mkdir(parents=True)
    (bundle / "rank-1/gdb.txt").write_text(WATCHDOG_BT)
    (bundle / "manifest.json").write_text(json.dumps({
        "schema": "triage.bundle/1", "job_id": "cuda", "host": "node01", "trigger": "crash", "created": 0,
        "ranks": [{"rank": 1, "pid": None}], "collectors": []}))
    evidence = load_inputs([run])
    [record] = evidence.crashes
    assert record.source is CrashSource.LIVE_GDB and record.cuda_error == "an illegal memory access was encountered"
    report = analyze(evidence)
    log = tmp_path / "output.log"
    log.write_text(WATCHDOG_LOG)
    from_log = analyze(load_inputs([log])).verdict
    assert report.verdict.kind is from_log.kind and report.verdict.culprit_ranks == (1,)
    assert "illegal memory access" in report.verdict.summary and "Fatal Python error" not in report.verdict.summary
    [analysis] = [f for f in report.findings if f.kind == "crash_analysis"]
    assert "cuda_error" in analysis.detail and "illegal memory access" in analysis.detail
    assert any("CUDA_LAUNCH_BLOCKING" in step for step in report.next_steps)
