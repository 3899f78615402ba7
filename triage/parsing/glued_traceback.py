"""A traceback whose line ends a paste lost: its lines glued into one.

Copied out of some web pages and terminals, a traceback's frame line comes with what followed it on
the same line: ``File ".../run.py", line 564, in determine_local_world_size    return
int(nproc_per_node)ValueError: invalid literal for int() with base 10: ''During handling of the above
exception, another exception occurred:Traceback (most recent call last):``. Python prints each of
those on its own line: the frame, its source line (indented), the exception line (``Name: message``),
the chaining sentence and the next ``Traceback`` head. They are split again where the text shows
their starts, only in a line that holds a frame (``File "...", line N, in NAME``), so that the
exception line is read as the failure it is.

Pure; never raises.
"""

from __future__ import annotations

from triage.lazy_regex import lazy_regex

# A frame line, after what a launcher or a paste put before it ("[rank0]:   ", "  ").
_FRAME = lazy_regex(r'File "[^"]+", line \d+, in [\w<>.]+')
# (launcher and viewer heads only: "[rank0]:", "0: ", "[pod/job-0/main] 2024-05-01T10:00:00.1Z ", "node3:"; never a
# message that quotes a frame)
_HEAD = lazy_regex(r"^\s*(?:(?:\[[^\]\s\"']*\]:?|[\w.@-]+:|\d{4}-\d\d-\d\dT[\d:.]+Z?)\s*)*$")
# Where a new line starts inside the glued text: an exception's qualified name right after a character that
# cannot end a name or a space ("...int(nproc_per_node)ValueError: ..."), Python's chaining sentences, the
# traceback head, another frame.
_EXCEPTION_NAME = r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure|Timeout|Iteration)"
_CUT = lazy_regex(
    r"(?<=[^\s\w.])(?=" + _EXCEPTION_NAME + r"(?::\s|:?$))"
    r"|(?=During handling of the above exception, another exception occurred:)"
    r"|(?=The above exception was the direct cause of the following exception:)"
    r"|(?=Traceback \(most recent call last\):)"
    r'|(?=File "[^"]+", line \d+, in )'
)
_SOURCE_GAP = lazy_regex(r"\s{2,}(?=\S)")
MARKER = '", line '


def split_glued(line: str) -> list[str]:
    """The lines of a traceback glued into ``line``, or ``[line]`` when it holds none glued."""
    if MARKER not in line or 'File "' not in line:
        return [line]
    frame = _FRAME.search(line)
    if frame is None or _HEAD.match(line[:frame.start()]) is None:
        return [line]
    head = line[:frame.start()]
    label = head.strip()
    parts = _parts(line[frame.start():])
    if len(parts) == 1:
        return [line]
    return [head + parts[0], *(f"{label} {part}" if label else part for part in parts[1:])]


def _parts(text: str) -> list[str]:
    """A frame's text split at each glued start; a frame's source line (after two spaces or more) indented."""
    cuts = [m.start() for m in _CUT.finditer(text) if m.start() > 0]
    pieces = [text[a:b].rstrip() for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    out: list[str] = []
    for piece in pieces:
        frame = _FRAME.match(piece)
        gap = _SOURCE_GAP.match(piece, frame.end()) if frame is not None else None
        if frame is not None and gap is not None:
            out.extend((piece[:frame.end()], "    " + piece[gap.end():]))
        elif piece.strip():
            out.append(piece)
    return out
