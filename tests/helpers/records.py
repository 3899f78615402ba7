"""Read back the tagged records of a merged log or console capture (the inverse of
:class:`triage.agent.tagger.Tagger`), so the launch tests can check that no byte was lost.

A record is ``[host:rank]`` + SEP + SEGMENT + ``\\n``: SEP is a space for a whole source line and
``+`` for a partial one (see triage/agent/tagger.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_RECORD = re.compile(rb"^\[([^\]\n]*):([^\]\n:]*)\]([ +])", re.MULTILINE)


def iter_records(merged: bytes) -> Iterator[tuple[str, str, bool, bytes]]:
    """(host, rank, whole_line, segment) for each record of a merged log or console capture.

    Lines that are not records (e.g. triage's own messages) are skipped.
    """
    for line in merged.split(b"\n")[:-1] if merged.endswith(b"\n") else merged.split(b"\n"):
        match = _RECORD.match(line)
        if match is None:
            continue
        host, rank, sep = match.group(1), match.group(2), match.group(3)
        yield host.decode(), rank.decode(), sep == b" ", line[match.end():]


def reconstruct(merged: bytes, host: str, rank: str) -> bytes:
    """The source byte stream of one ``host:rank`` from a merged log (inverse of tagging)."""
    return b"".join(segment + b"\n" if whole else segment
                    for record_host, record_rank, whole, segment in iter_records(merged)
                    if record_host == host and record_rank == rank)
