"""A launcher's command line in sight is not its output (fix54d item 1): a CI step's ``Run torchrun --nproc-per-node 4
...`` or a notebook cell's ``!torchrun ...`` before a lone CUDA OOM of ``(GPU 0; ...)`` made that GPU read as local rank
0 (test_metamorphic's github_actions and jupyter pairs); torchelastic's or spawn's own records still do."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict, report_lines
from tests.realworld.metamorphic import TRANSFORMS
from triage.parsing.launcher_kind import launcher_of, launcher_shown

_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB (GPU 1; 79.15 GiB total capacity; "
        "77.02 GiB already allocated; 1.12 GiB free; 77.60 GiB reserved in total by PyTorch)")


@pytest.mark.parametrize("command", [
    "$ torchrun --nnodes 1 --nproc_per_node=2 finetune.py --bf16",
    "In [3]: !torchrun --standalone --nproc-per-node 8 train.py",
    "##[group]Run torchrun --nproc-per-node 2 scripts/train.py",
    "+ python -m torch.distributed.run --nproc_per_node 2 train.py",
])
def test_a_command_line_is_no_launchers_output(command: str) -> None:
    assert launcher_of(command) == "torchrun"
    assert launcher_shown(command) is None
    result = report_lines(command, "Traceback (most recent call last):", '  File "train.py", line 9, in <module>',
                          "    loss = model(batch)", _OOM)
    assert result.verdict.subkind == "oom", result.verdict.summary
    assert not result.verdict.culprit_ranks, result.verdict.summary


def test_torchelastics_own_output_still_maps_the_gpu() -> None:
    lines = ("$ torchrun --nproc_per_node=2 train.py",
             "WARNING:torch.distributed.run:", "*****************************************",
             ("Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system "
              "being overloaded, please further tune the variable for optimal performance in your application as "
              "needed."), "*****************************************", _OOM)
    assert launcher_shown("\n".join(lines)) == "torchrun"
    result = report_lines(*lines)
    assert result.verdict.culprit_ranks == (1,), result.verdict.summary


def test_torchruns_own_traceback_and_words_are_output() -> None:
    assert launcher_shown('  File "/opt/conda/bin/torchrun", line 8, in <module>\n'
                          "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:") == "torchrun"
    assert launcher_shown("torchrun: error: the following arguments are required") == "torchrun"


@pytest.mark.parametrize("decoration", ["github_actions", "jupyter"])
@pytest.mark.parametrize("case", ["openpifpaf__openpifpaf__265", "THUDM__slime__1951", "starVLA__starVLA__23"])
def test_real_lone_ooms_under_a_decorations_command_line(decoration: str, case: str, tmp_path: Path) -> None:
    log = (REPO / "tests/realworld/cases" / case / "log.txt").read_text(encoding="utf-8")
    decorated = TRANSFORMS[decoration](log)
    assert decorated is not None
    verdict = failure_verdict(decorated, tmp_path)
    assert verdict["subkind"] == "oom" and not verdict.get("culprit_ranks"), verdict["summary"]


def test_real_torchelastic_oom_still_maps_its_gpus(tmp_path: Path) -> None:
    log = (REPO / "tests/realworld/cases/shibing624__MedicalGPT__179/log.txt").read_text(encoding="utf-8")
    verdict = failure_verdict(log, tmp_path)
    assert sorted(verdict["culprit_ranks"]) == [0, 1], verdict["summary"]
