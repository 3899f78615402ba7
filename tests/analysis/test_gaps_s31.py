"""Known gaps of issue 23 closed as classes (not examples): each on variants written here, end to end
through ``triage report`` where the verdict is the point.

1. a torchelastic failure record whose field carries the rank in a launcher prefix ("[rank3] exitcode: -9")
   or its own ``local_rank:`` field names that rank, not "rank unknown";
2. the peer of a failed link is taken in every shape NCCL and gloo print it: host names with or without
   a digit, IPv4 and IPv6, with "<port>" or ":port".
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.logs import elastic_summary
from triage.cli import main
from triage.parsing.crashlog import CrashLineKind, parse_crash_line, peer_host
from triage.parsing.torchelastic import parse_launcher_failures


def report(text: str, tmp_path: Path, name: str = "job.log") -> tuple[int, dict[str, Any]]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["report", str(path), "--format", "json"])
    return code, (json.loads(out.getvalue())["verdict"] if out.getvalue().strip() else {})


# --- 1. the rank a torchelastic record's prefix or local_rank field names ---------------------------------

SUMMARY = elastic_summary("{field}", "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:")
# how the exit-code field of the rank's record reaches a paste: (field line, the rank it names)
PREFIXED_FIELDS = [("  [rank3] exitcode: -9", 3), ("  [rank3]: exitcode: -9 (pid: 4567)", 3),
                   ("  [rank: 3] exitcode: -9", 3), ("  rank3 exitcode: -9 (pid: 4567)", 3),
                   ("  rank: 3\n  exitcode: -9", 3), ("  local_rank: 3\n  exitcode: -9", 3),
                   ("  rank: <N/A>\n  local_rank: 3\n  exitcode: -9 (pid: 12)", 3)]


@pytest.mark.parametrize(("field", "rank"), PREFIXED_FIELDS)
def test_a_record_field_under_a_rank_prefix_names_that_rank(field: str, rank: int, tmp_path: Path) -> None:
    failures = parse_launcher_failures(SUMMARY.format(field=field))
    assert len(failures) == 1 and failures[0].exitcode == -9 and failures[0].signal == "SIGKILL"
    assert rank in (failures[0].rank, failures[0].local_rank), failures
    code, verdict = report(SUMMARY.format(field=field), tmp_path)
    assert code == 1 and verdict["kind"] == "crash" and verdict["culprit_ranks"] == [rank], verdict
    assert "rank unknown" not in verdict["summary"]


@pytest.mark.parametrize("line", ["[rank3] exitcode: -9 (pid: 4567)", "[rank3]: exitcode: -9",
                                  "node1: [rank3]: exitcode: -9", "[default3]: exitcode: -9 (pid: 4567)"])
def test_a_headerless_record_line_with_a_rank_prefix_names_that_rank(line: str, tmp_path: Path) -> None:
    code, verdict = report(f"step 100 loss 1.2\n{line}\n", tmp_path)
    assert code == 1 and verdict["kind"] == "crash" and verdict["culprit_ranks"] == [3], (line, verdict)


def test_two_prefixed_headerless_records_are_two_ranks() -> None:
    failures = parse_launcher_failures("[rank3]: exitcode: -9 (pid: 44)\n[rank5]: exitcode: 1 (pid: 45)\n")
    assert [(f.rank, f.exitcode) for f in failures] == [(3, -9), (5, 1)]


def test_a_record_of_no_rank_stays_of_no_rank(tmp_path: Path) -> None:
    """Nothing invented: a record with rank <N/A> and no local rank is still a failure of no known rank."""
    failures = parse_launcher_failures(SUMMARY.format(field="  rank      : <N/A>\n  exitcode  : -9"))
    assert [(f.rank, f.local_rank, f.signal) for f in failures] == [(None, None, "SIGKILL")]


# --- 2. peer addresses -------------------------------------------------------------------------------------

PEERS = [
    ("node1:1234:1300 [0] NCCL WARN socketStartConnect: Connect to gpu-a<45763> failed : Connection refused",
     "gpu-a"),
    ("NCCL WARN Connect to master<29500> failed : Software caused connection abort", "master"),
    ("NCCL WARN socketProgressOpt: Call to recv from fe80::1%eth0<49901> failed : Connection reset by peer",
     "fe80::1%eth0"),
    ("NCCL WARN NET/Socket : Connect to [fe80::a00:27ff:fe4e:66a1%eth0]<43105> failed : Connection refused",
     "fe80::a00:27ff:fe4e:66a1%eth0"),
    ("NCCL WARN Net : Connection closed by remote peer node-b.cluster.local<56230>", "node-b.cluster.local"),
    ("NCCL WARN NET/IB : Got completion from peer 10.0.0.5<50532> with error 12", "10.0.0.5"),
    ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [gpu-a]:29500",
     "gpu-a"),
    (("RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:534] Read error [10.0.0.5]:47232: "
     "Connection reset by peer"), "10.0.0.5"),
    (("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Read error [::ffff:10.1.2.3]:41234: "
     "Connection reset by peer"), "::ffff:10.1.2.3"),
    ("RuntimeError: Connection refused, remote=[master]:29500", "master"),
    # an address a paste redacted (NVIDIA/nccl#2076 in the corpus)
    ("socketProgressOpt: Call to recv from 172....<33759> failed : Connection reset by peer", "172...."),
]


@pytest.mark.parametrize(("line", "host"), PEERS)
def test_the_peer_is_taken_in_every_shape(line: str, host: str) -> None:
    crash = parse_crash_line(line.split("NCCL WARN ", 1)[-1] if "NCCL WARN" in line else line)
    assert crash is not None and crash.kind is CrashLineKind.NETWORK and crash.peer is not None, line
    assert peer_host(crash.peer) == host


@pytest.mark.parametrize("line", ["RuntimeError: error in train.py:123 Connection reset by peer",
                                  "RuntimeError: Connection reset by peer (called from model.py:88)"])
def test_a_source_location_is_no_peer(line: str) -> None:
    crash = parse_crash_line(line)
    assert crash is not None and crash.peer is None


@pytest.mark.parametrize("peer", ["gpu-a", "master", "10.0.0.9", "node-b.cluster.local"])
def test_a_failed_connect_blames_the_host_it_could_not_reach(peer: str, tmp_path: Path) -> None:
    text = ("gpu-b:1234:1300 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.3<0>\n"
            f"gpu-b:1234:1300 [0] NCCL WARN socketStartConnect: Connect to {peer}<45763> failed : "
            "Connection refused\n"
            "gpu-b:1234:1300 [0] NCCL INFO misc/socket.cc:484 -> 6\n")
    code, verdict = report(text, tmp_path)
    assert code == 1 and verdict["kind"] == "network_error" and verdict["culprit_host"] == peer, verdict


# --- 3. a large log (read through mmap) sees the plain-words failure lines a small one sees -----------------

PLAIN_WORDS = ["rank {r} died from signal 11", "Worker {r} was killed", "RANK={r} failed with exit code 1",
               "node07:{r} exit status 137", "[1,{r}]<stderr>: Segmentation fault", "rank {r} got SIGKILL",
               "process {r} terminated with exitcode 1", "task {r}: core dumped", "rank {r} OOM",
               "rank {r} ran out of memory", "Rank {r} crashed", "rank {r} is dead", "rank {r}: Bus error",
               "rank {r} aborted", "rank {r} hit an illegal instruction", "rank {r} timed out",
               "Fatal: rank {r} lost its data loader", "rank {r} raised an exception",
               "mpirun noticed that process rank {r} with PID 636815 on node fl98 exited on signal 9 (Killed)."]


def _large_and_small(line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    from triage.load import inputs
    from triage.load.logs.large import TAIL_BYTES
    filler = "".join(f"step {i} loss 0.{i % 97:02d} lr 3e-4 tokens/s 10{i % 9}00\n"
                     for i in range(TAIL_BYTES // 40 + 2000))    # past the tail the large path reads whole
    text = f"starting the job\n{line}\n{filler}"
    small = report(text, tmp_path, "small.log")
    monkeypatch.setattr(inputs, "LARGE_LOG_BYTES", 64 << 10)
    large = report(text, tmp_path, "large.log")
    return small, large


@pytest.mark.parametrize("words", PLAIN_WORDS)
def test_a_large_log_gives_the_verdict_of_the_same_text_small(words: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (code, verdict), (large_code, large_verdict) = _large_and_small(words.format(r=5), tmp_path, monkeypatch)
    assert code == 1 and (5 in verdict["culprit_ranks"] or "timed out" in words), verdict   # read when small
    assert (large_code, large_verdict["kind"], large_verdict["culprit_ranks"]) == \
        (code, verdict["kind"], verdict["culprit_ranks"]), (words, large_verdict)


# --- 7. a verdict with no culprit says which ranks the text covers and the one thing that settles it --------

UNTOLD = [
    # timeouts of some ranks, the others not in the text
    "".join(f"[rank{r}]:[E1001 10:00:00.1 90{r} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=77, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) "
            "ran for 600010 milliseconds before timing out.\n" for r in (1, 3)),
    # a crash no line ties to a rank
    "step 10 loss 2.1\nSegmentation fault (core dumped)\n",
    # an NCCL transport failure of a process with no rank
    "gpu-b:1234:1300 [0] NCCL WARN socketStartConnect: Connect to gpu-a<45763> failed : Connection refused\n",
    # torchrun's record of a local rank on one of several hosts
    ("[0]:\n  time: 2024-05-01_10:00:00\n  host: n1\n  rank: <N/A>\n  exitcode: 1 (pid: 12)\n"
    "[1]:\n  time: 2024-05-01_10:00:00\n  host: n2\n  rank: <N/A>\n  exitcode: 1 (pid: 13)\n"),
]


@pytest.mark.parametrize("text", UNTOLD)
def test_a_verdict_without_a_culprit_names_coverage_and_the_one_thing(text: str, tmp_path: Path) -> None:
    from tests.realworld.test_untold import THINGS
    code, verdict = report(text, tmp_path)
    assert code == 1 and verdict["culprit_ranks"] == [], verdict     # the text cannot name one
    summary = verdict["summary"]
    assert re.search(r"this input holds|not in this input|rank unknown|no line of this input", summary), summary
    settles = re.search(r"would (?:settle|tell|name|show)", summary)
    assert settles and THINGS.search(summary[max(0, settles.start() - 260):settles.start()]), summary


# --- 5. a rank's traceback cut before its exception line: the same verdict whatever the launcher's prefix ---

_TIMEOUT = ("[E1001 10:10:00.1 90{r} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=77, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for "
            "600010 milliseconds before timing out.\n")


def _lines(*lines: str) -> str:
    return "".join(lines)


CUT_TRACEBACKS = {
    "cut_tb_then_timeouts": _lines(
        "[rank0]:[W1001 10:00:00.0 ProcessGroupNCCL.cpp:1] starting\n",
        "[rank2]:Traceback (most recent call last):\n",
        "[rank2]:  File \"/w/train.py\", line 40, in <module>\n",
        "[rank2]:    main()\n",
        "[rank2]:  File \"/w/train.py\", line 33, in main\n",
        "[rank2]:    loss = model(batch)\n",
        *[f"[rank{r}]:" + _TIMEOUT.format(r=r) for r in (0, 1, 3)],
    ),
    "cut_tb_only": _lines(
        "[rank1]:Traceback (most recent call last):\n",
        "[rank1]:  File \"/w/train.py\", line 40, in <module>\n",
        "[rank1]:    main()\n",
        "[rank1]:  File \"/w/train.py\", line 33, in main\n",
        "[rank1]:    dist.all_reduce(t)\n",
    ),
    "two_cut_one_full": _lines(
        "[rank0]:Traceback (most recent call last):\n",
        "[rank0]:  File \"/w/train.py\", line 40, in <module>\n",
        "[rank0]:    main()\n",
        "[rank3]:Traceback (most recent call last):\n",
        "[rank3]:  File \"/w/train.py\", line 12, in <module>\n",
        "[rank3]:    x = load()\n",
        "[rank3]:FileNotFoundError: [Errno 2] No such file or directory: 'data.bin'\n",
        "[rank0]:  File \"/w/train.py\", line 33, in main\n",
    ),
    "cut_tb_then_summary": _lines(
        "[rank1]:Traceback (most recent call last):\n",
        "[rank1]:  File \"/w/train.py\", line 40, in <module>\n",
        "[rank1]:    main()\n",
        "[rank1]:  File \"/w/train.py\", line 33, in main\n",
        "[rank1]:    dist.all_reduce(t)\n",
        "W1001 10:10:00.000 123 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 11 closing signal SIGTERM\n",
        "E1001 10:10:00.000 123 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 1 (pid: 12) of binary: /usr/bin/python\n",
    ),
    "cut_tb_other_rank_error_later": _lines(
        "[rank1]:Traceback (most recent call last):\n",
        "[rank1]:  File \"/w/train.py\", line 40, in <module>\n",
        "[rank1]:    main()\n",
        "[rank0]:Traceback (most recent call last):\n",
        "[rank0]:  File \"/w/train.py\", line 40, in <module>\n",
        "[rank0]:    main()\n",
        "[rank0]:torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.21.5\n",
    ),
    "cut_tb_inside_cuda": _lines(
        "[rank2]:Traceback (most recent call last):\n",
        "[rank2]:  File \"/w/train.py\", line 40, in <module>\n",
        "[rank2]:    out = model(x)\n",
        "[rank2]:  File \"/usr/lib/python3/site-packages/torch/nn/modules/module.py\", line 1532, in _wrapped_call_impl\n",
        "[rank2]:    return self._call_impl(*args, **kwargs)\n",
        "[rank3]:" + _TIMEOUT.format(r=3),
    ),
}


def _styled(text: str, style: str) -> str:
    from tests.realworld.test_launchers import ADD, REPLACE, _rewrite
    return _rewrite(text, REPLACE[style], False) if style in REPLACE else _rewrite(text, ADD[style], True)


def _styles() -> list[str]:
    from tests.realworld.test_launchers import ADD, REPLACE
    return sorted(REPLACE) + sorted(ADD)


@pytest.mark.parametrize("style", _styles())
@pytest.mark.parametrize("name", sorted(CUT_TRACEBACKS))
def test_a_cut_traceback_gets_the_same_verdict_in_every_launchers_style(name: str, style: str,
                                                                        tmp_path: Path) -> None:
    text = CUT_TRACEBACKS[name]
    code, verdict = report(text, tmp_path, "torchrun.log")
    styled_code, styled = report(_styled(text, style), tmp_path, "styled.log")
    assert code == 1 and verdict["kind"] != "no_problem_found", verdict
    assert (styled_code, styled["kind"], styled["culprit_ranks"]) == (code, verdict["kind"], verdict["culprit_ranks"])
