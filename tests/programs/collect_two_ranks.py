"""A minimal launcher: starts ``argv[1:]`` twice with RANK=0/1 (WORLD_SIZE=2) and waits for both.

It never kills a rank when the other fails (unlike torchrun); its exit status is the first
non-zero one (128+N for a signal).
"""

import os
import subprocess
import sys


def main() -> int:
    procs = [subprocess.Popen(sys.argv[1:], env={**os.environ, "RANK": str(r), "LOCAL_RANK": str(r),
                                                 "WORLD_SIZE": "2"}) for r in range(2)]
    codes = [p.wait() for p in procs]
    bad = [c for c in codes if c != 0]
    if not bad:
        return 0
    return 128 - bad[0] if bad[0] < 0 else bad[0]


if __name__ == "__main__":
    sys.exit(main())
