"""The agent's NVML Xid listener (triage.collectors.nvml_xids) is feature-detected: on a machine
without nvidia-ml-py, or with it but without NVIDIA's driver (this one), it says why it does not listen, registers nothing, and the node
bundle's GPU collector goes on as without it. The listening path itself runs only on a GPU node
(tests/gpu): it is not exercised here."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from triage.bundle import CollectorStatus
from triage.collectors import nvml_xids
from triage.collectors.common import find_tool
from triage.collectors.gpu import NO_FACTS, collect_gpus
from triage.options import CollectSettings

HAS_BINDING = importlib.util.find_spec("pynvml") is not None


def _nvml_runs() -> bool:
    if not HAS_BINDING:
        return False
    nv = importlib.import_module("pynvml")
    try:
        nv.nvmlInit()
    except Exception:  # noqa: BLE001 - the binding without a driver
        return False
    nv.nvmlShutdown()
    return True


HAS_NVML = _nvml_runs()


@pytest.mark.skipif(HAS_NVML, reason="this machine has NVML with a driver")
def test_without_nvml_the_listener_says_why_and_registers_nothing() -> None:
    listener = nvml_xids.start()
    try:
        assert nvml_xids.start() is listener                 # one listener per process
        listener.stop()                                      # the thread has ended: nothing to listen with
        assert listener.error is not None, listener.error
        # no binding: the import's error; the binding without a driver: NVML's own (library not found)
        assert ("NVMLError" if HAS_BINDING else "pynvml") in listener.error, listener.error
        assert listener.started is None and listener.events() == {}
        assert nvml_xids.current() is None
    finally:
        nvml_xids.stop()
    assert nvml_xids.current() is None


@pytest.mark.skipif(HAS_NVML or find_tool("nvidia-smi") is not None, reason="this machine has NVML or nvidia-smi")
def test_the_gpu_collector_is_unchanged_by_a_listener_that_found_no_nvml(tmp_path: Path) -> None:
    listener = nvml_xids.start()
    listener.stop()
    try:
        rec = collect_gpus(tmp_path / "node", tmp_path, CollectSettings(), [], None)
    finally:
        nvml_xids.stop()
    assert rec.status == CollectorStatus.SKIPPED and rec.error is not None and rec.error.startswith(NO_FACTS)
    assert json.loads((tmp_path / "node" / "gpus.json").read_text())["note"] == rec.error


class _BlockingNvml:
    """A stand-in for NVML's binding (this machine has no driver) whose event wait blocks until released:
    NVML's own ``nvmlEventSetWait`` blocks for up to its timeout in the same way."""

    NVML_ERROR_TIMEOUT = 10
    nvmlEventTypeXidCriticalError = 8

    def __init__(self) -> None:
        import threading
        self.waiting = threading.Event()
        self.release = threading.Event()
        self.shut_down = threading.Event()

    def nvmlInit(self) -> None:
        pass

    def nvmlEventSetCreate(self) -> object:
        return object()

    def nvmlDeviceGetCount(self) -> int:
        return 1

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index

    def nvmlDeviceRegisterEvents(self, handle: int, kind: int, events: object) -> None:
        pass

    def nvmlEventSetWait(self, events: object, timeout_ms: int) -> object:
        self.waiting.set()
        self.release.wait(60)
        error = RuntimeError("NVML_ERROR_TIMEOUT")
        error.value = self.NVML_ERROR_TIMEOUT  # type: ignore[attr-defined]
        raise error

    def nvmlEventSetFree(self, events: object) -> None:
        pass

    def nvmlShutdown(self) -> None:
        self.shut_down.set()


def test_the_agent_stop_does_not_wait_out_nvmls_event_wait() -> None:
    """The node agent stops the listener at the job's end without joining it: a short job never waits
    for the up-to-WAIT_MS NVML wait in progress (on a GPU host it did: ~0.45 s of a 0.05 s job)."""
    nv = _BlockingNvml()
    listener = nvml_xids.XidListener(nv).start()
    try:
        assert nv.waiting.wait(60), "the listener never reached its event wait"
        listener.stop(wait=False)
        assert listener._thread.is_alive()           # still inside the wait: stop() returned without it
        assert not nv.shut_down.is_set()
    finally:
        nv.release.set()
    listener._thread.join(60)
    assert not listener._thread.is_alive()
    assert nv.shut_down.is_set() and listener.error is None   # the thread still cleaned up NVML when its wait returned


def test_stop_with_wait_waits_for_the_thread() -> None:
    nv = _BlockingNvml()
    listener = nvml_xids.XidListener(nv).start()
    assert nv.waiting.wait(60)
    nv.release.set()
    listener.stop()
    assert not listener._thread.is_alive() and nv.shut_down.is_set()
