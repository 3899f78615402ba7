"""Exit codes of the triage CLI (documented in the README)."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0
    # `triage report` / `triage postmortem`: a problem was found and reported.
    PROBLEM_FOUND = 1
    # Bad flags, bad config, unreadable input file or directory.
    USAGE_OR_INPUT = 2
    # A collector tool failed in a way that stopped the command (rare: collectors record failures).
    TOOL_FAILURE = 3
    # A remote node or host could not be reached (only when nothing could be collected at all).
    REMOTE_FAILURE = 4
    # `triage launch`: a hang was detected and the job was stopped (--on-hang report-and-stop).
    HANG_DETECTED = 75
    # Internal error in triage itself (a bug: please report it with -v output).
    INTERNAL = 70
    # Interrupted by the user before the launched job started.
    INTERRUPTED = 130
