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
    <host>/bundles/<bundle-id>/       node bundles (see triage.bundle; their files: BundlePaths)
    <host>/dump-requests/<id>.json    cross-process dump triggers (``triage dump``)
    <host>/stop.json                  ``triage.stop/1``: the agent's decision to stop the job (time,
                                      host, reason, the verdict it printed, the planned stop time)

Everything is created owner-only (dirs 0700, files 0600: triage.private_files).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from triage.rank_names import MAX_RANK as MAX_RANK  # noqa: PLC0414 (the rank names: their own module, re-exported)
from triage.rank_names import is_rank_name as is_rank_name  # noqa: PLC0414


def short_hostname() -> str:
    # lazy: only the agent and the collectors ask; `triage report LOG` starts without it
    import socket

    return socket.gethostname().split(".")[0]


@dataclass(frozen=True)
class RankPaths:
    """The files of one rank in a run directory."""
    root: Path
    # file names that readers match evidence paths against
    WORKER: ClassVar[str] = "worker.json"
    EXIT: ClassVar[str] = "exit.json"
    NUMERICS: ClassVar[str] = "numerics.json"   # the first NaN/Inf (the worker's numerics_record keeps a copy)
    HEARTBEAT: ClassVar[str] = "heartbeat.json"
    FAULTHANDLER: ClassVar[str] = "faulthandler.log"
    FR_EXIT: ClassVar[str] = "fr-exit.json"

    @property
    def worker(self) -> Path:
        return self.root / self.WORKER

    @property
    def heartbeat(self) -> Path:
        return self.root / self.HEARTBEAT

    @property
    def output(self) -> Path:
        return self.root / "output.log"

    @property
    def faulthandler(self) -> Path:
        return self.root / self.FAULTHANDLER

    @property
    def nccl(self) -> Path:
        return self.root / "nccl.log"

    @property
    def fr_exit(self) -> Path:
        return self.root / self.FR_EXIT

    @property
    def exit(self) -> Path:
        return self.root / self.EXIT

    @property
    def numerics(self) -> Path:
        return self.root / self.NUMERICS


@dataclass(frozen=True)
class BundleRankPaths:
    """One rank's files in a node bundle (``rank-<r>/``), or one core's of no known rank (``core-<pid>/``)."""

    root: Path
    # what the in-worker agent writes on a dump request (it imports nothing of triage: same names there)
    WORKER_DUMP_FILES: ClassVar[tuple[str, ...]] = ("fr.json", "fr.pickle", "stacks.txt")
    PYSPY_JSON: ClassVar[str] = "pyspy.json"
    STACKS: ClassVar[str] = "stacks.txt"
    # the files a rank's Python stacks are read from: py-spy's, or the in-worker agent's dump
    STACK_DUMPS: ClassVar[tuple[str, ...]] = (PYSPY_JSON, STACKS)

    @property
    def fr_json(self) -> Path:
        return self.root / "fr.json"

    @property
    def fr_pickle(self) -> Path:
        return self.root / "fr.pickle"

    @property
    def stacks(self) -> Path:
        return self.root / self.STACKS

    @property
    def pyspy_json(self) -> Path:
        return self.root / self.PYSPY_JSON

    @property
    def pyspy_txt(self) -> Path:
        return self.root / "pyspy.txt"

    def child_pyspy(self, pid: int) -> Path:
        return self.root / "children" / f"pyspy-{pid}.txt"

    @property
    def gdb(self) -> Path:
        return self.root / "gdb.txt"

    @property
    def strace(self) -> Path:
        return self.root / "strace.txt"

    @property
    def proc(self) -> Path:
        return self.root / "proc.json"

    @property
    def pystack(self) -> Path:
        return self.root / "pystack.json"

    @property
    def core_info(self) -> Path:
        return self.root / "core.json"

    @property
    def gdb_core(self) -> Path:
        return self.root / "gdb-core.txt"

    def torch_fr_dump(self, index: int, json_format: bool) -> Path:
        """A Flight Recorder dump PyTorch wrote itself, copied as it was."""
        return self.root / (f"fr-torch-dump.{index}" + (".json" if json_format else ""))


@dataclass(frozen=True)
class BundleNodePaths:
    """The node's files in a node bundle (``node/``)."""

    root: Path

    @property
    def dmesg(self) -> Path:
        return self.root / "dmesg.txt"

    @property
    def dmesg_relevant(self) -> Path:
        return self.root / "dmesg-relevant.txt"

    @property
    def dmesg_events(self) -> Path:
        return self.root / "dmesg-events.json"

    @property
    def facts(self) -> Path:
        return self.root / "facts.json"

    @property
    def nvidia_smi(self) -> Path:
        return self.root / "nvidia-smi.txt"

    @property
    def gpus(self) -> Path:
        """Each GPU's facts (NVML, else ``nvidia-smi -q -x``), or why there are none."""
        return self.root / "gpus.json"

    @property
    def nvidia_smi_xml(self) -> Path:
        return self.root / "nvidia-smi-q.xml"


@dataclass(frozen=True)
class BundlePaths:
    """A node bundle's files (schema ``triage.bundle/1``, see triage.bundle): what collectors write
    and loaders read, named in this one place."""

    root: Path

    @property
    def manifest(self) -> Path:
        return self.root / "manifest.json"

    def is_bundle(self) -> bool:
        return self.manifest.is_file()

    def looks_like_bundle(self) -> bool:
        """A bundle, or one whose manifest.json is gone (a copy cut short): its node/ and rank-N/ folders."""
        if self.is_bundle():
            return True
        try:
            return (self.root / "node").is_dir() and any(
                p.name.startswith("rank-") and p.name[5:].isdigit() and p.is_dir() for p in self.root.iterdir())
        except OSError:
            return False

    @property
    def node(self) -> BundleNodePaths:
        return BundleNodePaths(self.root / "node")

    def rank(self, rank: int) -> BundleRankPaths:
        return BundleRankPaths(self.root / f"rank-{rank}")

    def core(self, pid: int | None) -> BundleRankPaths:
        """The files of a core whose process is no known rank."""
        return BundleRankPaths(self.root / f"core-{pid if pid is not None else 'unknown'}")

    def core_infos(self) -> list[Path]:
        """Every ``core.json`` the core collector left (rank and core directories alike)."""
        return sorted(self.root.glob("*/core.json"))

    def relative(self, path: Path) -> str:
        """``path`` as the manifest lists it (relative to the bundle)."""
        return str(path.relative_to(self.root))


@dataclass(frozen=True)
class StragglerPaths:
    """The live straggler watch's files (``<host>/stragglers/``): warnings, py-spy recordings, the
    ranks' Flight Recorder as last fetched, and what the watch did."""

    root: Path

    @property
    def warnings(self) -> Path:
        return self.root / "warnings.jsonl"

    @property
    def summary(self) -> Path:
        return self.root / "watch.json"

    def live_fr(self, rank: int) -> Path:
        return self.root / "fr" / f"rank-{rank}" / "fr.json"

    def live_fr_ranks(self) -> list[int]:
        """The ranks whose fetched Flight Recorder is here."""
        found = (path.parent.name.removeprefix("rank-") for path in (self.root / "fr").glob("rank-*/fr.json"))
        return sorted(int(rank) for rank in found if is_rank_name(rank))

    def sample(self, rank: int, stamp: str) -> Path:
        """A py-spy recording of a straggler (``stamp``: when, e.g. 20261123T101500Z)."""
        return self.root / f"rank-{rank}-{stamp}.pyspy.txt"


@dataclass(frozen=True)
class HostPaths:
    """The files of one host in a run directory."""
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

    @property
    def stop(self) -> Path:
        """The stop decision of this host's agent (``triage.stop/1``), when it stopped the job."""
        return self.root / "stop.json"

    @property
    def stragglers(self) -> StragglerPaths:
        return StragglerPaths(self.root / "stragglers")

    def live_fr(self, rank: int) -> Path:
        """The rank's Flight Recorder as the straggler watch last fetched it while the job ran."""
        return self.stragglers.live_fr(rank)

    def rank(self, rank: int) -> RankPaths:
        return RankPaths(self.ranks_dir / str(rank))

    def ranks(self) -> list[int]:
        if not self.ranks_dir.is_dir():
            return []
        return sorted(int(p.name) for p in self.ranks_dir.iterdir() if is_rank_name(p.name))

    def bundles(self) -> list[Path]:
        """Bundle directories, oldest first (bundle ids sort by time)."""
        if not self.bundles_dir.is_dir():
            return []
        return sorted(p for p in self.bundles_dir.iterdir() if BundlePaths(p).is_bundle())


@dataclass(frozen=True)
class CheckPaths:
    """A ``triage check`` directory (``--check-dir``, or ``check/`` of a run directory): written by the
    check's ranks (triage.check.worker, which imports nothing of triage and uses the same names, held
    equal by a test) and nodes, read by the check's lead and by ``triage report`` of the run directory."""

    root: Path
    RANK_GLOB: ClassVar[str] = "rank-*.json"

    @property
    def verdict(self) -> Path:
        return self.root / "verdict.json"

    @property
    def nodes_dir(self) -> Path:
        return self.root / "nodes"

    def node(self, host: str, pid: int) -> Path:
        return self.nodes_dir / f"{host}-{pid}.json"

    @property
    def ranks_dir(self) -> Path:
        return self.root / "ranks"

    def rank(self, rank: int) -> Path:
        return self.ranks_dir / f"rank-{rank}.json"


@dataclass(frozen=True)
class RunPaths:
    """The files of a run directory."""
    root: Path

    @property
    def run_json(self) -> Path:
        return self.root / "run.json"

    @property
    def collect_json(self) -> Path:
        """`triage collect`'s record of what each node gave (triage.remote.collect)."""
        return self.root / "collect.json"

    def host(self, host: str) -> HostPaths:
        return HostPaths(self.root / host)

    @property
    def end_report(self) -> Path:
        """Which node's agent printed the report of a job that failed on several nodes, and its verdict
        (``triage.end_report/1``; triage.agent.launch.end_report): the other nodes point to it."""
        return self.root / "end_report.json"

    @property
    def check(self) -> CheckPaths:
        """Where ``triage check --run-dir`` puts its check directory."""
        return CheckPaths(self.root / "check")

    def hosts(self) -> list[HostPaths]:
        if not self.root.is_dir():
            return []
        return [HostPaths(p) for p in sorted(self.root.iterdir()) if p.is_dir() and not p.name.startswith(".")]

    def is_run_dir(self) -> bool:
        return self.run_json.is_file()
