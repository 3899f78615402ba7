"""NCCL debug lines (NCCL_DEBUG=INFO, subsystems INIT and COLL) and WARN lines, 2.3 to 2.30.

``parse_nccl_line`` turns one line into an event; ``triage.parsing.nccl.tracker.NcclTracker``
follows a live stream or a whole file and keeps, per (host, pid, comm), the last operation, and maps each comm to its
rank through the init lines. The tracker is built for throughput: it skips lines without
"NCCL" at C speed, matches collective lines with one anchored regex and keeps the raw line,
parsing it fully only when asked (``last_ops``).

Its ops become Collectives (in ``triage.load.logs.records``) with ``seq = opCount + 1``: NCCL's
opCount counts from 0 per communicator, FR's collective_seq_id counts from 1, so in the simple
case (one NCCL op per collective) the two line up. ``pg`` is the commId (the same on every rank
of a communicator, NCCL 2.17+) when an init line gave it, else "comm:" + the comm pointer (only
meaningful inside one process).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeAlias

from triage.lazy_regex import lazy_regex
from triage.parsing.log_prefix import split_rank_prefix
from triage.parsing.names import redop_name, torch_dtype, torch_op


@dataclass(frozen=True)
class NcclColl:
    """An NCCL collective line (NCCL_DEBUG_SUBSYS=COLL)."""
    host: str
    pid: int
    tid: int | None
    cuda_dev: int | None
    op: str                      # torch name ("all_reduce"); "unknown" for NCCL 2.3 lines
    op_count: int
    count: int | None
    dtype: str | None            # torch name
    redop: str | None
    root: int | None             # the peer for send/recv
    comm: str                    # the comm pointer as printed
    nranks: int | None
    sendbuff: str | None
    recvbuff: str | None
    launcher_rank: int | None = None


@dataclass(frozen=True)
class NcclInit:
    """An NCCL communicator's init line."""
    host: str
    pid: int
    comm: str
    rank: int
    nranks: int | None
    cuda_dev: int | None
    bus_id: str | None
    comm_id: str | None
    parent: str | None
    color: int | None
    key: int | None
    function: str | None
    complete: bool = False      # its "Init COMPLETE" line (the communicator's set-up ended); else a line of its set-up


@dataclass(frozen=True)
class NcclWarn:
    """An NCCL WARN line."""
    host: str
    pid: int
    tid: int | None
    cuda_dev: int | None
    source_file: str | None
    source_line: int | None
    message: str
    timestamp: str | None
    function: str | None
    launcher_rank: int | None = None


NcclEvent: TypeAlias = NcclColl | NcclInit | NcclWarn

# host:pid:tid [dev] ... NCCL INFO|WARN ; host excludes ':' '[' ']' and spaces so launcher
# prefixes glued in front ("[rank3]:node07:...") are left out of it.
_HEAD = lazy_regex(
    r"(?:\[(?P<ts>\d{4}-\d\d-\d\d[ T][\d:.,]+)\]\s*)?"
    r"(?P<host>[\w.-]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\]"
    r"(?P<mid>[^\[\]]{0,200}?)\s*NCCL (?P<level>INFO|WARN|TRACE) "
)
_KEYS_WITH_VALUE = frozenset(
    ("opCount", "sendbuff", "recvbuff", "count", "datatype", "op", "root", "comm", "stream", "size",
     "nranks")
)
_FIELD = lazy_regex(r"\b(comm|rank|nranks|nRanks|cudaDev|busId|commId|parent|color|key|nvmlDev) (\S+)")
_INIT_FUNC = lazy_regex(r"^\s*(nccl\w+|init\w*)\b")
_MID_FILE = lazy_regex(r"(\S+\.(?:cc|cu|c|cpp|h|hpp)):(\d+)")
_MID_FUNC = lazy_regex(r"\(?([A-Za-z_][\w:]*)\)?")


def _int_or_none(text: str | None, base: int = 10) -> int | None:
    if text is None:
        return None
    try:
        return int(text.strip().rstrip(",;]"), base)
    except ValueError:
        return None


def _coll_from_tokens(body: str) -> dict[str, str] | None:
    """Key/value fields of a collective body, tolerant of missing OPNAME (2.3), extra fields
    and truncation. None unless opCount and comm are both present."""
    tokens = body.split()
    fields: dict[str, str] = {}
    if tokens and tokens[0].endswith(":") and tokens[0] != "opCount:":
        fields["opname"] = tokens[0][:-1]
        tokens = tokens[1:]
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith(("[nranks=", "nranks=")):
            fields["nranks"] = tok.split("=", 1)[1].rstrip("]")
            i += 1
        elif tok in _KEYS_WITH_VALUE and i + 1 < len(tokens):
            fields.setdefault(tok, tokens[i + 1])
            i += 2
        else:
            i += 1
    if "opCount" not in fields or "comm" not in fields:
        return None
    return fields


def _make_coll(host: str, pid: int, tid: int | None, dev: int | None, f: dict[str, str],
               launcher_rank: int | None) -> NcclColl | None:
    op_count = _int_or_none(f["opCount"], 16)
    if op_count is None:
        return None
    dtype_code = f.get("datatype")
    redop = f.get("op")
    return NcclColl(
        host=host, pid=pid, tid=tid, cuda_dev=dev,
        op=torch_op(f["opname"]) if "opname" in f else "unknown", op_count=op_count,
        count=_int_or_none(f.get("count")),
        dtype=torch_dtype(dtype_code) if dtype_code is not None else None,
        redop=redop_name(redop) if redop is not None else None,
        root=_int_or_none(f.get("root")), comm=f["comm"], nranks=_int_or_none(f.get("nranks")),
        sendbuff=f.get("sendbuff"), recvbuff=f.get("recvbuff"), launcher_rank=launcher_rank,
    )


def _make_init(host: str, pid: int, dev: int | None, body: str) -> NcclInit | None:
    fields: dict[str, str] = {}
    for key, value in _FIELD.findall(body):
        fields.setdefault("nranks" if key == "nRanks" else key, value)
    rank = _int_or_none(fields.get("rank"))
    if "comm" not in fields or rank is None:
        return None
    func = _INIT_FUNC.match(body)
    return NcclInit(
        host=host, pid=pid, comm=fields["comm"], rank=rank, nranks=_int_or_none(fields.get("nranks")),
        cuda_dev=_int_or_none(fields.get("cudaDev"), 10) if "cudaDev" in fields else dev,
        bus_id=fields.get("busId"), comm_id=fields.get("commId"), parent=fields.get("parent"),
        color=_int_or_none(fields.get("color")), key=_int_or_none(fields.get("key")),
        function=func.group(1) if func else None, complete="Init COMPLETE" in body,
    )


def _make_warn(host: str, pid: int, tid: int | None, dev: int | None, mid: str, ts: str | None,
               body: str, launcher_rank: int | None) -> NcclWarn:
    src = _MID_FILE.search(mid)
    func = None
    rest = _MID_FILE.sub("", mid).strip()
    for tok in rest.split():
        fm = _MID_FUNC.fullmatch(tok)
        if fm and not tok.replace(".", "").isdigit():
            func = fm.group(1)
    return NcclWarn(
        host=host, pid=pid, tid=tid, cuda_dev=dev,
        source_file=src.group(1) if src else None, source_line=int(src.group(2)) if src else None,
        message=body.strip(), timestamp=ts, function=func, launcher_rank=launcher_rank,
    )


_TRAILING_RANK = lazy_regex(r"(?:\[rank(\d+)\]:|\[[A-Za-z0-9][\w.-]*:(\d+)\][ +:]?)\s?\Z")


def _launcher_rank(line: str, start: int, first: bool) -> int | None:
    """The rank a launcher prefix in front of an NCCL head gives. For a segment glued after
    another one, only a prefix right before its head counts."""
    if start <= 0:
        return None
    if not first:
        match = _TRAILING_RANK.search(line, max(0, start - 80), start)
        return int(match.group(1) or match.group(2)) if match else None
    prefix = split_rank_prefix(line[:start].rstrip() + " x")
    return None if prefix.local else prefix.rank


def _parse_segment(line: str, head: re.Match[str], end: int, first: bool) -> NcclEvent | None:
    host, pid = head.group("host"), int(head.group("pid"))
    tid, dev = int(head.group("tid")), int(head.group("dev"))
    body = line[head.end():end]
    lrank = _launcher_rank(line, head.start(), first)
    if head.group("level") == "WARN":
        return _make_warn(host, pid, tid, dev, head.group("mid"), head.group("ts"), body, lrank)
    if "opCount" in body:
        fields = _coll_from_tokens(body)
        return _make_coll(host, pid, tid, dev, fields, lrank) if fields else None
    if "comm " in body and ("Init COMPLETE" in body or "nRanks" in body or "nranks" in body):
        return _make_init(host, pid, dev, body)
    return None


def parse_nccl_segments(line: str) -> list[NcclEvent]:
    """Every event in a line; several when lines from different processes were glued mid-line."""
    if "NCCL" not in line:
        return []
    heads = list(_HEAD.finditer(line))
    events: list[NcclEvent] = []
    for index, head in enumerate(heads):
        end = heads[index + 1].start() if index + 1 < len(heads) else len(line)
        event = _parse_segment(line, head, end, index == 0)
        if event is not None:
            events.append(event)
    return events


def parse_nccl_line(line: str) -> NcclEvent | None:
    """One NCCL collective, init or WARN event from a line, or None. Never raises.

    When two lines were glued mid-line, the last segment that parses wins (the earlier one
    was cut short); ``parse_nccl_segments`` returns all of them.
    """
    events = parse_nccl_segments(line)
    return events[-1] if events else None



# "host:pid:tid [dev] NCCL INFO Channel 00 : 0[1020] -> 2[1040] via SHM/direct/direct" (also "Channel 00/0"):
# the rank on the left is the printing process's own rank in that communicator.
_CHANNEL = lazy_regex(r"(?P<host>[\w.-]+):(?P<pid>\d+):\d+ \[\d+\] NCCL INFO Channel \d+(?:/\d+)? ?: "
                      r"(?P<rank>\d+)\[[0-9a-fA-Fx]+\] ->")


def channel_ranks(text: str) -> dict[tuple[str, int], int]:
    """(host, pid) -> rank from NCCL's channel set-up lines, for logs without init lines. A process
    in several communicators with different ranks is left out (its rank is ambiguous)."""
    found: dict[tuple[str, int], set[int]] = {}
    for match in _CHANNEL.finditer(text):
        found.setdefault((match.group("host"), int(match.group("pid"))), set()).add(int(match.group("rank")))
    return {key: next(iter(ranks)) for key, ranks in found.items() if len(ranks) == 1}


__all__ = [
    "NcclColl", "NcclEvent", "NcclInit", "NcclWarn",
    "parse_nccl_line", "parse_nccl_segments",
]
