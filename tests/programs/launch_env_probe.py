"""Worker for tests/launch: prints what the in-worker agent set up, then exits 0 (no torch)."""

from __future__ import annotations

import json
import os
import resource
import sys


def main() -> None:
    info = {
        "rank": os.environ.get("RANK"),
        "core_soft": resource.getrlimit(resource.RLIMIT_CORE)[0],
        "nccl_debug": os.environ.get("NCCL_DEBUG"),
        "nccl_subsys": os.environ.get("NCCL_DEBUG_SUBSYS"),
        "nccl_file": os.environ.get("NCCL_DEBUG_FILE"),
        "user_sitecustomize": os.environ.get("USER_SITECUSTOMIZE_RAN"),
        "sitecustomize_file": getattr(sys.modules.get("sitecustomize"), "__file__", None),
        "line_buffering": sys.stdout.line_buffering,
        "triage_loaded": "triage.worker.agent" in sys.modules,
        "torch_loaded": "torch" in sys.modules,
    }
    info["restart"] = os.environ.get("TORCHELASTIC_RESTART_COUNT")
    print("PROBE " + json.dumps(info), flush=True)
    if os.environ.get("PROBE_FAIL_FIRST") and info["restart"] == "0":
        sys.exit(5)
    if os.environ.get("PROBE_RAISE") is not None and os.environ.get("PROBE_RAISE") == os.environ.get("RANK"):
        raise ValueError("probe failure on purpose")


if __name__ == "__main__":
    main()
