"""triage: tells you why a distributed PyTorch job hung or crashed."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "step"]


def step(n: int | None = None) -> None:
    """Record training progress for the triage heartbeat (optional; a no-op outside `triage launch`).

    Call it once per training step; pass ``n`` to set the counter explicitly.
    It never raises.
    """
    try:
        # lazy: `import triage` (every command, and a job that never calls step()) does not load the agent
        import triage.worker.agent as _agent

        _agent.record_step(n)
    except Exception:  # noqa: BLE001, S110 - must never raise into user code
        pass
