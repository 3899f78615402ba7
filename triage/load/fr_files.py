"""Small readers shared by the loaders: text files, FR dump files and FR dump directories."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from triage.errors import InputError
from triage.lazy_regex import lazy_regex
from triage.model import Collective
from triage.model.evidence import Evidence, PgMembers, RankEvidence
from triage.parsing.textclean import decoded
from triage.rank_names import MAX_RANK
from triage.regular_files import open_regular, read_regular_bytes

if TYPE_CHECKING:
    from triage.parsing.flight_recorder.parse import FrDump

# The Flight Recorder parsers (and pickle with them) are imported where a dump is read: a plain log's
# report does not load them (tests/report/test_log_report_imports.py)

MAX_TEXT = 256 * 1024 * 1024  # of a bigger log, the last 256 MiB are read
MAX_LINE_CHARS = 64 * 1024
_LONG_LINE = lazy_regex(rf"(?m)^[^\n]{{{MAX_LINE_CHARS + 1},}}")
_TRAILING_NUMBER = lazy_regex(r"^(.*?)(\d+)(?:\.(?:json|pkl|pickle|bin))?$")


def read_text(path: Path, limit: int = MAX_TEXT) -> str:
    """A text file as str; of a file larger than ``limit``, its end (where a failure shows)."""
    try:
        with open_regular(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                handle.seek(size - limit)
            data = handle.read(limit)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if b"\x00" in data[:4096]:
        raise InputError(f"{path}: binary file, not a log", "pass a text log or a Flight Recorder dump")
    text = decoded(data)
    text = text.split("\n", 1)[-1] if size > limit else text
    return cap_lines(text)


def cap_lines(text: str) -> str:
    """``text`` with every line longer than :data:`MAX_LINE_CHARS` cut there (a 15 MB line would
    cost the line parsers seconds; no log line triage reads is that long)."""
    if len(text) <= MAX_LINE_CHARS:
        return text
    return _LONG_LINE.sub(lambda match: match.group()[:MAX_LINE_CHARS] + " [line cut by triage]", text)


def looks_like_fr_file(path: Path) -> bool:
    """A file whose first byte says JSON object or pickle, named with a trailing rank number."""
    try:
        with open_regular(path) as handle:
            head = handle.read(64)
    except OSError:
        return False
    if not _TRAILING_NUMBER.match(path.name):
        return False
    stripped = head.lstrip()
    return stripped[:1] == b"{" and b'"' in stripped[:4] or head[:1] == b"\x80"


def common_prefix(paths: list[Path]) -> str | None:
    """The PREFIX in PREFIX<rank> shared by the most files."""
    counts: dict[str, int] = {}
    for path in paths:
        match = _TRAILING_NUMBER.match(path.name)
        if match:
            counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    if not counts:
        return None
    return min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def fr_rank_evidence(dump: FrDump, rank: int, path: str, host: str | None = None,
                     at_exit: bool = False, pid: int | None = None) -> RankEvidence:
    groups = tuple(PgMembers(pg, info.name, info.ranks) for pg, info in dump.pg_config.items())
    colls = tuple(c if c.rank == rank else _with_rank(c, rank) for c in dump.collectives)
    world = None
    for info in dump.pg_config.values():
        if info.name == "default_pg" and info.ranks:
            world = len(info.ranks)
    return RankEvidence(rank=rank, host=host, pid=pid, world_size=world, collectives=colls, has_trace=True,
                        trace_at_exit=at_exit, groups=groups, evidence=(path,), histories=dump.histories)


def load_fr_dumps(files: Mapping[int, tuple[Path, str | None]]) -> tuple[list[RankEvidence], list[str]]:
    """One Flight Recorder dump per rank (rank -> (path, host)) as evidence, in rank order, and the
    dumps that could not be read, as one line each."""
    from triage.parsing.flight_recorder.parse import load_fr_file

    evidence: list[RankEvidence] = []
    problems: list[str] = []
    for rank, (path, host) in sorted(files.items()):
        try:
            evidence.append(fr_rank_evidence(load_fr_file(path, rank), rank, str(path), host=host))
        except InputError as exc:
            problems.append(exc.one_line())
    return evidence, problems


def _shared_members(item: RankEvidence, seen: dict[tuple[int, ...], tuple[int, ...]],
                    by_id: dict[int, tuple[tuple[int, ...], tuple[int, ...]]]) -> RankEvidence:
    """One tuple per distinct member list across ranks (4,096 ranks each list 4,096 members). A
    worker sends one tuple object per chunk of ranks, so the object seen before is looked up by
    identity (``by_id``, which keeps it alive), not hashed again: at 65,536 ranks hashing every
    rank's list was 65,536 x 65,536 steps."""
    groups = []
    for group in item.groups:
        ranks = group.ranks
        if ranks is not None:
            known = by_id.get(id(ranks))
            if known is None or known[0] is not ranks:
                known = by_id[id(ranks)] = (ranks, seen.setdefault(ranks, ranks))  # ranks kept alive: ids stay unique
            shared = known[1]
            if shared is not ranks:
                group = PgMembers(group.pg, group.name, shared)
        groups.append(group)
    return replace(item, groups=tuple(groups))


def _with_rank(coll: Collective, rank: int) -> Collective:
    return replace(coll, rank=rank)


PARALLEL_MIN_FILES = 64
COMPACT_MIN_FILES = 64   # from this many dumps on, ranks keep their last collectives + histories


def load_compact(path: Path, rank: int) -> FrDump:
    """Like load_fr_file, through parse_fr_compact (parsing.flight_recorder.compact)."""
    from triage.parsing.flight_recorder.compact import parse_fr_compact
    from triage.parsing.flight_recorder.parse import MAX_FR_BYTES, decode_fr_bytes, fr_walk

    try:
        data = read_regular_bytes(path, MAX_FR_BYTES)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return parse_fr_compact(decode_fr_bytes(data, str(path)), rank, str(path), fr_walk(data, str(path)))


def _load_one(path: Path, rank: int, compact: bool = False) -> tuple[RankEvidence | None, list[str]]:
    from triage.parsing.flight_recorder.parse import load_fr_file

    try:
        dump = load_compact(path, rank) if compact else load_fr_file(path, rank)
    except InputError as exc:
        return None, [exc.one_line()]
    notes = [f"{path}: {problem}" for problem in dump.problems[:3]]
    if dump.version and not dump.version.startswith("2."):
        notes.append(f"{path}: unknown Flight Recorder version {dump.version!r}, read as 2.x")
    return fr_rank_evidence(dump, rank, str(path)), notes


def _load_chunk(items: list[tuple[Path, int]]) -> list[tuple[RankEvidence | None, list[str]]]:
    compact = len(items) >= COMPACT_MIN_FILES
    return [_load_one(path, rank, compact) for path, rank in items]


def _load_chunk_compact(items: list[tuple[Path, int]]) -> list[tuple[RankEvidence | None, list[str]]]:
    return [_load_one(path, rank, True) for path, rank in items]


def _usable_cpus() -> int:
    """The CPUs this process may run on (taskset, cgroup cpusets), not every CPU of the machine:
    16 workers on 2 allowed CPUs only add switching."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


MAX_CHUNK = 256   # ranks a worker parses before it sends their results back


def fr_chunks(items: list[tuple[Path, int]], workers: int) -> list[list[tuple[Path, int]]]:
    """``items`` cut into the workers' chunks, in order: small (16 a worker, so none idles at the
    end) and at most MAX_CHUNK ranks. A worker holds its chunk's results until it sends them back,
    and parsing the next dumps among 2,048 held results (the chunk at 65,536 ranks on 2 CPUs) cost
    ~30% more a rank than among 256 (13.7-15.1 against 10.1-10.6 ms, in-process, same run)."""
    size = max(8, min(MAX_CHUNK, len(items) // (workers * 16)))
    return [items[i:i + size] for i in range(0, len(items), size)]


def _load_many(items: list[tuple[Path, int]]) -> list[tuple[RankEvidence | None, list[str]]]:
    """Parse dumps in forked worker processes when there are many (thousands of ranks).

    Only from a single-threaded process (the CLI): forking a threaded one is unsafe, and fork
    leaves no helper process (forkserver, resource tracker) behind, so callers such as
    `triage launch` that run in-process with threads simply parse serially."""
    workers = min(_usable_cpus(), 16)
    if len(items) < PARALLEL_MIN_FILES or workers < 2 or threading.active_count() > 1:
        return _load_chunk(items)
    # lazy: a pool (and logging, which concurrent.futures imports) only for thousands of dumps, off
    # `triage report LOG`'s start-up path
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    chunks = fr_chunks(items, workers)
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return [result for chunk in pool.map(_load_chunk_compact, chunks) for result in chunk]


def load_fr_dir(root: Path, prefix: str | None, only: list[Path] | None = None) -> Evidence:
    from triage.parsing.flight_recorder.parse import load_fr_file, rank_from_filename

    files = only if only is not None else sorted(p for p in root.iterdir() if p.is_file())
    if prefix is None:
        prefix = common_prefix([p for p in files if looks_like_fr_file(p)])
    skipped: list[str] = []
    items: list[tuple[Path, int]] = []
    others: list[Path] = []
    for path in files:
        rank = rank_from_filename(path.name, prefix)
        if rank is None:
            if only is None and looks_like_fr_file(path):
                others.append(path)
            continue
        if rank > MAX_RANK:
            if only is not None:
                raise InputError(f"{path}: rank {rank} in the file name is beyond any job "
                                 f"({MAX_RANK + 1} ranks at most)",
                                 "name each dump PREFIX<rank> with the rank that wrote it")
            skipped.append(f"{path}: rank {rank} in the file name is beyond any job: skipped")
            continue
        items.append((path, rank))
    if others:
        names = sorted({common_prefix([p]) or p.name for p in others})
        skipped.append(f"{root}: ignored {len(others)} dump file(s) with another prefix "
                       f"({', '.join(repr(n) for n in names[:3])}); pick them with --prefix")
    if only is not None and items:
        load_fr_file(items[0][0], items[0][1])  # one file given by name: its errors are the user's error
    ranks: list[RankEvidence] = []
    members: dict[tuple[int, ...], tuple[int, ...]] = {}
    members_by_id: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    for evidence, notes in _load_many(items):
        skipped.extend(notes)
        if evidence is not None:
            ranks.append(_shared_members(evidence, members, members_by_id))
    if not ranks:
        why = skipped[0] if skipped else f"no file named {prefix or 'PREFIX'}<rank>"
        raise InputError(f"{root}: no readable Flight Recorder dump ({why})",
                         "use --prefix if the files are not named PREFIX<rank>")
    return Evidence(ranks=tuple(ranks), skipped=tuple(skipped))
