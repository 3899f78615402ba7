"""`triage report` on very large logs vs `grep -c NCCL` on the same file (issue: at most 3x grep's
time and 1 GB of memory). Prints figures, asserts nothing.

Three generated logs (in /tmp, removed afterwards; the first two kept with --keep):
- a NCCL_DEBUG=INFO log of --mb MB (default 1024), made by bench_parsing_nccl's generator, with a
  rank's CUDA OOM and the others' watchdog timeouts appended near the end;
- a log of --lines short lines (default 10 million): training lines of 8 ranks, a few NCCL WARN
  lines, and the same failure.
- a log of --block-lines lines (default 3 million): training lines of 8 ranks, every 50th a retried read that
  holds a code's block phrase ("Fatal error:": the large-log path keeps lines around such a line), and the failure.
Each is timed warm (best of --runs, grep and triage alternating), wall and CPU time, and triage's
peak memory is read from getrusage. triage runs as installed (with the hyperscan package where it is
there) and, in the same runs, as where hyperscan is not installed (``sys.modules["hyperscan"] = None``
before triage starts: the per-needle passes), and the verdicts of all sides are printed.

Usage: python bench/bench_report_logs.py [--mb 1024] [--lines 10000000] [--runs 3] [--keep]
           [--logs DIR] [--baseline DIR_OF_OTHER_CODE] [--no-fallback] [--plain] [--steps] [--one-cpu]
           [--error-lines 20000,200000] [--error-only] [--block-lines 3000000] [--step-lines N] [--step-only]

The simulation code's log (--step-lines N; --step-only: it alone, with --error-lines ''): N lines of GADGET-2's
"Begin Step N, Time: %g, Redshift: %g, Systemstep: %g, Dloga: %g" (each after a blank line, as it prints them), then a
task's endrun; timed beside grep as the others are.

The error-line-heavy logs (--error-lines: their sizes in lines; --error-only: these alone): every line of 8 ranks
reads as an error (three shapes, numbers varying: "ERROR: ... retry count exceeded (src/io.cpp:N)", a "RuntimeError:
... retrying" line, a glog warning "[W...] Warning: ... ERROR in the data pipeline ..."), then a rank's CUDA OOM;
each beside a plain log of as many training lines (and the same failure), triage's CPU and peak memory on both, best
of --runs, alternating (and the baseline's, with --baseline).

Without hyperscan, triage takes the Aho-Corasick automaton (the ahocorasick-rs package) where it is installed;
--plain also times it without either (``sys.modules["ahocorasick_rs"] = None`` too: one pass per needle).

--one-cpu also times triage held to one CPU (``taskset``: the NCCL reader's chunks are then
not scanned ahead on threads, triage.parsing.nccl.comm_scan), in the same runs.

--steps also prints the CPU of each step on each log, in this process, with and without hyperscan:
the fixed cost (`triage report` on a log of the failure lines alone: interpreter start, imports,
analysis; the interpreter's start and the imports alone as well), the floor (a child that starts, imports
hyperscan and scans the file once for the report's needles), the NCCL reader, then the marker pass:
as the report reads them (the markers found in the NCCL reader's scan, the marker pass reading only the
rest), as two passes (the marker pass reading the whole file), and without hyperscan; then the report's whole
reading of the log and, within it, the line-by-line reading of the excerpt (the marked lines and the last 256 KiB).

triage's compiled-code cache (triage.compiled_cache) is the bench's own (a temporary XDG_CACHE_HOME), written by
a first report before the timed ones, as a user's first run writes theirs; --steps also times the fixed cost
without it (an empty cache, PYTHONDONTWRITEBYTECODE=1).
"""

from __future__ import annotations

import argparse
import mmap
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_parsing_nccl import generate

FAILURE = (
    "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a total capacity "
    "of 79.10 GiB of which 1.06 GiB is free.\n"
    + "".join(f"[rank{r}]:[E1001 10:00:00.1 {900 + r} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught "
              "collective operation timeout: WorkNCCL(SeqNum=9001, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, "
              "Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n" for r in (0, 1, 2, 3, 4, 6, 7))
)


def make_nccl_log(path: Path, megabytes: int) -> None:
    generate(path, megabytes)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(FAILURE)


def make_line_log(path: Path, lines: int) -> None:
    chunk = "".join(f"[rank{i % 8}]: step {i // 8} loss 2.{i % 97:02d} lr 3e-4\n" for i in range(100_000))
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(chunk for _ in range(max(1, lines // 100_000)))
        handle.write("gpu-node-00:4001:4099 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.5<50532> with "
                     "status=12 opcode=0 len=0 vendor err 129\n")
        handle.write(FAILURE)


ERROR_SHAPES = (
    lambda i: f"[rank{i % 8}]: step {i // 8} ERROR: read of shard {i % 1013} failed, retry count exceeded "
              f"(src/io.cpp:{200 + i % 37}), reading replica {i % 3}\n",
    lambda i: f"[rank{i % 8}]: RuntimeError: data loader timed out after {i % 60 + 1} s, retrying batch {i // 8}\n",
    lambda i: f"[rank{i % 8}]:[W1128 10:{i // 6000 % 60:02d}:{i // 100 % 60:02d}.{i % 1000:03d} {4000 + i % 8} "
              f"warnings.py:{100 + i % 13}] Warning: step {i // 8}: ERROR in the data pipeline: a corrupt record "
              f"{i % 977} was skipped\n",
)


def make_block_log(path: Path, lines: int) -> None:
    """``lines`` training lines of 8 ranks, every 50th a retried read that holds GROMACS's block phrase ("Fatal
    error:", one of triage.parsing.whole_text.BLOCK_MARKERS: each such line is widened to the lines around it), then
    the failure."""
    with open(path, "w", encoding="utf-8") as handle:
        for at in range(0, lines, 100_000):
            handle.writelines(f"[rank{i % 8}]: Fatal error: could not read frame {i} (retrying)\n" if i % 50 == 7
                              else f"[rank{i % 8}]: step {i} loss {1.0 / (i + 1):.5f} lr 0.001\n"
                              for i in range(at, min(lines, at + 100_000)))
        handle.write(FAILURE)


# GADGET-2's line for each step (run.c, every_timestep_stuff: printf("\\nBegin Step %d, Time: %g, Redshift: %g,
# Systemstep: %g, Dloga: %g\\n")), and its endrun() of a task that failed (MPI_Abort after it in its descendants)
STEP_FAILURE = "task 3: endrun called with an error level of 1313\n\n\n"


def make_step_log(path: Path, lines: int) -> None:
    """A simulation code's log of ``lines`` lines (half of them blank: GADGET-2 opens each step's line with one), each
    step's line holding "Time: " (a word the large-log pass looked for on every such line before session 52), then a
    task's endrun."""
    with open(path, "w", encoding="utf-8") as handle:
        for at in range(0, lines // 2, 50_000):
            handle.writelines(f"\nBegin Step {i}, Time: {a:g}, Redshift: {1 / a - 1:g}, Systemstep: {a * 1e-4:g}, "
                              f"Dloga: {1e-4:g}\n" for i in range(at, min(lines // 2, at + 50_000))
                              for a in (0.0625 + i * 1e-7,))
        handle.write(STEP_FAILURE)


def make_error_log(path: Path, lines: int, plain: bool = False) -> None:
    """``lines`` lines each reading as an error (or, ``plain``, as many training lines), then the failure."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(f"[rank{i % 8}]: step {i // 8} loss 2.{i % 97:02d} lr 3e-4\n" if plain
                          else ERROR_SHAPES[i % 3](i) for i in range(lines))
        handle.write(FAILURE)


def measure_errors(counts: list[int], runs: int, baseline: str | None, tmp: str) -> None:
    """triage on each error-line-heavy log and a plain log of as many lines: CPU (best of ``runs``), peak memory."""
    sides = {"triage report": None, **({"baseline": baseline} if baseline else {})}
    for count in counts:
        paths = {"error-heavy": Path(tmp) / f"errors-{count}.log", "plain": Path(tmp) / f"plain-{count}.log"}
        make_error_log(paths["error-heavy"], count)
        make_error_log(paths["plain"], count, plain=True)
        best = {(side, kind): [float("inf"), 0.0] for side in sides for kind in paths}
        outs: dict[tuple[str, str], str] = {}
        for _ in range(runs):
            for (side, kind), figures in best.items():
                _wall, cpu, peak, outs[side, kind] = run(
                    [sys.executable, "-m", "triage", "report", str(paths[kind]), "--format", "json"], sides[side])
                figures[:] = [min(figures[0], cpu), max(figures[1], peak)]
        print(f"{count:,}-line error-heavy log ({paths['error-heavy'].stat().st_size / 1e6:.1f} MB) beside "
              f"{count:,} plain lines ({paths['plain'].stat().st_size / 1e6:.1f} MB); load average "
              f"{os.getloadavg()[0]:.1f}")
        for side in sides:
            (err, err_rss), (plain, plain_rss) = best[side, "error-heavy"], best[side, "plain"]
            same = "" if side == "triage report" else " (its JSON " + (
                "the same" if all(outs[side, k] == outs["triage report", k] for k in paths) else "NOT the same") + ")"
            print(f"  {side}: CPU {err:.2f} s = {err / plain:.1f}x the plain log's {plain:.2f} s; peak memory "
                  f"{err_rss / 1024:,.0f} MiB (plain {plain_rss / 1024:,.0f} MiB){same}")
        for path in paths.values():
            path.unlink()


def run(argv: list[str], pythonpath: str | None = None, one_cpu: bool = False) -> tuple[float, float, int, str]:
    """Wall time, CPU time (user + system), peak RSS (KiB) of this one child, and its stdout; ``one_cpu``: the
    child held to one CPU."""
    env = dict(os.environ, PYTHONPATH=pythonpath) if pythonpath else None
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        if one_cpu:     # (taskset execs the command: the same process)
            argv = ["taskset", "-c", str(min(os.sched_getaffinity(0))), *argv]
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=env, cwd=tempfile.gettempdir())
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, out.read().decode("utf-8", "replace")


CACHE = ""      # the bench's XDG_CACHE_HOME (main)
IMPORTS = "import triage.cli.report, triage.load.inputs, triage.analysis.analyze, triage.report"
WITHOUT_HYPERSCAN = ("import sys, runpy; sys.modules['hyperscan'] = None; sys.argv[0] = 'triage'; "
                     "runpy.run_module('triage', run_name='__main__', alter_sys=True)")
# neither hyperscan nor the automaton (ahocorasick-rs, where it is installed): one pass per needle
WITHOUT_SCANNERS = WITHOUT_HYPERSCAN.replace("sys.modules['hyperscan'] = None;",
                                             "sys.modules['hyperscan'] = sys.modules['ahocorasick_rs'] = None;")


def _automaton() -> str:
    try:
        import ahocorasick_rs  # noqa: F401
    except ImportError:
        return "not installed: the per-needle passes"
    return "the Aho-Corasick automaton"


def measure(label: str, path: Path, runs: int, baseline: str | None = None, fallback: bool = True,
            one_cpu: bool = False, plain: bool = False) -> None:
    """grep and triage (and the baseline's triage) alternate run by run, so that all see the same load."""
    size = path.stat().st_size
    sides: dict[str, tuple[list[str], str | None, bool]] = {"triage report": (["-m", "triage"], None, False)}
    if one_cpu:
        sides["triage report, one CPU"] = (["-m", "triage"], None, True)
    if fallback:
        sides[f"triage report, no hyperscan ({_automaton()})"] = (["-c", WITHOUT_HYPERSCAN], None, False)
    if plain:
        sides["triage report, neither hyperscan nor the automaton"] = (["-c", WITHOUT_SCANNERS], None, False)
    if baseline is not None:
        sides["baseline"] = (["-m", "triage"], baseline, False)
    best: dict[str, list[float]] = {name: [float("inf"), float("inf"), 0.0] for name in ("grep", *sides)}
    count = ""
    outs: dict[str, str] = {}
    for _ in range(runs):
        wall, cpu, _rss, count = run(["grep", "-c", "NCCL", str(path)])
        best["grep"][:2] = [min(best["grep"][0], wall), min(best["grep"][1], cpu)]
        for name, (how, pythonpath, alone) in sides.items():
            wall, cpu, peak, outs[name] = run([sys.executable, *how, "report", str(path), "--format", "json"],
                                              pythonpath, alone)
            old = best[name]
            best[name] = [min(old[0], wall), min(old[1], cpu), max(old[2], peak)]
    grep, grep_cpu, _ = best["grep"]
    print(f"{label}: {size / 1e6:,.0f} MB, grep -c NCCL {grep:.2f} s, CPU {grep_cpu:.2f} s ({count.strip()} "
          f"lines); load average {os.getloadavg()[0]:.1f}")
    for name in sides:
        wall, cpu, rss = best[name]
        verdict = outs[name].split('"summary": ', 1)[-1].split("\n", 1)[0][:100]
        print(f"  {name}: {wall:.2f} s = {wall / grep:.1f}x grep; CPU {cpu:.2f} s = {cpu / max(grep_cpu, 1e-3):.1f}x; "
              f"peak memory {rss / 1024:,.0f} MiB")
        same = "" if name == "triage report" else \
            f" (its JSON {'the same as' if outs[name] == outs['triage report'] else 'NOT the same as'} triage report's)"
        print(f"    verdict: {verdict}{same}")


# the floor of this design on a log without NCCL lines of its own: the interpreter's start, hyperscan's import and one
# scan of the whole file for the report's needles (the markers, NCCL WARN lines; "NCCL" and the channel lines, one
# report a scan: what its one pass looks for), on one thread
FLOOR = """import mmap, sys, hyperscan
words = [bytes.fromhex(word) for word in sys.argv[2].split(",")]
database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
once = int(sys.argv[3])      # the first ones report one match a scan (as the report's search and probe do)
patterns = set(bytes.fromhex(word) for word in sys.argv[4].split(",") if word)     # (regular expressions)
database.compile(expressions=[w if w in patterns else b"".join(b"\\\\x%02x" % c for c in w) for w in words],
                 ids=list(range(len(words))),
                 elements=len(words), flags=[hyperscan.HS_FLAG_SINGLEMATCH] * once + [0] * (len(words) - once))
with open(sys.argv[1], "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
    with memoryview(data) as view:
        for at in range(0, len(data), 64 << 20):
            database.scan(view[at:at + (64 << 20) + 64], match_event_handler=lambda *_: None)
"""


def steps(path: Path) -> None:
    """CPU of each step of a large-log report (see the module docstring)."""
    from triage.load.logs import large
    from triage.load.logs.records import CHANNEL
    from triage.parsing import needles, pages
    from triage.parsing.nccl.bulk import WARN
    from triage.parsing.nccl.tracker import NcclTracker

    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "small.log"
        small.write_text(FAILURE, encoding="utf-8")
        report = [sys.executable, "-m", "triage", "report", str(small), "--format", "json"]
        cpu = min(run(report)[1] for _ in range(3))
        # a start that compiles every dataclass's methods: no cache to read (an empty one), none written
        os.environ.update(PYTHONDONTWRITEBYTECODE="1", XDG_CACHE_HOME=str(Path(tmp) / "empty"))
        try:
            uncached = min(run(report)[1] for _ in range(3))
        finally:
            os.environ.pop("PYTHONDONTWRITEBYTECODE")
            os.environ["XDG_CACHE_HOME"] = CACHE
    start_cpu = min(run([sys.executable, "-c", "pass"])[1] for _ in range(3))
    imports = min(run([sys.executable, "-c", IMPORTS])[1] for _ in range(3))
    print(f"  steps: `triage report` on the failure lines alone (interpreter, imports, analysis) {cpu:.3f} s, "
          f"{uncached:.3f} s without the compiled-code cache; the interpreter's start {start_cpu:.3f} s, with the "
          f"report path's imports (no cache) {imports:.3f} s (best of 3)")
    words = (b"NCCL", CHANNEL, *large.NEEDLES, WARN)
    patterns = ",".join(w.hex() for w in large.PATTERNS)
    floor = [run([sys.executable, "-c", FLOOR, str(path), ",".join(w.hex() for w in words), "2", patterns])[:2]
             for _ in range(3)]
    print(f"  steps: the floor (the interpreter's start, hyperscan's import, one scan of the file for the report's "
          f"{len(words)} needles on one thread) {min(w for w, _ in floor):.3f} s of wall time, "
          f"{min(c for _, c in floor):.3f} s of CPU (best of 3)")
    loaded = needles._hs
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        for name, module, ride in (("hyperscan, one pass", loaded, True), ("hyperscan, two passes", loaded, False),
                                   ("no hyperscan", None, False)):
            needles._hs = module
            needles._KEPT.clear()       # the NCCL WARN hits the marker pass keeps: this side's own
            needles._RIDERS.clear()
            pages.drop(data, 0, len(data))
            start = time.process_time()
            if ride:        # as the report does: the NCCL reader first, the markers found in its scan
                needles.ride_along(data, (*large.NEEDLES, WARN), probe=(CHANNEL,))
            NcclTracker(16).feed_bytes(data)
            reader = time.process_time() - start
            pages.drop(data, 0, len(data))
            start = time.process_time()
            large._spans(data, len(data) - large.TAIL_BYTES)
            markers = time.process_time() - start
            print(f"  steps, {name}: NCCL reader {reader:.2f} s, then the marker pass {markers:.2f} s")
        needles._hs = loaded
        excerpt(data, str(path))
    needles._hs = loaded


def excerpt(data: mmap.mmap, path: str) -> None:
    """The CPU of the report's whole reading of the log (triage.load.logs.large.scan_large_log, as the report reads
    it: one pass, threads where a CPU is idle), and of its line-by-line reading of the excerpt within it."""
    from triage.load.logs import large
    from triage.load.logs.scan import LogScan
    from triage.parsing import needles, pages

    needles._KEPT.clear()
    needles._RIDERS.clear()
    pages.drop(data, 0, len(data))
    spent = [0.0, 0]
    read_text = large.scan_log_text

    def timed(text: str, *args: object, **kwargs: object) -> None:
        begin = time.process_time()
        try:
            read_text(text, *args, **kwargs)    # type: ignore[arg-type]
        finally:
            spent[0] += time.process_time() - begin
            spent[1] += text.count("\n") + 1

    large.scan_log_text = timed     # type: ignore[assignment]
    try:
        start = time.process_time()
        large.scan_large_log(data, path, LogScan())
        whole = time.process_time() - start
    finally:
        large.scan_log_text = read_text
    print(f"  steps: the report's whole reading of the log {whole:.3f} s, of which the excerpt's {spent[1]:,} lines "
          f"read line by line {spent[0]:.3f} s")


def _line_count(path: Path) -> int:
    """Counted 1 MiB at a time: a whole read would make this process large, and a child's peak
    memory (wait4) counts the pages it shared with this process before its exec."""
    with open(path, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=1024)
    parser.add_argument("--lines", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--logs", help="a directory with the nccl.log and lines.log of an earlier --keep")
    parser.add_argument("--no-fallback", action="store_true", help="do not time triage without hyperscan")
    parser.add_argument("--plain", action="store_true", help="also time triage without hyperscan and without the "
                                                            "automaton (ahocorasick-rs): one pass per needle")
    parser.add_argument("--steps", action="store_true", help="also the CPU of each step (see above)")
    parser.add_argument("--one-cpu", action="store_true", help="also time triage held to one CPU (see above)")
    parser.add_argument("--error-lines", default="20000,200000",
                        help="the error-line-heavy logs' sizes in lines, comma-separated (empty: none)")
    parser.add_argument("--error-only", action="store_true", help="only the error-line-heavy logs")
    parser.add_argument("--block-lines", type=int, default=3_000_000,
                        help="also a log of this many lines, every 50th holding a code's block phrase (0: none)")
    parser.add_argument("--step-lines", type=int, default=0,
                        help="also a log of this many lines of a simulation code's steps (GADGET-2's; 0: none)")
    parser.add_argument("--step-only", action="store_true", help="only the simulation code's log (--step-lines)")
    parser.add_argument("--baseline", help="a checkout of other code (its directory that holds triage/): timed "
                                           "in the same runs, with PYTHONPATH set to it")
    args = parser.parse_args()
    if os.environ.get("PYTHONPATH"):   # (the children run in the temporary directory: a relative path would be lost)
        paths = os.environ["PYTHONPATH"].split(os.pathsep)
        os.environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(path) for path in paths)
    global CACHE
    with tempfile.TemporaryDirectory(prefix="triage-bench-logs-") as tmp, \
            tempfile.TemporaryDirectory(prefix="triage-bench-cache-") as cache:
        # triage's compiled-code cache (triage.compiled_cache): the bench's own, written by a first report as a
        # user's first run writes theirs (where Python writes bytecode: PYTHONDONTWRITEBYTECODE is dropped)
        CACHE = cache
        os.environ["XDG_CACHE_HOME"] = cache
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        (Path(tmp) / "first.log").write_text(FAILURE, encoding="utf-8")
        run([sys.executable, "-m", "triage", "report", str(Path(tmp) / "first.log"), "--format", "json"])
        print(f"compiled-code cache: {', '.join(p.name for p in Path(cache, 'triage').glob('*')) or 'none written'}")
        counts = [int(n) for n in args.error_lines.split(",") if n.strip()]
        if counts:
            measure_errors(counts, args.runs, args.baseline, tmp)
        if args.step_lines:
            step_log = Path(tmp) / "steps.log"
            make_step_log(step_log, args.step_lines)
            measure(f"{args.step_lines:,}-line log of a simulation code's steps (GADGET-2's 'Begin Step N, Time: ...')",
                    step_log, args.runs, args.baseline, not args.no_fallback, args.one_cpu, args.plain)
            step_log.unlink()
        if args.error_only or args.step_only:
            return
        nccl = Path(args.logs or tmp) / "nccl.log"
        lines = Path(args.logs or tmp) / "lines.log"
        if not args.logs:
            make_nccl_log(nccl, args.mb)
            make_line_log(lines, args.lines)
        measure("NCCL_DEBUG=INFO log", nccl, args.runs, args.baseline, not args.no_fallback, args.one_cpu, args.plain)
        count = _line_count(lines) if args.logs else args.lines
        measure(f"{count:,}-line log", lines, args.runs, args.baseline, not args.no_fallback, args.one_cpu,
                args.plain)
        if args.block_lines:
            blocks = Path(tmp) / "blocks.log"
            make_block_log(blocks, args.block_lines)
            measure(f"{args.block_lines:,}-line log, every 50th line a block phrase ('Fatal error:')", blocks,
                    args.runs, args.baseline, not args.no_fallback, args.one_cpu, args.plain)
            blocks.unlink()
        for label, path in (("NCCL_DEBUG=INFO log", nccl), (f"{count:,}-line log", lines)) if args.steps else ():
            print(f"{label}:")     # last: a child's peak memory counts the pages it shared with this process
            steps(path)
        if args.keep and not args.logs:
            for path in (nccl, lines):
                kept = Path("/tmp") / path.name
                path.replace(kept)
                print(f"kept {kept}")


if __name__ == "__main__":
    main()
