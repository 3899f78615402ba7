"""Session 57 (round 79's pytorch/gloo#268): gloo's TCP pair errors under GLOO_ERROR_MSG's "[.../gloo/transport/tcp/
pair.cc:N]" head read as a network error only where a socket's words followed ("Connection reset by peer", "connect
[...]: Connection refused"); "address family mismatch" (the two ends' addresses of different families) was an exception
of no kind, and "Socket closed [peer]", "Socket unexpectedly closed [peer]", "Connect timeout [peer]", "writev [peer]:
..." and "Read error [peer]: <any strerror>" too. Now each is gloo's network error of the pair, with the peer it names;
"Read timeout"/"Write timeout" (a peer that did not send in time: a hang elsewhere as often) and gloo's enforce
failures stay as they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.crashlog import CrashLineKind, parse_crash_line


@pytest.mark.parametrize(("rest", "peer"), [
    ("pair.cc:210] address family mismatch", None),
    ("pair.cc:812] Socket closed [192.168.7.21]:41877", "[192.168.7.21]:41877"),
    ("pair.cc:201] Socket unexpectedly closed [fe80::1%eth0]:5678", "[fe80::1%eth0]:5678"),
    ("pair.h:311] Connect timeout [10.4.0.12]:60211", "[10.4.0.12]:60211"),
    ("pair.cc:339] writev [10.4.0.12]:60211: Bad file descriptor", "[10.4.0.12]:60211"),
    ("pair.cc:537] Read error [10.4.0.12]:60211: Bad address", "[10.4.0.12]:60211"),
])
@pytest.mark.parametrize("head", ["RuntimeError: [/opt/pytorch/third_party/gloo/gloo/transport/tcp/",
                                  "  what():  [../third_party/gloo/gloo/transport/tcp/",
                                  "torch.distributed.DistBackendError: [gloo/transport/tcp/"])
def test_gloo_pair_errors_are_the_network(head: str, rest: str, peer: str | None) -> None:
    got = parse_crash_line(head + rest)
    assert got is not None and got.kind is CrashLineKind.NETWORK, got
    assert got.peer == peer


@pytest.mark.parametrize("line", [
    "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:523] Read timeout [10.4.0.12]:60211",
    ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:446] op.preamble.length <= "
     "op.nbytes. 881392 vs 4"),
])
def test_timeouts_and_enforce_failures_unchanged(line: str) -> None:
    got = parse_crash_line(line)
    assert got is not None and got.kind is CrashLineKind.EXCEPTION, got


def test_the_family_mismatch_alone(tmp_path: Path) -> None:
    text = ("Traceback (most recent call last):\n"
            '  File "dist_demo.py", line 14, in <module>\n'
            '    dist.init_process_group("gloo", init_method="tcp://192.168.1.20:23456", rank=1, world_size=2)\n'
            "RuntimeError: [/opt/conda/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:210] address family "
            "mismatch\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "network_error" and verdict["culprit_ranks"] == [], verdict
    assert "IPv4 against IPv6" in verdict["summary"]
