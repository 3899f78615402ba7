"""Stack frames that say what failed when a paste lost the line that does.

A paste cut before its exception line (or one holding only a thread's C++ frames) still shows where
the failure was raised. Some frames raise one thing only:

- ``c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout`` (a C++ frame, ``frame #1: ...``): the NCCL
  watchdog found a collective past its timeout and raised for it;
- ``_call_store`` of torch's c10d rendezvous backend
  (``torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py``): a store call of the
  rendezvous failed, and it raises ``RendezvousConnectionError`` ("The connection to the C10d store
  has failed").

Pure; never raises.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from triage.lazy_regex import lazy_regex

# Cheap pre-check for callers that route lines: a line holding neither is no raise site.
MARKERS = ("checkTimeout", "_call_store", "raise ")


class RaiseSiteKind(str, enum.Enum):
    WATCHDOG_TIMEOUT = "watchdog_timeout"
    RENDEZVOUS_STORE = "rendezvous_store"
    RAISE_STATEMENT = "raise_statement"


@dataclass(frozen=True)
class RaiseSite:
    """A frame where a known failure is raised, and what it means."""
    kind: RaiseSiteKind
    text: str           # what the frame means, in words


_TIMEOUT_TEXT = "the NCCL watchdog's WorkNCCL::checkTimeout frame, raised for a collective past its timeout"
_STORE_TEXT = ("the c10d rendezvous backend's _call_store frame: a call to the rendezvous store failed, which it "
               "raises as RendezvousConnectionError (the connection to the C10d store failed; the exception line "
               "is not in this input)")


# "raise Name(" then string literals only (implicit concatenation allowed), then ")": at most a frame's indentation
# (after a viewer's line number, "[80746] ", on a paste too short to tell it is one)
_RAISE = lazy_regex(
    r"^(?:\[\d+\] )? {0,4}raise (?P<name>(?:[A-Za-z_]\w*\.)*[A-Z]\w*)"
    r"\(\s*(?P<args>(?:[rbu]?(?:\"[^\"\\]*\"|'[^'\\]*')\s*)+)\)\s*$")
_LITERAL = lazy_regex(r"\"([^\"]*)\"|'([^']*)'")
_RAISE_NOTE = (" (the raise statement a traceback's last frame shows, with its message; the exception line itself is "
               "not in this input)")


# A raise shown inside a code listing, not a traceback's last frame: the line before it opens a block of source
# ("if world_size < 2:", "except KeyError:"), or the line after it is another statement of that source ("else:",
# "return x", "def f():"). A traceback's raise line comes after its "File ..., line N, in f" frame, or alone.
_BLOCK_HEAD = lazy_regex(r"^\s*(?:if|elif|else|try|except|finally|with|for|while|def|class|async\s+def)\b"
                         r"[^#]*:\s*(?:#.*)?$")
_STATEMENT = lazy_regex(r"^\s*(?:return\b|else\s*:|elif\s|except\b|finally\s*:|def\s|class\s|if\s|for\s|while\s|"
                        r"with\s|import\s|from\s+[\w.]+\s+import\s|pass\s*$|continue\s*$|break\s*$|"
                        # (an assignment, spaced as code is: not "loss=0.5")
                        r"[A-Za-z_][\w.]*(?:\[[^\]]*\])?\s+[-+*/]?=\s)")


def in_code_listing(before: str | None, after: str | None) -> bool:
    """Whether a raise statement between these two lines (its owner's neighbours, None where there are none) is
    part of source code shown, not the last frame of a traceback."""
    return (before is not None and _BLOCK_HEAD.match(before) is not None) or \
        (after is not None and _STATEMENT.match(after) is not None)


# A frame of a Python traceback, as Python prints it: "  File "x.py", line 3, in f" (its indentation kept)
_PY_FRAME = lazy_regex(r'(?P<indent>[ \t]*)File "[^"\n]+", line \d+, in \S')


def frame_source_line(before: str | None, line: str) -> bool:
    """Whether ``line`` is the source line Python prints under a traceback's frame (``before``: its owner's line
    before it, ``  File "x.py", line 3, in f``), indented deeper than that frame. Code, never a message: its words
    (``raise RuntimeError(f"NCCL error: {e}")``, ``assert ok, f"Connection refused by {peer}"``) say what the program
    could raise; the exception line after the frames says what it raised. (A paste that lost its indentation keeps
    its source lines level with the frames: not told apart from a message, read as before.)"""
    if before is None or "File" not in before or not line.strip():
        return False
    frame = _PY_FRAME.match(before)
    return frame is not None and len(line) - len(line.lstrip()) > len(frame.group("indent"))


def raise_site(line: str) -> RaiseSite | None:
    """The failure a frame line stands for, or None."""
    text = line.strip()
    if "raise " in text[:20] and (found := _RAISE.match(line.rstrip())) is not None:
        message = "".join(a or b for a, b in _LITERAL.findall(found.group("args")))
        return RaiseSite(RaiseSiteKind.RAISE_STATEMENT, f"{found.group('name')}: {message}{_RAISE_NOTE}")
    if "WorkNCCL::checkTimeout" in text and text.startswith("frame #"):
        return RaiseSite(RaiseSiteKind.WATCHDOG_TIMEOUT, _TIMEOUT_TEXT)
    if text.startswith("File ") and "c10d_rendezvous_backend" in text and text.endswith("in _call_store"):
        return RaiseSite(RaiseSiteKind.RENDEZVOUS_STORE, _STORE_TEXT)
    return None
