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


def elastic_summary(fields: str, head: str = "") -> str:
    """torchelastic's failure summary of one failed rank whose record's fields (after ``time`` and
    ``host``, before ``error_file``) are the lines ``fields`` (each indented as torchrun indents them),
    after the line ``head`` (e.g. the ChildFailedError line) where one is given."""
    return (f"{head}\n" if head else "") + f"""\
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2024-05-01_10:00:00
  host      : gpu-node
{fields}
  error_file: <N/A>
============================================================
"""
