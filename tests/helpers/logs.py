"""Group an interleaved log's lines by owner, the way the log-prefix tests read
:func:`triage.parsing.log_owners.attribute_lines`."""

from __future__ import annotations

from triage.parsing.log_owners import attribute_lines


def split_interleaved_log(text: str) -> dict[int | str, list[str]]:
    """Lines grouped per owner (see :func:`attribute_lines`), prefixes removed."""
    groups: dict[int | str, list[str]] = {}
    for owner in attribute_lines(text.splitlines()):
        groups.setdefault(owner.key, []).append(owner.rest)
    return groups
