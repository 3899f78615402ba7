"""Round 50: a process that could not register with JAX's (XLA's) coordination service at start-up.

The agent's first call to the service is its registration (``/tensorflow.CoordinationService/RegisterTask``); where it
fails, gRPC's detail names the call on its own line (``Additional GRPC error information from remote target
unknown_target_for_coordination_leader while calling /tensorflow.CoordinationService/RegisterTask:``), then the status
(``DEADLINE_EXCEEDED``) and the agent's ``Coordination service agent in error status: ...``. The job never finished
initialising: an init hang of no named process. The words quoted in a sentence are not read, and a job whose progress
follows the line (the registration retried) went on.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import failure_verdict, report_log
from triage.parsing.rendezvous import InitWaitKind, parse_init_line

# a variant: another leader's name, a timestamped glog head, the status on the next line
REGISTER = ("E0301 08:12:44.100201  5521 coordination_service_agent.cc:370] Failed to connect\n"
            "Additional GRPC error information from remote target coordination_leader_at_10.0.3.4 while calling "
            "/tensorflow.CoordinationService/RegisterTask:\n"
            ':{"created":"@1709280764.100150","description":"Deadline Exceeded","grpc_status":4}\n'
            "2024-03-01 08:12:44.100300: E external/xla/xla/pjrt/distributed/client.cc:90] Coordination service "
            "agent in error status: DEADLINE_EXCEEDED: Deadline Exceeded\n")


def test_failed_registration_is_an_init_hang_of_no_named_process(tmp_path: Path) -> None:
    got = failure_verdict(REGISTER, tmp_path)
    assert got["kind"] == "init_hang" and got["culprit_ranks"] == []
    assert "register with the coordination service" in got["summary"]


def test_quoted_under_a_reply_marker_is_read() -> None:
    wait = parse_init_line("> > Additional GRPC error information from remote target x while calling "
                           "/tensorflow.CoordinationService/RegisterTask:")
    assert wait is not None and wait.kind is InitWaitKind.COORDINATION_REGISTER
    # a viewer's line number before it
    wait = parse_init_line("[80412] Additional GRPC error information from remote target leader while calling "
                           "/tensorflow.CoordinationService/RegisterTask:")
    assert wait is not None and wait.kind is InitWaitKind.COORDINATION_REGISTER


def test_words_in_a_sentence_are_not_read() -> None:
    assert parse_init_line("If you see 'Additional GRPC error information from remote target x while calling "
                           "/tensorflow.CoordinationService/RegisterTask:' the leader was slow.") is None


def test_progress_after_it_is_a_job_that_went_on(tmp_path: Path) -> None:
    text = (REGISTER + "I0301 08:15:02.000001 trainer.py:501] Training: step 1\n"
            "I0301 08:15:03.000001 trainer.py:501] Training: step 2\nTraining finished.\n")
    code, out = report_log(text, tmp_path)
    assert code == 0 and out["verdict"]["kind"] != "init_hang"        # an all-clear: the job went on
