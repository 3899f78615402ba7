"""Classes of real pasted logs found by round 21 of the real-world corpus, each tested on a variant written
here (other scripts, arguments, exit codes and surrounding lines than the cases' own)."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.errors import InputError

# DeepSpeed's launcher record pasted from inside its argv: the list's opening "[" (and the --local_rank
# argument) is cut off, only its end and "exits with return code = N" remain (THUDM/GLM#60's tail,
# rewritten with another script's arguments and exit codes)
_TAILS = (
    ("'--zero-stage', '3', '--bf16', '--save', 'ckpt/run7'] exits with return code = -9", "SIGKILL"),
    (", \"--data\", \"shards/train\", \"--epochs\", \"4\"] exits with return code = -7", "SIGBUS"),
    ("  '--lr', '1e-4'] exits with return code = -11", "SIGSEGV"),
)


def test_the_end_of_a_deepspeed_record_whose_argv_start_is_cut_is_a_crash_of_no_known_rank() -> None:
    for tail, signal in _TAILS:
        for lines in ((tail,), ("Loading checkpoint shards:  43%|####      | 3/7", tail, "")):
            result = report(*lines)
            assert result.verdict.kind.value == "crash", (tail, result.verdict.summary)
            assert signal in result.verdict.summary, (tail, result.verdict.summary)
            assert not result.verdict.culprit_ranks, tail
            assert "only the end of the command" in result.verdict.summary


def test_an_argv_tail_with_a_zero_exit_is_no_failure() -> None:
    with pytest.raises(InputError):
        report("'--save', 'ckpt/run7'] exits with return code = 0")
