"""Classes of real pasted logs found by round 62 of the real-world corpus, each tested on a variant written here
(other hosts, instances, pids, signals and surrounding lines than the cases' own), with their negatives."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.frameworks import parse_framework_records
from triage.parsing.peers import peer_of


# A cloud's own word that it took the machine away under the job: a stop from outside, no rank at fault. They were
# refused (azavea/raster-vision-aws#15's and mozilla/translations#964's shapes)
@pytest.mark.parametrize(("line", "said"), [
    ("statusReason: Host EC2 (instance i-0f3a9c1d2e4b5a6c7) terminated.", "i-0f3a9c1d2e4b5a6c7"),
    (("Jan 03 04:05:06Z worker-gpu-7 start-worker 2025/01/03 04:05:06 GCP Metadata Service says termination is "
      "imminent"), "GCP preempted"),
    ("SpotInstanceRequest sir-7x2k state=closed status=instance-terminated-no-capacity", "instance-terminated-no-capacity"),
    ("  Message:  Pod was terminated in response to imminent node shutdown.", "node was shutting down"),
])
def test_a_clouds_preemption_is_a_stop_from_outside(line: str, said: str) -> None:
    result = report("epoch 3 step 1200 loss 2.31", "epoch 3 step 1300 loss 2.29", line)
    assert result.verdict.kind.value == "stopped", result.verdict.summary
    assert result.verdict.culprit_ranks == ()
    assert said in result.verdict.summary, result.verdict.summary


def test_a_preemption_the_job_went_on_after_is_no_stop() -> None:
    # a spot notice quoted in a log whose training went on past it: not this job's end
    text = ("note: on 12/01 a worker logged 'GCP Metadata Service says termination is imminent' (another task)\n"
            + "".join(f"epoch 1 step {step} loss 1.{step % 10}\n" for step in range(100, 140)))
    assert parse_framework_records(text) == ()


# A launcher's session to a node that the node's end dropped: ssh's and MPICH Hydra's words (radical.entk#551's
# shape): a network failure of that node; refused before
def test_a_launchers_lost_session_to_a_node_is_a_network_failure_there() -> None:
    result = report("step 41200, will finish Tue Mar  2 10:11:12 2027",
                    "Connection to gpu-n17 closed by remote host.",
                    "[mpiexec@gpu-n01] control_cb (../../pm/pmiserv/pmiserv_cb.c:781): connection to proxy 5 at host "
                    "gpu-n17 failed",
                    "[mpiexec@gpu-n01] HYDT_dmxu_poll_wait_for_event (../../tools/demux/demux_poll.c:76): callback "
                    "returned error status")
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert "gpu-n17" in result.verdict.summary
    assert "NCCL_DEBUG" not in result.verdict.summary        # (no NCCL here: the node's own state settles it)
    assert peer_of("connection to proxy 3 at host cn-44 failed") == "cn-44"
    assert peer_of("Connection to cn-45 closed by remote host.") == "cn-45"


def test_a_connection_closed_in_other_words_is_not_this() -> None:
    # a session the user ended ("Connection to x closed."), not its remote end
    assert parse_crash_line("Connection to gpu-n17 closed.") is None


# GASNet's AM layer returned a message it could not deliver and made it fatal: the SIGABRT after it is its
# consequence (LuxGraph/Lux#5's shape: was named the SIGABRT)
@pytest.mark.parametrize("code", ["ECONGESTION: Congestion at destination endpoint",
                                  "EUNREACHABLE: Destination endpoint unreachable"])
def test_gasnets_undeliverable_active_message_is_a_network_failure(code: str) -> None:
    result = report("*** FATAL ERROR(Node 1): An active message was returned to sender,",
                    "    and trapped by the default returned message handler (handler 0):",
                    f"Error Code: {code}",
                    "Message type: AM_REQUEST_M",
                    "Destination: (10.2.0.8:41002) (0)",
                    "Aborting...",
                    "Legion process received signal 6: Aborted",
                    "Process 2214 on node n2 is frozen!")
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert "GASNet" in result.verdict.summary


def test_gasnets_other_codes_are_not_the_network() -> None:
    # a bad handler index is the program's own error, not a network failure
    line = parse_crash_line("Error Code: EBADHANDLER: Invalid index into endpoint's handler table")
    assert line is None or line.kind is not CrashLineKind.NETWORK


# Realm's signal handler names the process and its host, then freezes it (StanfordLegion/legion#1349's shape: the host
# was not read)
def test_realms_frozen_process_is_a_crash_on_its_host() -> None:
    result = report("app.exec: src/mapper.cc:212: void M::map(): Assertion `slot < n' failed.",
                    "Legion process received signal 11: Segmentation fault",
                    "Process 40771 on node cn-0213 is frozen!")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "cn-0213" in result.verdict.summary
    assert "SIGSEGV" in result.verdict.summary


def test_realms_frozen_line_alone_is_not_a_record() -> None:
    assert parse_framework_records("Process 40771 on node cn-0213 is frozen!\n") == ()
