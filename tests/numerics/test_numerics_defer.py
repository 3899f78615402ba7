"""The numerics watch's deferred reads (triage/worker/numerics_defer.py): the queue itself, and the
whole watch with every read made late on CPU (``reads.delay``), the path a GPU takes, so that a hit
still carries the step, iteration and time where its value was made."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.numerics.test_numerics_api import _run
from triage.worker.numerics_defer import Reads, _Entry


class _Pending:
    """An event the device has not reached yet (``done`` flips it): the queue sees only query()."""

    def __init__(self) -> None:
        self.done = False

    def query(self) -> bool:
        return self.done


def test_entries_run_in_order_and_a_later_action_waits_behind_a_pending_read() -> None:
    import torch

    reads, seen = Reads(), []
    reads.submit(torch, torch.tensor([1.0]), lambda host, late: seen.append(("now", float(host[0]), late)))
    assert seen == [("now", 1.0, False)] and len(reads) == 0   # CPU: complete at once, read at its own hook
    event = _Pending()
    reads.queue.append(_Entry(lambda host, late: seen.append(("gpu", late)), None, event, 0))  # a copy not arrived
    reads.later(lambda host, late: seen.append(("after", late)))
    reads.poll()
    assert len(seen) == 1 and len(reads) == 2                  # the later action waits behind the pending read
    event.done = True
    reads.poll()
    assert seen[1:] == [("gpu", True), ("after", True)] and len(reads) == 0


def test_finish_is_bounded_and_drops_what_never_arrives() -> None:
    reads, seen = Reads(), []
    reads.queue.append(_Entry(lambda host, late: seen.append("never"), None, _Pending(), 0))
    reads.finish(timeout=0.05)
    assert seen == [] and len(reads) == 0 and reads.dropped == 1


def test_delay_makes_cpu_reads_late_and_finish_runs_them() -> None:
    import torch

    reads, seen = Reads(delay=3), []
    reads.submit(torch, torch.tensor([float("nan")]), lambda host, late: seen.append(late))
    reads.poll()
    assert seen == []
    reads.finish()
    assert seen == [True] and reads.late_reads == 1 and reads.dropped == 0


LATE = """
import json, sys
import torch
import torch.nn.modules.module as module_hooks
from torch import nn
import triage.api
from triage.worker import numerics
model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
path = triage.api.watch(model, mode="cheap")
numerics.current().reads.delay = int(sys.argv[1])      # every read late, as a GPU's
opt = torch.optim.SGD(model.parameters(), lr=0.1)
hooks = []
for step in range(int(sys.argv[2])):
    x = torch.ones(2, 4)
    if step == 4:
        x[0, 0] = float("nan")
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
    hooks.append(len(module_hooks._global_forward_hooks))
print(json.dumps(hooks))
print(path)
"""


def _late(tmp_path: Path, delay: int, steps: int) -> tuple[list[int], dict[str, Any]]:
    proc = _run(LATE.replace("sys.argv[1]", repr(str(delay))).replace("sys.argv[2]", repr(str(steps))), tmp_path)
    lines = proc.stdout.splitlines()
    record: dict[str, Any] = json.loads((tmp_path / lines[-1]).read_text())
    return json.loads(lines[-2]), record


def test_a_late_read_keeps_the_step_where_the_value_was_made(tmp_path: Path) -> None:
    hooks, record = _late(tmp_path, 2, 8)
    first = record["first"]
    assert (first["where"], first["module"], first["step"], first["iteration"]) == ("local_gradient", "2.weight", 4, 4)
    assert first["nan"] is None and first["collective"] is None       # read late: counts and collective not recorded
    assert hooks[:5] == [0, 0, 0, 0, 0] and 1 in hooks[5:]             # every module once the read came in
    assert record["switched_to_full"] is True and record["final"] is True


def test_a_read_pending_at_exit_is_finished(tmp_path: Path) -> None:
    _hooks, record = _late(tmp_path, 100, 5)                          # the NaN of the last step, read at exit
    first = record["first"]
    assert (first["where"], first["step"]) == ("local_gradient", 4), first


AMP = """
import json, sys
import torch
from torch import nn
import triage.api
from triage.worker import numerics
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
path = triage.api.watch(model, mode="cheap")
numerics.current().reads.delay = DELAY
opt = torch.optim.SGD(model.parameters(), lr=1e-5)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 127, backoff_factor=2.0 ** -20, growth_interval=1000)
for step in range(6):
    opt.zero_grad()
    loss = model(torch.randn(8, 4)).pow(2).mean() * 1000.0
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
print(path)
"""


def test_skipped_steps_are_the_same_when_every_read_is_late(tmp_path: Path) -> None:
    """The grad scaler's skipped steps: the end of each iteration waits behind its reads, so a late
    read tells the same skipped steps as a read at once."""
    records = []
    for delay in (0, 2):
        out = tmp_path / str(delay)
        out.mkdir()
        proc = _run(AMP.replace("DELAY", str(delay)), out)
        records.append(json.loads((out / proc.stdout.strip().splitlines()[-1]).read_text()))
    now, late = records
    assert now["skipped_step_count"] >= 1 and now["first"]["step"] == 0, now
    assert (late["skipped_steps"], late["nonfinite_iterations"], late["last_finite_iteration"]) == \
        (now["skipped_steps"], now["nonfinite_iterations"], now["last_finite_iteration"])
    assert (late["first"]["where"], late["first"]["step"]) == (now["first"]["where"], now["first"]["step"])


class _NoQuery:
    """An event that must not be queried (a query while a CUDA graph is captured could break it)."""

    def __init__(self) -> None:
        self.allowed = False

    def query(self) -> bool:
        assert self.allowed, "queried while capturing"
        return True


def test_no_event_is_queried_while_a_cuda_graph_is_captured() -> None:
    reads, seen, event = Reads(), [], _NoQuery()
    capturing = {"on": True}
    reads.capturing = lambda: capturing["on"]
    reads.queue.append(_Entry(lambda host, late: seen.append(late), None, event, 0))
    reads.poll()
    assert seen == [] and len(reads) == 1
    capturing["on"], event.allowed = False, True
    reads.poll()
    assert seen == [True] and len(reads) == 0
