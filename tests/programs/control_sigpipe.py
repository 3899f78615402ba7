"""The worker's control thread in a process whose program set SIGPIPE back to its default action
(a peer that goes away before its answer must not kill it). argv: DIR. Prints the socket name,
then READY, then sleeps until killed."""

import os
import signal
import sys
import time

from triage.worker.agent import _State
from triage.worker.control import ControlThread

signal.signal(signal.SIGPIPE, signal.SIG_DFL)
state = _State(0, sys.argv[1], "h")
state.control_name = f"triage/test-sigpipe/h/0/{os.getpid()}"
server = ControlThread(state)
server.start()
print(f"@{state.control_name}", flush=True)
print("READY", flush=True)
while True:
    time.sleep(1)
