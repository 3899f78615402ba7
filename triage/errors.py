"""Errors that carry a one-line reason and a hint on how to fix it.

The CLI prints ``triage: error: <message>`` and, on a second line, ``hint: <hint>``;
it prints a traceback only with ``-v``.
"""

from __future__ import annotations

from triage.exitcodes import ExitCode


class TriageError(Exception):
    """Base class for every error triage reports to a user."""

    exit_code: ExitCode = ExitCode.USAGE_OR_INPUT
    default_hint: str = ""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint if hint is not None else self.default_hint

    def one_line(self) -> str:
        return self.message.replace("\n", " ").strip()


class UsageError(TriageError):
    """Bad flags, bad config keys or values."""

    default_hint = "see `triage COMMAND --help`"


class InputError(TriageError):
    """A file, directory or host given by the user cannot be used."""

    default_hint = "check the path; `triage report --help` lists what it accepts"


class ConfigError(UsageError):
    """triage.yaml or a TRIAGE_* variable is wrong."""

    default_hint = "see `triage launch --help` or docs/launch.md (Configuration) for every key"


class ToolMissingError(TriageError):
    """A diagnostic tool (py-spy, gdb, strace) is not installed."""

    exit_code = ExitCode.TOOL_FAILURE
    default_hint = "install it: `pip install py-spy` or `apt-get install gdb strace`"


class RemoteError(TriageError):
    """A node or host could not be reached or refused us."""

    exit_code = ExitCode.REMOTE_FAILURE
    default_hint = "check that the host is up and reachable with `ssh HOST true`"
