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

from tests.realworld.metamorphic import SKIPS, TRANSFORMS, Seen, applies, verdict_of
from tests.realworld.scoring import ASSERTED_CONFIDENCE, Case, Score, evaluate, load_cases

pytestmark = pytest.mark.slow

CASES = [c for c in load_cases() if c.confidence in ASSERTED_CONFIDENCE]
# (transformation, case): the class of input it still loses, one line each
KNOWN: dict[tuple[str, str], str] = {
    ("only_ranked_lines", "meta-pytorch__torchtune__1165"): "rank 0 stuck outside rests on rankless lines",
    ("ray", "huggingface__nanotron__204"): "one more collective named in the summary (the verdict is kept)",
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
    path.write_bytes(transformed.encode("utf-8"))
    seen, pasted = verdict_of(path), _as_pasted(case)
    assert (seen.kind, seen.subkind, seen.culprits, seen.collectives) == \
        (pasted.kind, pasted.subkind, pasted.culprits, pasted.collectives), (name, seen, pasted)


def test_every_transformation_changes_the_text() -> None:
    text = "[rank1]: RuntimeError: boom\tat step 3\nplain launcher line of no rank\n" + "x" * 130
    for name, transform in TRANSFORMS.items():
        assert transform(text) != text, name
