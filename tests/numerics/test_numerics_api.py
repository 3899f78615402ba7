"""triage.api.watch(model) without the launcher, in a real process (plain torch, no triage launch)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers.launch import job_env

PROGRAM = """
import torch
from torch import nn
import triage.api
model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
path = triage.api.watch(model, mode="full")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x = torch.ones(2, 4)
    if step == 2:
        x[0, 0] = float("nan")
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
print(path)
"""


def _run(program: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run `program` in a fresh interpreter that imports the installed triage (not the source tree); it must
    exit 0."""
    env = {k: v for k, v in job_env().items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", program], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_watch_without_the_launcher(tmp_path: Path) -> None:
    proc = _run(PROGRAM, tmp_path)
    record = json.loads((tmp_path / proc.stdout.strip()).read_text())
    first = record["first"]
    assert (first["where"], first["module"], first["step"], first["input_nonfinite"]) == \
        ("forward_output", "0", 2, True)
    assert record["final"] is True and record["step"] == 4


CHEAP = """
import torch
import torch.nn.modules.module as module_hooks
from torch import nn
import triage.api
model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
path = triage.api.watch(model, mode="cheap")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(6):
    x = torch.ones(2, 4)
    if step == 4:
        x[0, 0] = float("nan")
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
    print("module hooks", step, len(module_hooks._global_forward_hooks), flush=True)
print(path)
"""


def test_cheap_mode_drops_the_module_hooks_after_the_first_step(tmp_path: Path) -> None:
    proc = _run(CHEAP, tmp_path)
    lines = proc.stdout.splitlines()
    counts = [int(line.split()[-1]) for line in lines if line.startswith("module hooks")]
    assert counts[:4] == [0, 0, 0, 0]         # local gradients only, from the first step on
    assert counts[4] == 1                     # the first hit: every module from then on
    record = json.loads((tmp_path / lines[-1]).read_text())
    first = record["first"]
    assert (first["where"], first["module"], first["step"]) == ("local_gradient", "2.weight", 4)
    assert first["nan"] == 4 and record["after_switch"]["module"] == "0"


ODD = """
import torch
from torch import nn
import triage.api

class Odd(nn.Module):                      # its parameters cannot be listed: the watch cannot hook it
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def named_parameters(self, *args, **kwargs):
        if kwargs.get("recurse", True) is False:
            raise RuntimeError("parameters not materialized")
        return super().named_parameters(*args, **kwargs)
    def forward(self, x):
        return self.lin(x)

model = nn.Sequential(nn.Linear(4, 4), Odd(), nn.Tanh(), nn.Linear(4, 1))
path = triage.api.watch(model, mode="full")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x = torch.ones(2, 4)
    opt.zero_grad()
    out = model(x)
    if step == 2:
        out = out * float("inf")
    out.sum().backward()
    opt.step()
print(path)
"""


def test_a_module_that_cannot_be_hooked_is_named_and_the_job_goes_on(tmp_path: Path) -> None:
    proc = _run(ODD, tmp_path)
    record = json.loads((tmp_path / proc.stdout.strip()).read_text())
    assert {"module": "1", "reason": "RuntimeError: parameters not materialized"} in record["unhooked"]
    first = record["first"]
    assert (first["step"], first["nan"] + first["inf"] > 0) == (2, True), first


STOP = """
import json
import torch
import torch.nn.modules.module as module_hooks
import torch.optim.optimizer as optimizer_hooks
from torch import nn
import triage.api
from triage.worker import numerics

model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(40)])
wide = nn.Linear(4, 1).double()                                     # float64 sums stacked with float32 ones
bad = {"on": False}
model[0].weight.register_hook(lambda g: g * float("nan") if bad["on"] else g)
params = list(model.parameters()) + list(wide.parameters())
opt = torch.optim.SGD(params, lr=0.01)

def step(i, poison=None):
    bad["on"] = i == poison
    opt.zero_grad()
    x = torch.ones(2, 4)
    (model(x).sum() + wide(x.double()).sum()).backward()
    opt.step()

path = triage.api.watch(model)
for i in range(5):
    step(i, poison=3)
first = json.load(open(path))["first"]
numerics.stop()
left = {"forward": len(module_hooks._global_forward_hooks) + len(module_hooks._global_forward_pre_hooks),
        "optimizer": len(optimizer_hooks._global_optimizer_pre_hooks)
        + len(optimizer_hooks._global_optimizer_post_hooks),
        "gradient": sum(len(p._post_accumulate_grad_hooks or {}) for p in params),
        "watch": numerics.current() is not None}
with torch.no_grad():                                               # the NaN step 3 made is gone
    for p in params:
        p.fill_(0.01)
step(5)                                                             # nobody watches
triage.api.watch(model)
again = numerics.current()
for i in range(4):
    step(i, poison=2)
print(json.dumps({"first": first, "left": left, "again": json.load(open(path))["first"], "local": again.local}))
"""


def test_stop_removes_every_hook_and_start_watches_again(tmp_path: Path) -> None:
    out = json.loads(_run(STOP, tmp_path).stdout.strip().splitlines()[-1])
    assert (out["first"]["where"], out["first"]["module"], out["first"]["step"]) == ("local_gradient", "0.weight", 3)
    assert out["first"]["nan"] == 16
    assert out["left"] == {"forward": 0, "optimizer": 0, "gradient": 0, "watch": False}
    again = out["again"]                      # a new watch: its steps count from its start
    assert (again["where"], again["module"], again["step"]) == ("local_gradient", "0.weight", 2)
