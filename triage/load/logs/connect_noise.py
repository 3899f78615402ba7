"""c10d's warning of one address it could not connect to, when the connect went on (fix55d item 2, sp-uhh/sgmse#44).

torch's TCP store client (torch/csrc/distributed/c10d/socket.cpp, ``SocketConnectOp``) tries each address that
``getaddrinfo`` gives the store's host; one that fails with an error other than a refusal or a timeout is recorded
with a warning, ``[W socket.cpp:697] [c10d] The client socket has failed to connect to [host]:port (system error:
10049 - The requested address is not valid in its context.)``, and the client goes on to the next address (on
Windows the host's own name often resolves first to an address that cannot be connected to). Only when every address
failed does it log its error, ``The client socket has failed to connect to any network address of (host, port)``
(or ``... has timed out after ... while trying to connect to ...``), and raise it.

So the per-address warning followed by the client's word that it connected (``The client socket has connected to
...``, at INFO), or by a traceback with no such error line of c10d's before it nor a network error as its exception,
is noise: the connect went on and the process failed in something else. It goes to the notes (``went_on``), never the
verdict. A warning the text ends on, or one followed by c10d's own error, stays what it was (a connect at start-up
that failed). Progress after the warning is read by text.py's _went_on_past, as for every connect wait."""

from __future__ import annotations

from triage.lazy_regex import lazy_regex
from triage.load.logs.scan import LogScan
from triage.parsing.crashlog import CrashLineKind
from triage.parsing.log_owners import LineOwner
from triage.parsing.rendezvous import InitWaitKind, parse_init_line

# the per-address warning's words (the address in brackets, or host:port in older builds), never "any network address"
_ONE_ADDRESS = lazy_regex(r"client socket has failed to connect to (?!any network address)\S+:\d{2,5}\b")
_CONNECTED = lazy_regex(r"client socket has connected to ")
# the exceptions c10d raises when the store cannot be reached
_C10D_ERROR = lazy_regex(r"\bDist(?:Network|Store)Error\b")
NOTE = ("c10d's warning of one address of the store it could not connect to; the client goes on to the next address "
        "(it raises only after every address failed: 'failed to connect to any network address'), and the process "
        "went on past it")


def one_address_warning(text: str) -> bool:
    """The text is c10d's warning of one address it could not connect to (not its error after every address)."""
    return _ONE_ADDRESS.search(text) is not None


def connect_warnings_passed(owners: list[LineOwner], base: int, scan: LogScan) -> None:
    """c10d's per-address connect warnings of this text after which the connect went on (above): out of the init
    waits, into the notes."""
    kind = InitWaitKind.CONNECT_REFUSED.value
    warnings = [w for w in scan.init_waits if w.kind == kind and w.order is not None and w.order >= base
                and one_address_warning(w.text)]
    if not warnings:
        return
    heads = sorted(order for _, order, _ in scan.tracebacks if order >= base)
    failures = sorted([item for items in scan.failures.values() for item in items] + scan.orphans,
                      key=lambda item: item[0])
    passed: set[int] = set()
    for warning in warnings:
        at = warning.order or 0       # (every warning here has its order)
        later = [owner.rest for owner in owners[at - base + 1:]]
        # c10d's own error after it (every address failed, the connect timed out, its raise): the warning was its start
        # (the scan keeps one wait of an address: the lines are read again here)
        if any(_C10D_ERROR.search(line) or (not one_address_warning(line) and parse_init_line(line) is not None)
               for line in later):
            continue
        connected = any(_CONNECTED.search(line) for line in later)
        head = next((h for h in heads if h > at), None)
        if not connected and head is None:
            continue
        if not connected and head is not None:
            raised = next((line for order, line, _ in failures if order > head), None)   # the traceback's exception
            if raised is not None and raised.kind is CrashLineKind.NETWORK:
                continue
        passed.add(at)
    if passed:
        scan.went_on.extend(f"{NOTE}: {w.text[:160]}" for w in warnings if w.order in passed)
        scan.init_waits = [w for w in scan.init_waits if w.order not in passed or w not in warnings]
