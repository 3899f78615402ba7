"""Session 56 (fix56a item 2): `kubectl get pods` rows quoted without their RESTARTS and AGE columns (and without the
header): ``training-operator-8569f97489-zkxbt   0/1   OOMKilled``. A row whose STATUS is OOMKilled is the pod's
container killed at its memory limit (a crash by SIGKILL, as the corpus reads Kubernetes' own fields); Error and
CrashLoopBackOff rows, and an init container's (kubectl's printPod: ``Init:`` and its reason), are the pod's failure
where they are the only evidence. The pod is the finding, no rank. Such a row was refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log


@pytest.mark.parametrize("row", [
    "llm-pretrain-worker-3                 0/1     OOMKilled",
    "ml-research   data-prep-5d9f7c6b8-q2xkz     0/1   OOMKilled",
    "llm-pretrain-worker-3   0/1   Init:OOMKilled",
    "llm-pretrain-worker-3   0/1   OOMKilled   4 (37s ago)   9m",
])
def test_an_oomkilled_row_is_a_memory_kill(row: str, tmp_path: Path) -> None:
    code, got = report_log(row + "\n", tmp_path)
    assert code not in (0, 2, 70)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and verdict["subkind"] in ("sigkill", "oom"), verdict["summary"]
    assert verdict["culprit_ranks"] == [] and "OOMKilled" in verdict["summary"]


@pytest.mark.parametrize("row", [
    "bert-finetune-master-0   0/1   Error",
    "bert-finetune-master-0   0/1   CrashLoopBackOff",
    "kubeflow   bert-finetune-master-0   0/1   Init:Error",
    "bert-finetune-master-0   0/1   Init:CrashLoopBackOff   6 (2m ago)   14m",
])
def test_an_error_row_alone_is_the_pods_failure(row: str, tmp_path: Path) -> None:
    code, got = report_log(row + "\n", tmp_path)
    assert code not in (0, 2, 70)
    verdict = got["verdict"]
    assert verdict["culprit_ranks"] == [] and "bert-finetune-master-0" in verdict["summary"], verdict["summary"]


def test_a_row_the_pod_got_over_is_no_failure(tmp_path: Path) -> None:
    text = ("bert-finetune-master-0   0/1   Error\n"
            "bert-finetune-master-0   1/1   Running\n"
            "bert-finetune-master-0   0/1   Completed\n")
    _code, got = report_log(text, tmp_path)
    assert "its container ended in Error" not in str(got.get("verdict", {}))


def test_real_training_operator_row(tmp_path: Path) -> None:
    # alauda/kubeflow-chart#45: the one row the reporter quoted, the training-operator OOMKilled at the chart's limit
    log = (REPO / "tests/realworld/cases/alauda__kubeflow-chart__45/log.txt").read_text(encoding="utf-8")
    _code, got = report_log(log, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and verdict["subkind"] in ("sigkill", "oom") and verdict["culprit_ranks"] == []
    assert "training-operator-8569f97489-zkxbt" in verdict["summary"]


def test_real_kubectl_get_all_rows_named_with_their_kind(tmp_path: Path) -> None:
    # open-edge-platform/geti_v2#146: `kubectl get all -A`, each row's name with its kind ("pod/..."), one pod
    # OOMKilled among pods Running and Completed
    text = (REPO / "tests/analysis/data/s56_kubectl_get_all_geti_146.txt").read_text(encoding="utf-8")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and verdict["subkind"] in ("sigkill", "oom"), verdict["summary"]
    assert "user-directory-646bbbc878-lf4tq" in verdict["summary"] and verdict["culprit_ranks"] == []
