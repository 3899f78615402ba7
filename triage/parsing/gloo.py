"""gloo's own timeout of a send or a receive (pure, never raises):

    RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:136] Timed out waiting 1800000ms
    for send operation to complete

``UnboundBuffer::waitSend``/``waitRecv`` (transport ``tcp``, or ``uv`` on Windows and macOS) throw it when a
peer did not take part within the process group's timeout: every gloo collective and p2p call of torch.distributed
waits through them. The message names no peer (gloo does not say which rank it waited on): it is a collective (or
send/recv) that this rank waited in and some other rank never joined, a hang. gloo's other end of the same wait,
``Connection closed by peer [ip]:port``, is a peer process that exited while this one waited (read elsewhere as a
peer gone, the echo of that peer's end).

gloo's TCP pair has its own word for the same timeout, where an I/O on the pair outlived the process group's
timeout and gloo closed the pair (``tcp/pair.cc``): ``Application timeout caused pair closure`` (no op, no time):
the same wait some other rank never joined.
"""

from __future__ import annotations

from dataclasses import dataclass

from triage.lazy_regex import lazy_regex

MARKER = "operation to complete"
PAIR_CLOSURE = "Application timeout caused pair closure"
MARKERS = (MARKER, PAIR_CLOSURE)

_TIMEOUT = lazy_regex(r"(?:\[(?P<site>[^\]\n]*unbound_buffer\.cc:\d+)\]\s*)?Timed out waiting (?P<ms>\d+)\s*ms for "
                      r"(?P<op>send|recv) operation to complete")


@dataclass(frozen=True)
class GlooTimeout:
    """A Gloo timeout message."""
    op: str            # "send" | "recv" | "pair" (the pair's closure: the op is not said)
    timeout_ms: int | None
    text: str          # the message from its "Timed out" on


def parse_gloo_timeout(line: str) -> GlooTimeout | None:
    if PAIR_CLOSURE in line:
        return GlooTimeout("pair", None, PAIR_CLOSURE)
    if MARKER not in line:
        return None
    match = _TIMEOUT.search(line)
    if match is None:
        return None
    start = match.start("ms") - len("Timed out waiting ")
    return GlooTimeout(match.group("op"), int(match.group("ms")), line[start:match.end()])
