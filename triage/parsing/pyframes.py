"""pystack's Python frames, as triage's pystack child prints them (schema ``triage.pyframes/1``).

The child (triage.collectors.pyframes) prints one JSON document::

    {"schema": ..., "tool": "pystack", "version": "1.7.2", "pid": 123, "threads": [
        {"tid": 123, "name": null, "gil": true, "frames": [{"file", "line", "function"}, ...]}]}

Frames are innermost first; ``pid`` is there for a live process (``remote``), not for a core. On
failure: ``{"schema": ..., "error": "one line"}``. This module is the one reader of that format:
the collectors, ``triage postmortem`` and the run-directory loader all go through it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from triage.parsing.stacks import Frame, ThreadStack

MAX_THREADS = 4096
MAX_FRAMES = 512

PyFrame = tuple[str, int | None, str]      # (file, line, function)


@dataclass(frozen=True)
class PyFrames:
    """What one pystack run gave: threads (tid -> frames innermost first), or the reason it gave none."""

    threads: dict[int, tuple[PyFrame, ...]]
    error: str | None = None
    missing: bool = False
    timed_out: bool = False
    denied: bool = False
    raw: str = ""
    pid: int | None = None                                   # the live process read (None for a core)
    names: dict[int, str] = field(default_factory=dict)      # tid -> thread name, when pystack knew it

    def frames_for(self, tid: int | None) -> tuple[PyFrame, ...]:
        """The frames of thread ``tid``; without it, the first thread that has any."""
        if tid is not None and self.threads.get(tid):
            return self.threads[tid]
        return next((f for f in self.threads.values() if f), ())


def parse_pyframes(text: str, stderr: str = "", returncode: int | None = 0) -> PyFrames:
    """The child's JSON as :class:`PyFrames` (bounded: threads and frames beyond the limits are dropped)."""
    try:
        data: Any = json.loads(text) if text.strip() else None
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        last = (stderr.strip().splitlines() or [f"exit status {returncode}"])[-1]
        return PyFrames({}, f"pystack gave no output: {last[:300]}", raw=text)
    if data.get("error"):
        return PyFrames({}, str(data["error"])[:400], raw=text)
    threads: dict[int, tuple[PyFrame, ...]] = {}
    names: dict[int, str] = {}
    items = data.get("threads")
    for item in (items if isinstance(items, list) else [])[:MAX_THREADS]:
        if not isinstance(item, dict) or not isinstance(item.get("tid"), int):
            continue
        frames = []
        raw_frames = item.get("frames")
        for frame in (raw_frames if isinstance(raw_frames, list) else [])[:MAX_FRAMES]:
            if isinstance(frame, dict):
                line = frame.get("line")
                frames.append((str(frame.get("file")), line if isinstance(line, int) else None,
                               str(frame.get("function"))))
        threads[item["tid"]] = tuple(frames)
        if isinstance(item.get("name"), str):
            names[item["tid"]] = item["name"]
    pid = data.get("pid")
    return PyFrames(threads, raw=text, pid=pid if isinstance(pid, int) else None, names=names)


def describe(frame: PyFrame) -> str:
    """As :class:`triage.parsing.gdb.PythonFrame` describes a frame: ``file:line in function``."""
    return f"{frame[0]}:{frame[1]} in {frame[2]}"


def thread_stacks(frames: PyFrames) -> tuple[ThreadStack, ...]:
    """The threads as the report's other stack sources give them (the main thread: the process's
    own tid, else the one that started at module level)."""
    out = []
    for tid, items in frames.threads.items():
        stack = tuple(Frame(function, file, line) for file, line, function in items)
        main = tid == frames.pid if frames.pid is not None else bool(stack) and stack[-1].function == "<module>"
        out.append(ThreadStack(str(tid), frames.names.get(tid), stack, main, source="pystack"))
    return tuple(out)
