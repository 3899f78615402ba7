"""oneCCL's transport failing at its start (fix55d item 5, intel/ipex-llm#11877).

oneCCL (Intel's collective library under PyTorch's XPU/ccl backend, vLLM's and DeepSpeed's on Intel GPUs) logs with
its own head, ``2024:08:21-10:24:26:( 4456) |CCL_ERROR| file.cpp:LINE function: message`` (src/common/log/log.hpp).
Its transport layer, ATL (src/atl/ofi/atl_ofi_helper.cpp, atl_ofi.cpp, atl_ofi_comm.cpp; src/atl/mpi/...), opens a
libfabric provider (or MPI) when the communicator is set up; when none opens it logs ``atl_ofi_get_prov_list:
fi_getinfo error: ret -61, providers 0``, ``can't create providers for name shm``, ``atl_ofi_open_nw_provs: can not
open network providers``, ``init: can't find suitable provider``, ``init_transport: condition transport->init(...) ==
ATL_STATUS_SUCCESS failed`` and raises ``failed to initialize ATL``. Each is the transport's failure at start-up: a
network error at init of the process that printed it (its pid, no rank), not a failure of unknown place. What to look
at: the provider it names (``shm``: the container's /dev/shm, docker's --shm-size; ``cxi``, ``verbs``, ``tcp``: the
fabric), FI_PROVIDER, or CCL_ATL_TRANSPORT=mpi."""

from __future__ import annotations

from triage.lazy_regex import lazy_regex

# (the words of its lines, which crashlog's line gate passes: triage.parsing.crashlog.MARKERS; not a whole-text reader's
# MARKERS)
LINE_WORDS = ("CCL_ERROR", "failed to initialize ATL")
# oneCCL's own words anywhere (its log's head, its ATL's sources, its name, this reader's note): the advice for its
# transport is its own knobs (CCL_ATL_TRANSPORT, FI_PROVIDER, CCL_ZE_IPC_EXCHANGE, CCL_LOG_LEVEL), never NCCL's
WORDS = lazy_regex(r"\|CCL_(?:ERROR|FATAL|WARN)\||\boneCCL\b|\batl_ofi\w*|\bfailed to initialize ATL\b")
_ATL = lazy_regex(r"\|CCL_(?:ERROR|FATAL)\|\s+(?:atl_\w+\.cpp|atl\.cpp):\d+|^\s*failed to initialize ATL\b")
_PROVIDER = lazy_regex(r"can't create providers for name (?P<name>[\w<>-]+)")
NOTE = ("oneCCL's transport could not open a libfabric provider at start-up (shm: the container's /dev/shm, "
        "docker --shm-size; else FI_PROVIDER or CCL_ATL_TRANSPORT=mpi)")


def atl_failure(text: str) -> str | None:
    """The finding's words for a line of oneCCL's transport failing at start-up (above), or None."""
    if "CCL_" not in text and "ATL" not in text:
        return None
    if _ATL.search(text) is None:
        return None
    provider = _PROVIDER.search(text)
    note = NOTE.replace("a libfabric provider", f"libfabric's provider {provider.group('name')!r}") if provider \
        else NOTE
    return f"{note}: {text}"
