"""The child a stuck rank waits on: which kind of wait, which child works, its worker id.

Unit tests use real py-spy dumps of a DataLoader(num_workers=2) whose worker 1 blocks (tests/hang/
data, taken from tests/programs/agent_dataloader_worker.py); the real-process tests dump a live
multiprocessing pool and a subprocess wait (tests/programs/agent_child_wait.py) with py-spy.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.paths import PROGRAMS
from tests.helpers.processes import running_program
from triage.agent.hang import children
from triage.analysis.child_wait import child_waited_on, classify_child, main_thread, waits_on
from triage.collectors.common import run_tool
from triage.collectors.pyspy import find_pyspy, python_children, sample_stacks
from triage.load.agent_facts import stack_lines
from triage.model.evidence import ChildStack
from triage.parsing.stacks import Frame, ThreadStack, parse_pyspy_json, parse_pyspy_text

DATA = Path(__file__).parent / "data"


def _stack(name: str) -> tuple[ThreadStack, ...]:
    return parse_pyspy_text((DATA / name).read_text())


def _lines(name: str) -> tuple[str, ...]:
    return stack_lines(_stack(name))


def _main_only(*frames: tuple[str, str]) -> tuple[ThreadStack, ...]:
    return (ThreadStack("1", "MainThread", tuple(Frame(f, p, 1) for f, p in frames), is_main=True),)


def test_a_rank_in_its_dataloaders_next_batch_waits_on_a_dataloader() -> None:
    assert waits_on(_stack("dl_rank_main.txt")) == "DataLoader"


def test_a_rank_running_its_own_code_under_a_dataloader_loop_waits_on_nothing() -> None:
    own_code = _main_only(("collate_here", "train.py"), ("_try_get_data", "torch/utils/data/dataloader.py"),
                          ("main", "train.py"))
    assert waits_on(own_code) is None
    assert waits_on(_main_only(("main", "train.py"))) is None


@pytest.mark.parametrize(("frames", "kind"), [
    ((("wait", "threading.py"), ("ApplyResult.get", "multiprocessing/pool.py"), ("main", "t.py")), "pool"),
    ((("Popen._wait", "subprocess.py"), ("run", "subprocess.py"), ("main", "t.py")), "subprocess"),
    ((("_recv", "multiprocessing/connection.py"), ("Connection.recv", "multiprocessing/connection.py"),
      ("main", "t.py")), "pipe"),
])
def test_each_kind_of_wait_on_a_child(frames: tuple[tuple[str, str], ...], kind: str) -> None:
    assert waits_on(_main_only(*frames)) == kind


def test_an_idle_worker_waits_for_work_and_a_blocked_one_works() -> None:
    assert classify_child(_stack("dl_worker_idle.txt"))[:2] == ("DataLoader worker", False)
    kind, working, where = classify_child(_stack("dl_worker_blocked.txt"))
    assert (kind, working) == ("DataLoader worker", True)
    assert where == "read_from_store (agent_dataloader_worker.py:21)"


def test_pool_workers_waiting_for_tasks_are_idle() -> None:
    for loop in (("worker", "multiprocessing/pool.py"), ("_process_worker", "concurrent/futures/process.py")):
        idle = _main_only(("_recv", "multiprocessing/connection.py"), ("Queue.get", "multiprocessing/queues.py"),
                          loop, ("BaseProcess.run", "multiprocessing/process.py"))
        assert classify_child(idle)[:2] == ("pool worker", False)
        working = _main_only(("read_from_store", "job.py"), loop)
        assert classify_child(working) == ("pool worker", True, "read_from_store (job.py:1)")


def test_the_rank_waits_on_the_blocked_worker_named_by_its_id() -> None:
    kids = [ChildStack(32313, _lines("dl_worker_idle.txt"), 0, "idle.txt"),
            ChildStack(32314, _lines("dl_worker_blocked.txt"), 1, "blocked.txt")]
    found = child_waited_on(1, _stack("dl_rank_main.txt"), kids)
    assert found is not None
    assert (found.pid, found.worker_id, found.kind, found.evidence) == (32314, 1, "DataLoader worker", ("blocked.txt",))
    assert found.describe() == ("rank 1 waits on its DataLoader worker 1 (pid 32314), "
                                "stuck in read_from_store (agent_dataloader_worker.py:21)")
    assert found.waits_in == "its DataLoader's next batch"


def test_no_child_named_when_every_worker_waits_for_work_or_the_rank_waits_on_none() -> None:
    idle = [ChildStack(32313, _lines("dl_worker_idle.txt"), 0)]
    assert child_waited_on(1, _stack("dl_rank_main.txt"), idle) is None
    blocked = [ChildStack(32314, _lines("dl_worker_blocked.txt"), 1)]
    assert child_waited_on(1, _main_only(("main", "train.py")), blocked) is None


def test_two_working_workers_name_the_lowest_id_and_count_the_other() -> None:
    blocked = _lines("dl_worker_blocked.txt")
    found = child_waited_on(1, _stack("dl_rank_main.txt"), [ChildStack(9, blocked, 1), ChildStack(8, blocked, 0)])
    assert found is not None and (found.pid, found.worker_id, found.others) == (8, 0, (9,))
    assert "(1 more DataLoader workers are busy too)" in found.describe()


def test_worker_id_read_from_pyspy_locals_keeps_only_that_argument() -> None:
    data = [{"thread_name": "MainThread", "frames": [
        {"name": "fetch", "locals": [{"name": "secret", "arg": True, "repr": "'hunter2'"}]},
        {"name": "_worker_loop", "locals": [{"name": "dataset", "arg": True, "repr": "<D at 0x1>"},
                                            {"name": "worker_id", "arg": True, "repr": "3"}]}]}]
    assert children._worker_id(data) == 3
    assert children._worker_id([{"frames": [{"name": "_worker_loop", "locals": None}]}]) is None
    assert children._worker_id({"not": "a list"}) is None


# -- real processes ----------------------------------------------------------------------------
def _dumps(pid: int) -> tuple[tuple[ThreadStack, ...], list[ChildStack]]:
    """py-spy of a live process and of each of its Python children (as the agent takes them)."""
    tool, _ = find_pyspy()
    assert tool is not None, "py-spy is needed"
    deadline = time.monotonic() + 30
    while True:
        data, error = sample_stacks(pid)
        assert data is not None, error
        main = parse_pyspy_json(data)
        kids = []
        for child in python_children(pid):
            run = run_tool([tool, "dump", "--pid", str(child), "--nonblocking"], 10.0, 1 << 20)
            kids.append(ChildStack(child, stack_lines(parse_pyspy_text(run.stdout.decode(errors="replace")))))
        if (waits_on(main) and any(classify_child((main_thread(k.stack),))[1] for k in kids)) or time.monotonic() > deadline:
            return main, kids
        time.sleep(0.5)


@pytest.mark.timeout(90)
@pytest.mark.parametrize(("mode", "kind"), [("pool", "pool worker"), ("subprocess", "child process")])
def test_a_live_process_waiting_on_a_child_names_that_child(tmp_path: Path, mode: str, kind: str) -> None:
    fifo = tmp_path / "object"
    os.mkfifo(fifo)
    argv = [sys.executable, "-u", str(PROGRAMS / "agent_child_wait.py"), mode, str(fifo)]
    with running_program(argv, cwd=str(PROGRAMS)) as proc:
        main, kids = _dumps(proc.pid)
        found = child_waited_on(0, main, kids)
        assert found is not None, (main, kids)
        assert found.kind == kind
        assert found.where is not None and found.where.startswith("read_from_store (agent_child_wait.py:")
        assert found.pid in python_children(proc.pid)


@pytest.mark.timeout(60)
def test_workers_without_a_readable_id_are_numbered_by_start_order(tmp_path: Path) -> None:
    """Two real processes started one after the other: the first started is worker 0."""
    blocked = (DATA / "dl_worker_blocked.txt").read_text()
    entries = []
    argv = [sys.executable, "-c", "import time; print('READY', flush=True); time.sleep(60)"]
    with running_program(argv) as first:
        time.sleep(0.05)
        with running_program(argv) as second:
            for proc in (second, first):
                (tmp_path / f"{proc.pid}.txt").write_text(blocked)
                entries.append({"rank": 0, "pid": proc.pid, "kind": "DataLoader worker", "file": f"{proc.pid}.txt",
                                "worker_id": None, "worker_id_from": None})
            children._number_by_start(entries)
    by_pid = {e["pid"]: e for e in entries}
    assert by_pid[first.pid]["worker_id"] == 0 and by_pid[second.pid]["worker_id"] == 1
    assert {e["worker_id_from"] for e in entries} == {"start order"}
    json.dumps(entries)         # goes into the manifest as it is
