"""The numerics watch's facts (``numerics.json`` of each rank, ``triage launch --numerics``), frozen."""

from __future__ import annotations

from dataclasses import dataclass

# where a value was seen (the in-worker agent's names): the phases of one training step
FORWARD = "forward_output"
BACKWARD = "backward_gradient"
LOCAL_GRAD = "local_gradient"
REDUCED_GRAD = "gradient_before_step"
PARAM = "parameter_after_step"
# seen in this rank's own computation (an origin), not after a collective brought it
OWN_PHASES = (FORWARD, BACKWARD, LOCAL_GRAD)
GRADIENT_PHASES = (BACKWARD, LOCAL_GRAD, REDUCED_GRAD)


@dataclass(frozen=True)
class ModuleCall:
    """One module call before the first hit (Hugging Face's DebugUnderflowOverflow view)."""

    where: str
    module: str
    module_type: str | None
    absmax: float


@dataclass(frozen=True)
class NonfiniteHit:
    """A rank's first non-finite value."""

    where: str                              # one of the phases above
    module: str                             # qualified name from the root ("" = the root); a parameter's name
    module_type: str | None
    step: int                               # optimizer.step() calls completed before it (first iteration: 0)
    iteration: int
    time: float | None
    input_nonfinite: bool | None            # forward: an input was already non-finite; None: not known
    dtype: str | None
    shape: tuple[int, ...]
    nan: int
    inf: int
    collective_pg: str | None = None        # the last completed collective before it (Flight Recorder)
    collective_seq: int | None = None
    collective_op: str | None = None
    history: tuple[ModuleCall, ...] = ()


@dataclass(frozen=True)
class RankNumerics:
    """One rank's numerics.json."""

    rank: int
    host: str | None
    path: str
    mode: str                               # cheap | full
    step: int                               # steps completed when last written
    iterations: int
    final: bool                             # written at the rank's exit
    first: NonfiniteHit | None = None
    after_switch: NonfiniteHit | None = None  # cheap mode: the first module-level hit after switching to full
    nonfinite_iterations: int = 0
    skipped_steps: tuple[int, ...] = ()     # steps at which non-finite gradients came and no step() followed
    skipped_step_count: int = 0
    unhooked: tuple[tuple[str, str], ...] = ()   # (module, why) the hooks could not look at
