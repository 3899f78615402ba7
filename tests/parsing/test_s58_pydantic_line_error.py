"""Session 58 (fix58a item 2): a line of pydantic's ValidationError read alone, its head cut from the paste: v2's
"  Value error, <the validator's message> [type=value_error, input_value=..., input_type=...]" (pydantic_core's
ErrorType messages: "Value error, {error}", "Assertion failed, {error}", "Field required", ...), the same message
quoted without its "[type=...]" tail, and v1's "  <msg> (type=value_error)". Was refused ("no rank, collective,
watchdog, NCCL or error line"), now the exception of no rank it reports (NVIDIA-NeMo/Skills#1059). Under its head (a
few lines below "ValidationError: 1 validation error for X") the line is that exception's message, read with it: one
failure, which now says what the validator said."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.report import report_log
from triage.parsing.crashlog import PYDANTIC_LINE_TYPE, parse_crash_line, pydantic_line_error


def _verdict(text: str, tmp_path: Path) -> dict[str, Any]:
    code, got = report_log(text, tmp_path)
    assert code not in (0, 2, 70), got
    verdict: dict[str, Any] = got["verdict"]
    return verdict


@pytest.mark.parametrize("line, said", [
    (("  Value error, Data parallel size (4) must divide the 6 GPUs of this node [type=value_error, "
     "input_value=ArgsKwargs((), {'data_par...}), input_type=ArgsKwargs]"), "Data parallel size (4) must divide"),
    ("Value error, Pipeline parallel size (3) cannot be larger than the number of nodes (2)",
     "Pipeline parallel size (3)"),
    (("  Assertion failed, the world size must be a power of two [type=assertion_error, input_value=6, "
     "input_type=int]"), "world size must be a power of two"),
    ("  num_gpus must be a multiple of the nodes (type=value_error)", "num_gpus must be a multiple"),
    ("  ensure this value is greater than 0 (type=value_error.number.not_gt; limit_value=0)", "greater than 0"),
], ids=["v2", "v2-quoted-alone", "v2-assert", "v1", "v1-ctx"])
def test_a_line_alone_is_the_exception(line: str, said: str, tmp_path: Path) -> None:
    crash = parse_crash_line(line)
    assert crash is not None and crash.exc_type == PYDANTIC_LINE_TYPE, crash
    verdict = _verdict("The server does not come up with the new image:\n" + line + "\n", tmp_path)
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict
    assert said in verdict["summary"] and "ValidationError" in verdict["summary"]


@pytest.mark.parametrize("line", [
    "Value error is what the docs call it",            # no comma: a sentence
    "the Value error, as above",                       # not the line's head
    "  step 40 loss 0.31 (type=train)",                # v1's parentheses of no error type
    "Assertion failed, retrying",                      # no [type=assertion_error]: not pydantic's alone
])
def test_other_words_are_no_line_error(line: str) -> None:
    assert pydantic_line_error(line) is None


def test_under_its_head_the_line_is_its_message(tmp_path: Path) -> None:
    text = ("Traceback (most recent call last):\n"
            '  File "/srv/app/settings.py", line 40, in load\n'
            "    return TrainerSettings(**raw)\n"
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for TrainerSettings\n"
            "micro_batch_size\n"
            "  Value error, micro_batch_size (48) must divide global_batch_size (100) [type=value_error, "
            "input_value=48, input_type=int]\n"
            "    For further information visit https://errors.pydantic.dev/2.9/v/value_error\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception", verdict
    assert "1 validation error for TrainerSettings: Value error, micro_batch_size (48)" in verdict["summary"]
    assert "its head not in this input" not in verdict["summary"]


def test_real_text_worker_vllm_257(tmp_path: Path) -> None:
    # runpod-workers/worker-vllm#257: the title, the line error alone (no "Value error, " head)
    text = ("rope_scaling should have a 'rope_type' key [type=value_error, input_value=ArgsKwargs((), {'model': "
            "...rocessor_plugin': None}), input_type=ArgsKwargs]\n")
    verdict = _verdict(text, tmp_path)
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == []
    assert "rope_scaling should have a 'rope_type' key" in verdict["summary"]


def test_real_text_minicpm_cookbook_51(tmp_path: Path) -> None:
    # OpenSQZ/MiniCPM-V-CookBook#51: vLLM's API server's tag on every line, the head and its line error
    text = ("```\n"
            'File "/root/miniconda3/lib/python3.12/site-packages/pydantic/_internal/_dataclasses.py", line 127, in '
            "__init__\n"
            "(APIServer pid=2994609)     s.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), "
            "self_instance=s)\n"
            "(APIServer pid=2994609) pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n"
            "(APIServer pid=2994609)   Value error, Expecting value: line 1 column 1 (char 0) [type=value_error, "
            "input_value=ArgsKwargs((), {'model': ...rocessor_plugin': None}), input_type=ArgsKwargs]\n"
            "(APIServer pid=2994609)     For further information visit https://errors.pydantic.dev/2.12/v/value_error\n"
            "```\n")
    verdict = _verdict(text, tmp_path)
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == []
    assert "ValidationError: 1 validation error for ModelConfig: Value error, Expecting value" in verdict["summary"]
