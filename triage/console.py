"""The one terminal sanitizer: text from inputs made safe before any of it is printed.

Host names (worker.json), paths (a core's NT_FILE note, a file name), process-group names, log lines
and exception messages come from files that a job, or whoever could write into its run directory,
controls. Escape sequences in them could retitle the terminal, clear it, or hide lines. Every
printer of triage goes through this module (:func:`say` prints triage's own progress lines, with the
host tag): the report and ``top`` renderers take
:func:`terminal_safe` copies of what they render, the plain-text printers (``check``, the
postmortem details) write through :func:`safe_stream`, and ``triage``'s command line puts
:func:`safe_stream` on stderr for every command (warnings, errors, the ``next:`` lines). Every
control character except newline and tab is shown as a visible escape (``\\x1b``) instead: what the
input held stays visible, and the terminal interprets nothing. Rich's own styling is added after
this, by rich.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import io
import sys
from typing import Any, TextIO, TypeVar

from triage.lazy_regex import lazy_regex

_CONTROL = lazy_regex(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
T = TypeVar("T")


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab written as ``\\xNN``."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def say(text: str, host: str | None = None, stream: TextIO | None = None) -> None:
    """One line of triage's own on stderr (or ``stream``): ``triage: TEXT``, or ``triage[HOST]: TEXT``
    for a line that one node of several says; redacted, and through the sanitizer (the text names
    hosts, paths and verdicts from files a job controls). Never raises: a closed terminal must not stop triage."""
    head = f"triage[{host}]" if host else "triage"
    with contextlib.suppress(Exception):
        # lazy: the redaction rules' regexes are compiled when triage first says a line, not at start
        from triage.redact import redact_text

        # redacted: a verdict line quotes an exception message, a line names a command line
        print(f"{head}: {visible(redact_text(text))}", file=stream if stream is not None else sys.stderr, flush=True)


def terminal_safe(value: T) -> T:
    """A copy of ``value`` (a report, a snapshot, or any frozen dataclass, tuple, list or dict of
    them) in which every string has been passed through :func:`visible`. Enums and numbers are kept."""
    return _clean(value)  # type: ignore[no-any-return]


def _clean(value: Any) -> Any:
    if isinstance(value, enum.Enum) or value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return visible(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _clean(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    if isinstance(value, tuple):
        return tuple(_clean(item) for item in value)
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if isinstance(value, dict):
        return {_clean(key): _clean(item) for key, item in value.items()}
    if isinstance(value, (set, frozenset)):
        return type(value)(_clean(item) for item in value)
    return value


class _SafeStream(io.TextIOBase):
    """A text stream that writes everything through :func:`visible`."""

    def __init__(self, inner: TextIO) -> None:
        super().__init__()
        self.inner = inner

    def write(self, text: str) -> int:
        self.inner.write(visible(text))
        return len(text)

    def flush(self) -> None:
        self.inner.flush()

    def fileno(self) -> int:
        return self.inner.fileno()

    def isatty(self) -> bool:
        return self.inner.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", "utf-8")


def safe_stream(stream: TextIO) -> TextIO:
    """``stream`` with every write through :func:`visible` (a stream that already is one is kept)."""
    if isinstance(stream, _SafeStream):
        return stream
    return _SafeStream(stream)  # type: ignore[return-value]
