"""Reporters: one Report, four formats. ``render`` is the entry point other commands call."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from triage.model import Report
from triage.redact import redact_strings

FORMATS: tuple[str, ...] = ("text", "json", "html", "chrome-trace")


def report_json(report: Report) -> dict[str, object]:
    """The ``triage.report/1`` document (the contract in docs/report.md): strict JSON, so a float
    that is not finite (an unknown time) is written as null."""
    return {key: _finite(value) for key, value in report.to_json().items()}


def _finite(value: object) -> object:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def build_report(inputs: Sequence[str | Path], prefix: str | None = None, explain: bool = False) -> Report:
    """Load the inputs (run dir, FR dump dir, logs) and analyze them: what `triage report` prints.
    ``explain``: the verdict engine evaluates every rule (``Report.explanation``, for --explain).

    Raises triage.errors.InputError (one line, naming the path) when an input cannot be used."""
    # lazy: load and analysis take ~0.2 s to import, and commands that only render a Report
    # (postmortem, launch's verdict, top) never need them
    from triage.analysis.analyze import analyze
    from triage.load.inputs import load_inputs

    return analyze(load_inputs(list(inputs), prefix=prefix), explain=explain)


def _html(report: Report, file: TextIO, out_dir: Path | None) -> str:
    """The HTML page, its evidence links relative to the file it goes to (when that is a named
    file), with the timeline of the first run directory among the report's sources."""
    from triage.load.run_times import load_run_times
    from triage.report.html import render_html
    from triage.report.timeline import build_timeline

    if out_dir is None:
        name = getattr(file, "name", None)
        out_dir = Path(name).parent if isinstance(name, str) and Path(name).is_file() else None
    times = next((t for t in (load_run_times(Path(s)) for s in report.sources) if t is not None), None)
    return render_html(report, out_dir, build_timeline(times) if times is not None else None)


def render(report: Report, fmt: str, file: TextIO, width: int | None = None, out_dir: Path | None = None) -> None:
    """Write ``report`` to ``file`` as ``text`` (rich, for terminals), ``json``, ``html`` or
    ``chrome-trace`` (every rank's collectives for ui.perfetto.dev). Each format imports only its
    own renderer (lazily: rich for text and the HTML writer take 60-80 ms each to import). Every
    string is redacted first (triage.redact: exception messages and log lines can hold secrets)."""
    if fmt in ("json", "text"):   # every rank's collectives are drawn only by html and chrome-trace
        report = replace(report, recent=(), traces=())
    report = redact_strings(report)
    if fmt == "json":
        json.dump(report_json(report), file, indent=1, allow_nan=False)
        file.write("\n")
    elif fmt == "html":
        file.write(_html(report, file, out_dir))
    elif fmt == "chrome-trace":
        from triage.report.chrome_trace import write_chrome_trace

        write_chrome_trace(report, file)
    elif fmt == "text":
        from triage.report.sanitize import terminal_safe
        from triage.report.text import render_text

        render_text(terminal_safe(report), file, width=width)
    else:
        raise ValueError(f"unknown report format {fmt!r} (choose from {', '.join(FORMATS)})")
