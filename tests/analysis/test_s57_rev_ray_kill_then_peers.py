"""Session 57 (rev57 F1, on 12268453): a kill by Ray's memory monitor was taken for one the run went on past as soon as
any progress line followed it, another worker's included. Ray Train's workers are a collective group: one killed, the
others print a few more steps, then their collective times out, or the driver's ``ActorDiedError`` ends the run; the
kill was then a note and the verdict a hang of the killed rank ("its last line shows other work: 'Task was killed
...'") or the ActorDiedError's list of possible causes. Now a kill is gone past only where the run went on and, after
it, the run says it ended well or nothing after it fails (Ray's own records of its kills aside): else it is the
failure, as before 12268453 (triage.parsing.frameworks._ray_went_on)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.frameworks import RAY_RETRIED, ray_kills_gone_past

_KILL = ("(RayTrainWorker pid=5120, ip=172.16.4.21) Task was killed due to the node running low on memory. Memory on "
         "the node (IP: 172.16.4.21, ID: 9f3) where the task (actor ID: c0de, name=RayTrainWorker.__init__, pid=5120, "
         "memory used=61.2GB) was running was 480.1GB / 503.7GB (0.953), which exceeds the memory usage threshold of "
         "0.95. Ray killed this worker (ID: 51) because it was the most recently scheduled task; to see more "
         "information about memory usage on this node, use `ray logs raylet.out -ip 172.16.4.21`.\n")
_RAYLET = ("(raylet, ip=172.16.4.21) [2025-06-11 03:12:40,118 E 88 88] (raylet) node_manager.cc:3219: 1 Workers (tasks / "
           "actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 9f3, IP: "
           "172.16.4.21) over the last time period. To see more information about the Workers killed on this node, "
           "use `ray logs raylet.out -ip 172.16.4.21`\n")
_BEFORE = ("(RayTrainWorker pid=5120, ip=172.16.4.21) [rank0]: epoch 2 step 340 loss 0.412\n"
           "(RayTrainWorker pid=5121, ip=172.16.4.22) [rank1]: epoch 2 step 340 loss 0.415\n")
_PEER_STEPS = ("(RayTrainWorker pid=5121, ip=172.16.4.22) [rank1]: epoch 2 step 341 loss 0.409\n"
               "(RayTrainWorker pid=5121, ip=172.16.4.22) [rank1]: epoch 2 step 342 loss 0.407\n")
_PEER_TIMEOUT = ("(RayTrainWorker pid=5121, ip=172.16.4.22) [rank1]:[E611 03:42:41.5 ProcessGroupNCCL.cpp:616] [Rank 1] "
                 "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8812, OpType=ALLREDUCE, NumelIn=4096, "
                 "NumelOut=4096, Timeout(ms)=1800000) ran for 1800042 milliseconds before timing out.\n")
_ACTOR_DIED = ("Traceback (most recent call last):\n  File \"fit.py\", line 51, in <module>\n    result = trainer.fit()\n"
               "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
               "\tclass_name: RayTrainWorker\n\tpid: 5120\n\tip: 172.16.4.21\n")


@pytest.mark.parametrize("kill", [_KILL, _RAYLET, _RAYLET + _KILL])
@pytest.mark.parametrize("end", [_PEER_TIMEOUT, _ACTOR_DIED])
def test_a_kill_the_peers_stepped_past_until_they_failed_is_the_failure(kill: str, end: str, tmp_path: Path) -> None:
    text = _BEFORE + kill + _PEER_STEPS + end
    assert ray_kills_gone_past(text) == []
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and verdict["subkind"] == "oom", verdict["summary"]
    assert "172.16.4.21" in verdict["summary"] and RAY_RETRIED not in verdict["summary"]


def test_a_kill_the_run_went_on_past_to_its_end_stays_a_note(tmp_path: Path) -> None:
    text = (_BEFORE + _KILL + _PEER_STEPS + "(RayTrainWorker pid=5188, ip=172.16.4.21) [rank0]: epoch 2 step 343 loss "
            "0.405\n"
            "(RayTrainWorker pid=5121, ip=172.16.4.22) [rank1]: Training finished.\n")
    assert ray_kills_gone_past(text)
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "no_problem_found", got["verdict"]["summary"]


def test_a_kill_then_only_the_peers_steps_is_no_all_clear(tmp_path: Path) -> None:
    # (a paste of a job that hangs: the killed worker's peer printed its last steps, its timeout not yet come)
    text = _BEFORE + _KILL + _PEER_STEPS
    assert ray_kills_gone_past(text) == []
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and verdict["subkind"] == "oom", verdict["summary"]
