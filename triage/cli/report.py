"""`triage report INPUT...`: name the culprit from a run directory, FR dumps or logs."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from triage.config import add_arguments, options_of, settings_from
from triage.console import say
from triage.errors import InputError, UsageError
from triage.exitcodes import ExitCode
from triage.model import Report, VerdictKind
from triage.private_files import user_output
from triage.report import FORMATS, build_report, render
from triage.settings import ReportSettings

REPORT_OPTIONS = options_of(ReportSettings)


class ReportCommand:
    name = "report"
    help = ("name the rank, host and collective that hung or crashed a job, from a run directory, "
            "a directory of Flight Recorder dumps, or log files")

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.epilog = "exit codes: 0 no problem found, 1 a problem was found and reported, 2 bad input"
        parser.add_argument("inputs", nargs="+", metavar="INPUT",
                            help="run directory, Flight Recorder dump directory/file(s), or log file(s)")
        parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
        parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
        parser.add_argument("--prefix", help="FR dump file prefix (files are PREFIX<rank>); auto-detected")
        parser.add_argument("--width", type=int, help="terminal width for --format text")
        add_arguments(parser, REPORT_OPTIONS, config_file=False)

    def run(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
        # millions of small acyclic objects: the cyclic GC would only rescan them over and over
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._run(args)
        finally:
            if was_enabled:
                gc.enable()

    def _run(self, args: argparse.Namespace) -> int:
        if args.width is not None and not 20 <= args.width <= 10000:
            raise UsageError(f"--width {args.width}: must be between 20 and 10000 columns")
        settings = settings_from(ReportSettings, REPORT_OPTIONS, vars(args))
        report = build_report(args.inputs, prefix=args.prefix, explain=settings.explain)
        if not args.output:
            return show_report(report, args.inputs, args.format, args.width, explain=settings.explain)
        _write_file(report, args.format, Path(args.output), args.width)
        say(f"report written to {args.output}")
        if settings.explain:        # the file is kept whole
            _explain(report, sys.stderr)
        _print_next(report, args.inputs, args.format, args.output, sys.stderr)
        return int(exit_code(report))


def _explain(report: Report, stream: TextIO) -> None:
    """--explain's account of the verdict (triage.report.explain), imported here: a report without it never loads it."""
    from triage.report.explain import write_explanation

    write_explanation(report, stream)


def show_report(report: Report, inputs: Sequence[str], fmt: str, width: int | None, explain: bool = False) -> int:
    """``report`` rendered on stdout, then the next command on stderr; its exit code (`triage report`
    and `triage collect` show a report this one way). ``explain``: how the verdict was decided, after
    a text report (on stderr for the other formats: JSON stays JSON)."""
    try:
        render(report, fmt, sys.stdout, width=width)
        if explain and fmt == "text":       # after the report, where it is read
            _explain(report, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:  # `triage report ... | head`: the reader left, that is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return int(exit_code(report))
    except OSError as exc:   # a full disk, a closed terminal: the report was not delivered
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise InputError(f"standard output: cannot write the report ({exc.strerror or exc})",
                         hint="write it to a file with -o FILE") from None
    if explain and fmt != "text":
        _explain(report, sys.stderr)
    _print_next(report, inputs, fmt, None, sys.stderr)
    return int(exit_code(report))


def exit_code(report: Report) -> ExitCode:
    return ExitCode.OK if report.verdict.kind is VerdictKind.NO_PROBLEM_FOUND else ExitCode.PROBLEM_FOUND


def _write_file(report: Report, fmt: str, path: Path, width: int | None) -> None:
    try:
        with user_output(path) as handle:
            render(report, fmt, handle, width=width or 120, out_dir=Path(os.path.abspath(path)).parent)
    except OSError as exc:
        raise InputError(f"{path}: cannot write the report ({exc.strerror or exc})") from None


def _print_next(report: Report, given: Sequence[str], fmt: str, output: str | None, err: TextIO) -> None:
    inputs = " ".join(given)
    if fmt == "chrome-trace":
        trace = output or "the trace (-o trace.json)"
        err.write(f"next: open {trace} in https://ui.perfetto.dev   # the timeline\n")
    elif fmt != "html":
        err.write(f"next: triage report {inputs} --format html -o triage-report.html   # the picture\n")
    elif report.verdict.culprit_ranks:
        err.write(f"next: triage report {inputs} --format json | jq .verdict\n")
