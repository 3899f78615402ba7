"""The workers' control sockets belong to the job: no peer can stall a heartbeat or stop a healthy job.

- uid 65534 finds the sockets in /proc/net/unix (abstract names are public) and floods them with
  connect-and-close, garbage and connections held open while a healthy 2-rank job trains under a
  3 s hang timeout: the job ends with exit 0, no hang is suspected, and the peer is refused;
- the job's own user holds connections open, drips bytes and sends garbage: heartbeats go on and
  a ping is still answered;
- a control-socket name bound in advance by someone else: the worker binds a random name beside
  it, records the squatted one, and still answers a dump.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.launch import HOST, job_env, launch_argv, rank_dir, run_launch, torchrun
from tests.helpers.paths import REPO, program
from tests.helpers.processes import kill_tree, running_program, wait_for
from tests.security.sec_util import AS_NOBODY, SYSTEM_PYTHON, attacker_dir, can_drop_privileges
from triage.collectors.common import Target
from triage.collectors.worker import collect_worker
from triage.collectors.worker_client import ping, request_dump, send_command
from triage.layout import RankPaths
from triage.options import CollectSettings
from triage.worker.agent import _State
from triage.worker.control import ControlThread

FLOOD = r"""
import socket, sys, time
deadline = time.monotonic() + float(sys.argv[1])
prefix = "@triage/" + sys.argv[2] + "/"
counts = {"connects": 0, "refused_replies": 0, "errors": 0, "names": 0}
held = []
def names():
    out = set()
    with open("/proc/net/unix") as handle:
        for line in handle:
            parts = line.split()
            if len(parts) >= 8 and parts[-1].startswith(prefix):
                out.add(parts[-1][1:])
    return sorted(out)
i = 0
while time.monotonic() < deadline:
    targets = names()
    counts["names"] = max(counts["names"], len(targets))
    if not targets:
        if counts["names"]:
            break                               # the job is over
        time.sleep(0.05)
        continue
    for name in targets:
        i += 1
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(0.5)
        try:
            s.connect("\0" + name)
            counts["connects"] += 1
            mode = i % 4
            if mode == 1:
                s.sendall(b"\x00\xff garbage dump /tmp/x\n" * 50)
            elif mode == 2:
                held.append(s)                  # held open, never a byte
                if len(held) > 32:
                    held.pop(0).close()
                continue
            elif mode == 3:
                if s.recv(200).startswith(b'{"ok": false, "error": "permission denied"'):
                    counts["refused_replies"] += 1
        except OSError:
            counts["errors"] += 1
        s.close()
print("FLOOD", " ".join(f"{k}={v}" for k, v in counts.items()), flush=True)
"""


@pytest.mark.skipif(not can_drop_privileges() or not SYSTEM_PYTHON.exists(), reason="needs root and setpriv")
def test_flood_from_another_user_never_stops_a_healthy_job(tmp_path: Path) -> None:
    run = tmp_path / "run"
    argv = launch_argv(run, torchrun(program("collect_healthy.py"), 2), "--stop-timeout", "3")
    job = f"flood{os.getpid()}"          # the attacker floods this job's sockets only (the machine is shared)
    with attacker_dir() as home:
        attacker = home / "flood.py"
        attacker.write_text(FLOOD)
        attacker.chmod(0o644)
        flood = subprocess.Popen([*AS_NOBODY, str(SYSTEM_PYTHON), str(attacker), "200", job], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            done = run_launch(argv, job_env(COLLECT_SECONDS="20", TORCHELASTIC_RUN_ID=job), run, timeout=240)
            out, err = flood.communicate(timeout=60)          # it stops once the sockets are gone
        finally:
            kill_tree(flood.pid)
            flood.wait(timeout=30)
    assert done.returncode == 0, done.explain()
    assert "hang suspected" not in done.stderr, done.stderr
    assert not list(run.glob("*/bundles/*")), "a healthy job got a bundle"
    counts = dict(item.split("=") for item in out.split()[1:]) if out.startswith("FLOOD") else {}
    assert counts, (out, err)
    assert int(counts["names"]) >= 2 and int(counts["connects"]) > 500, counts
    assert int(counts["refused_replies"]) >= 1, counts       # SO_PEERCRED refused every one of them


def test_same_user_peers_that_hold_drip_or_send_garbage_never_delay_a_beat(tmp_path: Path) -> None:
    run = tmp_path / "run"
    argv = launch_argv(run, torchrun(program("collect_healthy.py"), 2), quick_hang=False, host=HOST)
    with running_program(argv, env=job_env(COLLECT_SECONDS="60"), ready="READY", timeout=120) as proc:
        rdir = rank_dir(run, 0)
        name = json.loads((rdir / "worker.json").read_text())["control_socket"]
        peers = []
        for _ in range(5):                                   # held open, never a byte
            peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            peer.connect("\0" + name[1:])
            peers.append(peer)
        for _ in range(20):                                  # one connect-and-close after another
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
                peer.connect("\0" + name[1:])
        garbage = send_command(rdir, "\x00\xffnot a command", timeout=30)
        assert garbage["ok"] is False and "unknown command" in garbage["error"]
        first = _beat(rdir)
        dripper = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        dripper.connect("\0" + name[1:])
        dripper.settimeout(60)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            for _ in range(60):
                dripper.send(b"p")                           # a byte now and then, never a line
                time.sleep(0.2)
        assert dripper.recv(100) == b""                      # dropped at its deadline, no answer
        dripper.close()
        wait_for(lambda: _beat(rdir) >= first + 3, 30, "heartbeats while peers hold the socket")
        assert ping(rdir, timeout=30)
        for peer in peers:
            peer.close()
        kill_tree(proc.pid)


def _beat(rdir: Path) -> int:
    try:
        return int(json.loads((rdir / "heartbeat.json").read_text())["beat"])
    except (OSError, ValueError, KeyError):
        return -1


def test_a_squatted_name_moves_the_socket_and_is_recorded(tmp_path: Path) -> None:
    state = _State(0, str(tmp_path), "h")
    wanted = f"triage/test-squat/h/0/{os.getpid()}"
    state.control_name = wanted
    squatter = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    squatter.bind("\0" + wanted)
    squatter.listen(1)
    try:
        server = ControlThread(state)
        assert server.sock is not None
        assert state.control_name.startswith(wanted + "/") and state.control_squatted == "@" + wanted
        server.start()
        result = request_dump("@" + state.control_name, tmp_path / "dump", timeout=30)
        assert result.ok, result
        assert result.files["stacks.txt"].status == "ok"
        assert result.files["fr.pickle"].status == "skipped"
        assert "test_socket_flood" in (tmp_path / "dump" / "stacks.txt").read_text()
        reply = send_command("@" + state.control_name, f"dump {tmp_path / 'dump2'}", timeout=30)
        assert reply["control_socket_squatted"] == "@" + wanted
        # the bundle says so: the fr collector's record names the squatted name
        paths = RankPaths(tmp_path / "rank")
        paths.root.mkdir()
        paths.worker.write_text(json.dumps({"pid": os.getpid(), "control_socket": "@" + state.control_name,
                                            "control_socket_squatted": "@" + wanted}))
        bundle = tmp_path / "bundle"
        records = collect_worker(Target(0, os.getpid(), paths=paths), bundle / "rank-0", bundle, CollectSettings())
        fr = next(r for r in records if r.name == "fr")
        assert wanted in (fr.hint or ""), fr     # (no fr.json: torch.distributed is not in use here)
    finally:
        squatter.close()


def test_a_peer_gone_before_its_answer_never_kills_a_rank_with_default_sigpipe(tmp_path: Path) -> None:
    argv = [sys.executable, str(REPO / "tests" / "programs" / "control_sigpipe.py"), str(tmp_path)]
    with running_program(argv, ready="READY", timeout=60) as proc:
        name = proc.pre_ready_output[0].decode().strip()  # type: ignore[attr-defined]
        for i in range(200):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
                peer.connect("\0" + name[1:])
                peer.sendall(f"dump {tmp_path / 'd' / str(i % 4)}\n".encode())
        assert ping(name, timeout=30)
        assert proc.poll() is None, proc.returncode           # -13: killed by SIGPIPE
        kill_tree(proc.pid)
