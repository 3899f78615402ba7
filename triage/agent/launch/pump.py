"""The log pump: follows every rank's output.log (and launcher.log), tags new bytes and writes
them to ``<host>/merged.log`` and the console.

The pump only reads files the workers write themselves, so it is never in the data path:
if it is slow, or dead, the per-rank logs are still complete. It reads big chunks and tags
them with :class:`triage.agent.launch.tagger.Tagger`.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from triage.agent.launch.tagger import IDLE_FLUSH_S, Chunk, Tagger
from triage.agent.lines import rank_output_open, say
from triage.layout import HostPaths
from triage.private_files import FILE_MODE

CHUNK = 4 << 20
MAX_CHUNKS_PER_PUMP = 4
MAX_HOLD_S = 120.0          # rank output waits at most this long for a report to print
LAUNCHER = "launcher"

OutputHook = Callable[[int, bytes], None]


@dataclass
class _Source:
    key: str                 # rank number as text, or "launcher"
    path: Path
    tagger: Tagger
    fd: int | None = None
    to_console: bool = True
    bytes_read: int = 0


class ConsoleWriter:
    """Writes to the console from its own thread, so a slow or stopped reader (a paused pager,
    a full pipe) never stalls the pump and the hang monitor. Above ``max_backlog`` bytes waiting,
    new console output is dropped (and counted; merged.log keeps everything)."""

    def __init__(self, stream: BinaryIO, max_backlog: int = 64 << 20) -> None:
        self.stream = stream
        self.max_backlog = max_backlog
        self.backlog = 0
        self.dropped = 0
        self._queue: queue.SimpleQueue[list[Chunk] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="triage-console", daemon=True)
        self._thread.start()

    def write(self, chunks: list[Chunk]) -> None:
        size = sum(len(c) for c in chunks)
        with self._lock:
            if self.backlog + size > self.max_backlog:
                self.dropped += size
                return
            self.backlog += size
        self._queue.put(chunks)

    def _run(self) -> None:
        broken = False
        while True:
            chunks = self._queue.get()
            if chunks is None:
                return
            size = sum(len(c) for c in chunks)
            held_since = time.monotonic()
            while not rank_output_open(0.2) and time.monotonic() - held_since < MAX_HOLD_S:
                pass                       # a report is printing: the ranks' lines come right after it
            if not broken:
                try:
                    self.stream.writelines(chunks)
                    self.stream.flush()
                except (BrokenPipeError, OSError, ValueError):
                    broken = True          # the reader went away: the files go on
            with self._lock:
                self.backlog -= size

    def close(self, timeout: float) -> None:
        """Flush what is queued (waiting at most ``timeout`` s for a stuck reader)."""
        self._queue.put(None)
        self._thread.join(timeout)
        if self.dropped:
            say(f"the console could not keep up: {self.dropped} bytes were not shown (they are in merged.log)")


def start_offsets_of(host_paths: HostPaths) -> dict[Path, int]:
    """Where each log a pump follows ends now: measured before the job starts, so that only what this
    job writes is pumped, from its first byte."""
    offsets: dict[Path, int] = {}
    for path in [host_paths.launcher_log, *(host_paths.rank(r).output for r in host_paths.ranks())]:
        with contextlib.suppress(OSError):
            offsets[path] = path.stat().st_size
    return offsets


@dataclass
class LogPump:
    host_paths: HostPaths
    host: str
    console: BinaryIO | None
    console_ranks: bool = True
    on_output: OutputHook | None = None
    sources: dict[str, _Source] = field(default_factory=dict)
    # set when triage stops the job: from then on rank and launcher output (the tracebacks of the
    # stop) goes to the logs only, and is counted for one summary line on the console
    quiet_since: float | None = None
    quiet_lines: int = 0
    start_offsets: dict[Path, int] | None = None

    def __post_init__(self) -> None:
        self.writer = ConsoleWriter(self.console) if self.console is not None else None
        # Files that already existed before this job (a reused run dir) are followed from where they ended
        # then: the caller measures that before it starts the launcher (start_offsets_of), since a launcher
        # writes before this pump exists (its first lines were lost from merged.log and the console)
        if self.start_offsets is None:
            self.start_offsets = start_offsets_of(self.host_paths)
        fd = os.open(self.host_paths.merged_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                     FILE_MODE)
        self.merged = os.fdopen(fd, "ab", buffering=1 << 20)
        self.merged_failed = False
        self._add(LAUNCHER, self.host_paths.launcher_log, to_console=True)

    def _add(self, key: str, path: Path, to_console: bool) -> None:
        self.sources[key] = _Source(key, path, Tagger(f"{self.host}:{key}"), to_console=to_console)

    def discover(self) -> None:
        """Pick up ranks that appeared since the last call (cheap directory listing)."""
        for rank in self.host_paths.ranks():
            key = str(rank)
            if key not in self.sources:
                self._add(key, self.host_paths.rank(rank).output, to_console=self.console_ranks)
        # nccl.log files are not pumped: the hang monitor reads them itself (triage.agent.hang.nccl)

    def pump(self, now: float) -> int:
        """Read and tag everything new; returns the number of bytes read."""
        total = 0
        out: list[Chunk] = []
        console: list[Chunk] = []
        for src in self.sources.values():
            total += self._read_source(src, now, out, console)
            flushed = src.tagger.idle_flush(now, IDLE_FLUSH_S)
            if flushed:
                out.append(flushed)
                if src.to_console:
                    console.append(flushed)
        self._write(out, console)
        return total

    def _read_source(self, src: _Source, now: float, out: list[Chunk], console: list[Chunk]) -> int:
        if src.fd is None:
            try:
                src.fd = os.open(src.path, os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                return 0
            offset = (self.start_offsets or {}).get(src.path, 0)
            if offset:
                os.lseek(src.fd, offset, os.SEEK_SET)
        total = 0
        for _ in range(MAX_CHUNKS_PER_PUMP):   # bounded, so memory stays small if a rank outpaces us
            try:
                data = os.read(src.fd, CHUNK)
            except OSError:                     # EIO/ESTALE on a network file system: try next pass
                return total
            if not data:
                return total
            total += len(data)
            src.bytes_read += len(data)
            tagged, whole = src.tagger.feed(data, now)
            if whole and self.on_output is not None and src.key != LAUNCHER:
                self.on_output(int(src.key), whole)
            out.extend(tagged)
            if src.to_console:
                console.extend(tagged)
            if len(data) < CHUNK:
                return total
        return total

    def _write(self, out: list[Chunk], console: list[Chunk]) -> None:
        if out and not self.merged_failed:
            try:
                self.merged.writelines(out)
                self.merged.flush()
            except OSError as error:   # e.g. ENOSPC: merged.log is a copy; the rank logs are complete
                self.merged_failed = True
                say(f"cannot write merged.log any more ({error.strerror or error}); the per-rank logs are complete")
        if console and self.writer is not None and self.quiet_since is not None:
            self.quiet_lines += sum(bytes(c).count(b"\n") for c in console)   # the job going down: logs only
        elif console and self.writer is not None:
            self.writer.write(console)

    def finish(self, now: float) -> None:
        """Final drain: read what is left and flush partial lines as ``+`` records."""
        self.discover()
        self.pump(now)
        out: list[Chunk] = []
        console: list[Chunk] = []
        for src in self.sources.values():
            flushed = src.tagger.flush_partial()
            if flushed:
                out.append(flushed)
                if src.to_console:
                    console.append(flushed)
        self._write(out, console)

    def close(self, console_timeout: float = 10.0) -> None:
        if self.writer is not None:
            self.writer.close(console_timeout)
        for src in self.sources.values():
            if src.fd is not None:
                os.close(src.fd)
                src.fd = None
        with contextlib.suppress(OSError):   # a full disk must not turn into a crash of the agent
            self.merged.close()
