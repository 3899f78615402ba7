"""Unit tests of the agent's pieces on real files: the log pump, rank status, run dir, job id."""

from __future__ import annotations

import io
import json
import os
import signal
import threading
import time
from pathlib import Path

from tests.helpers.tagged import reconstruct
from triage.agent.launch.envsetup import is_torchrun, rank_vars
from triage.agent.launch.pump import ConsoleWriter, LogPump, start_offsets_of
from triage.agent.launch.ranks import RankTracker, describe_ends, fatal_signal
from triage.agent.launch.rundir import job_id_from_env, prepare_run_dir
from triage.agent.launch.supervisor import exit_code_of
from triage.agent.lines import holding_rank_output


class _Sink:
    def __init__(self) -> None:
        self.data = b""

    def writelines(self, chunks: list[bytes]) -> None:
        self.data += b"".join(chunks)

    def flush(self) -> None:
        pass


def test_pump_tags_new_bytes_and_skips_old_ones_in_a_reused_run_dir(tmp_path: Path) -> None:
    _run, host = prepare_run_dir(tmp_path / "run", "j1", "h", ["x"])
    rank0 = host.rank(0)
    rank0.root.mkdir(parents=True)
    rank0.output.write_bytes(b"old run line\n")
    sink = _Sink()
    seen: list[tuple[int, bytes]] = []
    pump = LogPump(host, "h", sink, on_output=lambda r, c: seen.append((r, c)))  # type: ignore[arg-type]
    with open(rank0.output, "ab") as out:
        out.write(b"new line\npartial")
    with open(host.launcher_log, "ab") as out:
        out.write(b"launcher says hi\n")
    pump.discover()
    pump.pump(time.time())
    merged = host.merged_log.read_bytes()
    assert b"[h:0] new line\n" in merged and b"old run line" not in merged
    assert b"[h:launcher] launcher says hi\n" in merged
    assert seen == [(0, b"new line\n")]
    pump.finish(time.time())
    pump.close()
    assert b"old run line" not in sink.data
    assert reconstruct(sink.data, "h", "0") == b"new line\npartial"
    assert reconstruct(sink.data, "h", "launcher") == b"launcher says hi\n"
    assert reconstruct(host.merged_log.read_bytes(), "h", "0") == b"new line\npartial"


def test_console_writer_never_blocks_the_pump(tmp_path: Path) -> None:
    from triage.agent.launch.pump import ConsoleWriter

    read_end, write_end = os.pipe()
    stream = os.fdopen(write_end, "wb")
    writer = ConsoleWriter(stream, max_backlog=1 << 20)
    for _ in range(64):                       # 4 MiB into a pipe nobody reads: returns at once
        writer.write([b"x" * 65536])
    assert writer.dropped > 0
    os.close(read_end)                        # the reader goes away: the writer thread ends
    writer.close(5.0)
    stream.close()


def test_rank_tracker_reads_worker_and_heartbeat(tmp_path: Path) -> None:
    _run, host = prepare_run_dir(tmp_path / "run", "j1", "h", ["x"])
    paths = host.rank(3)
    paths.root.mkdir(parents=True)
    paths.worker.write_text(json.dumps({"pid": os.getpid(), "local_rank": 1, "started": time.time()}))
    paths.heartbeat.write_text(json.dumps({"pid": os.getpid(), "time": time.time(), "step": None,
                                           "progress": {}, "fr": None}))
    tracker = RankTracker(host, "h")
    statuses, exited = tracker.poll(time.time())
    assert exited == []
    (status,) = statuses
    assert status.rank == 3 and status.local_rank == 1 and status.alive and status.pid == os.getpid()
    assert status.heartbeat_age_s is not None and status.heartbeat_age_s < 5
    assert status.progress_age_s is None          # no FR and no step: no progress to measure
    assert status.in_flight is None


def test_fatal_signal_from_faulthandler_log(tmp_path: Path) -> None:
    log = tmp_path / "faulthandler.log"
    assert fatal_signal(log) is None
    log.write_bytes(b"Fatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent call first):\n")
    assert fatal_signal(log) == signal.SIGSEGV
    log.write_bytes(b"Current thread 0x1 (most recent call first):\n  File \"x.py\", line 1 in f\n")
    assert fatal_signal(log) == signal.SIGTERM


def test_a_rank_that_raised_before_the_stop_is_not_killed_by_sigterm(tmp_path: Path) -> None:
    """exit.json says it raised (code 1); the SIGTERM of the stop came while it went down: the
    end-of-rank line follows exit.json. A SIGSEGV stays a SIGSEGV."""
    _run, host = prepare_run_dir(tmp_path / "run", "j1", "h", ["x"])
    paths = host.rank(3)
    paths.root.mkdir(parents=True)
    pid = 2 ** 22 + 7                              # no such process: the rank has exited
    paths.worker.write_text(json.dumps({"pid": pid, "local_rank": 1, "started": time.time()}))
    paths.exit.write_text(json.dumps({"pid": pid, "rank": 3, "how": "exception", "exit_code": 1, "time": time.time()}))
    paths.faulthandler.write_bytes(b"Current thread 0x1 (most recent call first):\n  File \"x.py\", line 1 in f\n")
    (status,) = RankTracker(host, "h").poll(time.time())[0]
    assert status.returncode == 1 and describe_ends([status]) == "rank 3 exited 1"
    paths.faulthandler.write_bytes(b"Fatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent call first):\n")
    (status,) = RankTracker(host, "h").poll(time.time())[0]
    assert status.returncode == -int(signal.SIGSEGV)


def test_job_id_exit_codes_and_rank_vars() -> None:
    assert job_id_from_env({"SLURM_JOB_ID": "123"}) == "123"
    assert job_id_from_env({"TORCHELASTIC_RUN_ID": "a/b"}) == "a_b"
    assert job_id_from_env({}, now=0.0) == "19700101-000000-000"
    assert exit_code_of(-9) == 137 and exit_code_of(3) == 3
    assert is_torchrun(["/usr/bin/torchrun", "x.py"]) and not is_torchrun(["python", "-m", "torch.distributed.run"])
    assert rank_vars(["torchrun"], None) == "RANK"
    assert rank_vars(["srun", "python"], None).split(",")[:2] == ["RANK", "SLURM_PROCID"]
    assert rank_vars(["srun"], "MY_RANK") == "MY_RANK"


def test_nccl_log_is_not_pumped(tmp_path: Path) -> None:
    """nccl.log stays out of the console, merged.log and on_output: the hang monitor reads the
    file itself (triage.agent.hang.nccl), so the agent reads it once."""
    _run, host = prepare_run_dir(tmp_path / "run", "j1", "h", ["x"])
    rank1 = host.rank(1)
    rank1.root.mkdir(parents=True)
    rank1.output.write_bytes(b"user line\n")
    rank1.nccl.write_bytes(b"h:1:2 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1\n")
    seen: list[tuple[int, bytes]] = []
    pump = LogPump(host, "h", None, on_output=lambda r, c: seen.append((r, c)), start_offsets={})
    pump.discover()
    pump.finish(time.time())
    pump.close()
    assert sorted(seen) == [(1, b"user line\n")]
    merged = host.merged_log.read_bytes()
    assert merged == b"[h:1] user line\n"


def test_describe_ends() -> None:
    from triage.agent.state import LocalRankStatus

    def st(rank: int, code: int | None) -> LocalRankStatus:
        return LocalRankStatus(rank, rank, "h", 1, False, code, None, None, None)

    assert describe_ends([st(0, 0), st(1, 0)]) == "2 ranks exited 0"
    assert describe_ends([st(2, None), st(1, -11), st(0, 0), st(3, 3)]) == (
        "rank 1 killed by SIGSEGV; rank 2 ended without a trace (SIGKILL? see launcher.log); "
        "rank 3 exited 3; 1 rank exited 0")


def test_full_disk_under_merged_log_does_not_stop_the_pump(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """merged.log on a full device (/dev/full: every write fails with ENOSPC): the pump carries on,
    says so once, and keeps handing output to the monitor; the per-rank logs are the ranks' own."""
    import os

    from triage.agent.launch.pump import LogPump
    from triage.layout import HostPaths

    host = HostPaths(tmp_path / "node1")
    host.root.mkdir()
    os.symlink("/dev/full", host.merged_log)
    seen: list[bytes] = []
    pump = LogPump(host, "node1", None, on_output=lambda rank, chunk: seen.append(chunk))
    rank_dir = host.rank(0).root
    rank_dir.mkdir(parents=True)
    host.rank(0).output.write_bytes(b"x" * 3_000_000 + b"\nlast line\n")
    pump.discover()
    for _ in range(10):
        pump.pump(0.0)
    pump.close()
    assert pump.merged_failed
    assert b"".join(seen).endswith(b"last line\n")
    assert capsys.readouterr().err.count("cannot write merged.log") == 1


def test_rank_output_waits_while_a_report_prints() -> None:
    """While the agent prints a report, the console writer holds the ranks' lines; they come right
    after it, all of them."""
    class Stream(io.BytesIO):
        def __init__(self) -> None:
            super().__init__()
            self.wrote = threading.Event()

        def flush(self) -> None:
            super().flush()
            if self.getvalue():
                self.wrote.set()

    stream = Stream()
    writer = ConsoleWriter(stream)  # type: ignore[arg-type]
    with holding_rank_output():
        writer.write([b"[h:0] one\n", b"[h:1] two\n"])
        assert not stream.wrote.wait(0.5)          # held while the report prints
    assert stream.wrote.wait(30)
    writer.close(10)
    assert stream.getvalue() == b"[h:0] one\n[h:1] two\n"


def test_the_launchers_first_bytes_written_before_the_pump_exists_are_pumped(tmp_path: Path) -> None:
    """The agent measures where the logs end before it starts the launcher: a launcher that prints at once
    (before the pump is made) had its first lines left out of merged.log and the console, a reused run
    directory's old lines are still left out."""
    _run, host = prepare_run_dir(tmp_path / "run", "j1", "h", ["x"])
    host.launcher_log.write_bytes(b"an earlier job's line\n")
    offsets = start_offsets_of(host)                  # the agent, before it starts the launcher
    with open(host.launcher_log, "ab") as log:        # the launcher writes before the pump exists
        log.write(b"READY\n")
    pump = LogPump(host, "h", None, start_offsets=offsets)
    pump.finish(time.time())
    pump.close()
    merged = host.merged_log.read_bytes()
    assert b"READY" in merged and b"earlier job" not in merged


def test_describe_ends_says_what_is_known_of_a_rank_with_no_exit_record() -> None:
    from triage.agent.state import LocalRankStatus
    from triage.model.evidence import ExitInfo

    def st(rank: int, code: int | None) -> LocalRankStatus:
        return LocalRankStatus(rank, rank, "h", 1, False, code, None, None, None)

    gone = [st(0, None), st(1, None), st(2, 0)]
    assert describe_ends(gone, launcher_rc=0, disk_full={0, 1}) == (
        "ranks 0,1: how they ended is not recorded (the run directory's disk was full); the launcher exited 0; "
        "1 rank exited 0")
    assert describe_ends(gone, launcher_rc=1, disk_full={1}) == (
        "rank 0 ended without a trace (SIGKILL? see launcher.log); rank 1: how it ended is not recorded (the run "
        "directory's disk was full); 1 rank exited 0")
    assert describe_ends(gone, launcher_rc=0) == "ranks 0,1: no exit record; the launcher exited 0; 1 rank exited 0"
    killed = {1: ExitInfo(signal=9, signal_name="SIGKILL")}
    assert describe_ends(gone, killed, launcher_rc=1) == (
        "rank 0 ended without a trace (SIGKILL? see launcher.log); rank 1 was killed by SIGKILL (the launcher's "
        "record; no exit record); 1 rank exited 0")
    assert "SIGKILL?" not in describe_ends(gone, launcher_rc=0, disk_full={0})


LAUNCHER_ARGVS = [
    (["/py", "/venv/bin/torchrun", "--nproc-per-node", "2", "x.py"], True),
    (["/py", "-u", "/venv/bin/torchrun", "x.py"], True),
    (["/py", "-m", "torch.distributed.run", "x.py"], True),
    (["/py", "-um", "torch.distributed.run", "x.py"], True),
    (["/py", "-mtorch.distributed.launch", "x.py"], True),
    (["/py", "-W", "ignore", "-X", "dev", "/b/torchrun"], True),
    (["/py", "-u", "train.py", "torchrun"], False),
    (["/py", "train.py", "--launcher", "torchrun"], False),
    (["/py", "-c", "pass", "torchrun"], False),
    (["/py", "-m", "mypkg.train", "-m", "torch.distributed.run"], False),
    (["/py", "-W", "torchrun", "x.py"], False),
]


def test_only_the_interpreters_script_or_module_makes_the_launcher() -> None:
    import sys
    from unittest import mock

    from triage.worker import agent

    for argv, launcher in LAUNCHER_ARGVS:
        with mock.patch.object(sys, "orig_argv", argv):
            assert agent._is_launcher_process() is launcher, argv
