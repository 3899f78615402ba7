"""`triage postmortem CORE... [--exe BINARY] [--run-dir DIR]`: explain a crash from core files."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from pathlib import Path
from typing import TextIO

from triage.analysis.crash import CrashClassification
from triage.collectors.gdbrun import DEFAULT_TIMEOUT_S
from triage.collectors.redact import set_redaction
from triage.console import safe_stream, say, terminal_safe
from triage.errors import InputError, UsageError
from triage.exitcodes import ExitCode
from triage.layout import RunPaths
from triage.postmortem.run import PostmortemResult, run_postmortem
from triage.private_files import user_output
from triage.regular_files import NOT_REGULAR, NotRegularFile, open_regular
from triage.report import FORMATS, render

MAX_THREADS_SHOWN = 12
DMESG_LIMIT = 64 * 1024 * 1024


class PostmortemCommand:
    name = "postmortem"
    help = "explain a crash from core files (gdb backtraces, crash class, which rank crashed first)"

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("cores", nargs="+", metavar="CORE", type=Path, help="core file(s) of one job")
        parser.add_argument("--exe", metavar="BINARY",
                            help="the executable that dumped the core (default: the one the core names)")
        parser.add_argument("--run-dir", type=Path, metavar="DIR",
                            help="the job's triage run directory: maps pids to ranks/hosts, adds logs")
        parser.add_argument("--format", choices=FORMATS, default="text", help="report format (default: text)")
        parser.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the report here")
        parser.add_argument("--width", type=int, default=None, help="text report width (default: 100)")
        parser.add_argument("--gdb-timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                            help=f"time bound for gdb on one core (default: {DEFAULT_TIMEOUT_S:.0f})")
        parser.add_argument("--keep", type=Path, metavar="DIR",
                            help="keep gdb's raw output here (with --run-dir it goes into the run's bundles)")
        parser.add_argument("--dmesg", type=Path, metavar="FILE",
                            help="read kernel messages from FILE instead of running `dmesg`")
        parser.add_argument("--no-redact", action="store_true",
                            help="keep secret-looking values in what is written (core.json, gdb output)")

    def run(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
        run_dir: Path | None = args.run_dir
        if run_dir is not None and not RunPaths(run_dir).is_run_dir():
            raise InputError(f"{run_dir}: not a triage run directory (no run.json)",
                             "pass the directory `triage launch` printed, or leave out --run-dir")
        if not math.isfinite(args.gdb_timeout) or args.gdb_timeout <= 0:
            raise UsageError(f"--gdb-timeout {args.gdb_timeout}: must be a finite number of seconds > 0")
        if args.width is not None and not 20 <= args.width <= 10000:
            raise UsageError(f"--width {args.width}: must be between 20 and 10000 columns")
        if args.keep is not None and (args.keep.exists() or args.keep.is_symlink()) and not args.keep.is_dir():
            raise InputError(f"--keep {args.keep}: exists and is not a directory",
                             hint="give a new directory name for gdb's raw output")
        if args.output is not None and args.output.is_dir():
            raise InputError(f"--output {args.output}: is a directory", hint="give a file name")
        set_redaction(not args.no_redact)
        dmesg_text = None
        if args.dmesg is not None:
            dmesg_text = read_regular_text(args.dmesg, "kernel log", DMESG_LIMIT)
        result = run_postmortem(list(args.cores), exe=args.exe, run_dir=run_dir, timeout=args.gdb_timeout,
                                keep=args.keep if run_dir is None else None, dmesg_text=dmesg_text)
        for line in result.bad_inputs:
            say(f"error: {line}")
        for line in result.warnings:
            say(f"warning: {line}")
        if result.classifications or not result.bad_inputs:
            self._write(result, args)
        return int(exit_code(result))

    def _write(self, result: PostmortemResult, args: argparse.Namespace) -> None:
        if args.output is not None:
            try:
                with user_output(args.output) as handle:
                    self._render(result, args, handle, Path(os.path.abspath(args.output)).parent)
            except OSError as error:
                raise InputError(f"{args.output}: cannot write the report: {error.strerror or error}") from None
        else:
            try:
                self._render(result, args, sys.stdout)
                sys.stdout.flush()
            except BrokenPipeError:
                quiet_stdout()
            except OSError as error:
                quiet_stdout()
                raise InputError(f"cannot write the report to stdout: {error.strerror or error}") from None

    def _render(self, result: PostmortemResult, args: argparse.Namespace, file: TextIO,
                out_dir: Path | None = None) -> None:
        render(result.report, args.format, file, width=args.width, out_dir=out_dir)
        if args.format == "text":
            for item in sorted(result.classifications, key=lambda c: (c.time is None, c.time or 0.0)):
                print_details(terminal_safe(item), safe_stream(file))


def quiet_stdout() -> None:
    """After stdout failed (closed pipe, full disk): point it at /dev/null so exit does not fail again."""
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def read_regular_text(path: Path, what: str, limit: int) -> str:
    """A regular file's text (at most ``limit`` bytes from its end); FIFOs, devices and directories
    are refused (they could block triage forever)."""
    try:
        with open_regular(path) as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - limit))
            return handle.read(limit).decode("utf-8", "replace")
    except NotRegularFile:
        raise InputError(f"{path}: {NOT_REGULAR}: cannot read {what}") from None
    except OSError as error:
        raise InputError(f"{path}: cannot read {what}: {error.strerror or error}") from None


def exit_code(result: PostmortemResult) -> ExitCode:
    if result.gdb_missing:
        return ExitCode.TOOL_FAILURE
    if result.bad_inputs:
        return ExitCode.USAGE_OR_INPUT
    return ExitCode.PROBLEM_FOUND if result.classifications else ExitCode.USAGE_OR_INPUT


def print_details(item: CrashClassification, file: TextIO) -> None:
    who = f"rank {item.rank}" if item.rank is not None else f"pid {item.pid}"
    print(f"\nCrash details: {who}" + (f" on {item.host}" if item.host else ""), file=file)
    print(f"  class: {item.kind.value}   signal: {item.signal or '-'}"
          + (f"   time: {item.time:.3f} ({item.time_source})" if item.time else ""), file=file)
    if item.faulting_thread is not None:
        role = item.faulting_role.value if item.faulting_role else "?"
        name = f" '{item.faulting_name}'" if item.faulting_name else ""
        print(f"  faulting thread: LWP {item.faulting_thread}{name} [{role}]", file=file)
    if item.crash_frame:
        print(f"  crashing frame: {item.crash_frame}   library: {item.library or '?'}", file=file)
    for index, frame in enumerate(item.top_frames[:6]):
        print(f"    #{index} {frame}", file=file)
    if item.python_frames:
        print(f"  Python stack (via {item.python_method}, innermost first):", file=file)
        for frame in item.python_frames[:6]:
            print(f"    {frame}", file=file)
    else:
        print("  Python stack: not available", file=file)
    if item.threads:
        print(f"  threads ({len(item.threads)}):", file=file)
        for thread in item.threads[:MAX_THREADS_SHOWN]:
            name = f" '{thread.name}'" if thread.name else ""
            print(f"    LWP {thread.lwp}{name} [{thread.role.value}] {thread.top or ''}", file=file)
    for event in item.kernel_events[:5]:
        print(f"  kernel: {event}", file=file)
    for note in item.notes:
        print(f"  note: {note}", file=file)
    print(f"  next: {item.next_step}", file=file)
