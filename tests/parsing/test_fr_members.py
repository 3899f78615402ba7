"""Member lists of process groups (``parse_ranks``): a long text (65,536 members, 450 KB, a new
string in every rank's dump) is found again by its length and one comparison, never by hashing
it in every dump; texts of the same length that differ are never taken for one another."""

from __future__ import annotations

from triage.parsing.flight_recorder import entries
from triage.parsing.flight_recorder.entries import parse_ranks, read_pg_config


def _text(ranks: range | list[int]) -> str:
    return "".join(str(list(ranks)))       # a new string object each call, as each dump decodes one


def test_long_member_text_parsed_once_and_shared() -> None:
    first = parse_ranks(_text(range(70_000)))
    again = parse_ranks(_text(range(70_000)))
    assert first == tuple(range(70_000))
    assert again is first                       # the same tuple: pickled once per worker batch
    assert len(_text(range(70_000))) >= entries._LONG_TEXT


def test_same_length_different_members_never_confused() -> None:
    base = list(range(5_000))
    other = list(base)
    other[2500], other[2501] = other[2501], other[2500]       # two members swapped: same length, not the same
    a, b = _text(base), _text(other)
    assert len(a) == len(b) and a != b
    for _ in range(2):                                         # alternating: each found by comparison, or reparsed
        assert parse_ranks(a) == tuple(base)
        assert parse_ranks(b) == tuple(other)
        assert parse_ranks(_text(base)) == tuple(base)


def test_short_texts_and_lists_unchanged() -> None:
    assert parse_ranks("[0, 1, 2, 3]") == (0, 1, 2, 3)
    assert parse_ranks([0, "1", 2.0]) == (0, 1, 2)
    assert parse_ranks("[]") is None
    assert parse_ranks(None) is None


def test_pg_config_with_long_members_in_every_dump() -> None:
    for _ in range(3):
        config = read_pg_config({"0": {"name": "0", "desc": "default_pg", "ranks": _text(range(8_192))}})
        assert config["0"].ranks == tuple(range(8_192))
