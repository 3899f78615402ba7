"""A GPU or NPU runtime's error words quoted inside a sentence of the writer's own (a FAQ line, a known issue, a hint
before the run) are read as quoted (CrashLine.quoted), a failure only where the job did not go on past them: at every
alternative of the CUDA-error and device-memory patterns, by construction (rev47's findings on 819ba435 and 0e0cd6f8:
CANN's AI Core line and MindSpore's and CUDA's out-of-memory words in a sentence of a run that completed)."""

from __future__ import annotations

import re

import pytest

from tests.helpers.report import report_lines as report
from triage.parsing import crashlog
from triage.parsing.crashlog import parse_crash_line

# one line per top-level alternative of each pattern, in its order: a new alternative without its line here fails
# test_every_alternative_has_its_line_here, and then its quoted form is checked like the others'
_CUDA_ERROR_LINES = (
    "CUDA error: an illegal memory access was encountered",
    "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44",
    "cudaErrorIllegalAddress returned by cudaStreamSynchronize",
    "device-side assert triggered",
    "CUDA kernel errors might be asynchronously reported at some other API call",
    "an illegal memory access was encountered",
    "unspecified launch failure",
    "CUBLAS_STATUS_EXECUTION_FAILED when calling cublasSgemm",
    "CUDNN_STATUS_MAPPING_ERROR",
    "Cuda failure 'an illegal memory access was encountered'",
    "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered",
    "[torch_memory_saver.cpp] CUresult error: 1 (invalid argument)  file=csrc/core.cpp func=resume line=243",
    'CUDA error at vectorAdd.cu:123 code=1(cudaErrorInvalidValue) "cudaMemcpy(d_A, h_A, size, cudaMemcpyHostToDevice)"',
    "Cuda error in file 'src/solver/kernel.cu' in line 212 : an illegal memory access was encountered.",
    'checkCudaErrors() Driver API error = 0201 "CUDA_ERROR_INVALID_CONTEXT" from file <x.cpp>, line 42.',
    "cuda runtime error (59) : device-side assert triggered at /src/THC/generic/THCTensorMath.cu:26",
    "THCudaCheck FAIL file=/src/THC/THCCachingHostAllocator.cpp line=278 error=59 : device-side assert triggered",
    "Memory access fault by GPU node-4 (Agent handle: 0x55d0c1a3e0b0) on address 0x7f2a3c000000. Reason: Page not present",
    "amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32776, for process python3 pid 1)",
    "Callback: Queue 0x7f2301400000 aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent",
    "ZE_RESULT_ERROR_DEVICE_LOST",
    "HIP error: invalid device function",
    "The error from device(chipId:4, dieId:0), serial number is 2, there is an aivec error exception, core id is 11",
    "Aicore kernel execute failed, device_id=4, stream_id=450, task_id=12",
)
_OOM_LINES = (
    "CUDA out of memory. Tried to allocate 2.00 GiB",
    "OutOfMemoryError",
    "out of memory. Tried to allocate 2.00 GiB",
    "the GPU ran out of memory",
    "CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)",
    "cuda runtime error (2) : out of memory at /src/THC/THCCachingAllocator.cpp:510",
    "Cuda failure 'out of memory'",
    "Cuda error in file 'src/solver/kernel.cu' in line 99 : out of memory.",
    "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
    "Out of memory while trying to allocate 9663676416 bytes.",
    "OOM when allocating tensor with shape[1024,1024] and type float on /job:localhost/replica:0/task:0/device:GPU:0",
    "Out of memory error on GPU 0. Cannot allocate 1.5GB memory on GPU 0",
    "RESOURCE_EXHAUSTED: Failed to allocate request for 625.00MiB (655360000B) on device ordinal 7",
    "hipErrorOutOfMemory",
    "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
    "Device(id:2) memory isn't enough and alloc failed, kernel name: Default/MatMul-op1, alloc size: 1073741824B.",
    "CUDA error 2 in file /src/AMReX_Arena.cpp line 173: out of memory",
    "Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; 1.2 GiB already allocated)",
    "[torch_memory_saver.cpp] cudaError error: 2 (out of memory)  file=csrc/core.cpp func=resume line=172",
)
_PATTERNS = ((crashlog._CUDA_ERROR, _CUDA_ERROR_LINES), (crashlog._CUDA_OOM, _OOM_LINES))


def _alternatives(pattern: str) -> list[str]:
    """The pattern's top-level alternatives (split at a `|` outside groups and classes)."""
    alternatives, current, depth, in_class, escaped = [], [], 0, False, False
    for char in pattern:
        if not escaped and not in_class and char == "|" and depth == 0:
            alternatives.append("".join(current))
            current = []
            continue
        current.append(char)
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char in "()":
            depth += 1 if char == "(" else -1
    return [*alternatives, "".join(current)]


@pytest.mark.parametrize(("pattern", "lines"), _PATTERNS)
def test_every_alternative_has_its_line_here(pattern: re.Pattern[str], lines: tuple[str, ...]) -> None:
    alternatives = _alternatives(pattern.pattern)
    assert len(alternatives) == len(lines), "a new alternative: add its line here, in its order"
    for alternative, line in zip(alternatives, lines, strict=True):
        assert re.compile(alternative, pattern.flags).search(line) is not None, (alternative, line)


@pytest.mark.parametrize("line", [*_CUDA_ERROR_LINES, *_OOM_LINES])
@pytest.mark.parametrize("sentence", ['Note: if you see "{}" reduce the batch size.',
                                      "[INFO] see FAQ: '{}' means an operator faulted.",
                                      "Known issue: on old drivers, `{}` and the job must be restarted"])
def test_each_alternative_quoted_in_a_sentence_is_read_as_quoted(line: str, sentence: str) -> None:
    bare = parse_crash_line(line)
    assert bare is not None and bare.kind.value in ("cuda_error", "cuda_oom"), line
    quoted = parse_crash_line(sentence.format(line))
    # (HIP's words are read only at a line's start: in a sentence they are no failure line at all)
    assert quoted is None or quoted.quoted, (sentence.format(line), quoted)


@pytest.mark.parametrize("words", [w for w in crashlog._RUNTIME_WORDS if not w.endswith(" ")])
def test_the_runtimes_own_messages_after_a_bare_word_of_prose_are_quoted(words: str) -> None:
    # the messages no runtime prints after a word of its own: quoted in a sentence without quotes too
    quoted = parse_crash_line(f"Known issue: on old drivers, {words} and the job must be restarted")
    assert quoted is None or quoted.quoted, (words, quoted)


@pytest.mark.parametrize("line", ["rank 5 ran out of memory", "process 12 ran out of memory at step 300",
                                  "rank 5's GPU ran out of memory",
                                  "host7: NCCL WARN Cuda failure 'out of memory'",
                                  "[2] NCCL WARN Cuda failure 'an illegal memory access was encountered'",
                                  "cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY: out of memory",
                                  'ERROR:root:worker 3 failed: "CUDA error: an illegal memory access was encountered"',
                                  "ERROR:root:worker 3 failed: 'CUDA out of memory. Tried to allocate 2.00 GiB'",
                                  'W1 rank 2 raised "unspecified launch failure".',
                                  'job ended: "Device(id:0) memory isn\'t enough and alloc failed'])
def test_a_runtimes_or_ranks_own_line_with_words_before_it_is_not_quoted(line: str) -> None:
    # the negative: words before the runtime's message that are its own line's (a rank's plain words, NCCL's head), a
    # logger's quoted exception that ends its line (no sentence goes on after the quote), a quote cut at the line's end
    result = parse_crash_line(line)
    assert result is not None and not result.quoted, result


@pytest.mark.parametrize("line", ["CUDA error: an illegal memory access was encountered",
                                  "[rank3]: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
                                  ("NPU: The error from device(chipId:0, dieId:0), serial number is 1, there is an "
                                   "aicore error exception"),
                                  "E0101 12:00:00 alloc.cc:12] Device(id:0) memory isn't enough and alloc failed"])
def test_the_runtimes_own_line_is_not_quoted(line: str) -> None:
    # the negative: the words at the line's start, after a tag, a log head or a `: ` of the runtime's own
    result = parse_crash_line(line)
    assert result is not None and not result.quoted, result


_STEPS = [f"epoch 1 step {n} loss 2.{9 - n // 100}" for n in range(100, 600, 100)]


@pytest.mark.parametrize("said", [
    'Tip: a "CUDA_ERROR_OUT_OF_MEMORY: out of memory" from XLA means lower --batch.',
    'README: a "Device memory isn\'t enough and alloc failed" error means max_device_memory is too small',
    "[WARN] known issue: \"Aicore kernel execute failed, device_id=0\" on firmware 7.1; upgrade the driver",
])
def test_a_runtimes_words_quoted_before_a_run_that_completed_are_no_failure(said: str) -> None:
    result = report("[INFO] loading config", said, *_STEPS, "Training complete")
    assert result.verdict.kind.value not in ("crash", "exception"), result.verdict.summary


@pytest.mark.parametrize("said", [
    'Tip: a "CUDA_ERROR_OUT_OF_MEMORY: out of memory" from XLA means lower --batch.',
    "[WARN] known issue: \"Aicore kernel execute failed, device_id=0\" on firmware 7.1; upgrade the driver",
])
def test_quoted_words_the_run_did_not_go_on_past_stay_a_failure(said: str) -> None:
    # the negative: nothing after the line (the run ended there)
    result = report("[INFO] loading config", *_STEPS, said)
    assert result.verdict.kind.value in ("crash", "exception"), result.verdict.summary


@pytest.mark.parametrize("steps", [1, 3])
def test_a_loggers_quoted_exception_with_steps_after_it_stays_the_failure(steps: int) -> None:
    # rev47's false all-clear: a worker's error logged with its exception in quotes, then buffered steps of others
    result = report("step 100 loss 2.31", 'ERROR:root:worker 3 failed: "CUDA error: an illegal memory access was '
                    'encountered"', *[f"step {101 + n} loss 2.2{n}" for n in range(steps)])
    assert result.verdict.kind.value in ("crash", "exception"), result.verdict.summary


@pytest.mark.parametrize("said", [
    'Note: if you see "Device(id:0) memory isn\'t enough and alloc failed" reduce batch_size or set max_device_memory.',
    'Note: if you see "CUDA out of memory. Tried to allocate 2.00 GiB" reduce batch_size or set max_device_memory.',
    ("[INFO] see FAQ: 'The error from device(chipId:0, dieId:0), serial number is 1, there is an aicore error "
     "exception' means an operator faulted."),
])
def test_the_reviewers_faq_lines(said: str) -> None:
    result = report("[INFO] Loading config from config.yaml", said, "epoch: 1 step: 100, loss is 2.31",
                    "epoch: 1 step: 200, loss is 2.11", "Training complete. Checkpoint saved to ./ckpt/final.ckpt")
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary


# rev50's F7: a quote that closes at the line's end is still the writer's sentence where a verb of report or definition
# opens it; the same quote after a logger's failure colon stays the failure (variants written here)
@pytest.mark.parametrize("line", [
    ('Question: on the wiki, the most common failure is "RuntimeError: CUDA error: an illegal memory access was '
     'encountered"'),
    "The docs say the message reads 'CUDA error: unspecified launch failure'",
    'a stale driver prints "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB"',
])
def test_a_quote_opened_by_a_verb_of_report_is_quoted_even_at_the_lines_end(line: str) -> None:
    parsed = parse_crash_line(line)
    assert parsed is not None and parsed.quoted, line


def test_a_quote_after_a_failure_colon_at_the_lines_end_is_not_quoted() -> None:
    parsed = parse_crash_line('ERROR:root:worker 3 failed: "CUDA error: an illegal memory access was encountered"')
    assert parsed is not None and not parsed.quoted
