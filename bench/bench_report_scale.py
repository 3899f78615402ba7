"""Time `triage report` on synthetic Flight Recorder dumps (format 2.10) and, optionally,
PyTorch's own analyzer on the same files. Prints figures; asserts nothing.

Usage: python bench/bench_report_scale.py [--ranks 512,4096] [--entries 2000] [--tp 8] [--fr-trace]
Each case writes RANKS dumps of ENTRIES entries (a mismatch near the end on one rank) into a
temp dir, then runs `python -m triage report DIR --format json` in a child process and reports
wall time and peak RSS (of its largest process; the loader parses in worker processes when
there are many files), and the same for `fr_trace` with --fr-trace (both read the same pickles).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.synthetic import fr_dump, write_dumps

PREFIX = "nccl_trace_rank_"


_MEASURE = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter(); p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "sys.stderr.write(f'{time.perf_counter() - t} {u.ru_maxrss} {p.returncode} {u.ru_utime + u.ru_stime}\\n')\n"
    "sys.stdout.write(p.stdout)\n"
)


# `triage report` run in-process so that it can say, at exit, how its CPU split between its main
# process (the listing, the workers' results, the diff, the report) and its parse workers (reaped
# children); written to the file named by TRIAGE_BENCH_SPLIT.
_SPLIT = (
    "import atexit, os, resource, sys\n"
    "def _split():\n"
    "    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "    with open(os.environ['TRIAGE_BENCH_SPLIT'], 'w') as out:\n"
    "        out.write(f'{s.ru_utime + s.ru_stime} {c.ru_utime + c.ru_stime} {s.ru_maxrss} {c.ru_maxrss}')\n"
    "atexit.register(_split)\n"
    "from triage.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def triage_split(root: Path, count: int | None) -> tuple[float, float, int, str, float, str]:
    """run_child on `triage report ROOT --format json`, plus the CPU split of its processes."""
    with tempfile.NamedTemporaryFile(prefix="bench-split-") as note:
        os.environ["TRIAGE_BENCH_SPLIT"] = note.name
        try:
            result = run_child([sys.executable, "-c", _SPLIT, "report", str(root), "--format", "json"], count)
        finally:
            del os.environ["TRIAGE_BENCH_SPLIT"]
        fields = Path(note.name).read_text().split()
    split = "split not recorded"
    if fields:
        split = (f"main process {float(fields[0]):.1f}s CPU ({int(fields[2]) / 1024:.0f} MiB), parse workers "
                 f"{float(fields[1]):.1f}s CPU ({int(fields[3]) / 1024:.0f} MiB, the largest)")
    return (*result, split)


def run_child(argv: list[str], cpus: int | None = None) -> tuple[float, float, int, str, float]:
    """(seconds, peak RSS MiB of the largest process it ran, exit code, stdout, CPU seconds of all
    its processes), measured by a fresh wrapper process so that each tool's figures are its own;
    with ``cpus``, the wrapper and what it runs may use only the first ``cpus`` CPUs."""
    pin = (lambda: os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:cpus])) if cpus else None
    proc = subprocess.run([sys.executable, "-c", _MEASURE, *argv], capture_output=True, text=True, check=False,
                          preexec_fn=pin)
    seconds, rss_kib, code, cpu = proc.stderr.strip().splitlines()[-1].split()
    return float(seconds), int(rss_kib) / 1024, int(code), proc.stdout, float(cpu)


def write_fast(root: Path, ranks: int, entries: int, tp: int, link: bool = False) -> None:
    """write_dumps' files, faster: without TP groups every rank but the culprit has the same dump,
    so it is pickled once (65,536 ranks are written in minutes, not an hour). With ``link``, those
    files are hard links to one file: 65,536 dumps of 2,000 entries take 1 MB of disk instead of
    47 GB (every read then comes from the page cache: reading is ~3% of the work)."""
    culprit, mismatch = ranks // 3, max(1, entries // (2 if tp else 1) - 5)
    if tp:
        write_dumps(root, ranks, entries, culprit=culprit, mismatch_at=mismatch, tp=tp, prefix=PREFIX, fmt="pickle")
        return
    root.mkdir(parents=True, exist_ok=True)
    same = pickle.dumps(fr_dump(0, ranks, entries, culprit, mismatch), protocol=pickle.HIGHEST_PROTOCOL)
    first = root / f"{PREFIX}{0 if culprit else 1}"
    first.write_bytes(same)
    for rank in range(ranks):
        path = root / f"{PREFIX}{rank}"
        if rank == culprit:
            path.write_bytes(pickle.dumps(fr_dump(rank, ranks, entries, culprit, mismatch),
                                          protocol=pickle.HIGHEST_PROTOCOL))
        elif path != first:
            if link and first.stat().st_nlink < 60_000:   # ext4 allows 65,000 links to a file
                os.link(first, path)
            elif link:
                path.write_bytes(same)
                first = path
            else:
                path.write_bytes(same)


def phases(root: Path, ranks: int, sample: int = 64) -> float:
    """CPU per rank of each phase of the loader, on ``sample`` of the dumps, in this process (gc off, as
    `triage report` runs): read, decode (the restricted unpickler), the compact parse (which walks the
    dump's schema within its budget); and, for comparison, the generic shape check of
    ``safe_unpickle`` that the report no longer runs; and freeing the decoded dump. Returns read, decode
    and parse summed over every rank (seconds)."""
    import io

    from triage.parsing import safe_pickle
    from triage.parsing.flight_recorder.compact import parse_fr_compact
    from triage.parsing.flight_recorder.parse import fr_walk

    paths = sorted(root.iterdir())[:sample]
    spent = dict.fromkeys(("read", "decode", "parse", "free", "generic shape check"), 0.0)
    gc.disable()
    for index, path in enumerate(paths):
        t0 = time.process_time()
        data = path.read_bytes()
        t1 = time.process_time()
        value = safe_pickle._RestrictedUnpickler(io.BytesIO(data)).load()
        t2 = time.process_time()
        parse_fr_compact(value, index, str(path), fr_walk(data, str(path)))
        t3 = time.process_time()
        safe_pickle.check_shape(value)
        t4 = time.process_time()
        del value
        t5 = time.process_time()
        for name, secs in zip(spent, (t1 - t0, t2 - t1, t3 - t2, t5 - t4, t4 - t3), strict=True):
            spent[name] += secs
    gc.enable()
    per_rank = {name: 1e3 * secs / len(paths) for name, secs in spent.items()}
    print("  per rank (CPU ms, " + f"{len(paths)} ranks in-process): "
          + ", ".join(f"{name} {ms:.2f}" for name, ms in per_rank.items())
          + " (not run by triage report; shown for comparison)")
    return sum(ms for name, ms in per_rank.items() if name in ("read", "decode", "parse")) * ranks / 1e3


def one_case(ranks: int, entries: int, tp: int, with_fr_trace: bool, workdir: str | None,
             cpus: list[int] | None = None, link: bool = False) -> None:
    root = Path(tempfile.mkdtemp(prefix=f"bench-report-{ranks}-", dir=workdir))
    try:
        start = time.perf_counter()
        write_fast(root, ranks, entries, tp, link)
        size = sum(p.stat().st_size for p in root.iterdir()) / 2**20
        linked = " (hard links to one file)" if link else ""
        print(f"ranks={ranks} entries={entries} tp={tp or '-'}: wrote {size:.0f} MiB{linked} in "
              f"{time.perf_counter() - start:.1f}s", flush=True)
        for count in cpus or [None]:
            secs, rss, code, out, cpu, split = triage_split(root, count)
            verdict = json.loads(out)["verdict"]["summary"] if code in (0, 1) else out.splitlines()[0]
            on = f" on {count} CPU(s)" if count else ""
            print(f"  triage report{on}: {secs:.1f}s wall, {cpu:.1f}s CPU (all processes; "
                  f"{1e6 * cpu / (ranks * entries):.2f} us/entry), peak RSS {rss:.0f} MiB (largest process), "
                  f"exit {code}; load average {os.getloadavg()[0]:.1f}", flush=True)
            print(f"    {split}", flush=True)
        print(f"  verdict: {verdict[:150]}")
        loading = phases(root, ranks)
        print(f"  so of {cpu:.1f}s CPU: read + decode + parse ~{loading:.1f}s at the per-rank figures above; the "
              "rest of the workers' CPU is freeing each decoded dump, building and pickling each rank's result "
              "(the main process's share is on the line above)")
        if with_fr_trace:
            fr_secs, fr_rss, code, out, fr_cpu = run_child(
                [sys.executable, "-m", "torch.distributed.flight_recorder.fr_trace", str(root), "-p", PREFIX])
            print(f"  fr_trace: {fr_secs:.1f}s wall, {fr_cpu:.1f}s CPU, peak RSS {fr_rss:.0f} MiB, exit {code}")
            print(f"  triage vs fr_trace: {fr_secs / secs:.1f}x faster in wall time, {fr_cpu / cpu:.1f}x less CPU, "
                  f"{100 * rss / fr_rss:.0f}% of its peak RSS")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def analysis_only(ranks: int, entries: int) -> None:
    """The pure analysis on evidence already in memory (no parsing): how it grows with ranks x entries."""
    from triage.analysis.analyze import analyze
    from triage.model import Collective, CollectiveState
    from triage.model.evidence import Evidence, PgMembers, RankEvidence

    culprit = ranks // 3
    items = []
    for rank in range(ranks):
        colls = tuple(
            Collective(rank=rank, pg="0", seq=seq, op="all_gather" if rank == culprit and seq == entries else
                       "all_reduce", count=1024, dtype="float32", pg_name="default_pg",
                       state=CollectiveState.IN_FLIGHT if seq == entries else CollectiveState.COMPLETED)
            for seq in range(1, entries + 1))
        items.append(RankEvidence(rank=rank, collectives=colls, has_trace=True,
                                  groups=(PgMembers("0", "default_pg", None),)))
    evidence = Evidence(ranks=tuple(items), world_size=ranks)
    gc.disable()  # as `triage report` does
    start = time.perf_counter()
    report = analyze(evidence)
    gc.enable()
    secs = time.perf_counter() - start
    print(f"analysis only: ranks={ranks} entries={entries}: {secs:.2f}s "
          f"({ranks * entries / secs / 1e6:.1f} M entries/s); culprit {list(report.verdict.culprit_ranks)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="512,4096")
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--tp", type=int, default=0, help="also interleave TP subgroups of this size")
    parser.add_argument("--fr-trace", action="store_true", help="also time torch's fr_trace on the same files")
    parser.add_argument("--workdir", help="where the dumps are written (default: the temp dir); removed after")
    parser.add_argument("--cpus", help="run triage report once per CPU count given (e.g. 2,3), each pinned to "
                        "that many CPUs, on the same dumps")
    parser.add_argument("--analysis-only", action="store_true", help="time only the pure analysis, in memory")
    parser.add_argument("--link", action="store_true", help="every rank but the culprit a hard link to one "
                        "file (65,536 ranks without 47 GB of disk; reads come from the page cache)")
    args = parser.parse_args()
    if args.analysis_only:
        for ranks in (int(x) for x in args.ranks.split(",")):
            analysis_only(ranks, args.entries)
        return
    cpus = [int(x) for x in args.cpus.split(",")] if args.cpus else None
    for ranks in (int(x) for x in args.ranks.split(",")):
        one_case(ranks, args.entries, 0, args.fr_trace, args.workdir, cpus, args.link)
        if args.tp:
            one_case(ranks, args.entries, args.tp, args.fr_trace, args.workdir)


if __name__ == "__main__":
    main()
