"""Classes of real pasted logs found by round 65 of the real-world corpus, each tested on a variant written here
(other programs, fields, hosts and surrounding lines than the cases' own), with their negatives."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line


# A CUDA check macro's own line, the failed call's result by number and its source place: torch_memory_saver's
# "CUresult error  result=1 file=... func=resume line=214" under SGLang was read as the children's exit code 1
# (fzyzcjy/torch_memory_saver#35); the CUDA samples' checkCudaErrors() prints the same kind of line
@pytest.mark.parametrize("line", [
    "[torch_memory_saver.cpp] CUresult error  result=700 file=csrc/torch_memory_saver.cpp func=pause line=181",
    "[torch_memory_saver.cpp] CUresult error: 1 (invalid argument)  file=csrc/core.cpp func=resume line=243",
    ("[torch_memory_saver.cpp] cudaError error: 700 (an illegal memory access was encountered)  file=csrc/cpu_backup.h "
     "func=restore line=116"),
    'CUDA error at matrixMul.cu:237 code=1(cudaErrorInvalidValue) "cudaMemcpy(d_A, h_A, mem_size_A, cudaMemcpyHostToDevice)"',
])
def test_a_cuda_check_macros_line_is_a_cuda_error(line: str) -> None:
    parsed = parse_crash_line(line)
    assert parsed is not None and parsed.kind is CrashLineKind.CUDA_ERROR, parsed


def test_a_cuda_check_macros_error_of_a_prefixed_rank_is_its_crash() -> None:
    result = report("[rank0]: step 120 loss 1.93",
                    "[rank2]: [torch_memory_saver.cpp] cudaError error: 1 (invalid argument)  file=csrc/core.cpp "
                    "func=resume line=172",
                    "[rank1]: step 121 loss 1.88")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (2,), result.verdict.summary


def test_children_exiting_after_a_cuda_check_macros_error_crashed_by_it() -> None:
    result = report(*[("[torch_memory_saver.cpp] CUresult error: 1 (invalid argument)  file=csrc/core.cpp "
                       "func=resume line=243")] * 2,
                    "Child process unexpectedly failed with an exit code 256. pid=4411",
                    "Child process unexpectedly failed with an exit code 256. pid=4412")
    assert result.verdict.kind.value == "crash", result.verdict.summary


@pytest.mark.parametrize("line", [
    "[torch_memory_saver.cpp] CUresult error  result=2 file=csrc/torch_memory_saver.cpp func=cu_mem_create line=103",
    "[torch_memory_saver.cpp] cudaError error: 2 (out of memory)  file=csrc/core.cpp func=resume line=172",
])
def test_a_cuda_check_macros_result_2_is_out_of_memory(line: str) -> None:
    parsed = parse_crash_line(line)
    assert parsed is not None and parsed.kind is CrashLineKind.CUDA_OOM, parsed


@pytest.mark.parametrize("line", [
    "CUresult error handling: print the code and exit (see #23)",
    "the CUresult error: 1 message means the pointer was not mapped",
    "cudaError error: 2 was fixed by freeing the cache before resume",
])
def test_words_about_a_cuda_check_without_its_source_place_are_no_failure(line: str) -> None:
    parsed = parse_crash_line(line)
    assert parsed is None or parsed.kind not in (CrashLineKind.CUDA_ERROR, CrashLineKind.CUDA_OOM), parsed


# An exception line the reporter quoted after a verb of its coming, without a colon: Windows' libuv error told in
# the sentence above a traceback cut before its exception line was read as failure lines of no known rank
# (Tencent-Hunyuan/HY-WorldPlay#7)
@pytest.mark.parametrize(("sentence", "exc_type"), [
    ("When I launch the 2-GPU job, an error occurs RuntimeError: Distributed package doesn't have NCCL built in",
     "RuntimeError"),
    ("training stops at step 40 and throws ValueError: Expected input batch_size (16) to match target batch_size (8).",
     "ValueError"),
    ("then I got torch.distributed.DistStoreError: use_libuv was requested but PyTorch was built without libuv support",
     "torch.distributed.DistStoreError"),
])
def test_an_exception_after_a_verb_of_its_coming_is_read(sentence: str, exc_type: str) -> None:
    parsed = parse_crash_line(sentence)
    assert parsed is not None and parsed.kind is CrashLineKind.EXCEPTION, parsed
    assert parsed.exc_type == exc_type
    result = report(sentence, "",
                    "(venv) C:\\work> torchrun --nproc_per_node 2 train.py",
                    "Traceback (most recent call last):",
                    '  File "C:\\Python310\\lib\\runpy.py", line 196, in _run_module_as_main',
                    "    return _run_code(code, main_globals, None,")
    assert result.verdict.kind.value == "exception", result.verdict.summary


@pytest.mark.parametrize("line", [
    "the docs say it raises ValueError when the shape is wrong",
    "INFO: retrying the batch after the loader raised KeyError: 'label'",
    "Epoch 3 got loss 0.1234 and ValueError count 0",
])
def test_a_verb_before_no_exception_line_or_a_shrugged_one_is_no_failure(line: str) -> None:
    parsed = parse_crash_line(line)
    assert parsed is None or parsed.kind is not CrashLineKind.EXCEPTION, parsed


def test_an_exception_the_writers_sentence_goes_on_after_is_left_to_the_traceback() -> None:
    assert parse_crash_line("on a single 3090 GPU, but got  KeyError: 'RANK' as follows.  How can I fix this?") is None
