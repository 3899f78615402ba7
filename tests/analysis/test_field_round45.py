"""Classes of real pasted logs found by round 45 of the real-world corpus, each tested on a variant written here
(other programs, codes, devices and numbers than the cases' own)."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.errors import InputError
from triage.parsing.windows_status import crash_signal


# (1) Windows ends a faulted process with the fault's NTSTATUS code as its exit code; it was read as a program's own
# exit code: spawn's "process 0 terminated with exit code 3221225477" an exception (Plachtaa/VITS-fast-fine-tuning#221,
# SayaSS/vits-finetuning#32's 3221226505) and an IDE's "Process finished with exit code -1073741819 (0xC0000005)"
# refused (VITA-Group/GLNet#10, microsoft/Deep3DFaceReconstruction#156). Other statuses and launchers here.
@pytest.mark.parametrize(("code", "signal"), [
    (3221225477, "SIGSEGV"), (-1073741819, "SIGSEGV"), (0xC00000FD, "SIGSEGV"), (-1073741571, "SIGSEGV"),
    (3221226505, "SIGABRT"), (0xC0000374, "SIGABRT"), (3221225501, "SIGILL"), (3221225620, "SIGFPE"),
    (0xC0000006, "SIGBUS"),
])
def test_a_windows_crash_status_is_the_signal_of_its_fault(code: int, signal: str) -> None:
    assert crash_signal(code) == signal


@pytest.mark.parametrize("code", [1, 2, 137, -9, 3221225781, -1073741515, 0x80000003, 1 << 40, None])
def test_other_codes_are_no_windows_crash(code: int | None) -> None:
    # 0xC0000135 (a DLL not found, as unsigned and signed) is a failure to start, no fault; 0x80000003 a breakpoint
    assert crash_signal(code) is None


def test_spawns_windows_crash_status_is_the_processs_crash() -> None:
    result = report(r"  File 'C:\Users\me\lib\site-packages\torch\multiprocessing\spawn.py', line 149, in join",
                    "    raise ProcessExitedException(",
                    "torch.multiprocessing.spawn.ProcessExitedException: process 2 terminated with exit code 3221225725")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (2,), result.verdict
    assert "SIGSEGV" in result.verdict.summary


def test_a_launchers_plain_record_of_a_windows_crash_status_is_the_ranks_crash() -> None:
    result = report("[launcher] rank 3 exited with exit code 3221225477")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (3,), result.verdict
    assert "SIGSEGV" in result.verdict.summary


def test_torchelastics_windows_crash_status_is_the_local_ranks_crash() -> None:
    result = report("[2024-03-02 10:11:12,345] torch.distributed.elastic.multiprocessing.api: [ERROR] failed "
                    r"(exitcode: 3221226505) local_rank: 1 (pid: 4242) of binary: C:\Python311\python.exe")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "SIGABRT" in result.verdict.summary


@pytest.mark.parametrize(("line", "signal"), [
    ("Process finished with exit code -1073741795 (0xC000001D)", "SIGILL"),
    ("Process finished with exit code 3221225620", "SIGFPE"),
    ("the trainer stopped: exit status 0xC0000409", "SIGABRT"),
    ("**Process finished with exit code -1073741571 (0xC00000FD)**", "SIGSEGV"),
])
def test_an_ides_windows_crash_status_is_a_crash_of_no_rank(line: str, signal: str) -> None:
    result = report("Epoch 3/40: 100%|##########| 812/812 [02:11<00:00, 6.18it/s, loss=0.871]",
                    "Epoch 4/40:  37%|###7      | 301/812 [00:49<01:23, 6.11it/s, loss=0.866]",
                    line)
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (), result.verdict
    assert signal in result.verdict.summary


def test_a_windows_status_that_is_no_crash_and_a_plain_big_number_are_not_read() -> None:
    # a DLL that failed to load ends the process with 0xC0000135 before it ran: not a crash (no line is read as one)
    for lines in (("Process finished with exit code -1073741515 (0xC0000135)",),
                  ("tokenized 3221225477 bytes of text, exit code 0",)):
        try:
            result = report(*lines)
        except InputError:
            continue                                    # refused: nothing here is read as a failure
        assert result.verdict.kind.value != "crash", result.verdict.summary


# (2) the CUDA caching allocator's own figures pasted without the "CUDA out of memory." head before them were refused
# (ShannonAI/Self_Explaining_Structures_Improve_NLP_Models#6); other sizes, devices and the newer wording here
@pytest.mark.parametrize("line", [
    ("Tried to allocate 512.00 MiB (GPU 3; 10.76 GiB total capacity; 9.11 GiB already allocated; 301.56 MiB free; "
     "9.34 GiB reserved in total by PyTorch)"),
    ("Tried to allocate 1.50 GiB. GPU 1 has a total capacity of 79.15 GiB of which 812.44 MiB is free. Of the "
     "allocated memory 76.02 GiB is allocated by PyTorch"),
])
def test_the_allocators_figures_alone_are_an_out_of_memory(line: str) -> None:
    result = report("Epoch 2:  41%|####      | 410/1000 [03:02<04:22,  2.25it/s, loss=1.93]", line)
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "Tried to allocate" in result.verdict.summary, result.verdict.summary


def test_asking_how_much_to_allocate_in_prose_is_no_out_of_memory() -> None:
    # the words without the allocator's figures after them are a sentence, not its message
    with pytest.raises(InputError):
        report("we tried to allocate 2 GiB per process for the cache and it was fine")


# (3) PyTorch's "CUDA error: X" with its own advice run on after it on one line (a UI that joined the message's lines)
# was named a failure of unknown kind (ostris/ai-toolkit#470's ECC error); another error here
def test_a_cuda_error_with_its_advice_run_on_is_the_cuda_error() -> None:
    result = report("CUDA error: an illegal memory access was encountered Search for `cudaErrorIllegalAddress' in "
                    "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information. "
                    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
                    "below might be incorrect. For debugging consider passing CUDA_LAUNCH_BLOCKING=1 Compile with "
                    "`TORCH_USE_CUDA_DSA` to enable device-side assertions.")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "illegal memory access" in result.verdict.summary


def test_the_advice_alone_after_the_error_line_is_still_the_trailer() -> None:
    # the advice on a line of its own after the error's line: the error line is the failure, the advice nothing more
    result = report("RuntimeError: CUDA error: device-side assert triggered",
                    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
                    "below might be incorrect. For debugging consider passing CUDA_LAUNCH_BLOCKING=1.")
    assert "device-side assert" in result.verdict.summary, result.verdict.summary
