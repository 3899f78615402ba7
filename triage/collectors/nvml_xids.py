"""NVML's Xid events during the job: a listener in ``triage launch``'s node agent, never in a rank.

NVML keeps no history of Xid events: it hands each one only to the event sets registered before it
happened. So the agent registers one set early in the job (:func:`start`) and a daemon thread
(``triage-xid``) waits on it, keeping the events (at most ``MAX_EVENTS``, the first ones: the first
Xid is the one that matters). A node bundle's GPU collector (:mod:`triage.collectors.gpu`) then
records every Xid since the listener registered, not only those during its own short listen.

Feature-detected: without ``nvidia-ml-py`` (``import pynvml``), without a driver or a GPU, or when
registering fails, :func:`start` returns None and the collector listens during the collection only,
as before. The NVML import, init and registration run in the thread: the job's start never waits on
them. The node agent starts the listener only on a host with NVIDIA's driver (:func:`gpu_host`: its
device nodes exist; elsewhere ``nvmlInit`` cannot succeed, so nothing is imported) and only once the
job has run ``AGENT_LISTEN_AFTER_S`` (a Python rank has not finished importing torch by then): a job
that ends sooner pays no NVML import and init, and the import never competes with the agent's start
for the interpreter. An Xid before the listener registered is not heard by it: the GPU collector says
since when it listened (``started``); dmesg has the earlier ones. Unverified here: the development
machine has no GPU and no nvidia-ml-py, so this path has run against no real NVML (the GPU run of
``tests/gpu`` is where it is checked).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:      # (loaded by the listening thread: the agent starts without the GPU model)
    from triage.model.gpu import XidEvent

MAX_EVENTS = 256
WAIT_MS = 500           # one wait on the event set: how long the thread may take to hear stop()
JOIN_S = 2.0            # how long stop(wait=True) waits for the thread to end
AGENT_LISTEN_AFTER_S = 0.5      # the node agent starts listening once the job has run this long
DRIVER_NODES = ("/dev/nvidiactl", "/dev/nvidia0")    # NVIDIA's driver: NVML talks to it through these


class XidListener:
    """Every NVML Xid critical error from :meth:`start` on, per GPU index (a snapshot: :meth:`events`)."""

    def __init__(self, nvml: Any = None) -> None:
        self._nvml = nvml
        self._events: dict[int, list[XidEvent]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="triage-xid", daemon=True)
        self.started: float | None = None       # unix time the listener was registered (None: not yet, or never)
        self.error: str | None = None           # why it does not listen (any more)

    def start(self) -> XidListener:
        self._thread.start()
        return self

    def events(self) -> dict[int, tuple[XidEvent, ...]]:
        with self._lock:
            return {index: tuple(found) for index, found in self._events.items()}

    def stop(self, wait: bool = True) -> None:
        """Ask the thread to end; with ``wait``, wait (at most ``JOIN_S``) until it has.

        The node agent stops without waiting: the thread may be inside one ``nvmlEventSetWait`` of up to
        ``WAIT_MS``, and a job that ends then would wait for it (about 0.45 s of a short job's wall time on
        a GPU host). The thread is a daemon: it frees its event set and shuts NVML down when that wait
        returns, or ends with the agent's process."""
        self._stop.set()
        if wait:
            self._thread.join(JOIN_S)

    def _run(self) -> None:
        try:
            nv = self._nvml if self._nvml is not None else importlib.import_module("pynvml")
            nv.nvmlInit()
        except Exception as error:  # noqa: BLE001 - no nvidia-ml-py, no driver: not listening
            self.error = f"{type(error).__name__}: {error}"
            return
        events = None
        try:
            events = nv.nvmlEventSetCreate()
            if not _register(nv, events):
                self.error = "no GPU of this node delivers Xid events to NVML listeners"
                return
            self.started = time.time()
            while not self._stop.is_set():
                self._wait_one(nv, events)
        except Exception as error:  # noqa: BLE001 - NVML failed: what was heard stays, the gap is said
            self.error = f"{type(error).__name__}: {error}"
        finally:
            if events is not None:
                with contextlib.suppress(Exception):
                    nv.nvmlEventSetFree(events)
            with contextlib.suppress(Exception):
                nv.nvmlShutdown()

    def _wait_one(self, nv: Any, events: Any) -> None:
        try:
            data = nv.nvmlEventSetWait(events, WAIT_MS)
        except Exception as error:       # NVMLError_Timeout: nothing happened (re-raised otherwise)
            if getattr(error, "value", None) == getattr(nv, "NVML_ERROR_TIMEOUT", 10) \
                    or "timeout" in type(error).__name__.lower():
                return
            raise
        from triage.model.gpu import XidEvent
        index = int(nv.nvmlDeviceGetIndex(data.device))
        pid = getattr(data, "pid", None)
        found = XidEvent(int(data.eventData), int(pid) if isinstance(pid, int) and pid > 0 else None, time.time())
        with self._lock:
            if sum(len(v) for v in self._events.values()) < MAX_EVENTS:
                self._events.setdefault(index, []).append(found)


def _register(nv: Any, events: Any) -> int:
    """Register every GPU that supports Xid events (one that does not, as some do not, is left out)."""
    registered = 0
    for index in range(int(nv.nvmlDeviceGetCount())):
        with contextlib.suppress(Exception):
            nv.nvmlDeviceRegisterEvents(nv.nvmlDeviceGetHandleByIndex(index), nv.nvmlEventTypeXidCriticalError, events)
            registered += 1
    return registered


def gpu_host(nodes: tuple[str, ...] | None = None) -> bool:
    """Whether this host has NVIDIA's driver (one of its device nodes, ``DRIVER_NODES``, exists): where NVML
    could listen. No import: it costs a stat or two."""
    return any(os.path.exists(node) for node in (DRIVER_NODES if nodes is None else nodes))


_current: XidListener | None = None


def start(nvml: Any = None) -> XidListener:
    """Start listening in this process (the node agent); one listener at a time."""
    global _current
    if _current is None:
        _current = XidListener(nvml).start()
    return _current


def current() -> XidListener | None:
    """The listener of this process once it has registered (its ``error`` says if it stopped since), else None."""
    found = _current
    return found if found is not None and found.started is not None else None


def stop(wait: bool = True) -> None:
    """Stop this process's listener (see :meth:`XidListener.stop` for ``wait``)."""
    global _current
    found, _current = _current, None
    if found is not None:
        found.stop(wait)


__all__ = ["AGENT_LISTEN_AFTER_S", "MAX_EVENTS", "XidListener", "current", "gpu_host", "start", "stop"]
