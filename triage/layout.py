"""The run directory: a versioned on-disk layout shared by the agent, collectors and reports.

Layout ``triage.run/1`` (paths relative to the run directory)::

    run.json                          {"layout": "triage.run/1", "job_id", "created", ...}
    <host>/node.json                  the node agent: pid, launcher argv, start/end, exit code, status
    <host>/launcher.log               raw bytes the launcher itself (torchrun) wrote to stdout/stderr
    <host>/merged.log                 every rank's output, each line tagged ``[host:rank] ``
    <host>/ranks/<rank>/worker.json   written by the in-worker agent at start: rank, local_rank,
                                      world_size, pid, host, control socket, python, argv
    <host>/ranks/<rank>/heartbeat.json  rewritten (atomically) every heartbeat interval
    <host>/ranks/<rank>/output.log    every byte the rank wrote to fds 1 and 2, in order
    <host>/ranks/<rank>/faulthandler.log  Python stacks on fatal signals and SIGTERM
    <host>/ranks/<rank>/nccl.log      NCCL_DEBUG_FILE output (with --nccl-debug)
    <host>/ranks/<rank>/fr-exit.json  the rank's Flight Recorder, saved when it exits normally
    <host>/ranks/<rank>/exit.json     how the rank ended, as seen by the agent
    <host>/bundles/<bundle-id>/       node bundles (see triage.bundle)
    <host>/dump-requests/<id>.json    cross-process dump triggers (``triage dump``)

Everything is created owner-only (dirs 0700, files 0600).
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RUN_LAYOUT = "triage.run/1"
DIR_MODE = 0o700
FILE_MODE = 0o600


def short_hostname() -> str:
    return socket.gethostname().split(".")[0]


def make_private_dir(path: Path) -> Path:
    """Create ``path`` and any missing parents owner-only (0700; mkdir's parents=True would use the umask)."""
    missing = []
    probe = Path(path)
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for directory in reversed(missing):
        directory.mkdir(mode=DIR_MODE, exist_ok=True)
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    return path


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON so that readers see either the old or the new file, never half of one."""
    make_private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, sort_keys=True, default=str)
            handle.write("\n")
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


@dataclass(frozen=True)
class RankPaths:
    root: Path

    @property
    def worker(self) -> Path:
        return self.root / "worker.json"

    @property
    def heartbeat(self) -> Path:
        return self.root / "heartbeat.json"

    @property
    def output(self) -> Path:
        return self.root / "output.log"

    @property
    def faulthandler(self) -> Path:
        return self.root / "faulthandler.log"

    @property
    def nccl(self) -> Path:
        return self.root / "nccl.log"

    @property
    def fr_exit(self) -> Path:
        return self.root / "fr-exit.json"

    @property
    def exit(self) -> Path:
        return self.root / "exit.json"


@dataclass(frozen=True)
class HostPaths:
    root: Path

    @property
    def host(self) -> str:
        return self.root.name

    @property
    def node(self) -> Path:
        return self.root / "node.json"

    @property
    def launcher_log(self) -> Path:
        return self.root / "launcher.log"

    @property
    def merged_log(self) -> Path:
        return self.root / "merged.log"

    @property
    def ranks_dir(self) -> Path:
        return self.root / "ranks"

    @property
    def bundles_dir(self) -> Path:
        return self.root / "bundles"

    @property
    def dump_requests(self) -> Path:
        return self.root / "dump-requests"

    def rank(self, rank: int) -> RankPaths:
        return RankPaths(self.ranks_dir / str(rank))

    def ranks(self) -> list[int]:
        if not self.ranks_dir.is_dir():
            return []
        return sorted(int(p.name) for p in self.ranks_dir.iterdir() if p.name.isdigit())

    def bundles(self) -> list[Path]:
        """Bundle directories, oldest first (bundle ids sort by time)."""
        if not self.bundles_dir.is_dir():
            return []
        return sorted(p for p in self.bundles_dir.iterdir() if (p / "manifest.json").is_file())


@dataclass(frozen=True)
class RunPaths:
    root: Path

    @property
    def run_json(self) -> Path:
        return self.root / "run.json"

    def host(self, host: str) -> HostPaths:
        return HostPaths(self.root / host)

    def hosts(self) -> list[HostPaths]:
        if not self.root.is_dir():
            return []
        return [HostPaths(p) for p in sorted(self.root.iterdir()) if p.is_dir() and not p.name.startswith(".")]

    def is_run_dir(self) -> bool:
        return self.run_json.is_file()
