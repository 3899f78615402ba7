"""``TORCH_DISTRIBUTED_DEBUG=DETAIL`` messages of PyTorch's ProcessGroupWrapper.

- The mismatch error: ``Detected mismatch between collectives on ranks. Rank X is running collective:
  CollectiveFingerPrint(SequenceNumber=S, OpType=T, TensorShape=[...], TensorDtypes=D, ...), but Rank Y
  is running collective: CollectiveFingerPrint(...).`` (older PyTorch prints no SequenceNumber; the
  message may go on with ``Collectives differ in the following aspects: ...``).
- The per-collective trace: ``[Rank R] Running collective: CollectiveFingerPrint(...)``.

Never raises; fields it cannot read are None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from triage.lazy_regex import lazy_regex
from triage.parsing.names import torch_dtype, torch_op
from triage.parsing.progress import went_on_after

MISMATCH_MARKER = "Detected mismatch between collectives"
RUNNING_MARKER = "Running collective"

_RUNNING_RANK = lazy_regex(r"(?:\[(?:PG \d+ )?Rank (\d+)\]|\[rank(\d+)\])[^\n]*?Running collective")
_SIDE = lazy_regex(r"Rank (\d+) is running (?:inconsistent )?(?:collective: ?)?")
_KV = lazy_regex(r"(SequenceNumber|OpType|TensorShape|TensorDtypes|TensorDeviceTypes)\s*=\s*")


@dataclass(frozen=True)
class Fingerprint:
    """A collective's description as one rank printed it (its op, shapes and dtypes)."""
    rank: int | None
    seq: int | None
    op: str | None                       # torch name ("all_reduce")
    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[str, ...]              # torch names ("float32")

    @property
    def count(self) -> int | None:
        if not self.shapes:
            return None
        total = 0
        for shape in self.shapes:
            size = 1
            for dim in shape:
                size *= dim
            total += size
        return total


@dataclass(frozen=True)
class CollectiveMismatch:
    """One ``Detected mismatch`` error: the rank that raised it and the rank it compared against."""

    reporter: Fingerprint
    other: Fingerprint
    raw: str


def _balanced(text: str, start: int) -> tuple[str, int]:
    """The text inside the parenthesis opened at ``start`` (tolerates a missing close)."""
    depth = 0
    for i in range(start, len(text)):
        char = text[i]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:i], i + 1
    return text[start + 1:], len(text)


def _shape(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"-?\d+", text))


def parse_fingerprint(body: str, rank: int | None) -> Fingerprint:
    """``body`` is what stands inside ``CollectiveFingerPrint(...)`` (or a bare ``OpType=...`` list)."""
    seq: int | None = None
    op: str | None = None
    shapes: list[tuple[int, ...]] = []
    dtypes: tuple[str, ...] = ()
    for match in _KV.finditer(body):
        key, value_at = match.group(1), match.end()
        rest = body[value_at:]
        if key == "SequenceNumber":
            number = re.match(r"\d+", rest)
            seq = int(number.group(0)) if number else None
        elif key == "OpType":
            name = re.match(r"[A-Za-z_]+", rest)
            op = torch_op(name.group(0)) if name else None
        elif key == "TensorShape":
            bracket = re.match(r"\[([^\]]*)\]", rest)
            if bracket:
                shapes.append(_shape(bracket.group(1)))
        elif key == "TensorDtypes":
            value = re.match(r"([A-Za-z0-9_, ]+?)(?=,\s*\w+\s*=|\)|$)", rest)
            if value:
                dtypes = tuple(torch_dtype(d.strip()) for d in value.group(1).split(",") if d.strip())
    return Fingerprint(rank, seq, op, tuple(shapes), dtypes)


def _side(text: str, at: int) -> tuple[Fingerprint | None, int]:
    """The fingerprint that follows "Rank R is running collective: " at ``at``."""
    side = _SIDE.match(text, at)
    if side is None:
        return None, at
    rank = int(side.group(1))
    rest_at = side.end()
    open_at = text.find("CollectiveFingerPrint(", rest_at, rest_at + 40)
    if open_at >= 0:
        body, end = _balanced(text, open_at + len("CollectiveFingerPrint"))
        return parse_fingerprint(body, rank), end
    # a bare form: "Rank 3 is running ALLREDUCE" / "... running collective: SequenceNumber=18"
    stop = text.find(", but Rank", rest_at)
    body = text[rest_at:stop if stop >= 0 else len(text)]
    fp = parse_fingerprint(body, rank)
    if fp.op is None and (name := re.match(r"([A-Z_]{3,})\b", body)):
        fp = Fingerprint(rank, fp.seq, torch_op(name.group(1)), fp.shapes, fp.dtypes)
    return fp, rest_at + len(body)


def parse_mismatch(line: str) -> CollectiveMismatch | None:
    """The two fingerprints of a ``Detected mismatch between collectives`` message, or None."""
    at = line.find(MISMATCH_MARKER)
    if at < 0:
        return None
    first_at = line.find("Rank ", at)
    if first_at < 0:
        return None
    reporter, end = _side(line, first_at)
    if reporter is None:
        return None
    second_at = line.find("Rank ", end)
    other, _end = _side(line, second_at) if second_at >= 0 else (None, end)
    if other is None:
        # older PyTorch printed the reporter's side only; a paste may end inside it (its fingerprint unclosed)
        cut = end >= len(line) and "CollectiveFingerPrint(" in line[first_at:first_at + 80]
        if "inconsistent collective" not in line[at:first_at + 60] and not cut:
            return None
        other = Fingerprint(None, None, None, (), ())
    return CollectiveMismatch(reporter, other, line.strip()[:2000])


def parse_running(line: str) -> Fingerprint | None:
    """A ``[Rank R] Running collective: CollectiveFingerPrint(...)`` trace line, or None."""
    if RUNNING_MARKER not in line:
        return None
    head = _RUNNING_RANK.search(line)
    open_at = line.find("CollectiveFingerPrint(")
    if open_at < 0:
        return None
    rank = None
    if head is not None:
        rank = int(head.group(1) or head.group(2))
    body, _end = _balanced(line, open_at + len("CollectiveFingerPrint"))
    return parse_fingerprint(body, rank)


# ProcessGroupNCCL's desync report (TORCH_NCCL_DESYNC_DEBUG=1), printed by the rank whose watchdog
# timed out:
#   - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:
#       [7] finished collective #182, but didn't join collective #183 (count from 1)
#       [3, 5] joined but didn't finish collective #183 (count from 1)
DESYNC_MARKER = "caused the desync are"
_LAGGING = lazy_regex(r"(?:^|\s)\[(?P<ranks>\d+(?:,\s*\d+)*)\]\s+"
                      r"(?:finished collective #(?P<done>\d+), but didn't join "
                      r"collective #(?P<next>\d+)|joined but didn't finish collective #(?P<stuck>\d+))")


@dataclass(frozen=True)
class LaggingRanks:
    """The ranks a desync report says did not join (or finish) a collective."""
    ranks: tuple[int, ...]
    never_joined: bool                  # True: "didn't join collective #N"; False: "joined but didn't finish"
    collective: int                     # the collective they did not join / finish (counted from 1)
    text: str


# torch.distributed.monitored_barrier (gloo), raised on rank 0 and on the ranks it could not hear from:
#   [Rank 0]: Ranks 4, 5, 6, 7 failed to pass monitoredBarrier in 2000000 ms
#   Rank 1 failed to pass monitoredBarrier in 2000 ms
#   Rank 2 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0.
# The ranks named are the ones that never reached the barrier (stuck before it, or dead); not the reporter.
MONITORED_BARRIER = "monitoredBarrier"
_BARRIER_FAILED = lazy_regex(r"Ranks? (?P<ranks>\d+(?:,\s*\d+)*) failed to pass monitoredBarrier in (?P<ms>\d+) ?ms")
_BARRIER_PEER = lazy_regex(r"received errors while waiting for send/recv from rank (?P<rank>\d+)")
# (a monitored barrier is not a numbered collective: its lag's ``collective`` is 0)


def parse_monitored_barrier(text: str) -> list[LaggingRanks]:
    """The ranks ``monitored_barrier``'s errors name as the ones that did not reach it, once each."""
    if MONITORED_BARRIER not in text:
        return []
    found: list[LaggingRanks] = []
    seen: set[tuple[int, ...]] = set()
    for line in text.splitlines():
        if MONITORED_BARRIER not in line:
            continue
        failed = _BARRIER_FAILED.search(line)
        peer = _BARRIER_PEER.search(line) if failed is None else None
        if failed is not None:
            ranks = tuple(int(r) for r in failed.group("ranks").split(","))
        elif peer is not None:
            ranks = (int(peer.group("rank")),)
        else:
            continue
        if ranks not in seen:
            seen.add(ranks)
            found.append(LaggingRanks(ranks, True, 0, line.strip()[:300]))
    return found


# Ascend HCCL's notify wait that timed out (EI0002), whose group is the world's ("... has not received the Notify
# record from remote rank: [6]. base information: [... tag[AllReduce_hccl_world_group] ...] ... group information:
# [group:[hccl_world_group], ... rankSize[8], rankId[3 6]]"): the group's ranks are the global ones, and the remote
# rank never reached the collective the reporter waits in (another group's ranks are that group's: not read here)
HCCL_NOTIFY_MARKER = "Notify register times out"
HCCL_WAIT_TEXT = "HCCL's notify wait (EI0002)"
_HCCL_WAIT = lazy_regex(r"Notify record from remote rank: ?\[(?P<remote>\d+)\]")
_HCCL_GROUP = lazy_regex(r"group information: ?\[group: ?\[(?P<group>[\w.-]+)\].*?rankId\[(?P<me>\d+)[ ,]+\d+\]")
_HCCL_TAG_OP = lazy_regex(r"tag\[(?P<op>[A-Za-z]+)_")


def parse_hccl_waits(text: str) -> list[LaggingRanks]:
    """The world group's ranks that HCCL's notify waits say never sent their record: the remote ranks named that
    are not waiting themselves (in a ring each waiting rank names the one before it; when every rank named waits
    too, none is told apart and nothing is returned)."""
    waits: dict[int, tuple[int, str]] = {}        # remote rank -> (the first rank that waited for it, the op)
    waiting: set[int] = set()
    index = text.find(HCCL_NOTIFY_MARKER)
    while index >= 0 and len(waits) < 4096:
        end = text.find("\n", index)
        line = text[text.rfind("\n", 0, index) + 1:len(text) if end < 0 else end]
        wait, group = _HCCL_WAIT.search(line), _HCCL_GROUP.search(line)
        if wait is not None and group is not None and group.group("group") == "hccl_world_group":
            tag = _HCCL_TAG_OP.search(line)
            waits.setdefault(int(wait.group("remote")), (int(group.group("me")),
                                                         torch_op(tag.group("op")) if tag else "a collective"))
            waiting.add(int(group.group("me")))
        index = text.find(HCCL_NOTIFY_MARKER, index + len(HCCL_NOTIFY_MARKER)) if end >= 0 else -1
    missing = sorted(set(waits) - waiting)
    if not missing:
        return []
    me, what = waits[missing[0]]
    told = f"rank {me} waited" if len(waiting) == 1 else f"{len(waiting)} ranks waited (rank {me} among them)"
    return [LaggingRanks(tuple(missing), True, -1, (
        f"{HCCL_WAIT_TEXT}: {told} in {what} on hccl_world_group for the record of "
        f"{'rank ' + str(missing[0]) if len(missing) == 1 else 'ranks ' + ', '.join(map(str, missing))}, "
        "which never came"))]


# Horovod's stall inspector (horovod/common/stall_inspector.cc), printed by the coordinator when some ranks submitted a
# tensor and the others have not after HOROVOD_STALL_CHECK_TIME_SECONDS: "One or more tensors were submitted to be
# reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds.
# ..." then "Missing ranks:" and one line per rank that has NOT submitted, "2: [tensor, tensor ...]" ("2!: [...]" when
# it is past HOROVOD_STALL_SHUTDOWN_TIME_SECONDS and Horovod shuts down). The numbers are the ranks that never reached
# the collective. A job that went on after the report (the stall was a slow rank that caught up) is not read.
HOROVOD_STALL_MARKER = "by subset of ranks and are waiting for remainder of ranks"
HOROVOD_STALL_TEXT = "Horovod's stall inspector"
_HVD_LIST_HEAD = lazy_regex(r"(?:^|[\s:>\]])Missing ranks:\s*$")
# (a launcher's tag may stand before each line: mpirun's "[1,0]<stderr>:2: [grad_0]", horovodrun's own (gloo)
# "[0]<stderr>:2: [grad_0]")
_HVD_RANK = lazy_regex(r"^(?:\[\d+(?:,\d+)?\]<std(?:out|err)>:|\[[\w.:-]+\]:?|[\w.-]+: )?\s*"
                       r"(?P<rank>\d{1,6})(?P<shut>!)?: \[(?P<tensor>[^,\]]{0,200})")
_HVD_LIST_LINES = 4096


def parse_horovod_stall(text: str) -> list[LaggingRanks]:
    """The ranks the first complete stall report of Horovod's stall inspector lists as missing (not submitted the
    tensors the others wait to reduce), unless the job went on after it."""
    index = text.find(HOROVOD_STALL_MARKER)
    while index >= 0:
        lines_at = text.find("\n", index)
        if lines_at < 0:
            return []
        head = text.find("\n", lines_at + 1)
        head_line = text[lines_at + 1:len(text) if head < 0 else head]
        ranks: dict[int, str] = {}
        end = head if head >= 0 else len(text)
        if _HVD_LIST_HEAD.search(head_line) is not None and head >= 0:
            at = head + 1
            while at < len(text) and len(ranks) < _HVD_LIST_LINES:
                stop = text.find("\n", at)
                stop = len(text) if stop < 0 else stop
                match = _HVD_RANK.match(text[at:stop].strip())
                if match is None:
                    break
                ranks.setdefault(int(match.group("rank")), match.group("tensor").strip())
                end, at = stop, stop + 1
        if ranks and not went_on_after(text, end):
            first = next(iter(ranks.values()))
            return [LaggingRanks(tuple(sorted(ranks)), True, -1,
                                 f"{HOROVOD_STALL_TEXT}: the other ranks submitted {first or 'a tensor'} and wait "
                                 f"for these to submit it too"[:300])]
        index = text.find(HOROVOD_STALL_MARKER, end)
    return []


def parse_desync_report(text: str) -> list[LaggingRanks]:
    """The lagging ranks a desync report names (the lines after its DESYNC_MARKER line), and those
    a failed ``monitored_barrier`` names."""
    if DESYNC_MARKER not in text:
        return parse_monitored_barrier(text)
    found: list[LaggingRanks] = []
    inside = False
    for line in text.splitlines():
        if DESYNC_MARKER in line:
            inside = True
            continue
        if not inside:
            continue
        match = _LAGGING.search(line)
        if match is None:
            if line.strip().startswith("- ") or not line.strip():
                inside = False
            continue
        ranks = tuple(int(r) for r in match.group("ranks").split(","))
        if match.group("next") is not None:
            found.append(LaggingRanks(ranks, True, int(match.group("next")), line.strip()))
        else:
            found.append(LaggingRanks(ranks, False, int(match.group("stuck")), line.strip()))
    return found + parse_monitored_barrier(text)
