"""triage's public Python API: what `triage report` does, from Python.

Everything a program needs is importable from here; the rest of the package is internal and may
change without notice::

    import sys
    from triage.api import VerdictKind, build_report, render

    report = build_report(["triage-runs/20261122-012138-356"])
    if report.verdict.kind is not VerdictKind.NO_PROBLEM_FOUND:
        print(report.verdict.summary)          # the first line of the text report
    render(report, "json", sys.stdout)         # the triage.report/1 document

Inside a training script started by `triage launch`, :func:`step` marks progress for the
hang detector (``import triage; triage.step()`` works too).

The model types are frozen dataclasses and str Enums; :meth:`Report.to_json` and
:func:`report_json` give the ``triage.report/1`` document as a dict (see docs/report.md).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from os import PathLike
from typing import TextIO

from triage import step
from triage.errors import InputError, TriageError
from triage.exitcodes import ExitCode
from triage.model import (
    Collective,
    CollectiveState,
    Finding,
    MismatchKind,
    RankState,
    RankSummary,
    Report,
    Verdict,
    VerdictKind,
)
from triage.report import FORMATS, report_json
from triage.report import build_report as _build_report
from triage.report import render as _render
from triage.schemas import REPORT_SCHEMA
from triage.worker import numerics as _numerics

__all__ = [
    "FORMATS",
    "REPORT_SCHEMA",
    "Collective",
    "CollectiveState",
    "ExitCode",
    "Finding",
    "InputError",
    "MismatchKind",
    "RankState",
    "RankSummary",
    "Report",
    "TriageError",
    "Verdict",
    "VerdictKind",
    "build_report",
    "exit_code",
    "render",
    "report_json",
    "step",
    "watch",
]


def build_report(paths: Sequence[str | PathLike[str]], prefix: str | None = None) -> Report:
    """Load and analyze what a job left behind; the same Report `triage report PATHS...` prints.

    ``paths`` are any mix of: run directories written by `triage launch` (or `triage dump`,
    `triage collect`), directories of Flight Recorder dumps, single dump files, torchelastic error
    files and log files (per-rank or interleaved, pasted text included); ``"-"`` reads a log from
    standard input. Several inputs are analysed together, a rank's best source winning.
    ``prefix`` picks the Flight Recorder dump file prefix when a directory holds several
    (default: the most common one).

    The verdict does not depend on the order of ``paths``. Partial input (an unreadable dump among
    many, a missing rank) is not an error: the report says what was skipped.

    Raises :class:`InputError` (a :class:`TriageError`, one line naming the path, with a ``hint``)
    when an input cannot be used at all: a missing path, an empty directory, a garbage or truncated
    file, an unsafe pickle, a FIFO.
    """
    return _build_report([p if isinstance(p, str) else str(p) for p in paths], prefix=prefix)


def render(report: Report, fmt: str, file: TextIO, width: int | None = None) -> None:
    """Write ``report`` to ``file`` as ``"text"``, ``"json"``, ``"html"`` or ``"chrome-trace"`` (see :data:`FORMATS`).

    - ``text``: the terminal report (verdict panel, findings, folded rank table, evidence, next
      steps), ``width`` columns wide (default: the terminal's, or 100 when ``file`` is not a
      terminal). Text taken from the inputs is shown with visible escapes.
    - ``json``: the ``triage.report/1`` document, strict JSON (unknown times are ``null``).
    - ``html``: one self-contained page (inline CSS and SVG, no external URL).
    - ``chrome-trace``: every rank's collectives as a Chrome / Perfetto trace (one process per
      host, one thread per rank), for ui.perfetto.dev.

    Raises ``ValueError`` for any other ``fmt``.
    """
    _render(report, fmt, file, width=width)


def exit_code(report: Report) -> int:
    """The exit code `triage report` gives this report: 0 when no problem was found, else 1."""
    kind = report.verdict.kind
    return int(ExitCode.OK if kind is VerdictKind.NO_PROBLEM_FOUND else ExitCode.PROBLEM_FOUND)


def watch(model: object = None, out_dir: str | PathLike[str] | None = None, mode: str = "cheap") -> str | None:
    """Watch this process for its first NaN or Inf, as ``triage launch --numerics`` does, without the
    launcher: call it after ``import torch`` (the hooks are torch's global ones; ``model`` names its
    modules and parameters from it as the root). The record goes to ``numerics.json`` in the rank
    directory under ``triage launch``, else in ``out_dir`` (default ``triage-numerics/rank-<RANK>``).
    Returns the record's path, or None when the watch could not start (it never raises into the job)."""
    if mode not in _numerics.MODES:
        raise InputError(f"numerics mode {mode!r}: use one of {', '.join(_numerics.MODES)}")
    rank_text = os.environ.get("RANK", "0")
    rank = int(rank_text) if rank_text.isdigit() else 0
    where = os.fspath(out_dir) if out_dir is not None else os.path.join("triage-numerics", f"rank-{rank}")
    if out_dir is None and _numerics.current() is not None:
        where = os.path.dirname(_numerics.current().path)   # type: ignore[union-attr]
    os.makedirs(where, mode=0o700, exist_ok=True)
    started = _numerics.start(where, rank, mode)
    if started is None:
        return None
    if model is not None:
        started.learn(model)
    return started.path
