"""Classes of real pasted logs found by round 19 of the real-world corpus (a Python exception quoted at the end of
the reporter's own sentence, after a colon, ASCII or full-width; the c10d store's port already taken, told only in
the reporter's words), each tested on a variant written here (other exception types, words and ports than the
cases' own lines), and on the real cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_lines as report
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.parsing.crashlog import CrashLineKind, parse_crash_line

_CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"



@pytest.mark.parametrize("line", [
    "When I start 4 processes with torchrun the script stops and I get: KeyError: 'LOCAL_RANK'. Any idea?",
    "\u8bad\u7ec3\u5f00\u59cb\u540e\u62a5\u9519\uff1aRuntimeError: Default process group has not been initialized",
    ("after upgrading, each worker fails with: builtins.AttributeError: 'DistributedDataParallel' object has no "
     "attribute 'generate'"),
])
def test_an_exception_quoted_after_the_reporters_words_and_a_colon_is_that_exception(line: str) -> None:
    crash = parse_crash_line(line)
    assert crash is not None and crash.exc_type is not None, line
    assert crash.text.startswith(crash.exc_type)
    result = report(line)
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert result.verdict.culprit_ranks == ()


@pytest.mark.parametrize("line", [
    "WARNING: could not import apex, falling back: ImportError: No module named 'apex'",
    "retrying the download after: ConnectionError: HTTPSConnectionPool(host='hf.co', port=443)",
    "the reason is simple: it hangs at the first barrier",
    "step 120: loss 2.31, lr 3e-4",
])
def test_a_colon_before_no_exception_or_after_a_loggers_shrug_changes_nothing(line: str) -> None:
    assert parse_crash_line(line) is None, line


def test_a_port_already_in_use_told_in_the_reporters_words_is_a_network_set_up_failure() -> None:
    crash = parse_crash_line("the second job dies right away with EADDRINUSE when both use 29501")
    assert crash is not None and crash.kind is CrashLineKind.NETWORK
    assert "MASTER_PORT" in crash.text
    result = report(
        "Starting a second run on GPUs 4-7 gives: Address already in use",
        "Traceback (most recent call last):",
        '  File "train.py", line 12, in <module>',
        "    dist.init_process_group('nccl', init_method='tcp://127.0.0.1:23456', rank=0, world_size=4)",
        '  File "/opt/torch/distributed/distributed_c10d.py", line 602, in init_process_group',
        "    store, rank, world_size = next(rendezvous_iterator)")
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert "MASTER_PORT" in result.verdict.summary


@pytest.mark.parametrize(("case", "kind"), [
    ("dineshreddy91__Occlusion_Net__8", "exception"),
    ("LiuHC0428__LAW-GPT__14", "exception"),
    ("coqui-ai__TTS__1678", "network_error"),
])
def test_the_round_19_cases(case: str, kind: str) -> None:
    text = (_CASES / case / "log.txt").read_text(encoding="utf-8")
    result = analyze(load_log_texts([("log.txt", text)]))
    assert result.verdict.kind.value == kind, result.verdict.summary
    assert result.verdict.culprit_ranks == ()
