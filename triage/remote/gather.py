"""The login-node half of `triage collect`: run the node side on every node, bring bundles back.

Two transports, one shape: a function ``node -> NodeOutcome`` handed to :func:`fan_out`.

- SLURM: ``srun --jobid J --overlap -N1 -n1 -w NODE -- triage collect --node-side ...`` (argv, no
  shell); the bundle comes back as a tar on srun's stdout, or is read from the shared run dir.
- SSH: paramiko with strict host keys; the same node-side command, quoted once with shlex.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from triage.errors import RemoteError
from triage.layout import BundlePaths
from triage.remote.fanout import NodeOutcome
from triage.remote.slurm import srun_argv
from triage.remote.ssh import SshOptions, connect, resolve, run_command
from triage.remote.transfer import MAX_STREAM_BYTES, unpack


@dataclass(frozen=True)
class GatherPlan:
    run_dir: Path                          # local run directory the bundles end up in
    remote_triage: tuple[str, ...]         # how to run triage on a node, e.g. ("triage",)
    node_args: tuple[str, ...]             # flags for `triage collect --node-side`
    timeout_s: float                       # per node, connection included
    shared: bool = False                   # read bundles from the shared run dir instead of streaming
    ssh: SshOptions = field(default_factory=SshOptions)

    def node_command(self) -> list[str]:
        stream = "--no-stream" if self.shared else "--stream"
        return [*self.remote_triage, "collect", "--node-side", stream, *self.node_args]


def _tail(data: bytes, limit: int = 300) -> str:
    lines = [line.strip() for line in data.decode(errors="replace").splitlines() if line.strip()]
    meaningful = [line for line in lines if "error" in line.lower()] or lines
    return (meaningful[-1] if meaningful else "no output")[:limit]


def _receive(plan: GatherPlan, node: str, status: int, out: bytes, err: bytes, started: float) -> NodeOutcome:
    if status != 0:
        raise RemoteError(f"{node}: node-side collection failed (exit {status}): {_tail(err or out)}")
    if plan.shared:
        try:
            info = json.loads(out.decode().strip().splitlines()[-1])
            bundle = Path(str(info["bundle"]))
        except (ValueError, KeyError, IndexError) as error:
            raise RemoteError(f"{node}: node side printed no bundle path: {_tail(out + err)}") from error
        if not BundlePaths(bundle).is_bundle():
            raise RemoteError(f"{node}: bundle {bundle} is not visible here: is the run directory really shared?")
        return NodeOutcome(node=node, bundle=bundle, duration_s=time.monotonic() - started, bytes_moved=len(out))
    bundle = unpack(out, plan.run_dir, label=node, node=node)
    return NodeOutcome(node=node, bundle=bundle, duration_s=time.monotonic() - started, bytes_moved=len(out))


MAX_STDERR_BYTES = 1 << 20


def bounded_communicate(proc: subprocess.Popen[bytes], timeout: float, limit: int,
                        label: str) -> tuple[bytes, bytes]:
    """Like ``communicate`` but the bound holds while reading: past ``limit`` bytes of stdout the
    process is killed and the node refused (stderr keeps its last MiB). TimeoutExpired as usual."""
    if not (proc.stdout is not None and proc.stderr is not None):
        raise RuntimeError("internal error: expected proc.stdout is not None and proc.stderr is not None")
    out, err = bytearray(), bytearray()
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ, out)
        selector.register(proc.stderr, selectors.EVENT_READ, err)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(proc.args, timeout)
            for key, _ in selector.select(min(left, 1.0)):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                key.data.extend(chunk)
                if key.data is err and len(err) > MAX_STDERR_BYTES:
                    del err[:-MAX_STDERR_BYTES]
                if key.data is out and len(out) > limit:
                    proc.kill()
                    proc.wait()
                    raise RemoteError(f"{label}: bundle stream larger than {limit} bytes: refused")
    proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    proc.stdout.close()
    proc.stderr.close()
    return bytes(out), bytes(err)


def srun_worker(plan: GatherPlan, job_id: str) -> Callable[[str], NodeOutcome]:
    srun = shutil.which("srun") or "srun"

    def work(node: str) -> NodeOutcome:
        started = time.monotonic()
        argv = srun_argv(job_id, node, plan.node_command())
        argv[0] = srun
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        try:
            out, err = bounded_communicate(proc, plan.timeout_s, MAX_STREAM_BYTES, node)
        except subprocess.TimeoutExpired:
            proc.terminate()          # srun forwards SIGTERM to the step and ends it
            try:
                proc.communicate(timeout=3)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
            raise RemoteError(f"{node}: no answer within {plan.timeout_s:.0f}s (srun step timed out)") from None
        return _receive(plan, node, proc.returncode, out, err, started)

    return work


def ssh_worker(plan: GatherPlan) -> Callable[[str], NodeOutcome]:
    def work(item: str) -> NodeOutcome:
        started = time.monotonic()
        target = resolve(item, plan.ssh)
        client = connect(target, plan.ssh)
        try:
            remaining = max(1.0, plan.timeout_s - (time.monotonic() - started))
            status, out, err = run_command(client, plan.node_command(), remaining, target.label)
        finally:
            client.close()
        return _receive(plan, item, status, out, err, started)

    return work
