"""The child a stuck rank waits on (pure): a DataLoader worker, a pool worker, a subprocess.

A rank whose main thread waits for its DataLoader's next batch (``_next_data`` ->
``_try_get_data``), a pool result (``multiprocessing/pool.py``), a pipe
(``multiprocessing/connection.py``) or a subprocess (``subprocess.py``) is not stuck in its own
code: one of its children is. The children's stacks (py-spy, one dump per child) tell which:

- a worker waiting for work is **idle**: below its loop frame (torch's ``_worker_loop``,
  multiprocessing's pool ``worker``, concurrent.futures' ``_process_worker``) it only has queue/pipe/lock frames;
- any other child is **working** (or stuck): it has frames of its own below its loop frame.

The rank waits on its working children of the kind it waits on (DataLoader workers for a
DataLoader wait); when several work, the one with the lowest worker id is named first. The
worker id comes from the agent (``ChildStack.worker_id``: read while the child was alive).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from triage.model.evidence import ChildStack
from triage.parsing.stacks import Frame, ThreadStack

_WAITS: tuple[tuple[str, str, frozenset[str]], ...] = (
    # (kind waited on, file marker, functions of that file whose presence means the wait)
    ("DataLoader", "torch/utils/data/dataloader.py",
     frozenset({"_next_data", "_get_data", "_try_get_data", "__next__"})),
    ("pool", "multiprocessing/pool.py", frozenset({"get", "wait", "next", "__next__", "map", "starmap", "imap"})),
    ("pool", "concurrent/futures/process.py", frozenset({"map", "result", "_chain_from_iterable_of_lists"})),
    # a future's result: a process pool's when the rank has working pool children (a thread pool has none)
    ("pool", "concurrent/futures/_base.py", frozenset({"result", "_result_or_cancel", "as_completed"})),
    ("subprocess", "subprocess.py", frozenset({"wait", "_wait", "communicate", "_communicate", "run", "call",
                                               "check_call", "check_output"})),
    ("pipe", "multiprocessing/connection.py", frozenset({"recv", "recv_bytes", "_recv", "_recv_bytes", "poll"})),
)
# frames a waiting process sits in: below a worker's loop frame they mean "waiting for work"
_WAIT_FILES = ("multiprocessing/queues.py", "multiprocessing/connection.py", "multiprocessing/synchronize.py",
               "multiprocessing/reduction.py", "threading.py", "selectors.py", "/queue.py", "socket.py")
_DATALOADER_LOOP = ("torch/utils/data/_utils/worker.py", "_worker_loop")
_POOL_LOOPS = (("multiprocessing/pool.py", "worker"), ("concurrent/futures/process.py", "_process_worker"))
_LIBRARY = ("/site-packages/", "/dist-packages/", "/lib/python3", "<frozen ", "torch/", "multiprocessing/",
            "concurrent/", "threading.py", "selectors.py", "subprocess.py", "queue.py", "socket.py")


@dataclass(frozen=True)
class ChildWait:
    """Rank ``rank`` waits on child ``pid``, stuck in ``where``."""

    rank: int
    pid: int
    kind: str                         # "DataLoader worker" | "pool worker" | "child process"
    worker_id: int | None
    where: str | None                 # "read_from_store (job.py:21)": the child's innermost own frame
    waits_in: str                     # what the rank waits for: "its DataLoader's next batch"
    others: tuple[int, ...] = ()      # pids of other working children of the same kind
    evidence: tuple[str, ...] = ()

    def child(self) -> str:
        """``DataLoader worker 1 (pid 4242)``."""
        worker = f" {self.worker_id}" if self.worker_id is not None and self.kind == "DataLoader worker" else ""
        return f"{self.kind}{worker} (pid {self.pid})"

    def describe(self) -> str:
        """``rank 1 waits on its DataLoader worker 1 (pid 4242), blocked in read_from_store (job.py:21)``."""
        where = f", stuck in {self.where}" if self.where else ""
        more = f" ({len(self.others)} more {self.kind}s are busy too)" if self.others else ""
        return f"rank {self.rank} waits on its {self.child()}{where}{more}"


def frames_of(stack: Sequence[str]) -> tuple[Frame, ...]:
    """Stack lines of the model (``file:line in func``, innermost first) back into frames."""
    out = []
    for text in stack:
        place, _, function = text.rpartition(" in ")
        filename, _, line = place.rpartition(":")
        out.append(Frame(function, filename or place, int(line) if line.isascii() and line.isdigit() else None))
    return tuple(out)


def main_thread(stack: Sequence[str]) -> ThreadStack:
    """A main thread made of model stack lines (what :func:`waits_on` and :func:`classify_child` read)."""
    return ThreadStack("main", "MainThread", frames_of(stack), is_main=True)


def _in(frame: Frame, marker: str) -> bool:
    return marker in frame.filename.replace("\\", "/")


def _name(frame: Frame) -> str:
    """``_try_get_data`` of py-spy's ``_MultiProcessingDataLoaderIter._try_get_data``."""
    return frame.function.rsplit(".", 1)[-1]


def _library(frame: Frame) -> bool:
    path = "/" + frame.filename.replace("\\", "/").lstrip("/")
    return not frame.filename or any(m in path for m in _LIBRARY)


def _main(threads: Sequence[ThreadStack]) -> ThreadStack | None:
    mains = [t for t in threads if t.is_main]
    return mains[0] if mains else (threads[0] if len(threads) == 1 else None)


def waits_on(threads: Sequence[ThreadStack]) -> str | None:
    """What the main thread waits for, when it waits on a child: DataLoader | pool | pipe | subprocess.
    No own (user) frame may sit inside the wait: a rank running its own code is not waiting."""
    main = _main(threads)
    if main is None:
        return None
    for kind, marker, functions in _WAITS:          # DataLoader before the pipe its queue reads
        for index, frame in enumerate(main.frames):
            if _in(frame, marker) and _name(frame) in functions:
                inner = main.frames[:index]
                return kind if all(_library(f) for f in inner) else None
    return None


def _loop(frames: Sequence[Frame]) -> tuple[str, int] | None:
    """(``DataLoader worker`` | ``pool worker``, index of the loop frame) when the child is a worker."""
    for index, frame in enumerate(frames):
        if _in(frame, _DATALOADER_LOOP[0]) and _name(frame) == _DATALOADER_LOOP[1]:
            return "DataLoader worker", index
        if any(_in(frame, path) and _name(frame) == name for path, name in _POOL_LOOPS):
            return "pool worker", index
    return None


def classify_child(threads: Sequence[ThreadStack]) -> tuple[str, bool, str | None]:
    """(kind, working, where): ``working`` False for a worker waiting for work."""
    main = _main(threads)
    if main is None or not main.frames:
        return "child process", True, None
    loop = _loop(main.frames)
    where = _where(main.frames)
    if loop is None:
        return "child process", True, where
    kind, index = loop
    inner = main.frames[:index]
    idle = all(any(_in(f, m) for m in _WAIT_FILES) for f in inner)
    return kind, not idle, where


def _where(frames: Sequence[Frame]) -> str | None:
    """The innermost own frame (else the innermost frame): ``read_from_store (job.py:21)``."""
    frame = next((f for f in frames if not _library(f)), frames[0] if frames else None)
    if frame is None:
        return None
    line = f":{frame.line}" if frame.line is not None else ""
    return f"{frame.function} ({os.path.basename(frame.filename)}{line})"


_WANTED = {"DataLoader": ("DataLoader worker",), "pool": ("pool worker", "child process"),
           "pipe": ("child process", "pool worker", "DataLoader worker"),
           "subprocess": ("child process",)}
_WAITS_IN = {"DataLoader": "its DataLoader's next batch", "pool": "a pool result", "pipe": "a pipe from a child",
             "subprocess": "a subprocess"}


def child_waited_on(rank: int, threads: Sequence[ThreadStack], children: Sequence[ChildStack]) -> ChildWait | None:
    """The child rank ``rank`` waits on (None: it waits on no child, or no child of that kind works)."""
    kind = waits_on(threads)
    if kind is None:
        return None
    working: list[tuple[ChildStack, str, str | None]] = []
    for child in children:
        child_kind, busy, where = classify_child((main_thread(child.stack),))
        if busy and child_kind in _WANTED[kind]:
            working.append((child, child_kind, where))
    if not working:
        return None
    working.sort(key=lambda w: (w[0].worker_id is None, w[0].worker_id or 0, w[0].pid))
    child, child_kind, where = working[0]
    return ChildWait(rank, child.pid, child_kind, child.worker_id, where, _WAITS_IN[kind],
                     others=tuple(w[0].pid for w in working[1:]), evidence=(child.path,) if child.path else ())


__all__ = ["ChildWait", "child_waited_on", "classify_child", "frames_of", "main_thread", "waits_on"]
