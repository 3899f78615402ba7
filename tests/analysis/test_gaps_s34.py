"""Round 22's misses of issue 23 closed as classes, each on variants written here and on real text from public
reports (log text only), end to end through ``triage report`` where the verdict is the point.

1. torch.distributed.launch's record of the worker it found failed, quoted without its
   ``subprocess.CalledProcessError:`` head: the worker's --local_rank (and the launch's --node_rank) names the rank;
   a headless ``Command '[...]'`` of any other subprocess (a ninja build) is no rank's record.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log as report
from triage.parsing.torchelastic import parse_launcher_failures

# --- 1. the old launcher's record without its head ---------------------------------------------------------------

_ARGV = "'/opt/conda/bin/python', '-u', 'tools/train.py', {local}'--cfg', 'a.yaml'"


@pytest.mark.parametrize(("local", "end", "rank", "code", "sig"), [
    ("'--local_rank=3', ", "returned non-zero exit status 1.", 3, 1, None),
    ("'--local-rank=2', ", "died with <Signals.SIGKILL: 9>.", 2, None, "SIGKILL"),
    ("'--local_rank', '5', ", "returned non-zero exit status 2", 5, 2, None),
    # --use_env: the rank is in the worker's environment, not its argv: the launcher's "python -u" form alone
    ("", "died with <Signals.SIGSEGV: 11>.", None, None, "SIGSEGV"),
])
def test_a_headless_launch_record_names_its_worker(local: str, end: str, rank: int | None, code: int | None,
                                                   sig: str | None) -> None:
    text = f"error:\n  \"Command '[{_ARGV.format(local=local)}]' {end}\"\n"
    (failure,) = parse_launcher_failures(text)
    assert (failure.local_rank, failure.exitcode, failure.signal) == (rank, code, sig)


@pytest.mark.parametrize("text", [
    "Command '['ninja', '-v']' returned non-zero exit status 1.\n",
    "Command '['/usr/bin/python3', 'setup.py', 'build_ext']' returned non-zero exit status 1.\n",
    "Command '['git', 'rev-parse', 'HEAD']' returned non-zero exit status 128.\n",
])
def test_a_headless_command_of_another_subprocess_is_no_rank_record(text: str) -> None:
    assert parse_launcher_failures(text) == ()


def test_a_headless_record_is_an_exception_of_its_rank(tmp_path: Path) -> None:
    text = f"Command '[{_ARGV.format(local=chr(39) + '--local_rank=1' + chr(39) + ', ')}]' returned non-zero exit " \
           "status 1.\n"
    code, data = report(text, tmp_path)
    verdict = data["verdict"]
    assert code == 1 and verdict["kind"] == "exception" and verdict["culprit_ranks"] == [1], verdict


def test_the_launch_s_node_rank_gives_the_global_rank(tmp_path: Path) -> None:
    text = ("python -m torch.distributed.launch --nproc_per_node=4 --nnodes=2 --node_rank=1 tools/train.py\n"
            f"Command '[{_ARGV.format(local=chr(39) + '--local_rank=2' + chr(39) + ', ')}]' died with "
            "<Signals.SIGKILL: 9>.\n")
    code, data = report(text, tmp_path)
    verdict = data["verdict"]
    assert code == 1 and verdict["culprit_ranks"] == [6], verdict
    assert "SIGKILL" in verdict["summary"], verdict["summary"]


# real text: facebookresearch/dino#113, the record as pasted (with its head), and the same line as an issue
# title quotes it (without)
DINO = ("subprocess.CalledProcessError: Command '['/home/gayrat/anaconda3/envs/Dino/bin/python', '-u', "
        "'main_dino.py', '--local_rank=4', '--arch', 'vit_small', '--data_path', './dataset/resized_img', "
        "'--output_dir', './results']' returned non-zero exit status 1\n")


@pytest.mark.parametrize("text", [DINO, DINO.removeprefix("subprocess.CalledProcessError: ")])
def test_real_launch_record_with_and_without_its_head(text: str, tmp_path: Path) -> None:
    code, data = report(text, tmp_path)
    verdict = data["verdict"]
    assert code == 1 and verdict["kind"] == "exception" and verdict["culprit_ranks"] == [4], verdict
