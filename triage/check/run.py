"""One node's part of `triage check`: probe the master port, run the launcher, wait, decide.

Every node runs this (``srun triage check -- torchrun ...`` or one ``triage check`` per node).
The lead node (node rank 0, or the node that holds the master address) waits for every
expected rank, writes ``verdict.json`` and prints the verdict; the other nodes stop when the
verdict appears and print it too. Nothing runs past the deadline: the launcher is stopped
(SIGTERM, then SIGKILL to its process group) before it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from triage.check.launcher import Expected, Launch
from triage.check.results import CheckData, load_check, node_path, read_verdict, write_verdict
from triage.check.verdict import Verdict, decide, verdict_json
from triage.check.worker import describe_error
from triage.errors import InputError
from triage.layout import CheckPaths, short_hostname
from triage.private_files import make_private_dir, write_json_atomic

POLL = 0.25
PROBE_TIMEOUT = 2.0
LAUNCHER_EXIT_WAIT = 3.0  # after the verdict, how long the launcher may take to exit by itself
EXIT_GRACE = 5.0          # after the local launcher exits, how long to wait for other nodes' results


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    check_dir: Path
    lead: bool
    from_lead: dict[str, Any] | None      # the lead's verdict.json, as a follower saw it


def route_interface(address: str, port: int) -> tuple[str | None, str | None]:
    """(local address, interface) the kernel would use to reach ``address`` (no packet is sent)."""
    import psutil

    try:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        with socket.socket(family, socket.SOCK_DGRAM) as sock:
            sock.connect((address, port))
            local = str(sock.getsockname()[0])
    except OSError:
        return None, None
    for name, addrs in psutil.net_if_addrs().items():
        if any(a.address == local for a in addrs):
            return local, str(name)
    return local, None


def is_local_address(host: str) -> bool:
    import psutil

    try:
        resolved = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    if any(a.startswith("127.") or a == "::1" for a in resolved):
        return True
    mine = {a.address for addrs in psutil.net_if_addrs().values() for a in addrs}
    return bool(resolved & mine)


class MasterProbe:
    """Keeps trying a TCP connection to the master endpoint until one works or it is stopped."""

    def __init__(self, host: str, port: int, node: NodeRecord) -> None:
        self.host, self.port, self.node = host, port, node
        self.stop = threading.Event()
        self.state: dict[str, Any] = {"target": f"{host}:{port}", "attempts": 0, "reached": None}
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        began = time.time()
        while not self.stop.is_set():
            attempt = time.time()
            try:
                address = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)[0][4][0]
                local, interface = route_interface(str(address), self.port)
                self.state.update(resolved=str(address), local_address=local, interface=interface)
                with socket.create_connection((str(address), self.port), timeout=PROBE_TIMEOUT):
                    pass
            except OSError as error:
                self.state.update(attempts=self.state["attempts"] + 1, reached=False, error=describe_error(error),
                                  first_attempt_at=self.state.get("first_attempt_at", began), last_attempt_at=attempt,
                                  failing_s=round(time.time() - began, 3))
                self.node.save()
                self.stop.wait(max(0.0, 0.5 - (time.time() - attempt)))
                continue
            self.state.update(attempts=self.state["attempts"] + 1, reached=True, reached_at=time.time(),
                              seconds=round(time.time() - attempt, 4), error=None)
            self.node.save()
            return


class NodeRecord:
    """This node's nodes/<host>-<pid>.json."""

    def __init__(self, check_dir: Path, launch: Launch, lead: bool, timeout: float) -> None:
        self.path = node_path(check_dir, short_hostname(), os.getpid())
        self.lock = threading.Lock()
        self.probe: MasterProbe | None = None
        self.data: dict[str, Any] = {
            "host": short_hostname(), "pid": os.getpid(), "node_rank": launch.expected.node_rank, "lead": lead,
            "launcher": launch.argv, "timeout": timeout, "started": time.time(), "launcher_exit": None,
            "launcher_stopped": None, "finished": False,
        }

    def save(self) -> None:
        with self.lock:
            if self.probe is not None:
                self.data["probe"] = dict(self.probe.state)
            write_json_atomic(self.path, self.data)


def _stop_group(proc: subprocess.Popen[bytes], grace: float) -> None:
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(wait)


def _log_tail(path: Path, limit: int = 300) -> str:
    with contextlib.suppress(OSError):
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 4096))
            lines = [ln.strip() for ln in handle.read().decode("utf-8", "replace").splitlines() if ln.strip()]
        errors = [ln for ln in lines if "error" in ln.lower()] or lines
        return errors[-1][-limit:] if errors else ""
    return ""


def _complete(data: CheckData, world: int | None) -> bool:
    if world is None or len(data.ranks) < world:
        return False
    return all(r.get("finished") for r in data.ranks.values())


def _unreachable_settled(data: CheckData, settle: float) -> bool:
    """A node has failed to connect for ``settle`` seconds while the master port was already open."""
    opened = [n["probe"]["reached_at"] for n in data.nodes
              if (n.get("probe") or {}).get("reached") and n["probe"].get("reached_at")]
    if not opened:
        return False
    for node in data.nodes:
        probe = node.get("probe") or {}
        if probe.get("reached") is False and float(probe.get("last_attempt_at", 0)) - min(opened) >= settle \
                and float(probe.get("failing_s", 0)) >= settle:
            return True
    return False


def _stop_on_sigterm() -> Any:
    """SIGTERM (scancel, a parent stopping us) ends the check like Ctrl-C: the launcher is stopped too."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, interrupt)


def run_check(launch: Launch, check_dir: Path, timeout: float, lead: bool) -> Outcome:
    started = time.time()
    deadline = started + timeout
    margin = min(5.0, max(1.5, timeout * 0.1))
    node = NodeRecord(check_dir, launch, lead, timeout)
    expected = asdict(launch.expected)
    world = launch.expected.world_size
    if launch.expected.master_host and launch.expected.master_port:
        node.probe = MasterProbe(launch.expected.master_host, launch.expected.master_port, node)
        node.probe.thread.start()
    node.save()
    log_path = node.path.with_suffix(".log")
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(launch.command(check_dir, deadline - margin), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    node.data.update(launcher_pid=proc.pid, log=str(log_path))
    node.save()
    exited_at: float | None = None
    from_lead: dict[str, Any] | None = None
    previous = _stop_on_sigterm()
    settle = min(6.0, max(3.0, timeout / 4))   # two or more probe attempts after the master port opened
    interrupted = False
    try:
        while time.time() < deadline - 1.0:
            if proc.poll() is not None and exited_at is None:
                exited_at = time.time()
                node.data["launcher_exit"] = proc.returncode
                node.save()
            if lead:
                data = load_check(check_dir, expected)
                if _complete(data, world) or _unreachable_settled(data, settle):
                    break
                if exited_at is not None and (time.time() - exited_at >= EXIT_GRACE or world is None):
                    break
            else:
                from_lead = read_verdict(check_dir)
                if from_lead is not None or (exited_at is not None and time.time() - exited_at >= 2 * EXIT_GRACE):
                    break
            time.sleep(POLL)
    except KeyboardInterrupt:
        interrupted = True      # no verdict.json: an interrupted check says nothing about the cluster
        raise
    finally:
        verdict: Verdict | None = None
        if lead and not interrupted:     # the verdict first: stopping the launcher can wait
            verdict = decide(load_check(check_dir, expected))
            write_verdict(check_dir, {**verdict_json(verdict), "created": time.time(), "lead": node.data["host"]})
        healthy = verdict.ok if verdict is not None else bool(from_lead and from_lead.get("status") == "ok")
        with contextlib.suppress(subprocess.TimeoutExpired):   # a healthy launcher ends by itself
            proc.wait(max(0.0, min(LAUNCHER_EXIT_WAIT if healthy else 0.2, deadline - time.time() - 1.0)))
        if proc.poll() is None:
            node.data["launcher_stopped"] = "deadline" if time.time() >= deadline - 1.5 else "verdict"
            _stop_group(proc, grace=min(2.0, max(0.2, deadline - time.time() - 0.5)))
        if node.probe is not None:
            node.probe.stop.set()
        node.data.update(launcher_exit=proc.returncode, finished=True, ended=time.time(),
                         launcher_tail=_log_tail(log_path))
        node.save()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    if verdict is None:
        verdict = decide(load_check(check_dir, expected))
    return Outcome(verdict=verdict, check_dir=check_dir, lead=lead, from_lead=from_lead)


def is_lead(expected: Expected) -> bool:
    """This node decides the verdict: it is node rank 0 (torchrun's --node-rank, SLURM's node id), the
    only node, or the one the master address names."""
    if expected.node_rank is not None:
        return expected.node_rank == 0
    if expected.slurm_node_id is not None:
        return expected.slurm_node_id == 0
    if expected.standalone or expected.nnodes in (None, 1) or not expected.master_host:
        return True
    return is_local_address(expected.master_host)


def check_node(launch: Launch, check_dir: Path, timeout: float) -> Outcome:
    """`triage check` on this node, into a new private check directory (the lead node decides)."""
    if CheckPaths(check_dir).verdict.exists():
        raise InputError(f"{check_dir}: holds the verdict of an earlier check",
                         hint="give a new --check-dir (every check needs an empty one)")
    make_private_dir(check_dir)
    return run_check(launch, check_dir, timeout, is_lead(launch.expected))
