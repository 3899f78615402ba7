"""Words that fit what the input shows (session 52's review):

- YARN runs containers, not ranks: the hint that would settle a failure of no known place asks which container, from
  each container's own log (`yarn logs -applicationId`), never "the ranks' own output with their rank prefixes";
- a stop the reporter tells on a node they name (and no log line names a host) takes that node in the summary's step,
  as the next steps and the verdict's "[on node X: the reporter's words]" did (the summary said `scontrol show node
  NODE` beside it); a placeholder NODE is always said to be the node this input does not name (ssh's too).
"""

from __future__ import annotations

from pathlib import Path

from triage.analysis.analyze import analyze
from triage.load.inputs import load_inputs, load_log_texts

_CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


def _read(text: str) -> tuple[str, str]:
    result = analyze(load_log_texts([("job.log", text)]))
    return result.verdict.summary, "\n".join(result.next_steps)


def test_a_yarn_kill_of_no_known_place_asks_which_container() -> None:
    summary, _ = _read("24/05/01 11:00:00 WARN YarnAllocator: Container killed by YARN for exceeding memory limits. "
                       "10.4 GB of 10 GB physical memory used. Consider boosting spark.yarn.executor.memoryOverhead.\n")
    assert "which container: each container's own log (`yarn logs -applicationId" in summary, summary
    assert "rank prefixes" not in summary and "which rank" not in summary, summary


def test_a_yarn_jobs_unread_failure_asks_which_container_printed_it() -> None:
    summary, steps = _read("24/05/01 11:00:00 INFO YarnAllocator: Will request 4 executor container(s)\n"
                           "24/05/01 11:00:05 ERROR Executor: something unknown went badly wrong in the shuffle\n")
    assert "which container printed the line" in summary and "rank prefixes" not in summary, summary
    assert "the culprit is a container this input does not show" in steps and "every rank" not in steps, steps


def test_a_real_yarn_kill_asks_which_container() -> None:
    """yahoo/TensorFlowOnSpark#134: Spark's driver telling YARN's memory kill of an executor's container."""
    logs = [p for p in sorted((_CASES / "yahoo__TensorFlowOnSpark__134").iterdir()) if p.suffix in (".txt", ".log")]
    summary = analyze(load_inputs(logs)).verdict.summary
    assert "which container" in summary and "rank prefixes" not in summary, summary


_STOP_LOG = ("[rank0]: step 100 loss 2.1\n[rank1]: step 100 loss 2.1\n"
             "[rank1]: RuntimeError: NCCL communicator was aborted on rank 1.\n")


def test_a_stop_the_reporter_tells_on_a_node_they_name_names_it_in_its_step() -> None:
    summary, steps = _read("Our job was killed by the scheduler after a node failure of node cn17 last night.\n"
                           + _STOP_LOG)
    assert "`scontrol show node cn17`" in summary and "--exclude cn17" in summary, summary
    assert "NODE" not in summary and "NODE" not in steps, (summary, steps)


def test_a_stop_the_reporter_tells_on_no_node_says_the_node_is_not_in_this_input() -> None:
    summary, _ = _read("Our job was killed by the scheduler after a node failure last night.\n" + _STOP_LOG)
    assert "`scontrol show node NODE`" in summary and "NODE: the node, not in this input" in summary, summary


def test_a_node_ssh_could_not_reach_and_no_name_says_it_is_not_in_this_input() -> None:
    summary, _ = _read("Exception: host was not reachable via ssh.\n")
    assert "`ssh -o BatchMode=yes NODE true`" in summary and "NODE: the node it could not reach, not in this input" \
        in summary, summary
