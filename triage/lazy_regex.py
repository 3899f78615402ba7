"""Regular expressions compiled on first use.

A module-level ``re.compile`` runs at import, whether or not the run ever matches that pattern: a
plain log's report imports ~270 patterns and uses ~70 of them. ``lazy_regex(...)`` takes
``re.compile``'s arguments and returns an object that compiles on its first method call, then answers every
later call with the compiled pattern's own bound methods (held in the instance's dict: no extra
Python frame per call). ``pattern`` is the source as given, readable without compiling (patterns
built from other patterns' text read it at import).

Typed as ``re.Pattern`` so that every caller is checked against the real API. What it is not: a
``re.Pattern`` instance (``isinstance`` is False, and ``re.search(lazy, ...)`` refuses it): call
the methods, as every caller here does.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr, cast

__all__ = ["lazy_regex"]


class _LazyPattern:
    """``re.compile(source, flags)`` on first attribute access other than ``pattern``."""

    def __init__(self, source: str | bytes, flags: int) -> None:
        self.pattern = source
        self._flags_given = flags

    def __getattr__(self, name: str) -> Any:
        # called only for names not in the instance's dict: the first use of each method before the
        # compile, none after it (the compile copies every public attribute into the dict)
        if name.startswith("__") or name == "_flags_given":
            raise AttributeError(name)
        compiled = re.compile(self.pattern, self._flags_given)
        for attr in _ATTRIBUTES:
            setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_regex({self.pattern!r}, {self._flags_given})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (re.compile, (self.pattern, self._flags_given))


_ATTRIBUTES = (
    "search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner",
    "flags", "groups", "groupindex",
)


def lazy_regex(pattern: AnyStr, flags: int | re.RegexFlag = 0) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)``, done on first use."""
    return cast("re.Pattern[AnyStr]", _LazyPattern(pattern, int(flags)))
