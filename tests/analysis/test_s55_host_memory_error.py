"""A program's own exception of the host's memory (fix55c item 5): Python's ``MemoryError`` (bare, with its message,
NumPy's ``_ArrayMemoryError``) and PyTorch's CPU allocator (c10's alloc_cpu.cpp: ``DefaultCPUAllocator: can't allocate
memory: you tried to allocate N bytes``, older ``... not enough memory: ...``) got no subkind and the GPU's advice
(or none); now subkind oom with the host's memory advice (triage.analysis.oom, triage.analysis.advice). A device's
``OutOfMemoryError`` keeps its own."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines
from tests.realworld.scoring import load_cases
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts

_FRAMES = ["Traceback (most recent call last):", '  File "solve.py", line 40, in <module>', "    a = build(n)"]
_HOST_STEP = "the host's memory ran out in that process, not a GPU's"


@pytest.mark.parametrize("last", [
    "MemoryError",
    "MemoryError: Unable to allocate 3.00 GiB for an array with shape (20000, 20000) and data type float64",
    ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.00 GiB for an array with shape (20000, 20000) and "
    "data type float64"),
    ("RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to "
    "allocate 1073741824 bytes."),
    ("RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate memory: you tried to "
    "allocate 1073741824 bytes. Error code 12 (Cannot allocate memory)"),
])
def test_the_hosts_memory_in_an_exception_is_oom_with_host_advice(last: str) -> None:
    report = report_lines(*_FRAMES, last)
    assert report.verdict.kind.value == "exception" and report.verdict.subkind is not None, report.verdict
    assert report.verdict.subkind.value == "oom"
    assert any(_HOST_STEP in step for step in report.next_steps), report.next_steps


def test_a_devices_out_of_memory_keeps_the_gpu_advice() -> None:
    report = report_lines(*_FRAMES, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 "
                                    "has a total capacity of 79.15 GiB of which 1.02 GiB is free.")
    assert report.verdict.subkind is not None and report.verdict.subkind.value == "oom"
    assert not any(_HOST_STEP in step for step in report.next_steps), report.next_steps


def test_ggce_3s_memory_error_is_oom() -> None:
    # (matthewcarbone/GGCE#3: scipy's linalg.solve, "MemoryError: Unable to allocate 12.0 GiB ...", labelled oom)
    case = next(c for c in load_cases() if c.log.parent.name == "matthewcarbone__GGCE__3")
    report = analyze(load_log_texts([("log.txt", case.log.read_text(encoding="utf-8"))]))
    assert report.verdict.subkind is not None and report.verdict.subkind.value == case.subkind == "oom"
    assert any(_HOST_STEP in step for step in report.next_steps), report.next_steps
