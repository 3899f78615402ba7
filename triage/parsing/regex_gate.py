"""A regular expression asked only of a line that can hold its match.

A line that reads as an error is asked a dozen large expressions (crashlog's CUDA, network, NCCL and signal words),
each 10-30 us a line in Python's ``re``; a log whose every line says ERROR (a retry warning each step) pays them
on every line. ``gated(pattern)`` answers ``search`` and ``match`` as the pattern does, after a test that costs
about a microsecond: the line must hold one of the literals that every match of the pattern holds. Those literals
are read from the pattern's own parse (``re``'s parser), when first used, so that an alternative added to a
pattern is covered without a list kept by hand: every alternative must name a literal, or the pattern is asked
every line (as before). Where the pattern ignores case, the literals and an ASCII line are compared lower-cased (a
line with other characters, whose case folding ``str.lower`` may not mirror, is asked the pattern itself).

What every match must hold, per item of a sequence: a run of literal characters; a group's or a lookaround's own
requirement (a lookaround's text is in the line too); a repeat's body when it repeats at least once; an
alternation's, when each branch has one (any of them). Of a sequence's candidates, the one whose shortest literal
is longest is kept.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator
from typing import Any

from triage import compiled_cache

try:    # CPython's own BLAKE2 (hashlib loads OpenSSL's: ~3 ms at a start)
    from _blake2 import blake2b  # type: ignore[import-not-found,unused-ignore]
except ImportError:     # (another interpreter)
    from hashlib import blake2b  # type: ignore[no-redef,unused-ignore]
from triage.parsing import needles as scanners

try:
    _parser: Any = importlib.import_module("re._parser")      # Python 3.11 on
except ImportError:                                             # pragma: no cover (3.10)
    _parser = importlib.import_module("sre_parse")

__all__ = ["Gated", "finditer", "gated", "holds_any", "required_literals"]

_MIN_LITERAL = 3        # a shorter literal filters too little to be worth a test


def _best(candidates: list[frozenset[str]]) -> frozenset[str] | None:
    kept = [c for c in candidates if c and min(map(len, c)) >= 1]
    if not kept:
        return None
    return max(kept, key=lambda c: (min(map(len, c)), -len(c)))


def _sequence(items: Any) -> frozenset[str] | None:
    """Literals one of which every match of this parsed sequence holds, or None."""
    candidates: list[frozenset[str]] = []
    run: list[str] = []
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(av))
            continue
        if run:
            candidates.append(frozenset(("".join(run),)))
            run = []
        found: frozenset[str] | None = None
        if name == "SUBPATTERN":
            found = _sequence(av[-1])
        elif name == "ATOMIC_GROUP":
            found = _sequence(av)
        elif name == "ASSERT":          # a lookahead's or lookbehind's text is in the line too
            found = _sequence(av[1])
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and av[0] >= 1:
            found = _sequence(av[2])
        elif name == "BRANCH":
            branches = [_sequence(branch) for branch in av[1]]
            if all(b is not None for b in branches):
                found = frozenset().union(*(b for b in branches if b is not None))
        if found is not None:
            candidates.append(found)
    if run:
        candidates.append(frozenset(("".join(run),)))
    return _best(candidates)


def _parts(name: str, av: Any) -> list[Any]:
    """The parsed sequences inside one item (a group's, a lookaround's, a repeat's body, each branch)."""
    if name == "SUBPATTERN":
        return [av[-1]]
    if name == "ATOMIC_GROUP":
        return [av]
    if name == "ASSERT" or name == "ASSERT_NOT":
        return [av[1]]
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        return [av[2]]
    if name == "BRANCH":
        return list(av[1])
    return []


def _folds(items: Any) -> bool:
    """Whether any part of the parsed pattern ignores case (a scoped (?i:...) inside it)."""
    for op, av in items:
        name = str(op)
        if (name == "SUBPATTERN" and av[1] & re.IGNORECASE) or any(_folds(part) for part in _parts(name, av)):
            return True
    return False


def required_literals(pattern: str, flags: int = 0) -> tuple[tuple[str, ...], bool] | None:
    """The literals one of which every match of ``pattern`` holds (each at least 3 characters), and whether they are
    compared lower-cased; None where the pattern has no such set. Read back from the user's compiled-code cache
    (triage.compiled_cache.memo) where a command kept it: the parse costs ~0.15 ms a pattern, ~85 patterns a
    report (~14 ms); the key names this module's own source, so changed code reads its patterns anew."""
    version = _version()
    if version is None:
        return _required_literals(pattern, flags)
    return compiled_cache.memo(("required_literals", version, sys.hexversion, pattern, flags),  # type: ignore[no-any-return]
                               lambda: _required_literals(pattern, flags), _well_formed)


def _well_formed(value: object) -> bool:
    return value is None or (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], tuple)
                             and all(isinstance(word, str) for word in value[0]) and type(value[1]) is bool)


_VERSION: list[bytes | None] = []


def _version() -> bytes | None:
    """The digest of this module's source (what the literals a pattern gives depend on, with the interpreter's
    parser, named by the cache file's tag); None where it cannot be read (the literals are then found anew)."""
    if not _VERSION:
        try:
            with open(__file__, "rb") as handle:
                _VERSION.append(blake2b(handle.read(), digest_size=16).digest())
        except (OSError, TypeError):
            _VERSION.append(None)
    return _VERSION[0]


def _required_literals(pattern: str, flags: int = 0) -> tuple[tuple[str, ...], bool] | None:
    parsed = _parser.parse(pattern, flags)
    fold = bool((flags | parsed.state.flags) & re.IGNORECASE) or _folds(parsed)
    found = _sequence(parsed)
    if found is None or min(map(len, found)) < _MIN_LITERAL:
        return None
    return tuple(sorted({w.lower() if fold else w for w in found})), fold


def top_branches(source: str) -> list[str]:
    """``source`` split at its top-level ``|`` (outside groups, character classes and escapes)."""
    parts, depth, start, at, in_class = [], 0, 0, 0, False
    while at < len(source):
        char = source[at]
        if char == "\\":
            at += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            at += 2 if source[at + 1:at + 2] == "]" else 3 if source[at + 1:at + 3] == "^]" else 1
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(source[start:at])
            start = at + 1
        at += 1
    parts.append(source[start:])
    return parts


class Gated:
    """``pattern``'s search and match, asked only of a text that holds one of its required literals."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self._needles: tuple[str, ...] | None = None
        self._fold = False
        self._ready = False
        self._branches: list[tuple[tuple[str, ...] | None, bool, re.Pattern[str]]] | None = None

    def _holds(self, text: str) -> bool:
        if not self._ready:
            found = required_literals(str(self.pattern.pattern), int(self.pattern.flags))
            self._needles, self._fold = found if found is not None else (None, False)
            self._ready = True
        needles = self._needles
        if needles is None:
            return True
        if self._fold:
            if not text.isascii():
                return True
            text = text.lower()
        for needle in needles:     # noqa: SIM110 (a loop: any() over a generator costs a frame a line)
            if needle in text:
                return True
        return False

    def holds(self, text: str) -> bool:
        """``pattern.search(text) is not None``, asking each top-level alternative whose literals the text holds on
        its own (a match of the whole is a match of one alternative; an alternative compiled alone is searched for
        by its literal head, not tried at every place of the line with all the others)."""
        if not self._holds(text):
            return False
        branches = self._branches
        if branches is None:
            branches = self._branches = self._split()
        lowered = text.lower() if text.isascii() else None
        for needles, fold, branch in branches:
            if needles is not None:
                if fold and lowered is None:
                    pass
                elif not _any_in(needles, lowered if fold else text):    # type: ignore[arg-type]
                    continue
            if branch.search(text) is not None:
                return True
        return False

    def _split(self) -> list[tuple[tuple[str, ...] | None, bool, re.Pattern[str]]]:
        source, flags = str(self.pattern.pattern), int(self.pattern.flags)
        parts = top_branches(source)
        if len(parts) < 2 or any(re.search(r"\(\?[aiLmsux]+\)", part) for part in parts):
            return [(None, False, re.compile(source, flags))]       # (a global inline flag: asked whole)
        out = []
        try:
            for part in parts:
                found = required_literals(part, flags)
                out.append((found[0] if found else None, found[1] if found else False, re.compile(part, flags)))
        except re.error:        # (an alternative that refers to another's group: asked whole)
            return [(None, False, re.compile(source, flags))]
        return out

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text) if self._holds(text) else None

    def match(self, text: str) -> re.Match[str] | None:
        return self.pattern.match(text) if self._holds(text) else None


def _any_in(needles: tuple[str, ...], text: str) -> bool:
    for needle in needles:     # noqa: SIM110 (a loop: any() over a generator costs a frame a line)
        if needle in text:
            return True
    return False


def gated(pattern: re.Pattern[str]) -> Gated:
    """``pattern`` (a compiled or lazy one) behind its literal test."""
    return Gated(pattern)


_WHOLE: dict[tuple[str, int], Gated] = {}


def finditer(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)``, not asked of a text that holds none of the literals every match holds: a whole
    text's reader (a dozen codes' banners) passes over a large log once per pattern, 0.1 s per 20 MB in ``re`` even
    where nothing matches; a substring test is ~50 times faster."""
    key = (str(pattern.pattern), int(pattern.flags))
    gate = _WHOLE.get(key)
    if gate is None:
        gate = _WHOLE[key] = Gated(pattern)
    return pattern.finditer(text) if gate._holds(text) else iter(())


_ONE_SCAN = 1 << 20     # a shorter text: one ``in`` pass per literal (each ~0.5 ms a MB)
_SCANS: dict[tuple[str, ...], Any] = {}


def holds_any(text: str, literals: tuple[str, ...]) -> bool:
    """``any(literal in text for literal in literals)``: a whole text's reader's first test (its markers). Over a large
    ASCII text, one scan for all of them where hyperscan is there: one ``in`` pass per literal costs ~10 ms per 20 MB,
    a launcher's 50 markers half a second on a log that holds none of them."""
    if len(text) >= _ONE_SCAN and text.isascii() and (hs := scanners.module()) is not None:
        found: list[int] = []

        def hit(ident: int, _from: int, _to: int, _flags: int, _context: object) -> bool:
            found.append(ident)
            return True                 # (the first one answers: the scan stops)

        try:
            database = _SCANS.get(literals)
            if database is None:
                database = hs.Database(mode=hs.HS_MODE_BLOCK)
                database.compile(expressions=[re.escape(word.encode("utf-8")) for word in literals],
                                 ids=list(range(len(literals))), elements=len(literals),
                                 flags=[hs.HS_FLAG_SINGLEMATCH] * len(literals))
                _SCANS[literals] = database
            database.scan(text.encode("ascii"), match_event_handler=hit)
        except Exception:   # noqa: BLE001  (stopped at the first hit; or a literal or a scan it cannot take)
            if found:
                return True
        else:
            return False                # (the whole text scanned, no hit)
    return any(literal in text for literal in literals)
