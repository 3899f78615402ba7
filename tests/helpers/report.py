"""`triage report` on a pasted log, run in-process, as the tests of its verdicts read it."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
from pathlib import Path
from typing import Any

from triage.analysis.analyze import Report, analyze
from triage.cli import main
from triage.load.inputs import load_log_texts


def report_log(text: str, tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """Write ``text`` to ``tmp_path/job.log``, run ``triage report job.log --format json [args]``;
    the exit code and the whole JSON report ({} where it printed nothing: its stderr is then kept
    under the key ``"stderr"``)."""
    path = tmp_path / "job.log"
    path.write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["report", str(path), "--format", "json", *args])
    if not out.getvalue().strip():
        return code, {"stderr": err.getvalue()}
    return code, json.loads(out.getvalue())


def report_lines(*lines: str) -> Report:
    """The analysis of a pasted log of ``lines`` (each ended by a newline), in-process: the tests of tests/analysis
    read its verdict, findings and steps."""
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


def failure_verdict(text: str, tmp_path: Path) -> dict[str, Any]:
    """The verdict of ``triage report`` on ``text``, which must read as a failure: neither refused (exit 2), nor an
    all-clear (0), nor an internal error (70)."""
    code, out = report_log(text, tmp_path)
    assert code != 2, out.get("stderr")
    assert code not in (0, 70), out
    verdict: dict[str, Any] = out["verdict"]
    return verdict


def bytes_find_all(data: bytes, needle: bytes, start: int, end: int) -> list[int]:
    """Every offset of ``needle`` in ``data[start:end]`` (overlapping), by plain ``bytes.find``:
    what the multi-needle scanner must agree with. A needle that is a pattern (triage.parsing.needles.pattern): the
    start of every match of its fixed width that ends by ``end``, by ``re``."""
    from triage.parsing import needles

    if needle in needles._WIDTHS:
        ahead = re.compile(b"(?=" + needle + b")")
        return [m.start() for m in ahead.finditer(data, start, end) if m.start() + needles.width(needle) <= end]
    hits, pos = [], start
    while (hit := data.find(needle, pos, end)) >= 0:
        hits.append(hit)
        pos = hit + 1
    return hits


def report_run_json(run_dir: Path) -> dict[str, Any]:
    """The real CLI's ``triage report --format json RUN_DIR``, in a subprocess (a run directory a
    launch test made)."""
    from tests.helpers.processes import triage_cmd

    proc = subprocess.run(triage_cmd("report", "--format", "json", str(run_dir)), capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.stdout, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data
