"""The corpus's verdicts do not depend on which launcher prefixed the lines: each real log's rank prefixes
(``[rankN]:``, torchrun --tee's ``[defaultN]:``) rewritten into other launchers' styles gives the same
verdict and culprits, where the style carries the rank:

- styles that replace the prefix with their own rank label: srun ``--label`` (``N: ``), Open MPI's
  ``--tag-output`` (``[1,N]<stderr>:``), horovodrun (``[N]<stderr>:``), Lightning (``[rank: N] ``),
  Determined (``5c902731 [rank=N] || ``), vLLM's worker tags (``(VllmWorker TPN pid=P) ``,
  ``(VllmWorker rank=N pid=P) ``), SGLang's logger head (``[2026-03-29 18:56:25 TPN] ``: a TP-only server);
- styles that put a host or worker tag before the rank prefix, as they do around torchrun's output:
  DeepSpeed's pdsh (``hostK: ``), Ray's worker tag (``(RayTrainWorker pid=P, ip=10.0.0.K) ``) and
  ``kubectl logs --prefix`` per pod (``[pod/train-worker-K/pytorch] ``), with K the rank's node (4 ranks
  to a node).

A style without a rank (Ray's tag alone) cannot carry one: it is not asserted here. A log whose lines a
terminal hard-wrapped is left out: a launcher's label added to the first half of a wrapped line is not
how that log would look (the label comes before the terminal wraps the line)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.realworld.scoring import ASSERTED_CONFIDENCE, Case, load_cases
from tests.realworld.test_decorated import _as_pasted, _verdict
from triage.parsing.textclean import clean_text

_PREFIX = re.compile(r"^\[(?:rank|default)(\d+)\]:\s?")
RANKS_PER_NODE = 4

REPLACE: dict[str, Callable[[int], str]] = {
    "srun_label": lambda r: f"{r}: ",
    "openmpi_tag_output": lambda r: f"[1,{r}]<stderr>:",
    "horovodrun": lambda r: f"[{r}]<stderr>:",
    "lightning": lambda r: f"[rank: {r}] ",
    "determined": lambda r: f"5c902731 [rank={r}] || ",
    "vllm_worker_tp": lambda r: f"(VllmWorker TP{r} pid={4100 + r}) ",
    "vllm_worker_rank": lambda r: f"(VllmWorker rank={r} pid={4100 + r}) ",
    "sglang_tp": lambda r: f"[2026-03-29 18:56:{r % 60:02d} TP{r}] ",
}
ADD: dict[str, Callable[[int], str]] = {
    "deepspeed_pdsh": lambda r: f"host{r // RANKS_PER_NODE}: ",
    "ray_worker": lambda r: f"(RayTrainWorker pid={4100 + r}, ip=10.0.0.{r // RANKS_PER_NODE + 1}) ",
    "kubectl_per_pod": lambda r: f"[pod/train-worker-{r // RANKS_PER_NODE}/pytorch] ",
}


def _rewritable(case: Case) -> bool:
    text = case.log.read_text(encoding="utf-8", errors="replace")
    return any(_PREFIX.match(line) for line in text.splitlines()) and not clean_text(text).joined


CASES = [c for c in load_cases() if c.confidence in ASSERTED_CONFIDENCE and _rewritable(c)]


def _rewrite(text: str, style: Callable[[int], str], keep: bool) -> str:
    def one(line: str) -> str:
        match = _PREFIX.match(line)
        if match is None:
            return line
        return style(int(match.group(1))) + (line if keep else line[match.end():])
    return "\n".join(one(line) for line in text.split("\n"))


def _check(case: Case, style: Callable[[int], str], keep: bool, tmp_path: Path) -> None:
    text = case.log.read_text(encoding="utf-8", errors="replace")
    rewritten = tmp_path / "job.log"
    rewritten.write_bytes(_rewrite(text, style, keep).encode("utf-8"))
    assert _verdict(rewritten) == _as_pasted(case)


@pytest.mark.parametrize("name", sorted(REPLACE))
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_another_launchers_rank_label_gets_the_same_verdict(case: Case, name: str, tmp_path: Path) -> None:
    _check(case, REPLACE[name], False, tmp_path)


@pytest.mark.parametrize("name", sorted(ADD))
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_host_tag_before_the_rank_prefix_gets_the_same_verdict(case: Case, name: str, tmp_path: Path) -> None:
    _check(case, ADD[name], True, tmp_path)
