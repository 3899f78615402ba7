"""Flight Recorder access from inside a worker, without ever importing torch.

Only what the heartbeat needs is computed here: the per-process-group status (cheap: the
dump without entries costs microseconds) and, when a collective stays enqueued but not
completed, its raw FR entry. The agent parses these with ``triage.parsing.flight_recorder``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

FR_VERSION_KEYS = ("version", "pg_config", "pg_status", "comm_lib_version")


def _c10d() -> Any | None:
    """The torch C10d module when torch.distributed is imported and initialised, else None."""
    dist = sys.modules.get("torch.distributed")
    if dist is None:
        return None
    try:
        if not (dist.is_available() and dist.is_initialized()):
            return None
        torch = sys.modules["torch"]
        return torch._C._distributed_c10d
    except Exception:  # noqa: BLE001
        return None


def _c10d_any() -> Any | None:
    """Like :func:`_c10d` but also after destroy_process_group (FR keeps its ring buffer)."""
    if "torch.distributed" not in sys.modules:
        return None
    try:
        return sys.modules["torch"]._C._distributed_c10d
    except Exception:  # noqa: BLE001
        return None


def status() -> dict[str, Any] | None:
    """FR top level without entries (pg_config, pg_status), or None when there is no FR."""
    c10d = _c10d()
    if c10d is None:
        return None
    data: dict[str, Any] = json.loads(c10d._dump_fr_trace_json(False, True))
    return data


def enqueued_not_completed(doc: dict[str, Any]) -> list[tuple[str, int]]:
    """(pg id, seq) of every process group whose last enqueued collective is not completed."""
    out: list[tuple[str, int]] = []
    for pg_id, st in (doc.get("pg_status") or {}).items():
        try:
            enq = int(st.get("last_enqueued_collective", -1))
            done = int(st.get("last_completed_collective", -1))
        except (TypeError, ValueError):
            continue
        if enq > done and enq > 0:
            out.append((str(pg_id), enq))
    return out


def progress(doc: dict[str, Any]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for pg_id, st in (doc.get("pg_status") or {}).items():
        try:
            out[str(pg_id)] = {
                "enqueued": int(st.get("last_enqueued_collective", -1)),
                "completed": int(st.get("last_completed_collective", -1)),
            }
        except (TypeError, ValueError):
            continue
    return out


def in_flight_entries(wanted: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """The raw FR entries for (pg id, collective seq) pairs; costs a full dump (~10 ms / 1000 entries)."""
    c10d = _c10d()
    if c10d is None or not wanted:
        return []
    doc = json.loads(c10d._dump_fr_trace_json(True, False))
    keys = set(wanted)
    found = []
    for entry in reversed(doc.get("entries") or []):
        key = (str(entry.get("pg_id")), int(entry.get("collective_seq_id", -1)))
        if key in keys and not entry.get("is_p2p"):
            found.append(entry)
            keys.discard(key)
            if not keys:
                break
    return found


def full_json() -> bytes | None:
    """The whole FR as JSON bytes (every entry), or None when torch.distributed is not in use."""
    c10d = _c10d_any()
    if c10d is None:
        return None
    data: bytes = c10d._dump_fr_trace_json(True, False)
    return data


def full_pickle() -> bytes | None:
    """The raw pickle FR dump with stack traces (never unpickled here)."""
    c10d = _c10d_any()
    if c10d is None:
        return None
    data: bytes = c10d._dump_fr_trace(True, True, False)
    return data
