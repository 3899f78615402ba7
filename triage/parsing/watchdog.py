"""PyTorch ProcessGroupNCCL watchdog messages (timeouts, companions, heartbeat, desync report).

Handles PyTorch 1.x (no SeqNum/NumelIn) through 2.x, with or without the ``[rankR]:`` prefix,
glog headers (``[E ProcessGroupNCCL.cpp:N]``, ``[E1122 10:00:00.123456789 ProcessGroupNCCL.cpp:N]``)
and every process-group tag (``[Rank 0]``, ``[PG 1 Rank 0]``, ``[PG 0 (default_pg) Rank 7]``,
``[PG ID 0 PG GUID 0(default_pg) Rank 1]``).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from triage.lazy_regex import lazy_regex
from triage.parsing.names import torch_op


class WatchdogKind(str, enum.Enum):
    TIMEOUT = "timeout"                        # Watchdog caught collective operation timeout
    EXCEPTION_DETECTED = "exception_detected"  # Exception (either an error or timeout) detected by watchdog
    TIMEOUT_AT = "timeout_at"                  # Timeout at NCCL work: S, ...
    HEARTBEAT_TIMEOUT = "heartbeat_timeout"    # Heartbeat monitor timed out / watchdog got stuck
    DESYNC = "desync"                          # TORCH_NCCL_DESYNC_DEBUG report
    SERVING_STALL = "serving_stall"            # a serving engine's scheduler watchdog (SGLang's): no batch finished


# the event detail of a heartbeat timeout (the watchdog thread stuck: no collective named)
HEARTBEAT_DETAIL = "heartbeat monitor timed out"
# SGLang's scheduler watchdog (python/sglang/srt/managers/scheduler.py, watchdog_thread): when the scheduler's current
# batch made no forward progress for --watchdog-timeout seconds it logs "Watchdog timeout (self.watchdog_timeout=300)"
# under its "[time TPn]" head, then SIGQUITs the server, which kills its whole process tree ("Received sigquit from a
# child process", the shell's "Killed"). Every TP rank's scheduler runs the same batch: the line says the model's
# forward hung on the group (a collective some rank never joined, or a kernel), not which rank held it up.
_SGLANG_WATCHDOG = lazy_regex(r"\bWatchdog timeout \(self\.watchdog_timeout=(?P<seconds>\d+(?:\.\d+)?)\)")
SERVING_STALL_DETAIL = "SGLang's scheduler watchdog saw no forward batch finish"
# vLLM v1's executor (vllm/v1/executor/multiproc_executor.py, collective_rpc): "TimeoutError: RPC call to
# execute_model timed out." when its workers did not answer within VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS (300 by default;
# "sample_tokens" and other methods alike): the same stall of the model's forward, seen from the engine core
_VLLM_RPC_TIMEOUT = lazy_regex(r"\bRPC call to (?P<method>\w+) timed out\.")
VLLM_STALL_DETAIL = "vLLM's executor got no answer from its workers"
SERVING_STALL_DETAILS = (SERVING_STALL_DETAIL, VLLM_STALL_DETAIL)


@dataclass(frozen=True)
class WatchdogEvent:
    """A line of the NCCL watchdog of a process group."""
    kind: WatchdogKind
    rank: int | None
    pg: str | None
    pg_desc: str | None
    seq: int | None
    op: str | None                  # torch name
    numel_in: int | None
    numel_out: int | None
    timeout_ms: int | None
    ran_for_ms: int | None
    last_enqueued: int | None
    last_completed: int | None
    timestamp: str | None           # as glog printed it: "1122 10:00:00.123456789"
    raw: str
    ranks: tuple[int, ...] = ()     # desync: the ranks the report blames
    note: str | None = None         # desync: timeout_at_collective | never_joined | joined_not_finished |
                                    # finished_not_joined


_MARKERS = (
    "Watchdog caught", "detected by watchdog", "Timeout at NCCL work", "Heartbeat monitor timed out",
    "watchdog got stuck", "no heartbeat of its watchdog", "watchdog hang", "lagging", "mismatched ranks", "Desync",
    "Timeout at collective:", "joined but didn't finish", "but didn't join collective", "timed out in blocking wait",
)
# fewer, shorter markers for whole-text scans ("atchdog" covers three of the above)
_SCAN_MARKERS = ("atchdog", "timed out in blocking wait",
                 "Timeout at NCCL work", "Heartbeat monitor timed out", "lagging", "mismatched ranks",
                 "Desync", "Timeout at collective:", "joined but didn't finish", "but didn't join collective")
# For callers that scan raw bytes (the agent's live output): a chunk holding none of these has no
# watchdog message.
SCAN_MARKERS_BYTES: tuple[bytes, ...] = tuple(marker.encode() for marker in _SCAN_MARKERS)
_RANK_PREFIX = lazy_regex(r"\[rank(\d+)\]:")
_GLOG = lazy_regex(r"\[[EWIF](\d{4} \d\d:\d\d:\d\d(?:\.\d+)?)?\s*[\w.]*\.(?:cpp|cc|h|hpp):\d+\]")
_PG_TAG = lazy_regex(
    r"\[(?:PG (?:ID )?(?P<pg>\d+)(?: PG GUID (?P<guid>\w+))?\s*(?:\((?P<desc>[^)]*)\))?\s+)?"
    r"Rank (?P<rank>\d+)\]"
)
_WORK = lazy_regex(r"Work\w*\(((?:[^()]|\(ms\))*)\)")
_KV = lazy_regex(r"(\w+(?:\(ms\))?)=([^,\s)]+)")
_RAN_FOR = lazy_regex(r"ran for (\d+) milliseconds")
_COMPANION = lazy_regex(
    r"(?:work|NCCL work):\s*(-?\d+),\s*last enqueued NCCL work:\s*(-?\d+),\s*last completed NCCL work:\s*(-?\d+)"
)
# PyTorch 2.7+: "failure detected by watchdog at work sequence id: 1085 PG status: last enqueued work: 1119,
# last completed work: 1084"; and a companion line cut after its work number ("Timeout at NCCL work: 1580")
_COMPANION_NEW = lazy_regex(r"work sequence id:\s*(-?\d+)(?:\s*PG status:\s*last enqueued work:\s*(-?\d+),"
                            r"\s*last completed work:\s*(-?\d+))?")
_COMPANION_CUT = lazy_regex(r"(?:at work|NCCL work):\s*(-?\d+)\s*[,.]?\s*$")
_STUCK = lazy_regex(r"got stuck for (\d+) seconds")
_HCCL_OP = lazy_regex(r"tag\[(?P<op>AllReduce|AllGather|ReduceScatter|Broadcast|AlltoAllV?|AllToAllV?|Reduce|Scatter)_")
# TORCH_NCCL_DESYNC_DEBUG report (c10d TraceUtils.h retrieveDesyncReport), one finding per line
_DESYNC_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("timeout_at_collective", lazy_regex(r"\[(?P<ranks>\d+)\] Timeout at collective: (?P<op>[^,]+), #(?P<seq>\d+)")),
    ("never_joined", lazy_regex(r"ranks \[(?P<ranks>[\d,\s]*)\] are the lagging ranks")),
    ("joined_not_finished", lazy_regex(r"\[(?P<ranks>[\d,\s]*)\] joined but didn't finish collective #(?P<seq>\d+)")),
    ("finished_not_joined", lazy_regex(
        r"\[(?P<ranks>[\d,\s]*)\] finished collective #\d+, but didn't join collective #(?P<seq>\d+)")),
)


def _opt_int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _kind(line: str) -> WatchdogKind | None:
    # (TORCH_NCCL_BLOCKING_WAIT: "[Rank 4] Work WorkNCCL(SeqNum=9, ...) timed out in blocking wait.")
    if "Watchdog caught" in line or ("timed out in blocking wait" in line and "WorkNCCL(" in line):
        return WatchdogKind.TIMEOUT
    if "detected by watchdog" in line:
        return WatchdogKind.EXCEPTION_DETECTED
    if "Timeout at NCCL work" in line:
        return WatchdogKind.TIMEOUT_AT
    # Ascend HCCL's task timeout of a collective (EI0002): "The wait execution of the Notify register times out.
    # Reason: The Notify register has not received the Notify record from remote rank: [24]. base information:
    # [... tag[AllReduce_group_name_1654...] ...]": a rank of the group never joined; its ranks are the group's
    if "Notify register times out" in line:
        return WatchdogKind.TIMEOUT
    # the Ascend runtime's report of the same on the device (EI9999): "The error from device(chipId:0, dieId:0), serial
    # number is 1, hccl fftsplus task timeout occurred during task execution, stream_id:4, ... stuck notify num:7,
    # timeout:1836." (then rtDeviceSynchronize's "[task timeout]" and the RuntimeError of npuSynchronizeDevice that
    # carries it): an HCCL collective's task that never completed, a rank of the group never joined
    if "hccl fftsplus task timeout" in line.lower():
        return WatchdogKind.TIMEOUT
    if "Heartbeat monitor timed out" in line or "watchdog got stuck" in line:
        return WatchdogKind.HEARTBEAT_TIMEOUT
    if "no heartbeat of its watchdog" in line:
        return WatchdogKind.HEARTBEAT_TIMEOUT
    # PyTorch 2.4+'s heartbeat monitor, last words before it aborts the process ("[F...] [PG ID 0 ... Rank 1]
    # Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.");
    # its other reason, "due to collective timeout or exception", follows a timeout and is that timeout's echo
    if "due to ProcessGroupNCCL watchdog hang" in line:
        return WatchdogKind.HEARTBEAT_TIMEOUT
    if "Watchdog timeout (self.watchdog_timeout=" in line and _SGLANG_WATCHDOG.search(line) is not None:
        return WatchdogKind.SERVING_STALL
    if "RPC call to " in line and _VLLM_RPC_TIMEOUT.search(line) is not None:
        return WatchdogKind.SERVING_STALL
    if "lagging ranks" in line or "mismatched ranks" in line or ("Desync" in line and "rank" in line.lower()) \
            or "Timeout at collective:" in line or "didn't join collective" in line \
            or "joined but didn't finish" in line:
        return WatchdogKind.DESYNC
    return None


def parse_watchdog_line(line: str) -> WatchdogEvent | None:
    """One watchdog event from a line, or None. Never raises."""
    kind = _kind(line)
    if kind is None:
        return None
    tag = _PG_TAG.search(line)
    prefix = _RANK_PREFIX.search(line)
    # "[rank13]:" is the process's global rank; the tag's "Rank 1" is its rank in the tagged group
    # ("[PG ID 3 ...Rank 1]", or the bare "[Rank 1]" of a watchdog line, which is group-local too)
    rank = int(prefix.group(1)) if prefix else (_opt_int(tag.group("rank")) if tag else None)
    glog = _GLOG.search(line)
    fields: dict[str, str] = {}
    work = _WORK.search(line)
    if work:
        fields = dict(_KV.findall(work.group(1)))
    seq = _opt_int(fields.get("SeqNum"))
    enqueued = completed = None
    companion = _COMPANION.search(line) or _COMPANION_NEW.search(line)
    if companion is None and kind in (WatchdogKind.EXCEPTION_DETECTED, WatchdogKind.TIMEOUT_AT):
        cut = _COMPANION_CUT.search(line)
        seq = seq if seq is not None or cut is None else _opt_int(cut.group(1))
    if companion:
        seq = seq if seq is not None else _opt_int(companion.group(1))
        enqueued, completed = _opt_int(companion.group(2)), _opt_int(companion.group(3))
    ran_for = _RAN_FOR.search(line)
    timeout_ms = _opt_int(fields.get("Timeout(ms)"))
    stuck = _STUCK.search(line)
    if stuck and timeout_ms is None:
        timeout_ms = int(stuck.group(1)) * 1000
    if kind is WatchdogKind.SERVING_STALL and (sglang := _SGLANG_WATCHDOG.search(line)) is not None:
        timeout_ms = int(float(sglang.group("seconds")) * 1000)
    ranks: tuple[int, ...] = ()
    op = fields.get("OpType")
    if op is None and (hccl := _HCCL_OP.search(line)) is not None:
        op = hccl.group("op")
    if kind is WatchdogKind.SERVING_STALL and (rpc := _VLLM_RPC_TIMEOUT.search(line)) is not None:
        op = rpc.group("method")        # (the executor's method, no collective)
    note = None
    if kind is WatchdogKind.DESYNC:
        for name, form in _DESYNC_FORMS:
            found = form.search(line)
            if found:
                note, ranks = name, tuple(int(x) for x in re.findall(r"\d+", found.group("ranks")))
                groups = found.groupdict()
                seq = _opt_int(groups.get("seq")) if groups.get("seq") else seq
                op = groups.get("op") or op
                break
    return WatchdogEvent(
        kind=kind, rank=rank, pg=tag.group("pg") if tag else None,
        pg_desc=(tag.group("desc") or None) if tag else None, seq=seq,
        op=op if kind is WatchdogKind.SERVING_STALL else torch_op(op) if op else None,
        numel_in=_opt_int(fields.get("NumelIn")),
        numel_out=_opt_int(fields.get("NumelOut")), timeout_ms=timeout_ms,
        ran_for_ms=_opt_int(ran_for.group(1)) if ran_for else None,
        last_enqueued=enqueued, last_completed=completed,
        timestamp=glog.group(1) if glog and glog.group(1) else None, raw=line.rstrip("\r\n"), ranks=ranks,
        note=note,
    )


def _marked_lines(text: str, markers: tuple[str, ...]) -> list[str]:
    """The lines of ``text`` that contain a marker, in order, found with C-speed ``find``."""
    spans: set[tuple[int, int]] = set()
    for marker in markers:
        index = text.find(marker)
        while index >= 0:
            start = text.rfind("\n", 0, index) + 1
            end = text.find("\n", index)
            end = len(text) if end < 0 else end
            spans.add((start, end))
            index = text.find(marker, end)
    return [text[start:end] for start, end in sorted(spans)]


def scan_watchdog(text: str) -> tuple[WatchdogEvent, ...]:
    """Every watchdog event in a text (a whole log), in order. Only lines holding a marker are
    looked at, and they are found at C speed, so a large log costs a few ``find`` passes."""
    events: list[WatchdogEvent] = []
    for line in _marked_lines(text, _SCAN_MARKERS):
        event = parse_watchdog_line(line.rstrip("\r"))
        if event is not None:
            events.append(event)
    return tuple(events)
