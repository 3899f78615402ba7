"""read_prose's gate (triage.parsing.prose._NEEDS: a pattern is not searched on an ASCII line that holds none of its
words, in any case) leaves every answer as it was: on every line of the corpus and of the tests' logs, and on random
sentences of the words the patterns read, in random case, cut and glued."""

from __future__ import annotations

import random

import pytest

from tests.helpers.logs import real_log_lines
from triage.parsing import prose
from triage.parsing.prose import read_prose

_PATTERNS = {"save_stall": prose._SAVE_STALL, "node": prose._NODE, "stop": prose._STOP, "hang": prose._HANG,
             "silent": prose._SILENT}
_SENTENCES = [
    "Training hangs right at `initializing ddp` on node gpu-a17.", "It gets stuck after Epoch 0 during all_reduce.",
    "Jobs on node dgk713 fail with errors.", "Node gpu-a17 keeps crashing.", "Failing on host cn0412 again.",
    "Our jobs are being sent the SIGTERM signal externally.", "The job was preempted and never came back.",
    "Killed by the scheduler at 3am.", "Cancelled by the admins.", "Externally killed at step 5.",
    "The job got preempted, resumed from checkpoint.", "Ranks 1 and 2 never print `[data]`.",
    "It times out when saving the checkpoint.", "Saving the model hangs forever.", "Checkpointing stalled in save.",
    "The process froze during dist.barrier() in the store setup.", "Deadlocked while in the rendezvous.",
    "Was the job preempted?", "It does not hang at init.", "Training may hang at step 500.",
    "NCCL INFO Broadcast: opCount 7b sendbuff 0x7f99dead4ce comm 0x55d0c4a05000 [nranks=8] stream 0x1",
    "gpu-node-00:40035:40046 [5] NCCL INFO Channel 00/0 : 0[1020] -> 1[2030] via P2P", "step 5 loss 2.1 lr 3e-4",
    "Evicted by the cloud provider (spot instance reclaim).", "is stuck in the TCPStore when MASTER_ADDR is set.",
]
_WORDS = ["sav", "save", "saving", "checkpoint", "ckpt", "node", "host", "machine", "server", "sig", "SIGKILL",
          "externally", "outside", "preempted", "killed", "terminated", "stopped", "cancelled", "canceled",
          "evicted", "hang", "hung", "freezes", "froze", "stalled", "deadlock", "stuck", "rank", "ranks", "at",
          "after", "during", "never", "print", "times", "out", "by", "the", "scheduler", "from", "got", "is",
          "gpu-a17", "fail", "crash", "1", "and", "2", ",", ".", "?", "`", "保存模型会出现超时", "卡住", "ſig", "\u212aILLED"]


def _case(rnd: random.Random, text: str) -> str:
    how = rnd.randrange(4)
    if how == 0:
        return text
    if how == 1:
        return text.upper()
    if how == 2:
        return text.capitalize()
    return "".join(c.upper() if rnd.random() < 0.5 else c.lower() for c in text)


def _lines() -> list[str]:
    lines = real_log_lines()
    rnd = random.Random(0)
    for _ in range(20_000):
        if rnd.random() < 0.5:
            line = " ".join(_case(rnd, rnd.choice(_SENTENCES)) for _ in range(1 + rnd.randrange(3)))
        else:
            line = " ".join(_case(rnd, rnd.choice(_WORDS)) for _ in range(4 + rnd.randrange(12)))
        if rnd.random() < 0.2:
            cut = rnd.randrange(len(line) + 1)
            line = line[:cut] + rnd.choice(_WORDS) + line[cut:]
        lines.append(line)
    return lines


def test_the_gate_leaves_every_answer_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _lines()
    assert len(lines) > 25_000
    gated = [read_prose([line]) for line in lines]
    blocks = [read_prose(lines[at:at + 50]) for at in range(0, len(lines), 50)]
    monkeypatch.setattr(prose, "_GATED", False)
    assert [read_prose([line]) for line in lines] == gated
    assert [read_prose(lines[at:at + 50]) for at in range(0, len(lines), 50)] == blocks
    assert sum(account != read_prose([]) for account in gated) > 1000      # (the sentences found things)


def test_each_pattern_matches_only_lines_that_hold_one_of_its_words() -> None:
    matched = 0
    for line in _lines():
        if not line.isascii():
            continue
        low = line.lower()
        for name, pattern in _PATTERNS.items():
            if pattern.search(line) is not None:
                matched += 1
                assert any(word in low for word in prose._NEEDS[name]), (name, line)
    assert matched > 5000
