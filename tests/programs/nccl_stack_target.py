"""A target for the stack parsers: the main thread waits inside nested user functions while a
named worker thread loops. SIGUSR1 makes faulthandler dump all threads to stderr.
The loader thread prints READY once the main thread sleeps in wait_for_peers.
"""

from __future__ import annotations

import faulthandler
import signal
import sys
import threading
import time

MAIN_WAITING = threading.Event()


def background_loader() -> None:
    MAIN_WAITING.wait()
    time.sleep(0.2)  # the main thread is asleep by now
    print("READY", flush=True)
    while True:
        time.sleep(0.05)


def wait_for_peers() -> None:
    MAIN_WAITING.set()
    time.sleep(600)


def train_step() -> None:
    wait_for_peers()


def main() -> None:
    faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    threading.Thread(target=background_loader, name="data-loader", daemon=True).start()
    time.sleep(0.1)
    train_step()


if __name__ == "__main__":
    main()
