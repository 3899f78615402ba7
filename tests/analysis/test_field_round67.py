"""Classes of real pasted logs found by round 67 of the real-world corpus, each tested on a variant written here
(other programs, sizes, devices and surrounding lines than the cases' own), with their negatives."""

from __future__ import annotations

import json

import pytest

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.textclean import clean_text


# A terminal that pads each line to its width (tmux, screen), its lines then coloured or carried in a container
# runtime's JSON records: the padding stands before the colour's closing code, or inside the record's text. The paste
# was joined into one line, its raylet record lost (WM-PO/WMPO#3 under tests/realworld/test_decorated.py's ANSI and
# JSON decorations)
def test_a_padded_coloured_paste_is_joined_as_the_plain_one() -> None:
    width = 64
    record = ("[2025-03-02 11:20:41,907 E 8812 8812] node_manager.cc:3064: 3 Workers (tasks / actors) killed due to "
              "memory pressure (OOM), 0 Workers crashed due to other reasons at node (IP: 10.4.0.17)")
    wrapped = [record[i:i + width] for i in range(0, len(record), width)]
    plain = ["Loading weights took 4.1 s".ljust(width), *wrapped[:-1], wrapped[-1].ljust(width),
             "(raylet)".ljust(width)]
    coloured = [f"\x1b[33m{line}\x1b[0m" for line in plain]
    carried = [json.dumps({"log": line + "\n", "stream": "stdout", "time": "2025-03-02T11:20:42Z"}) for line in plain]
    assert clean_text("\n".join(coloured)).lines == clean_text("\n".join(plain)).lines
    assert clean_text("\n".join(carried)).lines == clean_text("\n".join(plain)).lines
    lines = clean_text("\n".join(coloured)).lines
    assert lines[0] == "Loading weights took 4.1 s"
    assert any("node_manager.cc:3064" in line and "(IP: 10.4.0.17)" in line for line in lines)



_HEAD = "2024-11-02 18:03:07.512934: E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2985] "


# XLA's StreamExecutor allocator's status, as PJRT prints it for each replica that failed: was refused whole, and a
# failure of unknown place where a terminal's wrap split its status word (young-geng/EasyLM#14)
@pytest.mark.parametrize("lines", [
    ((f"{_HEAD}Execution of replica 1 failed: RESOURCE_EXHAUSTED: Failed to allocate request for 1.50GiB "
      "(1610612736B) on device ordinal 1"),
     (f"{_HEAD}Execution of replica 0 failed: RESOURCE_EXHAUSTED: Failed to allocate request for 1.50GiB "
      "(1610612736B) on device ordinal 0")),
    # the wrap inside the status word, elsewhere than the case's
    (f"{_HEAD}Execution of replica 3 failed: RESOURCE_EXH",
     "AUSTED: Failed to allocate request for 96.00MiB (100663296B) on device ordinal 3"),
    # the status alone, as a JAX error's message gives it
    (("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 2.00GiB "
      "(2147483648B) on device ordinal 2"),),
])
def test_xla_allocator_failure_is_an_out_of_memory(lines: tuple[str, ...]) -> None:
    result = report("I1102 18:02:55.100231 140 gpu_helpers.cc:120] XLA backend will use up to 38.1GiB on device 0",
                    *lines)
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert result.verdict.subkind is not None and result.verdict.subkind.value == "oom", result.verdict.summary


def test_xla_allocator_line_reads_as_a_device_oom() -> None:
    found = parse_crash_line("RESOURCE_EXHAUSTED: Failed to allocate request for 640.0KiB (655360B) on device ordinal 5")
    assert found is not None and found.kind is CrashLineKind.CUDA_OOM


@pytest.mark.parametrize("line", [
    # other programs' words: a driver's request of no size, a camera's
    "wma_self_peer_remove: Failed to allocate request for vdev_id 3",
    "Failed to allocate request for camera '/base/soc/i2c0mux/i2c@1/imx219@10'.",
])
def test_other_requests_that_failed_are_no_device_oom(line: str) -> None:
    found = parse_crash_line(line)
    assert found is None or found.kind is not CrashLineKind.CUDA_OOM
