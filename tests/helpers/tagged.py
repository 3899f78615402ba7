"""Reading triage's tagged records back (merged.log, the console) in tests: the inverse of
triage.agent.launch.tagger, used to prove that no byte of a rank's output is lost or changed.

A record is ``[host:rank]`` + SEP + SEGMENT + ``\\n``; SEP is a space for a whole source line and
``+`` for a partial one (see triage.agent.launch.tagger)."""

from __future__ import annotations

import re
from collections.abc import Iterator

_RECORD = re.compile(rb"^\[([^\]\n]*):([^\]\n:]*)\]([ +])", re.MULTILINE)


def iter_records(merged: bytes) -> Iterator[tuple[str, str, bool, bytes]]:
    """(host, rank, whole_line, segment) for each record; lines that are not records (triage's own
    messages) are skipped."""
    for line in merged.split(b"\n")[:-1] if merged.endswith(b"\n") else merged.split(b"\n"):
        match = _RECORD.match(line)
        if match is None:
            continue
        host, rank, sep = match.group(1), match.group(2), match.group(3)
        yield host.decode(), rank.decode(), sep == b" ", line[match.end():]


def reconstruct(merged: bytes, host: str, rank: str) -> bytes:
    """The source byte stream of one ``host:rank`` from a merged log."""
    return b"".join(segment + b"\n" if whole else segment
                    for record_host, record_rank, whole, segment in iter_records(merged)
                    if record_host == host and record_rank == rank)
