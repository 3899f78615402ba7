"""The literal test in front of crashlog's per-line patterns (triage.parsing.regex_gate): it may only say "no" where
the pattern itself finds nothing."""

from __future__ import annotations

import re
from pathlib import Path

from triage.parsing import crashlog
from triage.parsing.regex_gate import Gated, gated, required_literals, top_branches

CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"
GATES = {name: value for name, value in vars(crashlog).items() if isinstance(value, Gated)}


def test_every_alternative_names_a_literal_or_the_pattern_is_always_asked() -> None:
    assert required_literals(r"abc|de") is None                       # "de" is too short to test for
    assert required_literals(r"abc|\d+x") is None                      # an alternative without a literal
    assert required_literals(r"(?:foo|bar)baz\d") == (("baz",), False)
    assert required_literals(r"x(?=hello)") == (("hello",), False)     # a lookahead's text is in the line
    assert required_literals(r"(?!nope)ab") is None                   # a negative one's is not
    assert required_literals(r"(?:optional)?tail") == (("tail",), False)
    assert required_literals(r"(?:twice){2}") == (("twice",), False)
    assert required_literals(r"Out Of Memory", re.IGNORECASE) == (("out of memory",), True)
    assert required_literals(r"(?i:Killed) now") == (("killed",), True)  # scoped (?i): compared lower-cased


def test_the_gate_says_what_the_pattern_says() -> None:
    folding = gated(re.compile(r"out of memory", re.IGNORECASE))
    assert folding.search("CUDA OUT OF MEMORY") is not None
    assert folding.search("nothing here") is None
    # a line with other characters than ASCII is asked the pattern itself (re's case folding is not str.lower's):
    # U+212A KELVIN SIGN matches "k" when case is ignored
    kelvin = gated(re.compile(r"killed", re.IGNORECASE))
    assert kelvin.search("\u212aILLED") is not None
    plain = gated(re.compile(r"^Killed$"))
    assert plain.match("Killed") is not None and plain.match("killed") is None


def test_alternatives_split_at_the_top_level_only() -> None:
    assert top_branches(r"a[|]b|c(d|e)|[]|]x|[^]|]y|\|z") == ["a[|]b", "c(d|e)", "[]|]x", "[^]|]y", r"\|z"]
    words = gated(re.compile(r"(?<=[\]|])Killed$|\bsocket closed\b|^Error code -9$", re.MULTILINE))
    assert words.holds("3.2s/it]Killed") and words.holds("the socket closed now") and words.holds("Error code -9")
    assert not words.holds("Killed") and not words.holds("sockets closed") and not words.holds("x Error code -9")


def test_crashlog_patterns_have_their_gates() -> None:
    # (a pattern whose alternatives lose their literals is asked every line again: a log of error lines slows ~10x)
    assert len(GATES) >= 15
    for name, gate in GATES.items():
        assert required_literals(gate.pattern.pattern, gate.pattern.flags) is not None, name


def test_no_line_of_the_field_cases_is_kept_from_a_pattern_that_matches_it() -> None:
    lines = {line for path in sorted(CASES.glob("*/log.txt"))
             for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if crashlog.has_marker(line)}
    assert len(lines) > 1000
    for name, gate in GATES.items():
        missed = [line for line in lines if not gate._holds(line) and gate.pattern.search(line) is not None]
        assert not missed, (name, missed[:3])
        # holds(): the alternatives asked one by one answer as the whole pattern does
        wrong = [line for line in lines if gate.holds(line) != (gate.pattern.search(line) is not None)]
        assert not wrong, (name, wrong[:3])
