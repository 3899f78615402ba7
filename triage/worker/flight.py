"""Flight Recorder access from inside a worker, without ever importing torch.

Only what the heartbeat needs is computed here: the per-process-group status (cheap: the
dump without entries costs microseconds) and, when a collective stays enqueued but not
completed, its raw FR entry. The agent parses these with ``triage.parsing.flight_recorder.parse``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

FR_VERSION_KEYS = ("version", "pg_config", "pg_status", "comm_lib_version")
# The private torch APIs this module calls; each is looked up before use (torch 2.4 has none of the
# FR JSON dumps): a missing one is said in the heartbeat's fr_state, never raised into the rank.
FR_JSON_API = "_dump_fr_trace_json"
FR_PICKLE_API = "_dump_fr_trace"
SEQ_API = "_get_sequence_number_for_group"
C10D_FILE = os.sep + os.path.join("distributed", "distributed_c10d.py")
TORCH_DISTRIBUTED = os.sep + os.path.join("torch", "distributed") + os.sep
MAX_FRAMES = 128


class Unavailable(RuntimeError):
    """This torch has no Flight Recorder dump (the reason is the message)."""


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
    if c10d is None or not hasattr(c10d, FR_JSON_API):
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


def _accepts_only_active(dump: Any) -> bool:
    """Whether this torch's JSON dump takes ``onlyActive`` (read off its signature, never guessed from the
    version): with it, entries the watchdog saw complete (NCCL) are left out of the dump itself."""
    return "onlyActive" in str(getattr(dump, "__doc__", "") or "")


def in_flight_entries(wanted: list[tuple[str, int]], only_active: bool = True) -> list[dict[str, Any]]:
    """The raw FR entries for (pg id, collective seq) pairs. It costs a dump, which holds the GIL for all
    of it (0.5-1 s with 20,000 gloo entries): with ``only_active``, only active entries where the dump can
    leave the rest out (NCCL; gloo marks none completed, so its dump stays whole), with no stack traces
    (the JSON dump has none), and the wanted entries are read off the dump's tail, not parsed out of the
    whole of it. The heartbeat thread calls it; numerics (opt-in) calls it on the main thread, at most
    twice a rank (its first non-finite value and the one after the switch)."""
    c10d = _c10d()
    if c10d is None or not wanted or not hasattr(c10d, FR_JSON_API):
        return []
    dump = c10d._dump_fr_trace_json
    data = dump(True, True) if only_active and _accepts_only_active(dump) else dump(True)
    return entries_from_tail(bytes(data), wanted)


ENTRY_START = b'{"collective_seq_id":'


def entries_from_tail(data: bytes, wanted: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """The entries for ``wanted`` (pg id, collective seq), newest first, from a JSON dump's bytes.

    torch writes each entry with its keys sorted, so an entry starts ``{"collective_seq_id":`` (a quote in
    a JSON string is escaped, so those bytes are never inside one). Entries are decoded one at a time from
    the end, and the search for a group stops at its first entry older than the one wanted: the pending
    collectives are the newest, so this reads a few entries, not 20,000 (parsing the whole dump held the
    GIL 0.73 s at 20,000 entries). A dump written another way is parsed whole."""
    keys = set(wanted)
    oldest = {pg: seq for pg, seq in sorted(wanted, reverse=True)}
    found: list[dict[str, Any]] = []
    decoder = json.JSONDecoder()
    end = len(data)
    decoded = 0
    while keys:
        at = data.rfind(ENTRY_START, 0, end)
        if at < 0:
            break
        text = data[at:end].decode("utf-8", "replace")     # this entry, up to the next one's start
        end = at
        try:
            entry, _ = decoder.raw_decode(text)
        except ValueError:
            entry = None
        if not isinstance(entry, dict):
            if decoded:
                continue
            return _entries_parsed_whole(data, wanted)
        decoded += 1
        try:
            key = (str(entry.get("pg_id")), int(entry.get("collective_seq_id", -1)))
        except (TypeError, ValueError):
            continue
        if entry.get("is_p2p"):
            continue
        if key in keys:
            found.append(entry)
            keys.discard(key)
        elif key[0] in oldest and key[1] < oldest[key[0]]:
            keys -= {k for k in keys if k[0] == key[0]}     # older than the wanted one: not in this dump
    if not decoded and keys:
        return _entries_parsed_whole(data, wanted)
    return found


def _entries_parsed_whole(data: bytes, wanted: list[tuple[str, int]]) -> list[dict[str, Any]]:
    doc = json.loads(data)
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
    if not hasattr(c10d, FR_JSON_API):
        raise Unavailable(missing_reason(FR_JSON_API))
    data: bytes = c10d._dump_fr_trace_json(True, False)
    return data


def full_pickle() -> bytes | None:
    """The raw pickle FR dump with stack traces (never unpickled here)."""
    c10d = _c10d_any()
    if c10d is None:
        return None
    if not hasattr(c10d, FR_PICKLE_API):
        raise Unavailable(missing_reason(FR_PICKLE_API))
    data: bytes = c10d._dump_fr_trace(True, True, False)
    return data


# -- without a Flight Recorder ---------------------------------------------------------------
# torch 2.4 has no FR for gloo, and TORCH_FR_BUFFER_SIZE=0 turns it off: the heartbeat then reports
# the process groups' own sequence numbers (bumped when a collective is enqueued) as progress, and
# the collective the main thread is in, read from its Python frame (sys._current_frames: no import,
# nothing called in torch but the sequence-number getter).
_seen: dict[str, Any] = {"seqs": {}, "moved": None, "call": None, "since": None, "reason": None}


def _torch_version() -> str:
    torch = sys.modules.get("torch")
    return str(getattr(torch, "__version__", "?")).split("+")[0]


def _backend() -> str | None:
    dist = sys.modules.get("torch.distributed")
    try:
        return str(dist.get_backend()) if dist is not None else None
    except Exception:  # noqa: BLE001
        return None


def missing_reason(api: str) -> str:
    """Why there is no FR: ``torch 2.4.1 has no Flight Recorder for gloo (no _dump_fr_trace_json)``."""
    backend = _backend()
    for_what = f" for {backend}" if backend else ""
    return f"torch {_torch_version()} has no Flight Recorder{for_what} (no {api})"


def _off_reason() -> str:
    for name in ("TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE"):
        if os.environ.get(name, "").strip() == "0":
            return f"the Flight Recorder is off ({name}=0)"
    backend = _backend()     # None after destroy_process_group: the sentence names no backend then
    return f"torch {_torch_version()}'s Flight Recorder recorded no {backend + ' ' if backend else ''}collective"


def group_seqs() -> dict[str, int]:
    """pg name -> the group's sequence number (collectives enqueued), for groups that ran one."""
    dist = sys.modules.get("torch.distributed")
    c10d = getattr(dist, "distributed_c10d", None)
    world = getattr(c10d, "_world", None)
    names = getattr(world, "pg_names", None)
    if not isinstance(names, dict):
        return {}
    out: dict[str, int] = {}
    for group, name in list(names.items()):
        getter = getattr(group, SEQ_API, None)
        if getter is None:
            continue
        seq = _call_int(getter)
        if seq is not None and seq > 0:
            out[str(name)] = seq
    return out


def _call_int(getter: Any) -> int | None:
    try:
        return int(getter())
    except Exception:  # noqa: BLE001 - a group being destroyed
        return None


def main_thread_collective() -> tuple[str, str] | None:
    """(torch.distributed call, the caller's ``file:line``) the main thread is in, if any."""
    ident = threading.main_thread().ident
    frame = sys._current_frames().get(ident) if ident is not None else None
    found: tuple[str, str] | None = None
    depth = 0
    while frame is not None and depth < MAX_FRAMES:
        code = frame.f_code
        if code.co_filename.endswith(C10D_FILE) and not code.co_name.startswith("_") and found is None:
            caller = frame.f_back
            while caller is not None and TORCH_DISTRIBUTED in caller.f_code.co_filename:
                caller = caller.f_back
            where = f"{caller.f_code.co_filename}:{caller.f_lineno}" if caller is not None else "?"
            found = (code.co_name, where)
        frame = frame.f_back
        depth += 1
    del frame
    return found


def without_recorder(data: dict[str, Any], doc: dict[str, Any] | None) -> None:
    """Fill a heartbeat when the FR gave nothing: ``fr_state`` says why, ``progress`` holds each
    group's sequence number, ``waiting_in`` the collective the main thread is in (op, pg, seq,
    since, where). Before the first collective (or outside torch.distributed) it changes nothing."""
    c10d = _c10d()
    seqs = group_seqs() if c10d is not None else {}
    if not seqs:
        if _seen.get("reason"):         # after destroy_process_group: still said, for the report
            data["fr_state"] = "unavailable: " + str(_seen["reason"])
        return
    if doc is None:
        _seen["reason"] = (missing_reason(FR_JSON_API) if not hasattr(c10d, FR_JSON_API)
                           else "the Flight Recorder could not be read")
    else:
        _seen["reason"] = _off_reason()
    data["fr_state"] = "unavailable: " + str(_seen["reason"])
    data["progress"] = {pg: {"enqueued": seq} for pg, seq in seqs.items()}
    moved = [pg for pg, seq in seqs.items() if _seen["seqs"].get(pg) != seq]
    if moved:
        _seen["moved"] = moved[0] if len(moved) == 1 else max(moved, key=lambda pg: seqs[pg])
    _seen["seqs"] = seqs
    call = main_thread_collective()
    pg = _seen["moved"] if _seen["moved"] in seqs else min(seqs)
    key = (call[0], pg, seqs[pg]) if call else None
    if key != _seen["call"]:
        _seen["call"], _seen["since"] = key, time.time()
    data["waiting_in"] = None if call is None else {
        "op": call[0], "pg": pg, "seq": seqs[pg], "since": _seen["since"], "where": call[1]}


def exit_state(data: bytes | None) -> str | None:
    """The Flight Recorder's state at exit, as a heartbeat's ``fr_state``: ``ok`` when it recorded
    collectives, ``unavailable: why`` when torch.distributed was used and it recorded none (no FR in
    this torch, or off), None when torch.distributed was never imported."""
    if _seen.get("reason"):
        return "unavailable: " + str(_seen["reason"])
    c10d = _c10d_any()
    if c10d is None:
        return None
    if not hasattr(c10d, FR_JSON_API):
        return "unavailable: " + missing_reason(FR_JSON_API)
    return "ok" if has_entries(data) else "unavailable: " + _off_reason()


def has_entries(data: bytes | None) -> bool:
    """Whether a full JSON dump holds at least one entry, read off its ``"entries": [`` without parsing it:
    at exit, parsing the whole dump (9.4 MB with 20,000 entries) held the GIL another 0.3-0.6 s, after the
    dump itself, while the rank's other threads waited. In a JSON text a quote inside a string is escaped,
    so ``"entries"`` followed by a colon is a key."""
    if not data:
        return False
    key = b'"entries"'
    at = data.find(key)
    while at >= 0:
        rest = data[at + len(key):at + len(key) + 64].lstrip()
        if rest.startswith(b":"):
            rest = rest[1:].lstrip()
            return rest.startswith(b"[") and not rest[1:].lstrip().startswith(b"]")
        at = data.find(key, at + len(key))
    return False
