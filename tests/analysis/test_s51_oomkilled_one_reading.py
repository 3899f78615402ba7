"""A container OOMKilled is one event whichever way Kubernetes' state is printed: the container's process killed by
SIGKILL for its memory limit (a crash by SIGKILL with the limit's advice), as Kubernetes' own fields (kubectl's YAML
and JSON, Airflow's KubernetesExecutor), Vertex AI's OOMKilled replica and YARN's and Slurm's memory kills are read.
`kubectl describe pod` and `kubectl get pods` had read it as a stop from outside (session 50's closing note); an
Evicted pod (the kubelet's stop for the node's pressure) stays a stop."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.analysis.advice import excerpt_steps
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts

_CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


def read(text: str) -> tuple[str, str | None, str, str]:
    result = analyze(load_log_texts([("pod.txt", text)]))
    verdict = result.verdict
    return verdict.kind.value, verdict.culprit_host, verdict.summary, " ".join(excerpt_steps(verdict))


def describe(pod: str, state: str, code: int) -> str:
    return (f"Name:             {pod}\nNamespace:        ml\nContainers:\n  trainer:\n    {state}\n"
            f"      Reason:       OOMKilled\n      Exit Code:    {code}\n      Started:      Fri, 27 Nov 2026 01:00:00\n"
            "    Restart Count:  3\n")


@pytest.mark.parametrize("text,pod", [
    (describe("bert-ft-worker-3", "Last State:     Terminated", 137), "bert-ft-worker-3"),
    (describe("llama-sft-master-0", "State:          Terminated", 137), "llama-sft-master-0"),
    (("NAME                READY   STATUS      RESTARTS      AGE\n"
     "gpt-pretrain-w-7    0/1     OOMKilled   2 (40s ago)   3h\n"), "gpt-pretrain-w-7"),
    (("status:\n  containerStatuses:\n  - lastState:\n      terminated:\n        exitCode: 137\n"
     "        reason: OOMKilled\n    name: trainer\n"), None),
    ('{"lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}\n', None),
])
def test_every_printing_of_a_container_oomkilled_is_its_crash_by_sigkill(text: str, pod: str | None) -> None:
    kind, host, summary, steps = read(text)
    assert kind == "crash" and "SIGKILL" in summary and "OOMKilled" in summary, summary
    assert host == pod, (host, summary)
    assert "resources.limits.memory" in steps and "memory limit the job asked for" in steps, steps


def test_an_evicted_pod_stays_a_stop_from_outside() -> None:
    kind, host, summary, _ = read("Name:             bert-ft-worker-3\nStatus:           Failed\n"
                                  "Reason:           Evicted\nMessage:          The node was low on resource: memory.\n")
    assert kind == "stopped" and host == "bert-ft-worker-3", summary


def test_a_rank_failure_before_the_pods_oomkill_stays_first() -> None:
    kind, _, summary, _ = read("[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
                               + describe("bert-ft-worker-3", "Last State:     Terminated", 137))
    assert kind == "crash" and "illegal memory access" in summary, summary


def test_real_text_airflows_fields_and_a_describe_paste_agree() -> None:
    # apache/airflow#73164 (Kubernetes' fields in Airflow's scheduler log) and a `kubectl describe pod` container
    # block as kubernetes/kubernetes#131530 shows it (OOMKilled with Exit Code 0): both a crash by SIGKILL
    airflow = (_CASES / "apache__airflow__73164" / "log.txt").read_text(encoding="utf-8")
    pasted = ("State:          Terminated\n  Reason:       OOMKilled\n  Exit Code:    0\n"
              "  Started:      Tue, 29 Apr 2025 13:43:32 +0800\n  Finished:     Tue, 29 Apr 2025 14:10:51 +0800\n"
              "Ready:          False\nRestart Count:  0\n")
    for text in (airflow, pasted):
        kind, _, summary, steps = read(text)
        assert kind == "crash" and "SIGKILL" in summary, summary
        assert "resources.limits.memory" in steps, steps
