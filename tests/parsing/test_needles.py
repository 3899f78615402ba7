"""The one-pass multi-needle scanner (triage.parsing.needles) finds what one ``find`` loop per needle
finds, on bytes and on a memory-mapped file, with hits near the start, in the middle, at the end,
cut by a window edge, in CRLF lines, next to NUL bytes and in a last line without its newline, by either of
its backends (Hyperscan; the Aho-Corasick automaton where Hyperscan is not there); and it gives way (None) past
its hit budget or when neither is installed."""

from __future__ import annotations

import mmap
import random
from pathlib import Path

import pytest

from tests.helpers.report import bytes_find_all
from triage.parsing import needles, pages

NEEDLES = (b"rror", b"atchdog", b"NCCL WARN", b"killed", b"r")
HYPERSCAN = pytest.mark.skipif(needles.module() is None, reason="the hyperscan package is not installed here")


@pytest.fixture(params=["hyperscan", "automaton"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """find_all's backend: Hyperscan, or the Aho-Corasick automaton (what a platform without Hyperscan takes)."""
    if request.param == "hyperscan" and needles.module() is None:
        pytest.skip("the hyperscan package is not installed here")
    if request.param == "automaton":
        if needles._ac is None:
            pytest.skip("the ahocorasick-rs package is not installed here")
        monkeypatch.setattr(needles, "_hs", None)
        monkeypatch.setattr(needles, "AUTOMATON_CHUNK", 1000)     # (many chunk edges in these small texts)
    return str(request.param)


def _text(seed: int) -> bytes:
    rnd = random.Random(seed)
    words = [b"step", b"loss", b"Error:", b"RuntimeError", b"rror", b"Watchdog", b"watchdog caught", b"NCCL WARN",
             b"NCCL", b"WARN", b"killed", b"\x00", b"\r\n", b"\n", b"rrorror", b"atchdo", b"x" * 40]
    return b" ".join(rnd.choice(words) for _ in range(20_000))


@pytest.mark.parametrize("views", [True, False])    # False: each window copied, as for a hyperscan taking only bytes
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("window", [4096, 4099, 1 << 20])
def test_it_finds_what_one_find_loop_per_needle_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      seed: int, window: int, views: bool, backend: str) -> None:
    monkeypatch.setattr(pages, "WINDOW", window)
    monkeypatch.setattr(needles, "_VIEWS", views and needles._VIEWS)
    data = _text(seed)
    path = tmp_path / "log"
    path.write_bytes(data)
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        for start, end in ((0, len(data)), (5, len(data) - 3), (4090, 4100), (len(data) // 2, len(data))):
            for source in (data, mapped):
                found = needles.find_all(source, NEEDLES, start, end)
                assert found is not None
                assert found == {n: bytes_find_all(data, n, start, end) for n in NEEDLES}, (start, end)


def test_a_hit_on_each_window_edge_and_in_the_last_line_without_newline(tmp_path: Path, backend: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pages, "WINDOW", 4096)
    data = bytearray(b"." * (4096 * 5))
    for edge in (4096, 8192, 12288):
        for shift in range(-8, 1):          # the needle starts before the edge and runs across it, or starts on it
            at = edge + shift * 3
            data[at:at + 4] = b"rror"
    data += b"\r\nCUDA error\x00: watchdog"      # no trailing newline
    path = tmp_path / "log"
    path.write_bytes(bytes(data))
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        found = needles.find_all(mapped, (b"rror", b"atchdog"))
    assert found == {n: bytes_find_all(bytes(data), n, 0, len(data)) for n in (b"rror", b"atchdog")}
    assert found[b"atchdog"] == [len(data) - 7]


def test_past_its_hit_budget_it_gives_way(backend: str) -> None:
    assert needles.find_all(b"rror " * 100, (b"rror",), max_hits=99) is None
    assert needles.find_all(b"rror " * 99, (b"rror",), max_hits=99) == {b"rror": list(range(0, 495, 5))}


def test_probes_and_kept_hits_are_the_same_by_either_backend(tmp_path: Path, backend: str) -> None:
    """A probe (one hit is all it answers) found often, once, or never; the hits a pass keeps for a later reader."""
    data = _text(3) + b"\nNCCL INFO Channel 00/02 : 0 1\n" + _text(5)
    path = tmp_path / "log"
    path.write_bytes(data)
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        found = needles.find_all(mapped, (b"rror", b"NCCL WARN"), 3, len(data) - 2, keep=(b"NCCL WARN",),
                                 probe=(b"Channel", b"step", b"absent"))
        assert found == {n: bytes_find_all(data, n, 3, len(data) - 2) for n in (b"rror", b"NCCL WARN")}
        assert needles.seen(mapped, b"Channel") == (3, len(data) - 2, True)
        assert needles.seen(mapped, b"step") == (3, len(data) - 2, True)
        assert needles.seen(mapped, b"absent") == (3, len(data) - 2, False)
        assert needles.kept(mapped, b"NCCL WARN", 3, len(data) - 2) == found[b"NCCL WARN"]


def test_a_pattern_with_keys_is_found_where_re_finds_it(backend: str) -> None:
    """A pattern needle: the automaton finds its keys (a literal at an offset of every match) and ``re`` checks each;
    a pattern without keys is a pass of ``re``; the answers are Hyperscan's."""
    keyed = needles.pattern(rb"[^e]f[ao]ult", 6, ((b"fault", 1), (b"foult", 1)))
    bare = needles.pattern(rb"[0-9][0-9]x", 3)
    data = b"fault\nfault default 12x 9x 123x efoult afoult\r\nfault"
    found = needles.find_all(data, (keyed, bare, b"ault"), 1)
    assert found == {n: bytes_find_all(data, n, 1, len(data)) for n in (keyed, bare, b"ault")}
    assert found[keyed] == [5, 39, len(data) - 6] and found[bare] == [20, 28]


def test_without_either_scanner_it_gives_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(needles, "_hs", None)
    monkeypatch.setattr(needles, "_ac", None)
    assert not needles.available()
    assert needles.find_all(b"an Error", (b"rror",)) is None


@HYPERSCAN
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("scanner", [True, False], ids=["scanner", "word-by-word"])
def test_lines_holding_answers_what_a_per_line_test_answers(seed: int, scanner: bool,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # the scanner's database, or (a few lines, before the process's budget is spent) each word tested in Python
    monkeypatch.setattr(needles, "_PER_WORD_BUDGET", 0 if scanner else 10**9)
    monkeypatch.setattr(needles, "_GATES", {})
    rnd = random.Random(seed)
    words = ["step", "loss", "Error", "error", "ERROR", "eRRor", "died", "DIED", "Watchdog", "atchdog", "x" * 30,
             "é", "\u212Ailled", "killed", "KILLED", "[F", "status=", " ", "\t", "\x00", "a.b", "(x)"]
    pieces = ["".join(rnd.choice(words) for _ in range(rnd.randrange(0, 6))) for _ in range(3_000)]
    literals, caseless = ("Error", "atchdog", "[F", "status=", "a.b", "(x)"), ("died", "killed", "error", "\u212Aill")
    loud = needles.lines_holding(pieces, literals, caseless)
    assert loud is not None
    for index, piece in enumerate(pieces):
        holds = any(word in piece for word in literals) or any(word in piece.lower() for word in caseless)
        if holds or not piece.isascii():
            assert index in loud, piece
        else:
            assert index not in loud, piece


@HYPERSCAN
def test_a_few_lines_are_tested_word_by_word_until_the_budget_is_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(needles, "_GATES", {})
    monkeypatch.setattr(needles, "_per_word_spent", 0)
    monkeypatch.setattr(needles, "_PER_WORD_BUDGET", 8)
    assert needles.lines_holding(["an ERROR", "fine", "ok"], ("zz",), ("error",)) == {0}      # 6 tests, no database
    assert needles._GATES == {}
    assert needles.lines_holding(["an ERROR", "fine", "ok"], ("zz",), ("error",)) == {0}      # past 8: the database
    assert len(needles._GATES) == 1
    assert needles._per_word(["a\nb"], ("a\nb",), ()) is None        # a word across lines: the scanner's alone


def test_lines_holding_gives_way_where_the_scanner_is_not_there(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(needles, "_hs", None)
    monkeypatch.setattr(needles, "_GATES", {})
    monkeypatch.setattr(needles, "_per_word_spent", 0)
    assert needles.lines_holding(["an error", "fine"], ("error",)) == {0}     # a few lines: word by word, as anywhere
    monkeypatch.setattr(needles, "_PER_WORD_BUDGET", 0)
    assert needles.lines_holding(["an error"], ("error",)) is None          # past the budget: every line is read
