"""``triage postmortem``: collect (gdb on each core, into bundles), then report through the analysis
layer (:func:`triage.analysis.analyze.analyze_crashes`, what ``analyze()`` runs on crashes-only
Evidence), which classifies each core once.

Used by the CLI and by ``triage launch``/``triage report`` when a rank died by a signal and
left a core. Never raises for bad cores: each problem becomes a one-line entry in ``problems``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from triage.analysis.analyze import analyze_crashes
from triage.analysis.crash import CrashClassification
from triage.bundle import (
    CollectorRecord,
    CollectorStatus,
    Manifest,
    Trigger,
    create_bundle_dir,
    write_manifest,
)
from triage.collectors.core import collect_core, core_paths
from triage.collectors.gdbrun import DEFAULT_TIMEOUT_S
from triage.layout import BundleRankPaths, RunPaths, short_hostname
from triage.load.cores import read_core_output
from triage.load.crash_records import core_record, logs_record
from triage.model import Report
from triage.model.evidence import CrashRecord, Evidence, KernelEvent
from triage.parsing.elfcore import CoreFormatError, read_core_notes
from triage.parsing.pyframes import describe as describe_pyframe
from triage.parsing.pyframes import parse_pyframes
from triage.postmortem.context import (
    RankFiles,
    boot_time,
    kernel_events,
    rank_for_pid,
    rank_logs,
    read_dmesg,
    run_dir_ranks,
)
from triage.private_files import make_private_dir


@dataclass
class PostmortemResult:
    report: Report
    classifications: list[CrashClassification]
    bad_inputs: list[str] = field(default_factory=list)     # cores that could not be used at all
    warnings: list[str] = field(default_factory=list)       # degraded but analysed
    gdb_missing: bool = False
    bundles: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Job:
    core: Path
    rank: RankFiles | None
    bundle: Path


def _check_readable(core: Path) -> str | None:
    if not core.exists():
        return f"{core}: no such file"
    if core.is_dir():
        return f"{core}: is a directory, not a core file"
    if not core.is_file():
        return f"{core}: not a regular file (a FIFO or device?): give a core file"
    if not os.access(core, os.R_OK):
        return f"{core}: not readable (permission denied)"
    return None


def _bundle_for(run_dir: Path | None, host: str | None, scratch: Path, made: dict[str, Path]) -> Path:
    key = host or ""
    if key not in made:
        if run_dir is not None and host:
            made[key] = create_bundle_dir(RunPaths(run_dir).host(host).bundles_dir, Trigger.CRASH)
        else:
            made[key] = scratch
    return made[key]


def _write_manifests(made: dict[str, Path], jobs: list[_Job], records: list[CollectorRecord],
                     run_dir: Path | None, started: float) -> None:
    """Every bundle the cores went to is a real node bundle: the run's crash bundles, and the scratch
    (or --keep) one of cores of no known rank, on this host."""
    for host, bundle in made.items():
        chosen = [r for j, r in zip(jobs, records) if j.bundle == bundle]
        write_manifest(bundle, Manifest(job_id=run_dir.name if run_dir is not None else "postmortem",
                                        host=host or short_hostname(), trigger=Trigger.CRASH, created=started,
                                        collectors=tuple(chosen), reason="triage postmortem on core files",
                                        finished=time.time()))


def run_postmortem(cores: list[Path], *, exe: str | None = None, run_dir: Path | None = None,
                   timeout: float = DEFAULT_TIMEOUT_S, keep: Path | None = None,
                   dmesg_text: str | None = None) -> PostmortemResult:
    started = time.time()
    ranks = run_dir_ranks(run_dir) if run_dir is not None else []
    bad: list[str] = []
    warnings: list[str] = []
    text, dmesg_problem = (dmesg_text, None) if dmesg_text is not None else read_dmesg()
    if dmesg_problem:
        warnings.append(dmesg_problem)
    events: tuple[KernelEvent, ...] = kernel_events(text or "", boot_time())
    scratch = Path(tempfile.mkdtemp(prefix="triage-postmortem-")) if keep is None else make_private_dir(keep)
    made: dict[str, Path] = {}
    jobs: list[_Job] = []
    try:
        for core in (c.absolute() for c in cores):
            problem = _check_readable(core)
            if problem:
                bad.append(problem)
                continue
            try:
                pid = read_core_notes(core).pid
            except CoreFormatError as error:
                bad.append(f"{core}: {error}")
                continue
            rank = rank_for_pid(ranks, pid)
            if run_dir is not None and rank is None:
                warnings.append(f"{core}: pid {pid} is not a rank of the run directory {run_dir}")
            jobs.append(_Job(core, rank, _bundle_for(run_dir, rank.host if rank else None, scratch, made)))
        with ThreadPoolExecutor(max_workers=2) as pool:
            records = list(pool.map(
                lambda j: _collect(j, exe, timeout), jobs))
        _write_manifests(made, jobs, records, run_dir, started)
        return _analyse(jobs, records, ranks, events, bad, warnings, cores, list(made.values()))
    finally:
        if keep is None:
            shutil.rmtree(scratch, ignore_errors=True)


def _collect(job: _Job, exe: str | None, timeout: float) -> CollectorRecord:
    return collect_core(job.core, job.bundle, rank=job.rank.rank if job.rank else None, exe=exe, timeout=timeout)


def _analyse(jobs: list[_Job], records: list[CollectorRecord], ranks: list[RankFiles],
             events: tuple[KernelEvent, ...], bad: list[str], warnings: list[str], cores: list[Path],
             bundles: list[Path]) -> PostmortemResult:
    """The cores' bundles and the run's rank logs as Evidence, reported through analyze()."""
    gdb_missing = False
    crashes: list[CrashRecord] = []
    with_core: set[tuple[str, int]] = set()
    places: list[tuple[int, Path]] = []     # where each core's "non-Python program" warning goes
    for job, record in zip(jobs, records):
        if record.status is CollectorStatus.MISSING:
            gdb_missing = True
        if record.status in (CollectorStatus.FAILED, CollectorStatus.TIMEOUT) and record.error:
            (bad if record.status is CollectorStatus.FAILED else warnings).append(record.error)
        out = core_paths(job.bundle, job.rank.rank if job.rank else None, record.pid)
        output = read_core_output(out.root)
        if output is None or not output.info.get("notes"):
            continue
        warnings += [str(p) for p in output.info.get("problems") or ()]
        warnings += [f"{job.core}: {n}" for n in output.info.get("executable_notes") or ()]
        notes = ("gdb is not installed: only the core's own notes were read",) if gdb_missing else ()
        crashes.append(core_record(output, job.rank.rank if job.rank else output.info.get("rank"),
                                   job.rank.host if job.rank else output.host,
                                   logs=rank_logs(job.rank) if job.rank else None,
                                   pystack_frames=_pystack_frames(output.info, out), notes=notes))
        places.append((len(warnings), job.core))
        if job.rank is not None:
            with_core.add((job.rank.host, job.rank.rank))
    crashes += [logs_record(rank_logs(rank))
                for rank in ranks if (rank.host, rank.rank) not in with_core]
    evidence = Evidence(crashes=tuple(crashes), kernel_events=events, sources=tuple(str(c) for c in cores),
                        skipped=tuple(bad), crashes_only=True)
    report, found = analyze_crashes(evidence)
    for crash, (at, core) in reversed(list(zip(crashes, places))):
        if any(crash is r for r in found.not_python) and crash.core is not None:
            program = (crash.core.info.get("notes") or {}).get("executable") or "?"
            warnings.insert(at, f"{core}: core of a non-Python program ({program}): C/C++ frames only")
    if gdb_missing:
        warnings.append("gdb is not on PATH: the report comes from the cores' notes only "
                        "(install gdb for backtraces)")
    return PostmortemResult(report, list(found.classifications), bad, list(dict.fromkeys(warnings)),
                            gdb_missing, [str(b) for b in bundles])


def _pystack_frames(info: Mapping[str, Any], out: BundleRankPaths) -> tuple[str, ...]:
    """The faulting thread's Python frames as pystack read them from the core (none: no pystack.json)."""
    try:
        text = out.pystack.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    faulting = ((info.get("notes") or {}).get("thread_ids") or [None])[0]
    frames = parse_pyframes(text).frames_for(faulting if isinstance(faulting, int) else None)
    return tuple(describe_pyframe(f) for f in frames[:8])
