"""A debugger's view of an exception, as VS Code shows what debugpy (pydevd) reports (pure; never raises).

VS Code's exception widget, copied out of the editor, has no ``Traceback`` head and no ``Name: message`` line::

    Exception has occurred: RuntimeError       (note: full exception trace is shown but execution is paused at: ...)
    shape '[1]' is invalid for input of size 2
      File "/opt/NeMo/.../utils.py", line 183, in <listcomp>
        averaged_losses = torch.cat([...])
      ...

The head is VS Code's ``Exception has occurred: {0}`` (localised: ``例外が発生しました: {0}``, ``发生异常: {0}``) over
pydevd's exception name (``build_exception_info_response``: the type's ``__qualname__``, its module before it outside
builtins and ``__main__``), to which pydevd adds ``       (note: full exception trace is shown but execution is paused
at: <frame>)`` where the debugger stopped in another frame than the one that raised; the next line is the exception's
description (its message); the frames follow, innermost first. The exception is that type with that message: the
line Python would have printed last, ``RuntimeError: shape '[1]' is invalid for input of size 2``.
"""

from __future__ import annotations

from triage.lazy_regex import lazy_regex

# pydevd's note after the type (always in English), and VS Code's head before it (English, or where the note follows,
# any locale's words ending in ": ")
NOTE = "(note: full exception trace is shown but execution is paused at: "
_TYPE = r"(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)"
_WITH_NOTE = lazy_regex(r"^\s*(?:[^:()]{1,40}:\s*)?" + _TYPE + r"\s+\(note: full exception trace is shown but "
                        r"execution is paused at: [^)]*\)\s*$")
_ENGLISH_HEAD = lazy_regex(r"^\s*Exception has occurred:\s*" + _TYPE + r"\s*$")
HEAD_WORDS = ("Exception has occurred:", NOTE)


def exception_type(line: str) -> str | None:
    """The exception's type a debugger's view head names (``Exception has occurred: RuntimeError``, with or without
    pydevd's note; a head in another language only with the note), else None."""
    match = _WITH_NOTE.match(line) if NOTE in line else _ENGLISH_HEAD.match(line)
    return match.group("type") if match is not None else None


def exception_line(head: str, following: str | None) -> str | None:
    """Python's exception line (``Name: message``) for a debugger's view head and the line after it (its message: not
    a frame, not blank), else None where ``head`` is no such head."""
    kind = exception_type(head)
    if kind is None:
        return None
    message = (following or "").strip()
    if not message or message.startswith(("File \"", "Traceback")):
        return f"{kind}: (its message is not in this input: a debugger's exception view)"
    return f"{kind}: {message}"
