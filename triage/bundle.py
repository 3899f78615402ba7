"""The node bundle: our one contract between collectors and analysis.

A node bundle is a directory ``<run>/<host>/bundles/<bundle-id>/`` holding a ``manifest.json``
plus the raw outputs of each collector, exactly as the tools printed them::

    manifest.json
    node/dmesg.txt  node/dmesg-relevant.txt  node/facts.json  node/nvidia-smi.txt
    rank-<r>/pyspy.json  rank-<r>/pyspy.txt  rank-<r>/gdb.txt  rank-<r>/strace.txt
    rank-<r>/fr.json  rank-<r>/fr.pickle  rank-<r>/stacks.txt  rank-<r>/proc.json
    rank-<r>/fr-torch-dump.*   (dumps PyTorch wrote itself, copied as they were)

The file names are ``triage.layout.BundlePaths``'s, for writers and readers alike.
Collectors write bundles; analysis and reporters only read them. A failed, missing, denied or
timed-out collector is recorded in the manifest (status, error, hint) and never stops the rest.
Schema ``triage.bundle/1``; readers must ignore unknown keys.
"""

from __future__ import annotations

import enum
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from triage.layout import BundlePaths
from triage.private_files import make_private_dir, read_json, write_json_atomic
from triage.schemas import BUNDLE_SCHEMA


class CollectorStatus(str, enum.Enum):
    OK = "ok"                # ran and wrote its output
    PARTIAL = "partial"      # ran, but output was truncated at the size bound or was incomplete
    FAILED = "failed"        # ran and failed (see error)
    MISSING = "missing"      # the tool is not installed / not on PATH
    DENIED = "denied"        # the kernel refused (ptrace) or a permission was missing
    TIMEOUT = "timeout"      # killed at its time bound
    SKIPPED = "skipped"      # not asked for, or not applicable (e.g. process already gone)


class Trigger(str, enum.Enum):
    HANG = "hang"
    CRASH = "crash"
    MANUAL = "manual"        # `triage dump`, SIGUSR1
    REMOTE = "remote"        # another node detected a hang / `triage collect`
    EXIT = "exit"            # normal end of the job


@dataclass(frozen=True)
class CollectorRecord:
    name: str                        # "pyspy", "gdb", "strace", "fr", "stacks", "proc", "dmesg", ...
    status: CollectorStatus
    rank: int | None = None          # None for node-wide collectors
    pid: int | None = None
    duration_s: float = 0.0
    files: tuple[str, ...] = ()      # paths relative to the bundle dir
    error: str | None = None
    hint: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status.value
        data["files"] = list(self.files)
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> CollectorRecord:
        return CollectorRecord(
            name=str(data["name"]),
            status=CollectorStatus(data["status"]),
            rank=data.get("rank"),
            pid=data.get("pid"),
            duration_s=float(data.get("duration_s", 0.0)),
            files=tuple(data.get("files", ())),
            error=data.get("error"),
            hint=data.get("hint"),
        )


@dataclass(frozen=True)
class BundleRank:
    rank: int
    pid: int | None
    local_rank: int | None = None
    alive: bool | None = None


@dataclass(frozen=True)
class Manifest:
    job_id: str
    host: str
    trigger: Trigger
    created: float                         # unix time the bundle was started
    ranks: tuple[BundleRank, ...] = ()
    collectors: tuple[CollectorRecord, ...] = ()
    reason: str = ""                       # one line: why this bundle was taken
    finished: float | None = None          # unix time the bundle was completed
    extra: dict[str, Any] = field(default_factory=dict)
    schema: str = BUNDLE_SCHEMA

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "job_id": self.job_id,
            "host": self.host,
            "trigger": self.trigger.value,
            "reason": self.reason,
            "created": self.created,
            "finished": self.finished,
            "ranks": [asdict(r) for r in self.ranks],
            "collectors": [c.to_json() for c in self.collectors],
            "extra": self.extra,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> Manifest:
        schema = str(data.get("schema", ""))
        if not schema.startswith("triage.bundle/"):
            raise ValueError(f"not a triage bundle manifest (schema {schema!r})")
        return Manifest(
            schema=schema,
            job_id=str(data.get("job_id", "")),
            host=str(data.get("host", "")),
            trigger=Trigger(data.get("trigger", "manual")),
            reason=str(data.get("reason", "")),
            created=float(data.get("created", 0.0)),
            finished=data.get("finished"),
            ranks=tuple(
                BundleRank(rank=int(r["rank"]), pid=r.get("pid"), local_rank=r.get("local_rank"),
                           alive=r.get("alive"))
                for r in data.get("ranks", ())
            ),
            collectors=tuple(CollectorRecord.from_json(c) for c in data.get("collectors", ())),
            extra=dict(data.get("extra", {})),
        )


def new_bundle_id(trigger: Trigger, now: float | None = None) -> str:
    """Sortable by time: ``20261122T001530.123-hang``."""
    moment = time.time() if now is None else now
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(moment))
    return f"{stamp}.{int((moment % 1) * 1000):03d}-{trigger.value}"


def create_bundle_dir(bundles_dir: Path, trigger: Trigger, now: float | None = None) -> Path:
    base = bundles_dir / new_bundle_id(trigger, now)
    path = base
    suffix = 1
    while path.exists():
        path = base.with_name(f"{base.name}-{suffix}")
        suffix += 1
    return make_private_dir(path)


def write_manifest(bundle: Path, manifest: Manifest) -> None:
    write_json_atomic(BundlePaths(bundle).manifest, manifest.to_json())


def read_manifest(bundle: Path) -> Manifest:
    return Manifest.from_json(read_json(BundlePaths(bundle).manifest))
