"""Session 55's review findings fixed by the lead: a clean end printed by another command than the one that failed
is no sign the failed one went on (rev55 F1: yarn's ``error Command failed with exit code 134.`` then the next
command's ``Compiled successfully.``); an executor whose heartbeat timed out, logged inside Spark's driver's stop, is
no executor the stop shut down (rev55 F8); a cut traceback's words say where it is cut, not that the paste ends there
(rev55 F10: tests/analysis/test_s55_cut_traceback_words.py)."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines
from triage.parsing.frameworks import spark_lost_in_its_stop
from triage.parsing.progress import another_command_after, command_failed

# Node's heap limit as a Node 16 build prints it (V8's OOM handler, then its native stack)
_NODE_OOM = ("<--- Last few GCs --->",
             ("[3456:0x5d6f1e0]   182345 ms: Mark-sweep 2045.3 (2082.1) -> 2044.8 (2082.4) MB, 1890.2 / 0.0 ms  "
              "(average mu = 0.110, current mu = 0.003) allocation failure scavenge might not succeed"), "",
             "<--- JS stacktrace --->", "",
             "FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory",
             " 1: 0xb09c10 node::Abort() [node]",
             " 2: 0xa1c193 node::FatalError(char const*, char const*) [node]")


@pytest.mark.parametrize(("failed", "next_command"), [
    ("error Command failed with exit code 134.", "$ yarn workspace @app/docs build"),      # yarn v1
    ('error Command failed with signal "SIGABRT".', "ci@runner:~/app$ yarn build:docs"),    # yarn, a prompt's head
    ("npm ERR! code ELIFECYCLE", "+ npm run docs"),                                         # npm 6, set -x's trace
    ("npm error Lifecycle script `build` failed with error:", "$ npm run docs"),            # npm 9+
    ("make: *** [Makefile:12: web] Error 134", "$ make docs"),                              # GNU make
])
def test_another_commands_clean_end_leaves_the_failed_one_failed(failed: str, next_command: str) -> None:
    result = report_lines("$ yarn workspace @app/web build", "Creating an optimized production build...", "",
                          *_NODE_OOM, failed, next_command, "Compiled successfully.", "Done in 38.20s.")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "JavaScript heap out of memory" in result.verdict.summary


def test_the_same_command_again_with_more_heap_is_a_retry_that_went_on() -> None:
    result = report_lines("$ yarn build", *_NODE_OOM, "error Command failed with exit code 134.",
                          "$ NODE_OPTIONS=--max-old-space-size=8192 yarn build", "Compiled successfully.",
                          "Done in 412.55s.")
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary
    assert "JavaScript heap out of memory" in result.verdict.summary


def test_command_runners_failure_words_and_the_commands_they_end() -> None:
    assert command_failed("error Command failed with exit code 1.")
    assert command_failed("npm ERR! code ELIFECYCLE") and command_failed("make[2]: *** [all] Error 2")
    assert not command_failed("info Visit https://yarnpkg.com/en/docs/cli/run for documentation about this command.")
    assert not command_failed("make sure the data directory exists")
    before = ["$ yarn build", "FATAL ERROR: heap"]
    assert another_command_after(before, ["error Command failed with exit code 134.", "$ yarn lint", "Done in 1.00s."])
    assert not another_command_after(before, ["error Command failed with exit code 134.", "$ A=1 yarn build", "ok"])
    assert not another_command_after(before, ["$ yarn lint", "Done in 1.00s."])      # (no runner's failure word)
    assert not another_command_after(["FATAL ERROR: heap"], ["error Command failed with exit code 134.", "$ yarn x"])


# Spark's driver log of a job whose executor stopped answering minutes before the driver's own stop began
_HEARTBEAT_IN_STOP = (
    "24/05/08 08:21:10 INFO TaskSetManager: Finished task 12.0 in stage 3.0 (TID 212) in 3110 ms on 10.1.2.7 "
    "(executor 6) (13/64)\n"
    "24/05/08 08:25:30 INFO SparkContext: Invoking stop() from shutdown hook\n"
    "24/05/08 08:25:31 WARN HeartbeatReceiver: Removing executor 6 with no recent heartbeats: 160212 ms exceeds "
    "timeout 120000 ms\n"
    "24/05/08 08:25:31 ERROR TaskSchedulerImpl: Lost executor 6 on 10.1.2.7: Executor heartbeat timed out after "
    "160212 ms\n"
    "24/05/08 08:25:32 INFO KubernetesClusterSchedulerBackend: Shutting down all executors\n"
    "24/05/08 08:25:32 INFO SparkContext: Successfully stopped SparkContext\n")


def test_an_executor_whose_heartbeat_timed_out_inside_the_stop_is_still_the_failure() -> None:
    at = _HEARTBEAT_IN_STOP.index("ERROR TaskSchedulerImpl")
    assert not spark_lost_in_its_stop(_HEARTBEAT_IN_STOP, at)
    result = report_lines(*_HEARTBEAT_IN_STOP.splitlines())
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "Executor heartbeat timed out after 160212 ms" in result.verdict.summary
    lost = _HEARTBEAT_IN_STOP.replace("Executor heartbeat timed out after 160212 ms", "Executor lost for unknown reasons")
    assert spark_lost_in_its_stop(lost, lost.index("ERROR TaskSchedulerImpl"))
