"""The real-world scorecard: `triage report` on every log of tests/realworld/cases/.

Prints, per expected verdict kind, how many cases were right, partial, wrong or refused, and the
false all-clears and crashes; then the share right on the high- and medium-confidence cases (the
target is 85%, with no false all-clear and no crash).

    python bench/bench_realworld.py [-v] [--batch N]
        (-v: one line per case; --batch N: only the cases collected in round N, to score a round at
        first sight, before any fix for it)
"""

from __future__ import annotations

import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml

from tests.realworld.scoring import ASSERTED_CONFIDENCE, Outcome, Score, evaluate, load_cases

KNOWN_GAPS = Path(__file__).resolve().parent.parent / "tests" / "realworld" / "known_gaps.yaml"


def main() -> int:
    verbose = "-v" in sys.argv[1:]
    cases = load_cases()
    if "--batch" in sys.argv[1:]:
        wanted = int(sys.argv[sys.argv.index("--batch") + 1])
        cases = [case for case in cases if case.batch == wanted]
    started = time.perf_counter()
    outcomes: list[Outcome] = [evaluate(case) for case in cases]
    elapsed = time.perf_counter() - started
    by_kind: dict[str, Counter[Score]] = defaultdict(Counter)
    for outcome in outcomes:
        by_kind[outcome.case.kind][outcome.score] += 1
    columns = [Score.RIGHT, Score.PARTIAL, Score.WRONG, Score.REFUSED, Score.FALSE_ALL_CLEAR, Score.CRASHED]
    print(f"{'expected kind':<26}" + "".join(f"{c.value:>16}" for c in columns))
    for kind in sorted(by_kind):
        print(f"{kind:<26}" + "".join(f"{by_kind[kind][c]:>16}" for c in columns))
    total: Counter[Score] = Counter(o.score for o in outcomes)
    print(f"{'all ' + str(len(outcomes)):<26}" + "".join(f"{total[c]:>16}" for c in columns))
    asserted = [o for o in outcomes if o.case.confidence in ASSERTED_CONFIDENCE]
    right = sum(o.score is Score.RIGHT for o in asserted)
    share = 100.0 * right / len(asserted) if asserted else 0.0
    print(f"\nhigh+medium confidence: {right}/{len(asserted)} right ({share:.0f}%); "
          f"false all-clears {total[Score.FALSE_ALL_CLEAR]}, crashes {total[Score.CRASHED]}; "
          f"{elapsed:.1f} s for {len(outcomes)} reports")
    repos = {o.case.source.split("#")[0] for o in outcomes}
    gaps = yaml.safe_load(KNOWN_GAPS.read_text(encoding="utf-8")) or {}
    print(f"{len(outcomes)} cases from {len(repos)} repositories, {len(by_kind)} expected kinds; "
          f"{len(gaps)} known gaps listed in {KNOWN_GAPS.relative_to(KNOWN_GAPS.parents[2])}")
    if verbose:
        print()
        for o in outcomes:
            expected = list(o.case.culprits) if o.case.culprits is not None else "unknown"
            print(f"{o.score.value:<16}{o.case.name:<48} expected {o.case.kind} {expected}"
                  f" ({o.case.confidence}); got {o.kind} {list(o.culprits)}: {o.summary[:110]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
