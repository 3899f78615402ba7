"""Round 22's misses of issue 23 closed as classes, each on variants written here and on real text from public
reports (log text only), end to end through ``triage report`` where the verdict is the point.

1. torch.distributed.launch's record of the worker it found failed, quoted without its
   ``subprocess.CalledProcessError:`` head: the worker's --local_rank (and the launch's --node_rank) names the rank;
   a headless ``Command '[...]'`` of any other subprocess (a ninja build) is no rank's record.
2. gloo's own ``Timed out waiting Nms for send|recv operation to complete`` (``unbound_buffer.cc``, tcp or uv): the
   rank waited in a collective or p2p call a peer never joined, a hang (of that rank where the line's owner is known;
   gloo's message never names the peer), never a failure of unknown place.
3. ProcessGroupNCCL's per-rank ``Last enqueued NCCL work: N, last completed NCCL work: M`` (the watchdog's and the
   heartbeat monitor's lines, a person's summary of them): a rank of a group below the others' count that waits in
   nothing never launched the collective they wait in: the culprit, the others collateral.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log as report
from triage.parsing.gloo import parse_gloo_timeout
from triage.parsing.torchelastic import parse_launcher_failures

# --- 1. the old launcher's record without its head ---------------------------------------------------------------

_ARGV = "'/opt/conda/bin/python', '-u', 'tools/train.py', {local}'--cfg', 'a.yaml'"


@pytest.mark.parametrize(("local", "end", "rank", "code", "sig"), [
    ("'--local_rank=3', ", "returned non-zero exit status 1.", 3, 1, None),
    ("'--local-rank=2', ", "died with <Signals.SIGKILL: 9>.", 2, None, "SIGKILL"),
    ("'--local_rank', '5', ", "returned non-zero exit status 2", 5, 2, None),
    # --use_env: the rank is in the worker's environment, not its argv: the launcher's "python -u" form alone
    ("", "died with <Signals.SIGSEGV: 11>.", None, None, "SIGSEGV"),
])
def test_a_headless_launch_record_names_its_worker(local: str, end: str, rank: int | None, code: int | None,
                                                   sig: str | None) -> None:
    text = f"error:\n  \"Command '[{_ARGV.format(local=local)}]' {end}\"\n"
    (failure,) = parse_launcher_failures(text)
    assert (failure.local_rank, failure.exitcode, failure.signal) == (rank, code, sig)


@pytest.mark.parametrize("text", [
    "Command '['ninja', '-v']' returned non-zero exit status 1.\n",
    "Command '['/usr/bin/python3', 'setup.py', 'build_ext']' returned non-zero exit status 1.\n",
    "Command '['git', 'rev-parse', 'HEAD']' returned non-zero exit status 128.\n",
])
def test_a_headless_command_of_another_subprocess_is_no_rank_record(text: str) -> None:
    assert parse_launcher_failures(text) == ()


def test_a_headless_record_is_an_exception_of_its_rank(tmp_path: Path) -> None:
    text = f"Command '[{_ARGV.format(local=chr(39) + '--local_rank=1' + chr(39) + ', ')}]' returned non-zero exit " \
           "status 1.\n"
    code, data = report(text, tmp_path)
    verdict = data["verdict"]
    assert code == 1 and verdict["kind"] == "exception" and verdict["culprit_ranks"] == [1], verdict


def test_the_launch_s_node_rank_gives_the_global_rank(tmp_path: Path) -> None:
    text = ("python -m torch.distributed.launch --nproc_per_node=4 --nnodes=2 --node_rank=1 tools/train.py\n"
            f"Command '[{_ARGV.format(local=chr(39) + '--local_rank=2' + chr(39) + ', ')}]' died with "
            "<Signals.SIGKILL: 9>.\n")
    code, data = report(text, tmp_path)
    verdict = data["verdict"]
    assert code == 1 and verdict["culprit_ranks"] == [6], verdict
    assert "SIGKILL" in verdict["summary"], verdict["summary"]


# real text: facebookresearch/dino#113, the record as pasted (with its head), and the same line as an issue
# title quotes it (without)
DINO = ("subprocess.CalledProcessError: Command '['/home/gayrat/anaconda3/envs/Dino/bin/python', '-u', "
        "'main_dino.py', '--local_rank=4', '--arch', 'vit_small', '--data_path', './dataset/resized_img', "
        "'--output_dir', './results']' returned non-zero exit status 1\n")


@pytest.mark.parametrize("text", [DINO, DINO.removeprefix("subprocess.CalledProcessError: ")])
def test_real_launch_record_with_and_without_its_head(text: str, tmp_path: Path) -> None:
    code, data = report(text, tmp_path)
    verdict = data["verdict"]
    assert code == 1 and verdict["kind"] == "exception" and verdict["culprit_ranks"] == [4], verdict


# --- 2. gloo's send/recv timeout ------------------------------------------------------------------------------

@pytest.mark.parametrize(("line", "op", "ms"), [
    (("RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting 600000ms "
     "for send operation to complete"), "send", 600000),
    (("RuntimeError: [..\\third_party\\gloo\\gloo\\transport\\uv\\unbound_buffer.cc:67] Timed out waiting 5000ms for "
     "recv operation to complete"), "recv", 5000),
    ("gloo::IoException: Timed out waiting 30000ms for recv operation to complete", "recv", 30000),
])
def test_gloo_timeouts_read(line: str, op: str, ms: int) -> None:
    timeout = parse_gloo_timeout(line)
    assert timeout is not None and (timeout.op, timeout.timeout_ms) == (op, ms)
    assert timeout.text.startswith("Timed out waiting")


def test_a_rank_s_gloo_timeout_is_its_hang(tmp_path: Path) -> None:
    text = ("[rank2]: Traceback (most recent call last):\n"
            "[rank2]:   File \"eval.py\", line 40, in <module>\n"
            "[rank2]:     dist.all_gather(out, t)\n"
            "[rank2]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting "
            "600000ms for recv operation to complete\n")
    code, data = report(text, tmp_path)
    verdict = data["verdict"]
    assert code == 1 and verdict["kind"] == "hang", verdict
    assert "rank 2" in verdict["summary"] and "failure" not in verdict["kind"], verdict["summary"]


def test_a_gloo_timeout_of_no_known_rank_is_a_hang_of_no_known_culprit(tmp_path: Path) -> None:
    text = ("RuntimeError: [/opt/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting "
            "900000ms for send operation to complete\n")
    code, data = report(text, tmp_path)
    verdict = data["verdict"]
    assert code == 1 and verdict["kind"] == "hang" and verdict["culprit_ranks"] == [], verdict
    assert "would settle it" in verdict["summary"], verdict["summary"]


# real text: facebookresearch/detectron2#3243 (the end of one process's traceback in all_gather)
DETECTRON2 = """torch/distributed/distributed_c10d.py", line 1870, in all_gather
    work.wait()
RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:136] Timed out waiting 1800000ms for send operation to complete
"""


def test_real_gloo_send_timeout_is_a_hang(tmp_path: Path) -> None:
    code, data = report(DETECTRON2, tmp_path)
    verdict = data["verdict"]
    assert code == 1 and verdict["kind"] == "hang" and verdict["culprit_ranks"] == [], verdict


# --- 3. per-rank last enqueued/completed counts ------------------------------------------------------------------

def _dump_signal(rank: int, enqueued: int, completed: int) -> str:
    return (f"[rank{rank}]:[E1128 21:11:49.041194513 ProcessGroupNCCL.cpp:1870] [PG ID 0 PG GUID 0(default_pg) Rank "
            f"{rank}] Received a dump signal due to a collective timeout from this local rank and we will try our best "
            f"to dump the debug info. Last enqueued NCCL work: {enqueued}, last completed NCCL work: {completed}.\n")


def _watchdog(rank: int, seq: int) -> str:
    return (f"[rank{rank}]:[E1128 21:11:48.9 ProcessGroupNCCL.cpp:632] [Rank {rank}] Watchdog caught collective "
            f"operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
            "ran for 600020 milliseconds before timing out.\n")


def test_the_rank_behind_the_others_counts_is_missing(tmp_path: Path) -> None:
    text = "".join(_watchdog(r, 41) for r in (0, 1, 3)) + "".join(
        _dump_signal(r, 40, 40) if r == 2 else _dump_signal(r, 41, 40) for r in range(4))
    code, data = report(text, tmp_path)
    verdict = data["verdict"]
    assert code == 1 and verdict["kind"] == "missing_rank" and verdict["culprit_ranks"] == [2], verdict
    assert "#41" in verdict["summary"], verdict["summary"]


def test_a_summary_of_the_counts_names_the_rank_behind(tmp_path: Path) -> None:
    text = ("[Rank 3] Last enqueued NCCL work: 977, last completed NCCL work: 977\n"
            "[Rank 0,1,2] Last enqueued NCCL work: 978, last completed NCCL work: 977\n")
    code, data = report(text, tmp_path)
    assert code == 1 and data["verdict"]["culprit_ranks"] == [3], data["verdict"]


# real text: huggingface/accelerate#3861, two ranks' dump-signal lines at the same counts (both wait in work 22)
ACCELERATE = (
    "[rank1]:[E1128 21:11:49.041194513 ProcessGroupNCCL.cpp:1870] [PG ID 0 PG GUID 0(default_pg) Rank 1] Received a "
    "dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. "
    "Last enqueued NCCL work: 22, last completed NCCL work: 21.This is most likely caused by incorrect usages of "
    "collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the "
    "scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other "
    "reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. \n"
    "[rank0]:[E1128 21:11:49.041188078 ProcessGroupNCCL.cpp:1806] [PG ID 0 PG GUID 0(default_pg) Rank 0] Observed "
    "flight recorder dump signal from another rank via TCPStore.\n"
    "[rank2]:[E1128 21:11:49.041253142 ProcessGroupNCCL.cpp:1870] [PG ID 0 PG GUID 0(default_pg) Rank 2] Received a "
    "dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. "
    "Last enqueued NCCL work: 22, last completed NCCL work: 21.This is most likely caused by incorrect usages of "
    "collectives\n")


def test_real_counts_of_ranks_in_step_name_no_rank_behind(tmp_path: Path) -> None:
    code, data = report(ACCELERATE, tmp_path)
    verdict = data["verdict"]
    assert code == 1 and verdict["kind"] != "missing_rank" and verdict["culprit_ranks"] == [], verdict
    # the same lines with rank 2 one collective short, waiting in nothing: rank 2 is behind
    at = ACCELERATE.rindex("work: 22")
    short = ACCELERATE[:at] + "work: 21" + ACCELERATE[at + len("work: 22"):]
    _code, data = report(short, tmp_path)
    assert data["verdict"]["kind"] == "missing_rank" and data["verdict"]["culprit_ranks"] == [2], data["verdict"]

