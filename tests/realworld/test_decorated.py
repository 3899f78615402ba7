"""The corpus's verdicts do not depend on how a log was carried: the same real log with CRLF line
ends, ANSI colours, GitHub quote markers, a viewer's line numbers, per-line ISO/syslog/RFC 3339 timestamps, trailing spaces
``kubectl logs --prefix`` tags, or wrapped in JSON records (a container runtime's ``{"log": ...}``,
a structured logger's ``{"msg": ...}``) gets the same verdict and culprits as the log as pasted.

Decorations are added to whole lines, as the tool that adds them does; a log whose lines a terminal
hard-wrapped gets no per-line launcher tag (the tag would stand on the first half only), and a
markdown fence of the paste gets none either. The pairs still failing are listed in ``KNOWN`` with their
class (strict xfail: fixed ones must leave the list)."""

from __future__ import annotations

import contextlib
import functools
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.realworld.scoring import ASSERTED_CONFIDENCE, Case, load_cases
from triage.cli import main
from triage.parsing.textclean import clean_text


def _lines(prefix: str, skip_fences: bool = False) -> Callable[[str], str]:
    def decorate(text: str) -> str:
        return "\n".join(line if not line or (skip_fences and line.lstrip().startswith("```")) else prefix + line
                         for line in text.split("\n"))
    return decorate


DECORATIONS: dict[str, Callable[[str], str]] = {
    "crlf": lambda text: text.replace("\n", "\r\n"),
    "ansi": lambda text: "\n".join(f"\x1b[1;31m{line}\x1b[0m" if line else line for line in text.split("\n")),
    "quoted": _lines("> "),
    "iso_stamp": _lines("2026-09-17 13:40:05 "),
    "syslog_stamp": _lines("Nov 22 10:00:01 "),
    "trailing_spaces": lambda text: "\n".join(line + "   " for line in text.split("\n")),
    "line_numbers": lambda text: "\n".join(f"[{80000 + i}] {line}" for i, line in enumerate(text.split("\n"))),
    "cat_n": lambda text: "\n".join(f"{i + 1:>6}\t{line}" for i, line in enumerate(text.split("\n"))),
    "docker_json": lambda text: "\n".join(json.dumps({"log": line + "\n", "stream": "stderr",
                                                      "time": "2024-05-01T10:00:00.123456Z"})
                                           for line in text.split("\n")),
    "structured_json": lambda text: "\n".join(json.dumps({"ts": 1714557600.5, "level": "INFO", "msg": line})
                                               for line in text.split("\n")),
}
TAGS: dict[str, Callable[[str], str]] = {
    "kubectl_prefix": _lines("[pod/train-job-worker-0/pytorch] ", skip_fences=True),
    "kubectl_prefix_timestamps": _lines("[pod/train-job-worker-0/pytorch] 2024-05-01T10:00:00.123456789Z ",
                                        skip_fences=True),
}
CASES = [c for c in load_cases() if c.confidence in ASSERTED_CONFIDENCE]
# (decoration, case): the class of input it still loses, one line each
KNOWN: dict[tuple[str, str], str] = {}


def _verdict(path: Path) -> tuple[int, str | None, tuple[int, ...]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["report", str(path), "--format", "json"])
    verdict = json.loads(out.getvalue())["verdict"] if out.getvalue().strip() else {}
    return code, verdict.get("kind"), tuple(sorted(verdict.get("culprit_ranks") or ()))


@functools.cache
def _as_pasted(case: Case) -> tuple[int, str | None, tuple[int, ...]]:
    return _verdict(case.log)


def _check(case: Case, decorate: Callable[[str], str], tmp_path: Path) -> None:
    text = case.log.read_text(encoding="utf-8", errors="replace")
    decorated = tmp_path / "job.log"
    decorated.write_bytes(decorate(text).encode("utf-8"))
    assert _verdict(decorated) == _as_pasted(case)


def _param(case: Case, name: str):  # type: ignore[no-untyped-def]
    reason = KNOWN.get((name, case.name))
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(case, name, id=f"{case.name}-{name}", marks=marks)


@pytest.mark.parametrize(("case", "name"), [_param(c, n) for n in sorted(DECORATIONS) for c in CASES])
def test_a_decorated_log_gets_the_same_verdict(case: Case, name: str, tmp_path: Path) -> None:
    _check(case, DECORATIONS[name], tmp_path)


@pytest.mark.parametrize("name", sorted(TAGS))
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_kubectl_tagged_log_gets_the_same_verdict(case: Case, name: str, tmp_path: Path) -> None:
    if clean_text(case.log.read_text(encoding="utf-8", errors="replace")).joined:
        pytest.skip("hard-wrapped lines: a per-line tag would stand on the first half only")
    _check(case, TAGS[name], tmp_path)
