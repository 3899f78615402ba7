"""The headline wording: the one place that turns a verdict's kind into the words its first line
starts with ("HANG:", "CRASH:", "NO PROBLEM FOUND:", ...). No other module types these prefixes:
every rule builds its verdict with :func:`verdict` (or its text with :func:`line`)."""

from __future__ import annotations

import enum

from triage.model import Cause, MismatchKind, Verdict, VerdictKind


class Head(str, enum.Enum):
    """The first words of a report. Most kinds have one; a few read differently by their facts
    (a mismatch that completed is SILENT, one that still waits is a HANG)."""

    HANG = "HANG"
    INIT_HANG = "INIT HANG"
    CRASH = "CRASH"
    EXCEPTION = "EXCEPTION"
    NETWORK_ERROR = "NETWORK ERROR"
    MISMATCH = "MISMATCH"
    SILENT_MISMATCH = "SILENT MISMATCH"
    SEQ_ONLY_MISMATCH = "MISMATCH IN SEQUENCE NUMBERS ONLY"
    MISSING = "MISSING"
    MISSING_RANK = "MISSING RANK"
    FAILURE_UNLOCATED = "FAILURE, CULPRIT NOT IN THIS INPUT"
    NONFINITE = "NONFINITE"
    STOPPED = "STOPPED"
    STALL = "STALL"                   # a hang the agent dumped that then ended by itself (the job finished)
    NO_PROBLEM = "NO PROBLEM FOUND"
    STRAGGLER = "STRAGGLER"           # a finding's head (the straggler watch), never a verdict's


# the head of each kind when its rule says nothing else
HEAD_OF: dict[VerdictKind, Head] = {
    VerdictKind.COLLECTIVE_MISMATCH: Head.MISMATCH,
    VerdictKind.MISSING_RANK: Head.MISSING,
    VerdictKind.STUCK_OUTSIDE_COLLECTIVE: Head.HANG,
    VerdictKind.CRASH: Head.CRASH,
    VerdictKind.EXCEPTION: Head.EXCEPTION,
    VerdictKind.NO_PROBLEM_FOUND: Head.NO_PROBLEM,
    VerdictKind.HANG: Head.HANG,
    VerdictKind.INIT_HANG: Head.INIT_HANG,
    VerdictKind.NETWORK_ERROR: Head.NETWORK_ERROR,
    VerdictKind.FAILURE_UNLOCATED: Head.FAILURE_UNLOCATED,
    VerdictKind.NONFINITE: Head.NONFINITE,
    VerdictKind.STOPPED: Head.STOPPED,
}


def head_of(kind: VerdictKind) -> Head:
    return HEAD_OF[kind]


def line(head: Head | VerdictKind, body: str, qualifier: str = "") -> str:
    """``HEAD[qualifier]: body``: the qualifier is what sits between the head and the colon
    (``MISMATCH (op)``, ``NETWORK ERROR at init``)."""
    word = head if isinstance(head, Head) else HEAD_OF[head]
    return f"{word.value}{qualifier}: {body}" if body else f"{word.value}{qualifier}"


_NO_FACTS = Cause()


def verdict(kind: VerdictKind, body: str, *, head: Head | None = None, qualifier: str = "",
            subkind: MismatchKind | None = None, culprit_ranks: tuple[int, ...] = (),
            process_group: str | None = None, seq: int | None = None, culprit_host: str | None = None,
            limit: int | None = None, cause: Cause = _NO_FACTS) -> Verdict:
    """A verdict whose first line is worded from its kind (or ``head``) here. ``limit`` bounds
    the whole line's length; ``cause``: the typed facts of its failure (what the advice reads)."""
    summary = line(head or HEAD_OF[kind], body, qualifier)
    return Verdict(kind, summary[:limit] if limit else summary, subkind=subkind, culprit_ranks=culprit_ranks,
                   process_group=process_group, seq=seq, culprit_host=culprit_host, cause=cause)


def body(summary: str) -> str:
    """A headline without its head: what a root-cause finding repeats."""
    return summary.split(": ", 1)[-1]


def is_all_clear(item: Verdict) -> bool:
    return item.kind is VerdictKind.NO_PROBLEM_FOUND


__all__ = ["HEAD_OF", "Head", "body", "head_of", "is_all_clear", "line", "verdict"]
