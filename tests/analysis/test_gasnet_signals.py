"""GASNet's own signal handler (under Chapel, UPC++, Legion): ``*** Caught a fatal signal (proc N): SIGSEGV(11)`` is
process N's fault, the job's first failure where it comes first; another process's later ``*** FATAL ERROR (proc M):
... failed send`` and the ``*** Caught a signal (proc K): SIGTERM(15)`` of the processes torn down after it are
collateral. A process's abort (SIGABRT) after its own FATAL ERROR stays that error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.report import failure_verdict, report_log
from triage.parsing.launchers import parse_rank_deaths


def test_the_handlers_lines_are_each_processs_end_and_only_a_fault_is_first() -> None:
    text = ("*** Caught a fatal signal (proc 12): SIGFPE(8)\n"
            "*** Caught a fatal signal (proc 3): SIGFPE(8)\n"
            "*** Caught a signal (proc 0): SIGTERM(15)\n"
            "> *** Caught a fatal signal (proc 7): SIGABRT(6)\n")
    deaths = parse_rank_deaths(text)
    assert [(d.rank, d.signal, d.first) for d in deaths] == [
        (12, "SIGFPE", True), (3, "SIGFPE", True), (0, "SIGTERM", False), (7, "SIGABRT", False)]


@pytest.mark.parametrize("sentence", [
    "If you see '*** Caught a fatal signal (proc 3): SIGSEGV(11)' rebuild GASNet with --enable-debug\n",
    "the runtime prints *** Caught a fatal signal (proc N): SIGSEGV(11) on a fault\n",
])
def test_the_words_inside_a_sentence_are_not_a_processs_end(sentence: str) -> None:
    assert parse_rank_deaths(sentence) == ()


def test_an_earlier_fault_heads_and_a_later_peers_failed_send_is_collateral(tmp_path: Path) -> None:
    text = ("Chapel: running on 32 locales\n"
            "*** Caught a fatal signal (proc 21): SIGBUS(7)\n"
            "*** FATAL ERROR (proc 30): in gasnetc_poll_snd() at ofi.c:912: fi_cq_read failed: Transport endpoint "
            "is not connected (peer 21 unreachable)\n"
            "*** Caught a fatal signal (proc 30): SIGABRT(6)\n"
            "*** Caught a signal (proc 4): SIGTERM(15)\n")
    verdict: dict[str, Any] = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [21], verdict
    assert "SIGBUS" in verdict["summary"] and "collateral" in verdict["summary"], verdict


def test_a_processs_own_fatal_error_then_its_abort_stays_that_error(tmp_path: Path) -> None:
    text = ("*** FATAL ERROR (proc 5): in gasnetc_attach() at ibv.c:77: unable to register 64 GB segment\n"
            "*** Caught a fatal signal (proc 5): SIGABRT(6)\n"
            "*** Caught a signal (proc 1): SIGTERM(15)\n")
    verdict = failure_verdict(text, tmp_path)
    assert verdict["culprit_ranks"] == [5] and "unable to register" in verdict["summary"], verdict


def test_faults_alike_in_several_processes_share_the_root(tmp_path: Path) -> None:
    text = "".join(f"*** Caught a fatal signal (proc {p}): SIGSEGV(11)\n" for p in (9, 2, 14))
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "crash" and 9 in verdict["culprit_ranks"], verdict


def test_a_large_log_reads_the_handlers_lines_as_a_small_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.helpers.report import report_log
    from triage.load import inputs
    from triage.load.logs.large import TAIL_BYTES
    # (after the lines: no progress, past the tail the large path reads whole)
    filler = "".join(f"debug: buffer 0x{i * 4096:x} released to pool {i % 7}\n" for i in range(TAIL_BYTES // 38 + 500))
    text = ("*** Caught a fatal signal (proc 6): SIGSEGV(11)\n*** FATAL ERROR (proc 2): in gasnetc_poll() at x.c:9: "
            "aborting on reap of failed send\n" + filler)
    code, small = report_log(text, tmp_path)
    monkeypatch.setattr(inputs, "LARGE_LOG_BYTES", 64 << 10)
    large_code, large = report_log(text, tmp_path)
    assert code == 1 and small["verdict"]["culprit_ranks"] == [6], small["verdict"]
    assert (large_code, large["verdict"]["kind"], large["verdict"]["culprit_ranks"]) == \
        (code, small["verdict"]["kind"], [6]), large["verdict"]


@pytest.mark.parametrize("sig", ["SIGTERM(15)", "SIGINT(2)"])
def test_signals_sent_and_no_fault_caught_is_a_stop_from_outside(sig: str, tmp_path: Path) -> None:
    text = "step 40 loss 0.3\n" + "".join(f"*** Caught a signal (proc {p}): {sig}\n" for p in (3, 0, 1))
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "stopped" and verdict["culprit_ranks"] == [], verdict


def test_a_fault_line_is_its_processs_end_whatever_the_others_print_after_it(tmp_path: Path) -> None:
    # the handler prints the line, the backtrace, calls the conduit's hook that kills the job and re-raises the
    # signal: the process never goes on; the steps after it are the other processes', printed until the exit reaches
    # them (rev50 F0: this read NO PROBLEM FOUND)
    text = ("step 10 loss 0.9\n*** Caught a fatal signal (proc 2): SIGBUS(7)\n"
            + "".join(f"step {s} loss 0.{s}\n" for s in range(11, 16)) + "Training complete\n")
    verdict = failure_verdict(text, tmp_path)
    assert (verdict["kind"], verdict["culprit_ranks"]) == ("crash", [2]) and "SIGBUS" in verdict["summary"], verdict


@pytest.mark.parametrize("text", [
    # rev50's g9: the other processes' buffered steps, their own prefixes, after proc 2's fault
    ("[0] step 10 done\n*** Caught a fatal signal (proc 2): SIGSEGV(11)\n[0] step 11 done\n[1] step 11 done\n"
     "[3] step 11 done\n[0] step 12 done\n[1] step 12 done\n[3] step 12 done\n"),
    # rev50's g8: the same, unprefixed
    "[0] step 10 done\n*** Caught a fatal signal (proc 2): SIGSEGV(11)\nstep 11 done\nstep 11 done\nstep 11 done\n",
])
def test_the_reviewers_fault_then_the_others_steps_is_a_crash_of_that_process(text: str, tmp_path: Path) -> None:
    verdict = failure_verdict(text, tmp_path)
    assert (verdict["kind"], verdict["culprit_ranks"]) == ("crash", [2]) and "SIGSEGV" in verdict["summary"], verdict


def test_a_signal_sent_the_job_went_on_past_is_no_processs_end() -> None:
    text = ("step 10 loss 0.9\n*** Caught a signal (proc 2): SIGINT(2)\n"
            + "".join(f"step {s} loss 0.{s}\n" for s in range(11, 16)) + "Training complete\n")
    assert parse_rank_deaths(text) == ()


def test_a_process_own_fatal_error_before_anothers_caught_fault_heads(tmp_path: Path) -> None:
    # (rev50 F5) the handler's fault is the first failure only where no other process's own FATAL ERROR came first
    text = ("Chapel: running on 8 locales\n"
            "*** FATAL ERROR (proc 6): in gasnetc_attach() at ibv.c:77: unable to register 64 GB segment\n"
            "*** Caught a fatal signal (proc 4): SIGBUS(7)\n"
            "*** Caught a fatal signal (proc 5): SIGBUS(7)\n"
            "*** Caught a signal (proc 0): SIGTERM(15)\n")
    assert not any(d.first for d in parse_rank_deaths(text))
    verdict = failure_verdict(text, tmp_path)
    assert verdict["culprit_ranks"] == [6] and "unable to register" in verdict["summary"], verdict


def test_the_reviewers_fatal_error_then_a_peers_segfault(tmp_path: Path) -> None:
    text = ("step 10 done\n*** FATAL ERROR (proc 3): in gasnetc_AMRequestMediumM() at gasnet_core.c:880: out of "
            "memory allocating 1048576 bytes\n*** Caught a fatal signal (proc 1): SIGSEGV(11)\n"
            "*** Caught a signal (proc 0): SIGTERM(15)\n*** Caught a signal (proc 2): SIGTERM(15)\n")
    verdict = failure_verdict(text, tmp_path)
    assert (verdict["kind"], verdict["culprit_ranks"]) == ("exception", [3]), verdict
    assert "collateral" in verdict["summary"], verdict


@pytest.mark.parametrize("failure", [
    # a traceback of its own, unprefixed, before the teardown
    "Traceback (most recent call last):\n  File \"main.py\", line 7, in <module>\nKeyError: 'halo'\n",
    # mpirun's record of a rank's end, after it
    None,
])
def test_signals_sent_beside_another_failure_are_its_teardown_not_a_stop(failure: str | None, tmp_path: Path) -> None:
    # (rev50 F2) a failing process's gasnet_exit signals its peers: their SIGTERM lines are that failure's teardown
    sigterms = "".join(f"*** Caught a signal (proc {p}): SIGTERM(15)\n" for p in (0, 2))
    if failure is None:
        text = ("step 3 ok\n" + sigterms + "--------------------------------------------------------------------------\n"
                "mpirun noticed that process rank 1 with PID 811 on node c7 exited on signal 11 (Segmentation "
                "fault).\n")
    else:
        text = "step 3 ok\n" + failure + sigterms
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] != "stopped" and "stopped from outside" not in verdict["summary"], verdict
    if failure is None:
        assert verdict["culprit_ranks"] == [1], verdict


def test_the_reviewers_srun_exit_after_the_teardown_keeps_its_culprit(tmp_path: Path) -> None:
    text = ("[0] step 10 done\n*** Caught a signal (proc 1): SIGTERM(15)\n*** Caught a signal (proc 0): SIGTERM(15)\n"
            "srun: error: nid001: task 2: Exited with exit code 1\nsrun: error: nid001: tasks 0-1: Terminated\n")
    verdict = failure_verdict(text, tmp_path)
    assert (verdict["kind"], verdict["culprit_ranks"]) == ("exception", [2]), verdict
    assert "stopped from outside" not in verdict["summary"] and "collateral" in verdict["summary"], verdict


@pytest.mark.parametrize(("line", "rank", "sig"), [
    # older GASNet's handler (gasnet_internal.c's "*** Caught a fatal signal: %s(%i) on node %i/%i"): node = proc id
    ("*** Caught a fatal signal: SIGFPE(8) on node 6/16", 6, "SIGFPE"),
    # the oldest's "*** GASNet caught a fatal signal: ..."
    ("*** GASNet caught a fatal signal: SIGBUS(7) on node 0/4", 0, "SIGBUS"),
])
def test_older_gasnets_fault_line_is_that_nodes_end(line: str, rank: int, sig: str) -> None:
    # (rev50 F13) the older form names the process as "node N/M"; it is never passed over by the steps after it
    text = "[0] step 3\n" + line + "\n" + "".join(f"[{p}] step 4\n" for p in range(4))
    assert [(d.rank, d.signal, d.first) for d in parse_rank_deaths(text)] == [(rank, sig, True)]


def test_older_gasnets_signals_sent_are_a_stop() -> None:
    text = "step 9\n*** Caught a signal: SIGTERM(15) on node 0/2\n*** Caught a signal: SIGTERM(15) on node 1/2\n"
    deaths = parse_rank_deaths(text)
    assert [d.outside for d in deaths] == [True, False, False] and [d.rank for d in deaths[1:]] == [0, 1], deaths
    assert parse_rank_deaths("the log says *** Caught a fatal signal: SIGSEGV(11) on node 1/2 there\n") == ()


@pytest.mark.parametrize("after", ["", "step 11 done\n" * 3, "[1,0]<stdout>:step 11 done\n[1,0]<stdout>:step 12 done\n"])
def test_the_chapel_programs_quoted_segfault_is_node_1s_crash(after: str, tmp_path: Path) -> None:
    # the line as a Chapel program's comment quotes its run (rafatest2.chpl, `./a.out -nl 2`); rev50's g13*: NO
    # PROBLEM FOUND with steps after it, rank unknown alone
    text = ("A is:1 2 3 4 5 6 7 8 9 10\nB before copy:2 4 6 8 10 12 14 16 18 20\n\tlocal get() from 0\n"
            "*** Caught a fatal signal: SIGSEGV(11) on node 1/2\n" + after)
    verdict = failure_verdict(text, tmp_path)
    assert (verdict["kind"], verdict["culprit_ranks"]) == ("crash", [1]) and "SIGSEGV" in verdict["summary"], verdict


@pytest.mark.parametrize("line", ["[1,2]<stderr>:*** Caught a fatal signal (proc 2): SIGSEGV(11)",
                                  "2: *** Caught a fatal signal (proc 2): SIGSEGV(11)"])
def test_a_handlers_line_behind_a_launchers_tag_is_read_as_gasnets(line: str, tmp_path: Path) -> None:
    # (rev50 F14) read as GASNet's, not as a line that "names rank 2 in words triage reads no further"
    tag = line.split("*", 1)[0].replace("2", "0", 1) if line.startswith("[") else "0: "
    text = f"{tag}step 10 done\n{line}\n{tag}step 11 done\n{tag.replace('0', '1', 1)}step 11 done\n"
    verdict = failure_verdict(text, tmp_path)
    assert (verdict["kind"], verdict["culprit_ranks"]) == ("crash", [2]), verdict
    assert "reads no further" not in verdict["summary"], verdict


@pytest.mark.parametrize("end", ["Training complete", "Saved final checkpoint to /scratch/run7/ckpt-99"])
def test_signals_after_the_jobs_own_end_are_told_as_such(end: str, tmp_path: Path) -> None:
    # (rev50 F16) the signals came while the job was exiting, after its own word that it ended: no cancel to hunt for
    text = "step 99 loss 0.1\n" + end + "\n" + "".join(f"*** Caught a signal (proc {p}): SIGTERM(15)\n" for p in range(4))
    code, out = report_log(text, tmp_path)
    verdict = out["verdict"]
    assert (code, verdict["kind"], verdict["culprit_ranks"]) == (1, "stopped", []), verdict
    assert f"after its own end ('{end}')" in verdict["summary"], verdict
    assert "written whole" in verdict["summary"] and "find who or what cancelled it" not in str(out), verdict


def test_signals_after_progress_past_an_end_word_are_a_plain_stop() -> None:
    # (the run went on after the end word: a next stage, its steps; the signals stop that)
    text = "Training complete\neval step 10\n*** Caught a signal (proc 0): SIGTERM(15)\n"
    deaths = parse_rank_deaths(text)
    assert deaths[0].outside and "after its own end" not in deaths[0].text, deaths
