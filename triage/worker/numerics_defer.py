"""Reads of the numerics watch's check results, in the order the checks were made, without waiting
for the GPU. Part of :mod:`triage.worker.numerics` (imports no torch: it is passed in).

A check (the stacked sums of the local gradients, say) is a small tensor on the device that made
it. Reading it with ``float()`` on the training thread would make the CPU wait for every kernel
queued before it, every step: the CPU could no longer run ahead of the GPU. So a CUDA result is
copied (``non_blocking``) into a small pinned host buffer and a CUDA event is recorded after the
copy; the result is looked at when the event has completed (``event.query()``, at a later hook:
usually the next step), by the action that was queued with it, which carries the step, iteration
and time at which the value was made. A CPU result has nothing to wait for: its entry is complete
at once, and the same queue runs its action at once (the path the CPU tests cover; ``delay`` makes
CPU entries wait that many polls, so that the late path runs on CPU as well).

Entries are handled strictly in order: a result made later never overtakes one made earlier, and
actions queued with no tensor (:meth:`Reads.later`: a hit read synchronously, the end of an
iteration) wait behind the reads queued before them. :meth:`Reads.finish` (the watch's stop, the
rank's exit) waits for what is still pending, bounded: it polls the events and never calls
``synchronize()``, so a GPU that never finishes costs at most the bound, never a hang. While a CUDA
graph is being captured on the current stream, no event is queried (a query could break the capture).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

# an action gets the result on the host (None for Reads.later) and whether it was read late (at a later hook)
Action = Callable[[Any, bool], None]
FINISH_S = 2.0          # the longest stop() or the rank's exit waits for the GPU to make pending results


class _Entry:
    __slots__ = ("action", "event", "host", "polls")

    def __init__(self, action: Action, host: Any, event: Any, polls: int) -> None:
        self.action, self.host, self.event, self.polls = action, host, event, polls

    def ready(self, capturing: Callable[[], bool]) -> bool:
        if self.polls > 0:
            self.polls -= 1
            return False
        if self.event is None:
            return True
        return not capturing() and bool(self.event.query())   # no event query while a CUDA graph is captured


class Reads:
    """The queue of results not yet looked at (see the module docstring)."""

    def __init__(self, delay: int = 0) -> None:
        self.queue: deque[_Entry] = deque()
        self.delay = delay              # polls a CPU entry waits (tests: the late path on CPU)
        self.late_reads = 0             # actions run at a later hook than the one that queued them
        self.dropped = 0                # entries finish() gave up on (the GPU did not get there in time)
        self.capturing: Callable[[], bool] = lambda: False     # torch.cuda.is_current_stream_capturing

    def __len__(self) -> int:
        return len(self.queue)

    def submit(self, torch: Any, values: Any, action: Action) -> None:
        """Queue ``action`` for the values of the tensor ``values`` (on its device) and poll."""
        if not (self.queue or self.delay or values.is_cuda):
            action(values, False)       # CPU, nothing pending: at once (the entry would be read at once)
            return
        event = None
        if values.is_cuda:              # the CUDA-only lines: a copy that does not wait, and its event
            self.capturing = torch.cuda.is_current_stream_capturing
            host = torch.empty(values.shape, dtype=values.dtype, device="cpu", pin_memory=True)
            host.copy_(values, non_blocking=True)
            event = torch.cuda.Event()
            event.record()
        else:
            host = values
        self._add(_Entry(action, host, event, self.delay))

    def later(self, action: Action) -> None:
        """Queue an action with no result of its own behind the pending reads (at once when none is)."""
        if not self.queue:
            action(None, False)
            return
        self._add(_Entry(action, None, None, 0))

    def _add(self, entry: _Entry) -> None:
        self.queue.append(entry)
        self.poll(entry)

    def poll(self, new: _Entry | None = None) -> None:
        """Run the actions of the entries at the head of the queue whose results are on the host; each
        is told whether it runs later than the hook that queued it (``new``: the entry just queued)."""
        queue = self.queue
        while queue:
            entry = queue[0]
            if not entry.ready(self.capturing):
                return
            queue.popleft()
            late = entry is not new
            self.late_reads += late
            entry.action(entry.host, late)

    def finish(self, timeout: float = FINISH_S) -> None:
        """Run every pending action whose result arrives within ``timeout`` seconds; drop the others."""
        deadline = time.monotonic() + timeout
        while self.queue:
            for entry in self.queue:
                entry.polls = 0
            self.poll()
            if not self.queue or time.monotonic() >= deadline:
                break
            time.sleep(0.002)
        self.dropped += len(self.queue)
        self.queue.clear()
