"""Session 58 (fix58a item 1): torchelastic's ChildFailedError summary title ("<entrypoint> FAILED") told on one line
with the child's own exception after it, as an issue's title or a rich traceback box's last line joins them
("ChildFailedError codeparrot_training.py FAILED KeyError: 'backend'"). Was a failure of no reader's words (FAILURE,
CULPRIT NOT IN THIS INPUT), now the child's exception, of no rank the line names (nlp-with-transformers/notebooks#99);
the summary in its own lines reads as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.crashlog import CrashLineKind, parse_crash_line


@pytest.mark.parametrize("line, exc", [
    ("ChildFailedError finetune_llama.py FAILED ValueError: Please specify the ZeRO stage", "ValueError"),
    (("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: tools/train.py FAILED "
     "ModuleNotFoundError: No module named 'mmcv._ext'"), "ModuleNotFoundError"),
    (("ChildFailedError: ============================================================ train.py FAILED "
     "------------------------------------------------------------ AttributeError: 'NoneType' object has no "
     "attribute 'shape'"), "AttributeError"),
], ids=["title", "module-path", "collapsed-box"])
def test_glued_summary_is_the_childs_exception(line: str, exc: str, tmp_path: Path) -> None:
    crash = parse_crash_line(line)
    assert crash is not None and crash.kind is CrashLineKind.EXCEPTION and crash.exc_type == exc, crash
    assert not crash.collateral
    _code, got = report_log(line + "\n", tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict
    assert exc in verdict["summary"] and "FAILED" in verdict["summary"]


def test_summary_alone_stays_the_launchers_consequence() -> None:
    crash = parse_crash_line("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:")
    assert crash is None or crash.collateral
    crash = parse_crash_line("ChildFailedError train.py FAILED")
    assert crash is None or crash.collateral or crash.exc_type is None
