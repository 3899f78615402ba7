"""The worker's SIGTERM stack dump (triage.worker.agent._enable_faulthandler), hit again and again
while three threads import fresh modules without end (tests/hang/test_stop_faults.py).

A Python-level SIGTERM handler that does nothing is installed first, so that the worker's chained
handler leaves the process alive; then SIGTERM is sent to a sleeping thread, thousands of times,
for SECONDS. A dump that walks the importing threads from that signal handler crashes the process
(SIGSEGV); the worker's must not. Prints ``survived N`` at the end. argv: RANK_DIR SECONDS.
"""

import contextlib
import importlib
import os
import signal
import sys
import tempfile
import threading
import time

from triage.worker.agent import _enable_faulthandler, _State


def import_forever(names: list[str]) -> None:
    while True:
        for name in names:
            sys.modules.pop(name, None)
            with contextlib.suppress(KeyError):     # another thread dropped it mid-import
                importlib.import_module(name)


def main() -> None:
    rank_dir, seconds = sys.argv[1], float(sys.argv[2])
    where = tempfile.mkdtemp(prefix="sigterm-storm-", dir=rank_dir)     # (the test's: it ends by os._exit)
    names = [f"storm_{i}" for i in range(100)]
    for name in names:
        with open(os.path.join(where, name + ".py"), "w", encoding="utf-8") as handle:
            handle.write("".join(f"def f{j}(x):\n    return [x * {j} for _ in range(3)]\n" for j in range(40)))
    sys.path.insert(0, where)
    signal.signal(signal.SIGTERM, lambda *_: None)
    _enable_faulthandler(_State(0, rank_dir, "h"))
    for _ in range(3):
        threading.Thread(target=import_forever, args=(names,), daemon=True).start()
    sleeper = threading.Thread(target=time.sleep, args=(3600,), daemon=True)
    sleeper.start()
    deadline, sent = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        signal.pthread_kill(sleeper.ident or 0, signal.SIGTERM)
        sent += 1
        time.sleep(0.0005)
    print(f"survived {sent}", flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
