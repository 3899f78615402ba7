"""A rank number as a name in the input (a file's, a directory's): what :mod:`triage.layout` and the log readers
accept. Its own module: a log's report reads rank numbers from paths without the run directory's layout (its
dataclasses are made at import)."""

from __future__ import annotations

# The largest rank number triage accepts from a name (a file, a directory): no real job is bigger,
# and a number from the input never sizes a per-rank structure beyond this.
MAX_RANK = (1 << 20) - 1


def is_rank_name(name: str) -> bool:
    """``name`` is a rank number: ASCII digits only (``int`` also takes ``²`` and other Unicode
    digits, or refuses them with ValueError), at most :data:`MAX_RANK`."""
    return name.isascii() and name.isdigit() and len(name) <= 7 and int(name) <= MAX_RANK
