"""Python stacks from py-spy (``dump --json`` and text) and from faulthandler output."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from triage.lazy_regex import lazy_regex


@dataclass(frozen=True)
class Frame:
    """One frame of a thread's stack."""
    function: str
    filename: str
    line: int | None
    module: str | None = None  # the native library for py-spy --native frames


@dataclass(frozen=True)
class ThreadStack:
    """One thread's stack as a stack dump printed it."""
    thread_id: str                  # "7386" (os id) or "0x00007f..." as the source printed it
    thread_name: str | None
    frames: tuple[Frame, ...]       # innermost first
    is_main: bool
    active: bool | None = None
    owns_gil: bool | None = None
    source: str = ""                # "py-spy-json" | "py-spy-text" | "faulthandler"


def _is_module_frame(frames: Sequence[Frame]) -> bool:
    return bool(frames) and frames[-1].function == "<module>"


def _opt_bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_pyspy_json(data: Any) -> tuple[ThreadStack, ...]:
    """Threads from ``py-spy dump --json`` (a list of per-thread objects; a dict with a
    "threads"/"stacks" list or a single thread object are accepted too)."""
    if isinstance(data, dict):
        data = data.get("threads", data.get("stacks", [data]))
    if not isinstance(data, list):
        return ()
    threads: list[ThreadStack] = []
    for item in data:
        if not isinstance(item, dict):
            continue
        raw_frames = item.get("frames")
        frames = tuple(
            Frame(str(f.get("name", "?")), str(f.get("filename") or f.get("short_filename") or "?"),
                  _opt_int(f.get("line")), f.get("module") if isinstance(f.get("module"), str) else None)
            for f in (raw_frames if isinstance(raw_frames, list) else []) if isinstance(f, dict)
        )
        os_id, pid = item.get("os_thread_id"), item.get("pid")
        name = item.get("thread_name")
        is_main = name == "MainThread" or (os_id is not None and os_id == pid)
        tid = os_id if os_id is not None else item.get("thread_id", "?")
        threads.append(ThreadStack(
            str(tid), str(name) if name is not None else None, frames,
            is_main or (name is None and _is_module_frame(frames)),
            _opt_bool(item.get("active")), _opt_bool(item.get("owns_gil")), "py-spy-json",
        ))
    return tuple(threads)


_SPY_THREAD = lazy_regex(r'^Thread (\S+)(?: \(([^)]*)\))?:?(?: "(.*)")?\s*$')
_SPY_FRAME = lazy_regex(r"^\s+(.+?) \((.+?)(?::(\d+))?\)\s*$")


def parse_pyspy_text(text: str) -> tuple[ThreadStack, ...]:
    """Threads from plain ``py-spy dump`` output (with or without --native / --locals)."""
    threads: list[ThreadStack] = []
    current: tuple[str, str | None, str] | None = None
    frames: list[Frame] = []

    def flush() -> None:
        if current is not None:
            tid, name, status = current
            threads.append(ThreadStack(
                tid, name, tuple(frames),
                name == "MainThread" or (name is None and _is_module_frame(frames)),
                "active" in status if status else None, "gil" in status if status else None,
                "py-spy-text",
            ))

    in_locals = False
    for line in text.splitlines():
        match = _SPY_THREAD.match(line.strip())
        if match and line.startswith("Thread"):
            flush()
            current, frames, in_locals = (match.group(1), match.group(3), match.group(2) or ""), [], False
            continue
        if current is None:
            continue
        stripped = line.strip()
        if stripped in ("Arguments:", "Locals:"):
            in_locals = True
            continue
        fmatch = _SPY_FRAME.match(line)
        if fmatch and not (in_locals and line.startswith("            ")):
            in_locals = False
            where, lineno = fmatch.group(2), fmatch.group(3)
            if lineno is not None:
                frames.append(Frame(fmatch.group(1), where, int(lineno)))
            else:  # a native frame: "clock_nanosleep (libc.so.6)"
                frames.append(Frame(fmatch.group(1), "", None, where))
    flush()
    return tuple(threads)


_FH_THREAD = lazy_regex(
    r"(Current thread|Thread) (0x[0-9a-fA-F]+)(?: \[([^\]]*)\])? \(most recent call first\):"
)
_FH_STACK = lazy_regex(r"^\s*Stack \(most recent call first\):")
_FH_FRAME = lazy_regex(r'File "(.*)", line (\d+|\?+) in (\S.*?)\s*$')  # tracebacks have ", in"
_FH_SIGNAL = lazy_regex(r"Fatal Python error: (.+?)\s*$", re.MULTILINE)


def parse_faulthandler(text: str) -> tuple[ThreadStack, ...]:
    """Threads from faulthandler output (a fatal signal, dump_traceback, dump_traceback_later).

    Lines may carry launcher prefixes; frames are found anywhere in a line. The thread whose
    outermost frame is ``<module>`` is taken as the main thread.
    """
    threads: list[tuple[str, str | None, bool, list[Frame]]] = []
    in_block = False
    for line in text.splitlines():
        header = _FH_THREAD.search(line)
        if header:
            threads.append((header.group(2), header.group(3), header.group(1) == "Current thread", []))
            in_block = True
            continue
        if _FH_STACK.search(line):
            threads.append(("?", None, True, []))
            in_block = True
            continue
        frame = _FH_FRAME.search(line)
        if frame and threads and in_block:
            lineno = frame.group(2)
            threads[-1][3].append(Frame(frame.group(3), frame.group(1),
                                        int(lineno) if lineno.isascii() and lineno.isdigit() else None))
        elif not any(mark in line for mark in ("  ...", "<no Python frame>", "<truncated")):
            in_block = False
    out: list[ThreadStack] = []
    for tid, name, _current, frames in threads:
        main = _is_module_frame(frames) or name == "MainThread"
        out.append(ThreadStack(tid, name, tuple(frames), main, None, None, "faulthandler"))
    if out and not any(t.is_main for t in out) and len(out) == 1:
        out[0] = ThreadStack(out[0].thread_id, out[0].thread_name, out[0].frames, True, None, None,
                             "faulthandler")
    return tuple(out)


def parse_faulthandler_signal(text: str) -> str | None:
    """The fatal error faulthandler reported last ("Segmentation fault", "Aborted", ...), if any.

    The last one: a rank's faulthandler.log is appended to across elastic restarts."""
    found = _FH_SIGNAL.findall(text)
    return str(found[-1]) if found else None


@dataclass(frozen=True)
class FatalBanner:
    """glog-style crash banner (PyTorch/Paddle): ``*** Aborted at 1757588325 (unix time) ...`` and
    ``*** SIGSEGV (@0x0) received by PID 1234 (TID 0x7f..) from PID 0; stack trace: ***``."""

    unix_time: int | None
    signal: str | None
    pid: int | None


_ABORTED_AT = lazy_regex(r"Aborted at (\d+) \(unix time\)")
_SIG_RECEIVED = lazy_regex(r"\*\*\* (SIG[A-Z]+) \(@[^)]*\) received by PID (\d+)")


def parse_fatal_banner(text: str) -> FatalBanner | None:
    """The crash time and signal of the last glog fatal banner (logs are appended to across
    restarts), or None when there is none."""
    times = _ABORTED_AT.findall(text)
    signals = _SIG_RECEIVED.findall(text)
    if not times and not signals:
        return None
    return FatalBanner(int(times[-1]) if times else None, signals[-1][0] if signals else None,
                       int(signals[-1][1]) if signals else None)


_LIBRARY_MARKERS = (
    "/site-packages/", "/dist-packages/", "/torch/", "/lib/python3", "/threading.py",
    "<frozen ", "runpy.py", "/multiprocessing/", "/concurrent/", "/asyncio/",
)


def _is_user_frame(frame: Frame) -> bool:
    if not frame.filename:  # native frames (py-spy --native) have a library, no file
        return False
    path = "/" + frame.filename.replace("\\", "/").lstrip("/")  # py-spy text: "torch/distributed/x.py"
    return not any(marker in path for marker in _LIBRARY_MARKERS)


def _main(threads: Iterable[ThreadStack]) -> ThreadStack | None:
    threads = list(threads)
    for thread in threads:
        if thread.is_main:
            return thread
    return threads[0] if len(threads) == 1 else None


def stack_top(threads: Iterable[ThreadStack]) -> str | None:
    """"train.py:42 in step": the innermost user-code frame of the main thread."""
    main = _main(threads)
    if main is None:
        return None
    for frame in main.frames:
        if _is_user_frame(frame):
            base = frame.filename.replace("\\", "/").rsplit("/", 1)[-1]
            line = "?" if frame.line is None else str(frame.line)
            return f"{base}:{line} in {frame.function}"
    return None


_C10D_SKIP = {"wrapper", "_wrapper", "inner", "decorator", "wait", "__call__"}
_C10D_FILES = ("distributed_c10d.py", "_functional_collectives.py")
_PRIVATE_COLLECTIVES = ("_all_gather_base", "_reduce_scatter_base", "_coalescing_manager")


def _collective_name(frame: Frame) -> str | None:
    name = frame.function.rsplit(".", 1)[-1]
    if name in _C10D_SKIP or (name.startswith("_") and name not in _PRIVATE_COLLECTIVES):
        return None
    return frame.function


def waiting_in_collective(threads: Iterable[ThreadStack]) -> str | None:
    """The torch.distributed function ("all_reduce", "barrier", ...) the main thread is in:
    the innermost public function of distributed_c10d (or functional collectives), else the
    innermost public torch.distributed function (FSDP, DDP ...)."""
    main = _main(threads)
    if main is None:
        return None
    fallback: str | None = None
    for frame in main.frames:
        path = frame.filename.replace("\\", "/")
        if "torch/distributed/" not in path and not path.endswith(_C10D_FILES):
            continue
        name = _collective_name(frame)
        if name is None:
            continue
        if path.endswith(_C10D_FILES):
            return name
        fallback = fallback or name
    return fallback
