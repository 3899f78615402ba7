"""oneCCL's transport failing at start-up (fix55d item 5, intel/ipex-llm#11877).

oneCCL's ATL (src/atl/ofi/atl_ofi_helper.cpp, atl_ofi.cpp, atl_ofi_comm.cpp) logs under its own head, ``|CCL_ERROR|
file.cpp:LINE function: message``, when no libfabric provider opens while the communicator is set up, then raises
``failed to initialize ATL``: a network error at init of the process that printed it, not a failure of unknown place."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict
from triage.parsing.crashlog import CrashLineKind, parse_crash_line

CASE = REPO / "tests/realworld/cases/intel__ipex-llm__11877/log.txt"


@pytest.mark.parametrize("line", [
    ("2025:03:02-08:11:40:(90211) |CCL_ERROR| atl_ofi_helper.cpp:1158 atl_ofi_get_prov_list: can't create providers "
    "for name cxi"),
    "2025:03:02-08:11:40:(90211) |CCL_ERROR| atl_ofi.cpp:243 init: can't find suitable provider",
    ("2025:03:02-08:11:40:(90211) |CCL_ERROR| atl_ofi_comm.cpp:278 init_transport: condition transport->init(nullptr, "
    "nullptr, &attr, nullptr, pmi) == ATL_STATUS_SUCCESS failed"),
    "failed to initialize ATL",
])
def test_the_transports_lines_are_a_network_error(line: str) -> None:
    found = parse_crash_line(line)
    assert found is not None and found.kind is CrashLineKind.NETWORK, found


def test_the_provider_it_names_is_said() -> None:
    found = parse_crash_line("|CCL_ERROR| atl_ofi_helper.cpp:907 atl_ofi_get_prov_list: can't create providers for "
                             "name tcp")
    assert found is not None and "'tcp'" in found.text, found


@pytest.mark.parametrize("line", [
    # oneCCL's other errors (its worker thread, a kernel) are not its transport's
    "2025:03:02-08:11:40:(90211) |CCL_WARN| atl_ofi_helper.cpp:60 fallback to 'sockets' mode of ze exchange mechanism",
    "the docs say failed to initialize ATL means a provider problem",
])
def test_other_lines_are_not_the_transports(line: str) -> None:
    found = parse_crash_line(line)
    assert found is None or found.kind is not CrashLineKind.NETWORK, found


def test_a_paste_of_the_transports_tail_is_a_network_error(tmp_path: Path) -> None:
    text = ("(RayWorker pid=311) INFO 03-02 08:11:38 model loaded\n"
            "2025:03:02-08:11:40:(90211) |CCL_ERROR| atl_ofi.cpp:243 init: can't find suitable provider\n"
            "failed to initialize ATL\n")
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "network_error", verdict


def test_ipex_llms_vllm_server(tmp_path: Path) -> None:
    verdict = failure_verdict(CASE.read_text(encoding="utf-8"), tmp_path)
    assert verdict["kind"] == "network_error" and verdict["culprit_ranks"] == [], verdict
