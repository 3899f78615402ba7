"""What the bounded unpickler costs: plain ``pickle.loads`` vs the restricted unpickler (no
bounds) vs ``safe_unpickle`` (restricted + the C-speed shape check) vs the exact Python walk
(``check_bounds``, what ``safe_unpickle`` did before), on synthetic Flight Recorder dumps; then
the pickle bombs of tests/security, each refused, with its time. Prints figures; asserts nothing.

Usage: python bench/bench_safe_pickle.py [--ranks 16] [--entries 2000] [--frames 8]
``--frames`` gives each entry that many stack frames, shared across entries as torch's pickler
writes them (one dict per distinct frame, memoized).
"""

from __future__ import annotations

import argparse
import io
import pickle
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.synthetic import fr_dump
from tests.security.test_dos import BYTEARRAY_1G, DEEP, _cycle, _dag
from triage.parsing import safe_pickle


def _dumps(ranks: int, entries: int, frames: int) -> list[bytes]:
    stack = [{"name": f"f{i}", "filename": f"/src/m{i}.py", "line": i} for i in range(frames)]
    out = []
    for rank in range(ranks):
        data = fr_dump(rank, ranks, entries, culprit=ranks // 3, mismatch_at=entries - 5)
        for entry in data["entries"]:
            entry["frames"] = list(stack)
        out.append(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
    return out


def _restricted(data: bytes) -> Any:
    return safe_pickle._RestrictedUnpickler(io.BytesIO(data)).load()


def _exact(data: bytes) -> Any:
    value = _restricted(data)
    safe_pickle.check_bounds(value)
    return value


def _time(fn: Callable[[bytes], Any], blobs: list[bytes]) -> float:
    best = float("inf")
    for _ in range(3):                              # best of 3: the machine is shared
        start = time.process_time()
        for blob in blobs:
            fn(blob)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=16)
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--frames", type=int, default=8)
    args = parser.parse_args()
    blobs = _dumps(args.ranks, args.entries, args.frames)
    size = sum(map(len, blobs)) / 2**20
    print(f"{args.ranks} ranks x {args.entries} entries, {args.frames} shared frames each: {size:.1f} MiB of pickles")
    plain = _time(pickle.loads, blobs)
    for name, fn in (("pickle.loads", pickle.loads), ("restricted unpickler", _restricted),
                     ("safe_unpickle", safe_pickle.safe_unpickle), ("restricted + exact walk (old)", _exact)):
        secs = plain if fn is pickle.loads else _time(fn, blobs)
        print(f"  {name:30s} {secs:6.3f} s CPU  {secs / plain:5.2f}x pickle.loads")
    print("pickle bombs (tests/security):")
    for name, bomb in (("bytearray(1 GiB)", BYTEARRAY_1G), ("100,000 deep", DEEP), ("2**60 values by memo", _dag()),
                       ("a cycle", _cycle())):
        start = time.perf_counter()
        try:
            safe_pickle.safe_unpickle(bomb)
            verdict = "ACCEPTED"
        except pickle.UnpicklingError as error:
            verdict = f"refused: {error}"
        print(f"  {name:22s} {time.perf_counter() - start:6.3f} s  {verdict}")


if __name__ == "__main__":
    main()
