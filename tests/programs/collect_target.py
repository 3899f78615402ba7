"""Target for collector tests: prints READY, then sleeps, spins or both (in two threads).

Usage: collect_target.py [sleep|spin|both|syscalls] [--password=...]
Its stacks name the functions ``sleep_forever`` / ``spin_forever`` so tests can find them.
"""

import sys
import threading
import time


def sleep_forever() -> None:
    while True:
        time.sleep(0.2)


def spin_forever() -> None:
    x = 0
    while True:
        x = (x + 1) % 1000003


def syscalls_forever() -> None:
    import os

    while True:
        os.stat("/")


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "sleep"
    if mode == "both":
        threading.Thread(target=spin_forever, name="spinner", daemon=True).start()
        mode = "sleep"
    print("READY", flush=True)
    if mode == "spin":
        spin_forever()
    if mode == "syscalls":
        syscalls_forever()
    sleep_forever()


if __name__ == "__main__":
    main()
