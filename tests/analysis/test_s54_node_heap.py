"""Session 54: Node.js's (V8's) fatal out-of-memory ending, ``FATAL ERROR: <where> Allocation failed - JavaScript heap
out of memory`` (and ``... process out of memory``, V8's own ``# Fatal javascript OOM in <where>``), is the process's
memory exhaustion: an exception of that process with subkind oom (the corpus's convention for Python's MemoryError),
with Node's ``--max-old-space-size`` as the step. Was: the abort after it (``Aborted (core dumped)``, a crash of
SIGABRT), and its native stack's numbered frames (`` 1: 0xb09c10 node::Abort() [node]``) read as ranks 1..k."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines
from triage.model import MismatchKind
from triage.parsing import node_heap

GCS = ("<--- Last few GCs --->", "",
       ("[4127:0x5a3c2e0]   412033 ms: Mark-Compact 2046.9 (2081.3) -> 2045.8 (2082.1) MB, 1710.24 / 0.00 ms  "
        "(average mu = 0.112, current mu = 0.019) allocation failure; scavenge might not succeed"), "",
       "<--- JS stacktrace --->", "")


def _stack(head: str, address: str = "0x{:x}") -> tuple[str, ...]:
    frames = ("node::OOMErrorHandler(char const*, v8::OOMDetails const&) [node]",
              "v8::internal::V8::FatalProcessOutOfMemory(v8::internal::Isolate*, char const*) [node]",
              " [node]", "v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace) [node]")
    return (head, *(f"{n:>2}: {address.format(0xb8d11b + 4099 * n)} {frame}" for n, frame in enumerate(frames, 1)))


@pytest.mark.parametrize("lines", [
    # new Node: its "Native stack trace" head, then the frames, then the shell's abort
    (*GCS, *_stack("FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"
                   "\n----- Native stack trace -----\n"), "Aborted (core dumped)"),
    # older Node: frames right after it, npm's record of the exit code after them
    ("> webpack --mode production", *GCS,
     *_stack("FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory"),
     "npm ERR! code ELIFECYCLE", "npm ERR! errno 134", "npm ERR! site@1.0.0 build: `webpack --mode production`"),
    # Windows' addresses, no 0x
    (*_stack("FATAL ERROR: CALL_AND_RETRY_LAST Allocation failed - JavaScript heap out of memory", "{:016X}"),),
    # V8's own words, no embedder's handler
    ("", "#", "# Fatal javascript OOM in Reached heap limit", "#", "", "Trace/breakpoint trap (core dumped)"),
])
def test_nodes_heap_limit_is_the_processs_memory_exhaustion(lines: tuple[str, ...]) -> None:
    result = report_lines(*"\n".join(lines).split("\n"))
    verdict = result.verdict
    assert verdict.kind.value == "exception" and verdict.subkind is MismatchKind.OOM, verdict.summary
    assert node_heap.HEAP_WORDS in verdict.summary and not verdict.culprit_ranks
    assert any("--max-old-space-size" in step for step in result.next_steps), result.next_steps


def test_a_process_allocation_outside_the_heap_is_the_hosts_memory() -> None:
    result = report_lines("> vitest run", "FATAL ERROR: Zone Allocation failed - process out of memory",
                          *_stack("----- Native stack trace -----")[1:], "Worker exited unexpectedly")
    verdict = result.verdict
    assert verdict.kind.value == "exception" and verdict.subkind is MismatchKind.OOM, verdict.summary
    assert node_heap.PROCESS_WORDS in verdict.summary
    assert not any("--max-old-space-size" in step for step in result.next_steps), result.next_steps


def test_the_words_in_a_sentence_are_no_ending() -> None:
    assert node_heap.endings('if the build prints "FATAL ERROR: Reached heap limit Allocation failed - JavaScript '
                             'heap out of memory", raise the limit\n') == []
    assert node_heap.endings("FATAL ERROR: v8::ToLocalChecked Empty MaybeLocal.\n") == []


def test_a_ranks_node_under_srun_labels_is_that_ranks() -> None:
    result = report_lines("0: step 10 ok", "3: step 10 ok",
                          "3: FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
                          "3:  1: 0xb8d11b node::OOMErrorHandler(char const*, v8::OOMDetails const&) [node]",
                          "3:  2: 0xf01b70 v8::Utils::ReportOOMFailure(v8::internal::Isolate*) [node]",
                          "srun: error: n07: task 3: Aborted (core dumped)")
    assert result.verdict.culprit_ranks == (3,), result.verdict.summary
    assert node_heap.HEAP_WORDS in result.verdict.summary


def test_real_paste_mdn_local_1144() -> None:
    # website-local/mdn-local#1144 (a Node 20 build of MDN's content)
    result = report_lines(
        "<--- JS stacktrace --->", "",
        "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
        "----- Native stack trace -----", "",
        " 1: 0xb8d11b node::OOMErrorHandler(char const*, v8::OOMDetails const&) [node]",
        " 2: 0xf01b70 v8::Utils::ReportOOMFailure(v8::internal::Isolate*, char const*, v8::OOMDetails const&) [node]",
        " 3: 0xf01e57 v8::internal::V8::FatalProcessOutOfMemory(v8::internal::Isolate*, char const*, "
        "v8::OOMDetails const&) [node]",
        " 4: 0x1113aa5  [node]",
        " 5: 0x112b928 v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace, "
        "v8::internal::GarbageCollectionReason, v8::GCCallbackFlags) [node]")
    assert result.verdict.kind.value == "exception" and result.verdict.subkind is MismatchKind.OOM
    assert "Reached heap limit" in result.verdict.summary and not result.verdict.culprit_ranks
    assert not result.ranks, result.ranks
