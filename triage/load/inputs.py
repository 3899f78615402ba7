"""Read inputs (run directory, Flight Recorder dump directory, log files) into Evidence.

All I/O lives here; ``triage.analysis.analyze`` is pure. Unreadable parts are skipped and
listed (``Evidence.skipped``); an input that cannot be used at all raises InputError.
"""

from __future__ import annotations

import mmap
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from triage.errors import InputError
from triage.load.fr_files import load_fr_dir, looks_like_fr_file, read_text
from triage.load.logs.endings import orphan_failures, unread_failures
from triage.load.logs.finish import scan_to_ranks
from triage.load.logs.large import LARGE_LOG_BYTES, scan_large_log
from triage.load.logs.scan import LogScan
from triage.load.logs.text import rank_from_name, scan_log_text
from triage.model.evidence import Event, Evidence, ExitInfo, ProseAccount, RankEvidence
from triage.parsing.crashlog import parse_crash_line
from triage.parsing.stack_words import stack_of_all
from triage.parsing.textclean import decoded
from triage.parsing.torchelastic import parse_error_file
from triage.rank_names import is_rank_name
from triage.regular_files import NOT_REGULAR, is_special_file, open_regular

if TYPE_CHECKING:
    from triage.load.log_tree import LogTree

MAX_STDIN_BYTES = 1 << 30
MAX_ERROR_FILE_BYTES = 16 << 20


def load_inputs(paths: list[str | Path], prefix: str | None = None) -> Evidence:
    """Evidence from every input; raises InputError (one line, naming the path) on unusable input."""
    if not paths:
        raise InputError("no input given", "pass a run directory, a Flight Recorder dump directory or log files")
    parts: list[Evidence] = []
    logs: list[Path] = []
    for raw in paths:
        if str(raw) == "-":
            parts.append(load_log_texts([("<stdin>", _read_stdin())]))
            continue
        path = Path(raw)
        if not path.exists():
            raise InputError(f"{path}: no such file or directory")
        if is_special_file(path):
            raise InputError(f"{path}: {NOT_REGULAR}", "save the log to a file, or pipe it in with `triage report -`")
        if path.is_dir():
            parts.append(_load_dir(path, prefix))
        elif looks_like_fr_file(path):
            parts.append(load_fr_dir(path.parent, prefix, only=[path]))
        elif (error := _error_file(path)) is not None:
            parts.append(error)
        else:
            logs.append(path)
    if logs:
        parts.append(load_logs(logs))
    return merge(parts, tuple(str(p) for p in paths))


def _load_dir(path: Path, prefix: str | None) -> Evidence:
    try:
        entries = [p for p in path.iterdir() if not p.name.startswith(".")]
    except OSError as exc:
        raise InputError(f"{path}: cannot list directory ({exc.strerror or exc})") from None
    if not entries:
        raise InputError(f"{path}: empty directory", "point at a run directory or a directory of FR dumps")
    # lazy: the run directory's loaders (bundles, stacks, agent records) and layout stay off a plain log's start-up path
    from triage.layout import BundlePaths
    from triage.load.run_dir import load_run_dir, looks_like_run_dir

    if looks_like_run_dir(path):
        return load_run_dir(path)
    if BundlePaths(path).looks_like_bundle():
        lost = "" if BundlePaths(path).is_bundle() else " (without its manifest.json)"
        raise InputError(f"{path}: is one node bundle{lost}; pass the run directory that holds it",
                         "triage report RUN_DIR (the directory with run.json and one folder per host)")
    files = [p for p in entries if p.is_file()]
    if any(looks_like_fr_file(p) for p in files):
        return load_fr_dir(path, prefix)
    from triage.load.log_tree import find_rank_logs  # lazy: a directory of per-rank logs only

    tree = find_rank_logs(path)
    if tree.logs or tree.error_files:
        return _load_tree(tree)
    raise InputError(f"{path}: not a run directory, a Flight Recorder dump directory or a log directory",
                     "triage report accepts RUN_DIR, a directory of PREFIX<rank> FR dumps, a directory of per-rank "
                     "logs (torchrun --log-dir, mpirun --output-filename), or log files")


def _load_tree(tree: LogTree) -> Evidence:
    """A directory of per-rank logs: each file read with the rank its place in the tree gives it, torchrun's error
    files beside them."""
    parts = [error for path in tree.error_files if (error := _error_file(path)) is not None]
    logs = [log for log in tree.logs if _size(log.path) > 0]
    if logs:
        parts.append(load_logs([log.path for log in logs], [log.rank for log in logs]))
    if not parts:
        raise InputError(f"{tree.error_files[0].parent if tree.error_files else 'this directory'}: its logs are "
                         "empty", "pass the job's output instead")
    evidence = merge(parts, ()) if len(parts) > 1 else parts[0]
    if tree.note:
        evidence = replace(evidence, skipped=(*evidence.skipped, tree.note))
    return evidence


def _error_file(path: Path) -> Evidence | None:
    """A torchelastic error file (``@record``, TORCHELASTIC_ERROR_FILE): the real exception of a rank."""
    if path.suffix != ".json" or not path.is_file() or path.stat().st_size > MAX_ERROR_FILE_BYTES:
        return None
    # torchrun keeps it as .../attempt_N/<local rank>/error.json: on one node the local rank is the rank
    named = int(path.parent.name) if is_rank_name(path.parent.name) else rank_from_name(path.name)
    error = parse_error_file(read_text(path), named)
    if error is None:
        return None
    last = error.message.strip().splitlines()[-1][:300] if error.message.strip() else "an error"
    line = parse_crash_line(last)
    rank = error.rank if error.rank is not None else -1
    info = ExitInfo(exit_code=error.exitcode if error.exitcode not in (None, 0) else 1, time=error.timestamp,
                    message=last, evidence=(str(path),), failure_kind=line.kind.value if line else "exception",
                    collateral=bool(line and line.collateral))
    if rank < 0:
        return Evidence(unattributed=(info,), extra_evidence=(str(path),), complete=False)
    return Evidence(ranks=(RankEvidence(rank=rank, exit=info, evidence=(str(path),)),), complete=False)


def _read_stdin() -> str:
    data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    if len(data) > MAX_STDIN_BYTES:
        raise InputError(f"<stdin>: more than {MAX_STDIN_BYTES >> 20} MiB", "save the log to a file and pass its path")
    return decoded(data)


def load_logs(paths: list[Path], ranks: list[int | None] | None = None) -> Evidence:
    """Evidence from log files; large ones are memory-mapped and read in C-speed passes. ``ranks``: each file's
    rank where its place says it (a per-rank log tree); else the rank its name carries, if any."""
    scan = LogScan()
    names: list[str] = []
    for index, path in enumerate(paths):
        names.append(str(path))
        rank = ranks[index] if ranks is not None else rank_from_name(path.name)
        if _size(path) > LARGE_LOG_BYTES and _scan_mapped(path, scan, rank):
            continue
        text = read_text(path)
        if not text.strip():
            if ranks is not None:
                continue          # a rank of a per-rank tree that printed nothing on this stream
            raise InputError(f"{path}: empty log file")
        scan_log_text(text, str(path), scan, default_rank=rank)
    return _log_evidence(scan, names)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _scan_mapped(path: Path, scan: LogScan, rank: int | None) -> bool:
    try:
        with open_regular(path) as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if b"\x00" in data[:4096]:
                raise InputError(f"{path}: binary file, not a log", "pass a text log or a Flight Recorder dump")
            scan_large_log(data, str(path), scan, default_rank=rank)
    except (OSError, ValueError):
        return False           # not mappable (a pipe): read it as text
    return True


def load_log_texts(texts: list[tuple[str, str]]) -> Evidence:
    """Evidence from log texts ((name, text) pairs, in order). Logs are excerpts: the ranks they do
    not show are "not in this input", never missing."""
    scan = LogScan()
    for name, text in texts:
        if not text.strip():
            raise InputError(f"{name}: empty log")
        scan_log_text(text, name, scan, default_rank=rank_from_name(Path(name).name))
    return _log_evidence(scan, [name for name, _ in texts])


def _log_evidence(scan: LogScan, names: list[str]) -> Evidence:
    ranks = scan_to_ranks(scan)
    unattributed = unread_failures(scan, orphan_failures(scan))
    if not (ranks or scan.events or unattributed or scan.mismatches or scan.nccl_processes or scan.init_waits
            or scan.op_count_splits or scan.lagging or scan.prose.hang or scan.prose.stop or scan.prose.exit
            or scan.went_on):
        raise InputError(f"{names[0]}: no rank, collective, watchdog, NCCL or error line found in "
                         f"{'this log' if len(names) == 1 else 'these logs'}",
                         "pass the job's stdout/stderr (with [rankN]: prefixes, e.g. torchrun --tee 3) "
                         "or NCCL_DEBUG=INFO output")
    return Evidence(ranks=ranks, events=tuple(scan.events), world_size=scan.world_size,
                    extra_evidence=tuple(name for name in names if not name.startswith("<")),
                    complete=False, coverage_note=scan.world_source, skipped=tuple(scan.skipped),
                    mismatches=tuple(scan.mismatches), unattributed=unattributed, unparsed=tuple(scan.unparsed),
                    went_on=tuple(scan.went_on[:20]),
                    nccl_processes=tuple(scan.nccl_processes), init_waits=tuple(scan.init_waits),
                    op_count_splits=tuple(scan.op_count_splits), unprefixed_tail=tuple(scan.unprefixed_tail),
                    lagging=tuple(scan.lagging), stop=scan.stop, launcher=_launcher(scan), shows_gpu=scan.shows_gpu,
                    shows_rocm=scan.shows_rocm, stack=scan.stack, platform=scan.platform,
                    shows_nccl=scan.shows_nccl,
                    agent_stopped=scan.agent_stopped, prose=scan.prose, job_config=scan.job_config,
                    job_config_rank=scan.job_config_rank)


def _launcher(scan: LogScan) -> str | None:
    """The launcher that started the ranks (triage.parsing.launcher_kind), or HTCondor, where the text shows no
    launcher and HTCondor ran the job (its event log, its tools: triage.parsing.platform_words): it starts the job's
    executable on each node itself."""
    return scan.launcher or ("htcondor" if scan.platform == "htcondor" else None)


def merge(parts: list[Evidence], sources: tuple[str, ...]) -> Evidence:
    if len(parts) == 1:
        return replace(parts[0], sources=sources)
    ranks: list[RankEvidence] = [r for part in parts for r in part.ranks]
    events: list[Event] = [e for part in parts for e in part.events]
    sizes = [p.world_size for p in parts if p.world_size]
    notes = [p.coverage_note for p in parts if p.coverage_note]
    return Evidence(
        ranks=tuple(ranks), events=tuple(events), world_size=max(sizes) if sizes else None,
        skipped=tuple(s for part in parts for s in part.skipped), sources=sources,
        finished_cleanly=bool(parts) and all(p.finished_cleanly for p in parts),
        extra_evidence=tuple(e for part in parts for e in part.extra_evidence),
        crashes=tuple(c for part in parts for c in part.crashes),
        complete=any(p.complete for p in parts), coverage_note=notes[0] if notes else None,
        mismatches=tuple(m for part in parts for m in part.mismatches),
        unattributed=tuple(u for part in parts for u in part.unattributed),
        unparsed=tuple(u for part in parts for u in part.unparsed),
        went_on=tuple(w for part in parts for w in part.went_on),
        nccl_processes=tuple(n for part in parts for n in part.nccl_processes),
        init_waits=tuple(w for part in parts for w in part.init_waits),
        op_count_splits=tuple(s for part in parts for s in part.op_count_splits),
        lagging=tuple(x for part in parts for x in part.lagging),
        unprefixed_tail=next((p.unprefixed_tail for p in parts if p.unprefixed_tail), ()),
        cluster_check=next((p.cluster_check for p in parts if p.cluster_check is not None), None),
        agent=tuple(a for p in parts for a in p.agent),
        stop=min((p.stop for p in parts if p.stop is not None), key=lambda s: (s.time, s.host), default=None),
        launcher=next((p.launcher for p in parts if p.launcher), None),
        shows_gpu=(True if any(p.shows_gpu for p in parts) else None if any(p.shows_gpu is None for p in parts)
                   else False),
        shows_rocm=any(p.shows_rocm for p in parts),
        stack=stack_of_all([p.stack for p in parts]),
        platform=next((p.platform for p in parts if p.platform), None),
        shows_nccl=any(p.shows_nccl for p in parts),
        agent_stopped=tuple(pid for p in parts for pid in p.agent_stopped),
        prose=next((p.prose for p in parts if p.prose), ProseAccount()),
        job_config=next((p.job_config for p in parts if p.job_config), None),
        job_config_rank=next((p.job_config_rank for p in parts if p.job_config), None),
    )


def relative(path: Path, root: Path) -> str:
    try:
        return os.path.relpath(path, root)
    except ValueError:
        return str(path)
