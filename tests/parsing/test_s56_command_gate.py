"""Session 56 (fix56d item 10, a mend, behaviour unchanged): another_command_in's gate (the whole text tested for a
command runner's failure words) is tested once per text by solver_errors' went-on test, not at each failure line."""

from __future__ import annotations

import pytest

from triage.parsing import progress, solver_errors
from triage.parsing.progress import another_command_in, commands_may_fail_in

_RUNS = (
    ("$ yarn workspace @app/web build", "FATAL ERROR: heap out of memory", "error Command failed with exit code 134.",
     "$ yarn workspace @app/docs build", "Compiled successfully.", "Done in 38.20s."),
    ("$ yarn build", "FATAL ERROR: heap out of memory", "error Command failed with exit code 134.",
     "$ NODE_OPTIONS=--max-old-space-size=8192 yarn build", "Done in 412.55s."),
    ("step 1 loss 2.0", "ERROR: solver diverged", "step 2 loss 1.9", "done"),
)


@pytest.mark.parametrize("lines", _RUNS)
def test_the_gate_passed_in_gives_the_same_answer(lines: tuple[str, ...]) -> None:
    text = "\n".join(lines)
    gate = commands_may_fail_in(text)
    for end in range(0, len(text), 7):
        assert another_command_in(text, end, gate=gate) == another_command_in(text, end)


def test_solver_errors_went_on_tests_the_gate_once_per_text(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def counted(text: str) -> bool:
        calls.append(len(text))
        return progress.commands_may_fail_in(text)

    monkeypatch.setattr(solver_errors, "commands_may_fail_in", counted)
    text = "\n".join(["$ make run", "ERROR: step failed", "make: *** [Makefile:3: run] Error 1", "$ make docs",
                      *(f"step {n} loss 1.{n}" for n in range(1, 30)), "Done."])
    after = solver_errors._went_on(text)
    answers = [after(text.find("ERROR")) for _ in range(5)] + [after(text.find("step 3"))]
    assert len(calls) == 1, calls
    assert answers[:5] == [answers[0]] * 5
