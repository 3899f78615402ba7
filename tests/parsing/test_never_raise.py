"""Property-style: no parser raises on random bytes, random lines or mangled real lines."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.nccl import tracker_collectives
from triage.errors import InputError
from triage.parsing.dmesg import parse_dmesg_line, relevant_lines, scan_dmesg
from triage.parsing.flight_recorder.parse import decode_fr_bytes, parse_fr_json
from triage.parsing.log_owners import attribute_lines
from triage.parsing.log_prefix import split_rank_prefix
from triage.parsing.names import redop_name, torch_dtype, torch_op
from triage.parsing.nccl.lines import parse_nccl_line, parse_nccl_segments
from triage.parsing.nccl.tracker import NcclTracker
from triage.parsing.stacks import (
    parse_faulthandler,
    parse_faulthandler_signal,
    parse_pyspy_json,
    parse_pyspy_text,
    stack_top,
    waiting_in_collective,
)
from triage.parsing.torchelastic import parse_error_file, parse_launcher_failures
from triage.parsing.watchdog import parse_watchdog_line, scan_watchdog

DATA = Path(__file__).parent / "data"

SEEDS = [
    ("node07:4121:4188 [3] NCCL INFO AllReduce: opCount 2f sendbuff 0x7f01a0000000 recvbuff 0x7f01a0000000 "
    "count 262144 datatype 7 op 0 root 0 comm 0x55d0c3a0 [nranks=8] stream 0x55d0c1f0"),
    ("[rank1]:node07:4121:4121 [3] NCCL INFO ncclCommSplit comm 0x5601 rank 1 nranks 4 cudaDev 2 nvmlDev 2 busId "
    "5e000 parent 0x5500 color 1 key 1 commId 0x77aa - Init COMPLETE"),
    "[2025-09-11 10:58:45] node07:4121:4190 [3] proxy.cc:1500 (ncclProxyProgress) NCCL WARN Failed",
    ("[rank1]:[E1122 10:15:02.000000000 ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank 1] Watchdog "
    "caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
    "Timeout(ms)=10000) ran for 10052 milliseconds before timing out."),
    ("[rank0]:[E ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank 0] Exception (either an error or timeout) "
    "detected by watchdog at work: 5, last enqueued NCCL work: 5, last completed NCCL work: 4."),
    "[  123.456789] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
    "[  99.1] nvidia-nvswitch3: SXid (PCI:0000:c4:00.0): 12028, Non-fatal, Link 53 egress error",
    "[  99.1] python[1234]: segfault at 0 ip 00007f3b2c1d2e3f sp 00007ffd1c0b1e20 error 4 in libc.so.6[7f+1a]",
    "oom-kill:constraint=CONSTRAINT_NONE,task=python,pid=1234,uid=0",
    "  exitcode  : -11 (pid: 12292)  (SIGSEGV)",
    'Current thread 0x00007fb725c0ab80 (most recent call first):\n  File "/tmp/te/crash.py", line 8 in main',
    "Thread 7386 (idle): \"MainThread\"\n    inner (spyt.py:6)",
]
ALPHABET = " :[]()=,.-_0123456789abcdefxNCLIOWARrankPGcommopCount\t\r/\\'\"#+>"

LINE_PARSERS: list[Callable[[str], Any]] = [
    parse_nccl_line, parse_nccl_segments, parse_watchdog_line, parse_dmesg_line, split_rank_prefix,
    scan_watchdog, scan_dmesg, relevant_lines, parse_pyspy_text, parse_faulthandler,
    parse_faulthandler_signal, parse_launcher_failures, parse_error_file, torch_dtype, torch_op, redop_name,
    lambda s: attribute_lines(s.splitlines()), lambda s: stack_top(parse_faulthandler(s)), lambda s: waiting_in_collective(parse_pyspy_text(s)),
]


def _mutations(rng: random.Random) -> list[str]:
    out: list[str] = []
    for seed in SEEDS:
        for _ in range(40):
            chars = list(seed)
            for _ in range(rng.randrange(1, 6)):
                op = rng.randrange(4)
                pos = rng.randrange(len(chars) + 1)
                if op == 0 and chars:
                    del chars[min(pos, len(chars) - 1)]
                elif op == 1:
                    chars.insert(pos, rng.choice(ALPHABET))
                elif op == 2:
                    chars = chars[:pos]
                else:
                    other = rng.choice(SEEDS)
                    chars = chars[:pos] + list(other[rng.randrange(len(other)):])
            out.append("".join(chars))
    for _ in range(300):
        out.append("".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 200))))
        out.append(bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200))).decode("latin-1"))
    return out


@pytest.mark.parametrize("seed", [11, 12])
def test_line_parsers_never_raise(seed: int) -> None:
    rng = random.Random(seed)
    lines = _mutations(rng)
    for parser in LINE_PARSERS:
        for line in lines:
            parser(line)
    tracker = NcclTracker()
    for line in lines:
        tracker.feed(line)
    tracker.feed_text("\n".join(lines))
    tracker.last_ops()
    tracker_collectives(tracker)
    big = NcclTracker()
    big.feed_bytes(("\n".join(lines * 40)).encode("utf-8", "surrogatepass"))
    big.last_ops()


def _mangle(value: Any, rng: random.Random) -> Any:
    choices: list[Any] = [None, "", "x", -1, 2**70, 1.5, [], {}, [[1, "a"]], True, "[0, x]"]
    if isinstance(value, dict):
        return {k: (rng.choice(choices) if rng.random() < 0.3 else _mangle(v, rng)) for k, v in value.items()}
    if isinstance(value, list):
        return [_mangle(v, rng) for v in value if rng.random() > 0.1]
    return value


@pytest.mark.parametrize("seed", range(5))
def test_fr_parser_never_raises_on_mangled_dumps(seed: int) -> None:
    rng = random.Random(seed)
    base = json.loads((DATA / "fr_json_0").read_text())
    for _ in range(50):
        parse_fr_json(_mangle(base, rng), 0, "mangled")
    pyspy = json.loads((DATA / "pyspy_dump.json").read_text())
    for _ in range(50):
        parse_pyspy_json(_mangle(pyspy, rng))


@pytest.mark.parametrize("seed", range(3))
def test_fr_bytes_raise_only_input_error(seed: int) -> None:
    rng = random.Random(seed)
    blobs = [(DATA / "fr_pickle_0").read_bytes(), (DATA / "fr_json_0").read_bytes()]
    for _ in range(200):
        blob = bytearray(rng.choice(blobs))
        for _ in range(rng.randrange(1, 8)):
            blob[rng.randrange(len(blob))] = rng.randrange(256)
        if rng.random() < 0.3:
            blob = blob[: rng.randrange(len(blob))]
        try:
            data = decode_fr_bytes(bytes(blob), "fuzz")
        except InputError:
            continue
        parse_fr_json(data, 0, "fuzz")


def test_big_text_with_lone_surrogates() -> None:
    line = ("h:1:2 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count 1 datatype 7 op 0 root 0 "
            "comm 0xc [nranks=2] stream 0x1\n")
    text = (line + "\ud800 junk \udcff\n") * 40000
    tracker = NcclTracker()
    tracker.feed_text(text)
    assert tracker.last_ops()[0].last.op_count == 1
