"""The cost of the straggler analysis (triage.analysis.stragglers) against the whole report.
Prints figures; asserts nothing.

Usage: python bench/bench_stragglers.py [--ranks 1024] [--entries 2000] [--skip-cli]

1. In memory, every rank's whole history (RANKS x ENTRIES collectives with creation times,
   jitter of a few ms, one rank 40 ms late, or none): find_stragglers alone vs analyze()
   (which includes it). This is the worst case: all entries compared. Then the HTML report of
   it, and its arrival lag chart alone.
2. End to end: RANKS pickled dumps of ENTRIES entries written like PyTorch's (format 2.10) with the
   same arrival times; `triage report DIR --format json` in a child process (wall time, as
   bench_report_scale.py measures it), and in this process the load, analyze() and
   find_stragglers on what the loader keeps (the last 80 seqs per group at this many files).
"""

from __future__ import annotations

import argparse
import gc
import json
import pickle
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.synthetic import fr_dump

T0 = 1_795_000_000_000_000_000
PERIOD_NS = 100_000_000
SLOW_NS = 40_000_000


def arrival(rank: int, seq: int, slow: int | None, rng: random.Random) -> int:
    return T0 + seq * PERIOD_NS + rng.randrange(3_000_000) + (SLOW_NS if rank == slow else 0)


def in_memory(ranks: int, entries: int, slow: int | None) -> None:
    from triage.analysis.analyze import analyze
    from triage.analysis.groups import Group
    from triage.analysis.stragglers import find_stragglers
    from triage.model import Collective
    from triage.model.evidence import Evidence, PgMembers, RankEvidence
    from triage.report.html import render_html
    from triage.report.lag_chart import lag_chart

    rng = random.Random(1)
    members = tuple(range(ranks))
    items = []
    for rank in range(ranks):
        colls = tuple(Collective(rank=rank, pg="0", seq=seq, op="all_reduce", count=1024, dtype="float32",
                                 pg_name="default_pg", time_ns=arrival(rank, seq, slow, rng))
                      for seq in range(1, entries + 1))
        items.append(RankEvidence(rank=rank, host=f"node{rank // 8}", collectives=colls, has_trace=True,
                                  groups=(PgMembers("0", "default_pg", members),)))
    traces = {item.rank: item.collectives for item in items}
    hosts = {item.rank: item.host for item in items}
    gc.disable()
    start = time.perf_counter()
    found = find_stragglers([Group("0", "default_pg", members)], traces, hosts)
    alone = time.perf_counter() - start
    start = time.perf_counter()
    report = analyze(Evidence(ranks=tuple(items), world_size=ranks))
    whole = time.perf_counter() - start
    start = time.perf_counter()
    page = render_html(report)
    html_s = time.perf_counter() - start
    start = time.perf_counter()
    chart = lag_chart(report)
    chart_s = time.perf_counter() - start
    gc.enable()
    named = [list(s.ranks) for s in found.stragglers]
    print(f"in memory, ranks={ranks} entries={entries} slow={slow}: find_stragglers {alone:.2f}s, "
          f"analyze (with it) {whole:.2f}s: stragglers are {100 * alone / whole:.0f}% of the analysis, "
          f"+{100 * alone / (whole - alone):.0f}% over it without them; named {named}; "
          f"first line: {report.verdict.summary[:110]}", flush=True)
    print(f"  HTML report {html_s:.2f}s ({len(page) // 1024} KiB), of which the lag chart {chart_s:.2f}s "
          f"({len(chart) // 1024} KiB, every rank's full history)", flush=True)


def write_dumps(root: Path, ranks: int, entries: int, slow: int | None) -> None:
    rng = random.Random(2)
    root.mkdir(parents=True, exist_ok=True)
    for rank in range(ranks):
        data = fr_dump(rank, ranks, entries)
        for entry in data["entries"]:
            entry["time_created_ns"] = arrival(rank, entry["collective_seq_id"], slow, rng)
        (root / f"nccl_trace_rank_{rank}").write_bytes(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))


def end_to_end(ranks: int, entries: int, slow: int | None) -> None:
    from triage.analysis.analyze import analyze
    from triage.analysis.groups import resolve_groups
    from triage.analysis.stragglers import find_stragglers
    from triage.load.inputs import load_inputs

    root = Path(tempfile.mkdtemp(prefix=f"bench-strag-{ranks}-"))
    try:
        start = time.perf_counter()
        write_dumps(root, ranks, entries, slow)
        print(f"end to end, ranks={ranks} entries={entries} slow={slow}: wrote dumps in "
              f"{time.perf_counter() - start:.1f}s", flush=True)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "triage", "report", str(root), "--format", "json"],
                              capture_output=True, text=True, check=False)
        cli = time.perf_counter() - start
        doc = json.loads(proc.stdout) if proc.returncode in (0, 1) else {}
        named = [f["ranks"] for f in doc.get("findings", []) if f["kind"] == "straggler"]
        print(f"  triage report (child): {cli:.1f}s, exit {proc.returncode}, stragglers named {named}", flush=True)
        gc.disable()
        start = time.perf_counter()
        evidence = load_inputs([str(root)])
        loaded = time.perf_counter() - start
        start = time.perf_counter()
        analyze(evidence)
        whole = time.perf_counter() - start
        traces = {r.rank: r.collectives for r in evidence.ranks}
        groups = resolve_groups(evidence.ranks, ranks)
        start = time.perf_counter()
        find_stragglers(groups, traces, {r.rank: r.host for r in evidence.ranks})
        alone = time.perf_counter() - start
        gc.enable()
        kept = sum(len(c) for c in traces.values())
        print(f"  in process: load {loaded:.1f}s, analyze {whole:.2f}s, find_stragglers {alone:.3f}s on the "
              f"{kept} collectives the loader keeps: {100 * alone / (loaded + whole):.1f}% of the report", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=1024)
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--skip-cli", action="store_true", help="only the in-memory measurement")
    args = parser.parse_args()
    for slow in (None, args.ranks // 3):
        in_memory(args.ranks, args.entries, slow)
    if not args.skip_cli:
        end_to_end(args.ranks, args.entries, args.ranks // 3)


if __name__ == "__main__":
    main()
