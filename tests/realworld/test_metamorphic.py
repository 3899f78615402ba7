"""First sight as a property: the same failure in other clothes gets the same verdict.

For every high- or medium-confidence corpus case that triage gets right as pasted, each transformation of
tests/realworld/metamorphic.py (what real pastes have: kubectl/compose/journald/Ray/srun/mpirun heads,
timestamps, colours, CRLF, GitHub indentation and quotes, a terminal's wrap at 80 and 120 columns, tabs
made spaces, the lines no rank owns dropped) must keep the verdict's kind, subkind, culprit ranks and the
collectives its summary names. A pair that cannot keep it is skipped with the reason in ``SKIPS``; the
pairs still failing are listed in ``KNOWN`` with their class (strict xfail: fixed ones must leave the list).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tests.realworld.metamorphic import ENCODINGS, SKIPS, TRANSFORMS, Seen, applies, verdict_of
from tests.realworld.scoring import ASSERTED_CONFIDENCE, Case, Score, evaluate, load_cases

pytestmark = pytest.mark.slow

CASES = [c for c in load_cases() if c.confidence in ASSERTED_CONFIDENCE]
# a line already stamped by the reporter's own clock ("2025-09-04 17:23:59 Traceback ..."): a second asctime stamp
# before it leaves the traceback's lines read as a failure of unknown place (round 71)
_TWO_STAMPS = ("a second time stamp before the reporter's own stamp on every line: the traceback read as a failure of "
               "unknown place (round 71)")
# (transformation, case): the class of input it still loses, one line each
KNOWN: dict[tuple[str, str], str] = {
    ("only_ranked_lines", "meta-pytorch__torchtune__1165"): "rank 0 stuck outside rests on rankless lines",
    ("ray", "huggingface__nanotron__204"): "one more collective named in the summary (the verdict is kept)",
    ("kubectl_prefix", "HKUDS__GraphGPT__44"): "a pod tag on every line: a line before the timeouts read as rank 0's work",
    ("kubectl_prefix", "allenai__OLMo__846"): "a pod tag on every line: the summary names no collective (verdict kept)",
    ("kubectl_prefix", "meta-pytorch__torchtune__1165"): "a pod tag on every line: the summary names no collective",
    ("kubectl_prefix", "xljh0520__JOTR__4"): "a pod tag on every line: the mismatch's sizes not read (kind kept)",
    ("wrap80", "spine-generic__spine-generic__108"): "bash's 'line N: PID Killed <command>' record wrapped at 80 "
                                                     "columns: not read, another job's OSError named (round 45)",
    ("kubectl_prefix", "WM-PO__WMPO__3"): "a pod tag on every line of a paste a terminal padded and hard-wrapped at "
                                          "188 columns: the raylet's wrapped OOM record not put back (refused; round 67)",
    ("wrap80", "WM-PO__WMPO__3"): "a paste padded and hard-wrapped at 188 columns wrapped again at 80: the raylet's OOM "
                                  "record not put back (refused; round 67)",
    ("wrap120", "WM-PO__WMPO__3"): "a paste padded and hard-wrapped at 188 columns wrapped again at 120: the raylet's "
                                   "OOM record not put back (refused; round 67)",
    ("logging_asctime", "Tencent-Hunyuan__HunyuanWorld-Voyager__5"): _TWO_STAMPS,
}


@functools.cache
def _right(case: Case) -> bool:
    return evaluate(case).score is Score.RIGHT


@functools.cache
def _as_pasted(case: Case) -> Seen:
    return verdict_of(case.log)


def _param(name: str, case: Case):  # type: ignore[no-untyped-def]
    reason = KNOWN.get((name, case.name))
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(name, case, id=f"{name}-{case.name}", marks=marks)


@pytest.mark.parametrize(("name", "case"), [_param(n, c) for n in sorted(TRANSFORMS) for c in CASES])
def test_the_same_failure_in_other_clothes(name: str, case: Case, tmp_path: Path) -> None:
    if not _right(case):
        pytest.skip("triage gets this case wrong as pasted (tests/realworld/known_gaps.yaml)")
    text = case.log.read_text(encoding="utf-8", errors="replace")
    transformed = applies(name, case, text)
    if transformed is None:
        pytest.skip(SKIPS[name])
    path = tmp_path / "job.log"
    path.write_bytes(transformed.encode(ENCODINGS.get(name, "utf-8"), errors="replace"))
    seen, pasted = verdict_of(path), _as_pasted(case)
    assert (seen.kind, seen.subkind, seen.culprits, seen.collectives) == \
        (pasted.kind, pasted.subkind, pasted.culprits, pasted.collectives), (name, seen, pasted)


def test_every_transformation_changes_the_text() -> None:
    text = "[rank1]: RuntimeError: 'boom'\tat step 3\nplain launcher line of no rank\n" + "x" * 130
    for name, transform in TRANSFORMS.items():
        assert transform(text) != text, name
