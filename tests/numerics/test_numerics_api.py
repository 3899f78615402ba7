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


def test_watch_without_the_launcher(tmp_path: Path) -> None:
    env = {k: v for k, v in job_env().items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", PROGRAM], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    record = json.loads((tmp_path / proc.stdout.strip()).read_text())
    first = record["first"]
    assert (first["where"], first["module"], first["step"], first["input_nonfinite"]) == \
        ("forward_output", "0", 2, True)
    assert record["final"] is True and record["step"] == 4
