"""Command-line entry point: ``main(argv=None) -> int`` so tests can call it in-process."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Sequence

from triage import __version__, compiled_cache
from triage.cli import start  # noqa: F401 - before any import of dataclasses: it defers inspect
from triage.cli.base import Command
from triage.console import safe_stream
from triage.errors import TriageError
from triage.exitcodes import ExitCode

# name -> "module:Class". Each subcommand lives in its own module.
_REGISTRY: dict[str, str] = {
    "launch": "triage.cli.launch:LaunchCommand",
    "dump": "triage.cli.dump:DumpCommand",
    "report": "triage.cli.report:ReportCommand",
    "postmortem": "triage.cli.postmortem:PostmortemCommand",
    "collect": "triage.cli.collect:CollectCommand",
    "check": "triage.cli.check:CheckCommand",
    "top": "triage.cli.top:TopCommand",
}


def _load(spec: str) -> Command:
    module_name, class_name = spec.split(":")
    module = importlib.import_module(module_name)
    command: Command = getattr(module, class_name)()
    return command


def _chosen(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line, if any (so only its module is imported)."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in _REGISTRY else None
        if arg in ("-h", "--help", "--version"):
            return None
    return None


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, its width read as ``shutil.get_terminal_size`` reads it: argparse imports shutil
    for that (and shutil lzma and bz2: ~5 ms at every start, docs/performance.md), at each ``add_argument``."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


def _columns() -> int:
    """``shutil.get_terminal_size().columns``: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns   # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def build_parser(only: str | None = None) -> tuple[argparse.ArgumentParser, dict[str, Command]]:
    """The parser; with ``only`` (the subcommand the command line names), that one alone: the others' modules
    stay unimported, and their parsers are not made (~0.1 ms each: argparse looks up its messages' translations
    for each). Only the main parser's own messages could name them, and it says ``COMMAND``, never the list:
    its list is shown where no subcommand is named (``only`` None: all of them are made)."""
    parser = argparse.ArgumentParser(
        prog="triage",
        description="Find out why a distributed PyTorch job hung or crashed.",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"triage {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="show tracebacks and debug output")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands: dict[str, Command] = {}
    for name, spec in _REGISTRY.items():
        if only is not None and name != only:
            continue
        command = _load(spec)
        sub = subparsers.add_parser(name, help=command.help, description=command.help, formatter_class=_Formatter)
        sub.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                         help="show tracebacks and debug output")
        command.prepare_parser(sub)
        commands[name] = command
    return parser, commands


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(argv) if argv is not None else sys.argv[1:]
    if argv is None and _chosen(arguments) == "report":
        # the report's run disables the cyclic collector (triage.cli.report: what it makes is acyclic); the program
        # disables it from here, so that its imports (~100 classes made, ~220 modules) are not rescanned either
        gc.disable()
    compiled_cache.install()     # before the command's imports: their dataclasses' code read back, not compiled
    try:
        return _main(arguments)
    finally:
        compiled_cache.save()
        if argv is None:        # the program itself (the console script, `python -m triage`): it exits next
            _before_exit()


def _before_exit() -> None:
    """What the process made is moved out of the cyclic garbage collector's reach (``gc.freeze``), so that the
    interpreter's shutdown does not walk every object once more: that walk was ~10 ms of a small log's report, a
    sixth of its CPU (docs/performance.md, Parsing, session 51). Nothing else of the shutdown changes: the atexit
    handlers, the threads' join, the streams' flush and every object's release by its count run as before; only
    garbage in reference cycles is no longer collected at exit, where the process's memory goes back whole."""
    gc.freeze()


def _main(arguments: list[str]) -> int:
    parser, commands = build_parser(_chosen(arguments))
    args = parser.parse_args(arguments)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return int(ExitCode.USAGE_OR_INPUT)
    command = commands[args.command]
    verbose = bool(getattr(args, "verbose", False))
    if args.command != "launch":        # the agent's live console writes its own styling to stderr
        sys.stderr = safe_stream(sys.stderr)
    try:
        return command.run(args, parser)
    except TriageError as error:
        if verbose:
            _print_traceback()
        print(f"triage: error: {error.one_line()}", file=sys.stderr)
        if error.hint:
            print(f"hint: {error.hint}", file=sys.stderr)
        return int(error.exit_code)
    except KeyboardInterrupt:
        print("triage: interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except Exception as error:  # noqa: BLE001 - last line of defence: one line, no traceback
        if verbose:
            _print_traceback()
        print(f"triage: internal error: {type(error).__name__}: {error} (re-run with -v and report it)",
              file=sys.stderr)
        return int(ExitCode.INTERNAL)


def _print_traceback() -> None:
    """The exception being handled, with its traceback (imported here: only ``-v`` on an error needs the module)."""
    import traceback

    traceback.print_exc()
