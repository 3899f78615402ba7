"""A launcher stand-in for signal-forwarding tests: prints READY, then waits for a signal.

SIGHUP -> prints "got SIGHUP" and exits 42; SIGINT -> exits 130 after printing;
SIGTERM -> default action (killed by SIGTERM). With an argument N it just exits N.
"""

from __future__ import annotations

import signal
import sys
import time


def main() -> None:
    if len(sys.argv) > 1:
        sys.exit(int(sys.argv[1]))

    def on_hup(_s: int, _f: object) -> None:
        print("got SIGHUP", flush=True)
        sys.exit(42)

    def on_int(_s: int, _f: object) -> None:
        print("got SIGINT", flush=True)
        sys.exit(130)

    signal.signal(signal.SIGHUP, on_hup)
    signal.signal(signal.SIGINT, on_int)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    print("READY", flush=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        time.sleep(0.05)
    sys.exit(99)


if __name__ == "__main__":
    main()
