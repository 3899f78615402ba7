"""Group an interleaved log's lines by owner, the way the log-prefix tests read
:func:`triage.parsing.log_owners.attribute_lines`."""

from __future__ import annotations

from pathlib import Path

from triage.parsing.log_owners import attribute_lines

_TESTS = Path(__file__).resolve().parents[1]


def real_log_lines() -> list[str]:
    """Every line of the real-world corpus's logs, then of every ``*.log`` under tests/: the text a reading
    shortcut (a gate before a pattern) must leave every answer unchanged on."""
    # imported here: scoring imports the whole CLI, which the other users of this module never need
    from tests.realworld.scoring import load_cases

    lines: list[str] = []
    for case in load_cases():
        lines.extend(case.log.read_text(encoding="utf-8", errors="replace").splitlines())
    for path in sorted(_TESTS.rglob("*.log")):
        lines.extend(path.read_text(encoding="utf-8", errors="replace").splitlines())
    return lines


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
