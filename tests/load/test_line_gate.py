"""The line gate of a log's reader (triage.load.logs.text): a block's lines that hold none of the literals
its checks look for (and none of named_failure's failure words, in any case) skip those checks, found in one
scan of the block (triage.parsing.needles.lines_holding). The scan of every log is the same as when every
line takes every check (the gate off: what happens where the scanner is not installed)."""

from __future__ import annotations

import re
from pathlib import Path
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

import pytest

from triage.load.logs import text
from triage.load.logs.scan import LogScan
from triage.parsing import named_failure, needles
from triage.parsing.unread_failure import UNREAD_WORDS

CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"

ODD = [
    "[rank3]: step 7 loss 2.0\n[rank3]: RANK 3 DiEd FROM SIGNAL 11\n",
    "worker 2 was \u212Ailled\n",                       # Kelvin sign: Python's caseless "killed" (not ASCII: read)
    "[rank1]: ſignal 9 received by rank 1\n",           # long s: Python's caseless "s" (not ASCII: read)
    "process 4 EXITED with exit code 1\nrank 0 timed  out\nTask 5 Core Dumped\n",
    "[rank0]: Traceback (most recent call last):\n[rank0]:   File \"x.py\", line 1\n[rank0]: ValueError: bad\n",
    "[Rank 7] NCCL watchdog thread terminated with exception: boom\nncclRemoteError: x\nLast error:\npeer gone\n",
    ("gpu1:12:12 [0] NCCL INFO comm 0x1 rank 0 nranks 2\ngpu1:12:99 [0] NCCL WARN Duplicate GPU detected : rank 0 "
     "and rank 1 both on CUDA device 1b000\n"),
    "torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 1 (pid: 42) of binary: x\n",
]


def _scan(log: str, gate: bool, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    with monkeypatch.context() as patch:
        if not gate:
            patch.setattr(needles, "lines_holding", lambda *_args: None)
        scan = LogScan()
        text.scan_log_text(log, "job.log", scan)
    state = dict(vars(scan))
    return state


@pytest.mark.skipif(not needles.available(), reason="the hyperscan package is not installed here")
@pytest.mark.parametrize("log", ODD)
def test_odd_lines_read_the_same_with_the_gate(log: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _scan(log, True, monkeypatch) == _scan(log, False, monkeypatch)


@pytest.mark.skipif(not needles.available(), reason="the hyperscan package is not installed here")
def test_the_realworld_corpus_reads_the_same_with_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    logs = sorted(CASES.glob("*/*.txt")) + sorted(CASES.glob("*/*.log"))
    assert len(logs) > 100
    quiet = 0
    for log in logs:
        body = log.read_text(encoding="utf-8", errors="replace")
        assert _scan(body, True, monkeypatch) == _scan(body, False, monkeypatch), log
        loud = needles.lines_holding(body.splitlines(), text.GATE_LITERALS, UNREAD_WORDS)
        quiet += len(body.splitlines()) - len(loud or ())
    assert quiet > 1000        # the gate does skip lines in real logs


def _texts(ops: Any, caseless: bool = True) -> list[str]:
    """The texts a parsed sequence opens with (lower case, but as written inside a group that is not caseless:
    "(?-i:SIG[A-Z]{2,6})" opens with "SIG"): each text it can match where it is literals, classes of literals and
    optional parts (``time[ds]? ?out``: "timeout", "timed out", ...), up to its first other part."""
    def case(text: str) -> str:
        return text.lower() if caseless else text

    texts = [""]
    for op, arg in ops:
        if op is sre_constants.LITERAL:
            options = [chr(arg)]
        elif op is sre_constants.IN and all(kind is sre_constants.LITERAL for kind, _ in arg):
            options = [chr(value) for _, value in arg]
        elif op is sre_constants.MAX_REPEAT and arg[0] == 0 and arg[1] == 1:
            options = ["", *_texts(arg[2], caseless)]
        elif op is sre_constants.SUBPATTERN:         # (a group, with flags of its own: "(?-i:SIG[A-Z]{2,6})")
            inner = caseless and not arg[2] & re.IGNORECASE
            return [text + option for text in texts for option in _texts(arg[-1], inner)]
        else:
            break
        texts = [text + case(option) for text in texts for option in options]
    return texts


def _literal_runs(items: Any) -> list[str]:
    """The texts each branch of a parsed alternation opens with (see :func:`_texts`)."""
    return [text for branch in items for text in _texts(branch)]


def test_a_branchs_optional_parts_are_each_a_text() -> None:
    parsed = sre_parse.parse(r"time[ds]? ?out|sig[a-z]{2}|(?-i:SIG[A-Z]{2})x", re.IGNORECASE)
    assert sorted(_literal_runs(parsed[0][1][1])) == ["SIG", "sig", "time out", "timed out", "timedout", "timeout",
                                                      "times out", "timesout"]


def test_every_failure_word_match_holds_one_of_the_gate_words() -> None:
    """named_failure reads a line only where its _WHAT matches: each of _WHAT's branches begins with a
    literal holding one of FAILURE_WORDS (or, in a group that is not caseless, one of the gate's literals as written:
    "SIG"), so a line holding none of them (in any case) is not read."""
    parsed = sre_parse.parse(named_failure._WHAT.pattern, named_failure._WHAT.flags)
    items = [(op, arg) for op, arg in parsed if op is not sre_constants.AT]     # \b(?:...)\b: one alternation
    assert len(items) == 1 and items[0][0] is sre_constants.BRANCH, items
    runs = _literal_runs(items[0][1][1])
    assert len(runs) > 15
    for run in runs:
        assert any(word in run.lower() for word in named_failure.FAILURE_WORDS) if run.islower() else \
            any(literal in run for literal in text.GATE_LITERALS), run
    assert all(word == word.lower() for word in named_failure.FAILURE_WORDS)


def test_the_gate_literals_are_the_checks_literals() -> None:
    """Each literal test in _line's source names a constant or string that the gate holds."""
    source = Path(text.__file__).read_text(encoding="utf-8")
    body = source.split("\ndef _line(", 1)[1].split("\ndef ", 1)[0]
    for literal in re.findall(r'if loud and[^\n]*?"([^"]+)" in rest', body):
        assert literal in text.GATE_LITERALS, literal
