"""Windows' crash statuses as a process's exit code.

Windows ends a process that faulted with the NTSTATUS code of the fault as its exit code. Python's multiprocessing
prints it unsigned ("process 0 terminated with exit code 3221225477"), IDEs and cmd signed, often with the hex beside
it ("Process finished with exit code -1073741819 (0xC0000005)"). The crash statuses are read as the POSIX signal of
the same fault, so that a Windows process's crash is told as a Linux one's is; every other code is left alone (a
program's own exit, or a status that is not a crash, such as a DLL that failed to load).
"""

from __future__ import annotations

from triage.lazy_regex import lazy_regex

# (the C runtime's fail-fast, STATUS_STACK_BUFFER_OVERRUN, is what abort() ends with; STATUS_IN_PAGE_ERROR a mapped
# file's page that could not be read)
_STATUS_NAMES = {
    0xC0000005: ("SIGSEGV", "STATUS_ACCESS_VIOLATION"),
    0xC00000FD: ("SIGSEGV", "STATUS_STACK_OVERFLOW"),
    0xC0000006: ("SIGBUS", "STATUS_IN_PAGE_ERROR"),
    0xC0000409: ("SIGABRT", "STATUS_STACK_BUFFER_OVERRUN"),
    0xC0000374: ("SIGABRT", "STATUS_HEAP_CORRUPTION"),
    0xC000001D: ("SIGILL", "STATUS_ILLEGAL_INSTRUCTION"),
    0xC0000096: ("SIGILL", "STATUS_PRIVILEGED_INSTRUCTION"),
    0xC0000094: ("SIGFPE", "STATUS_INTEGER_DIVIDE_BY_ZERO"),
    0xC0000095: ("SIGFPE", "STATUS_INTEGER_OVERFLOW"),
    0xC000008E: ("SIGFPE", "STATUS_FLOAT_DIVIDE_BY_ZERO"),
}
_CRASH_STATUS = {code: sig for code, (sig, _name) in _STATUS_NAMES.items()}
# The words one of them is printed with (a cheap pre-check, and the large-log marker pass's: few literals, each rare
# in a log), as the pattern below reads them
MARKERS = ("exit code", "exit status", "exitcode", "exit_code", "exit_status", "exited with code",
           "exited with status")
# "exit code -1073741819", "exit code 3221225477 (0xC0000005)", "exit status 0xC0000409", "exited with code ...":
# an exit code (not any number: the code's own words before it)
# the status where a record ends with it (the hex form in brackets, closing quotes, Markdown, a full stop may follow):
# "exit code 3221225477 on retry 1, retrying" is a line a tool logged on its way, not how a process ended
_EXIT_STATUS = lazy_regex(r"\bexit(?:ed with)?[ _]?(?:code|status)(?:: ?| |=)(?P<code>-?\d{10}|0[xX][0-9A-Fa-f]{8})\b"
                          r"(?=[ \t]*(?:\(0[xX][0-9A-Fa-f]{8}\))?[ \t]*[.!,;:\"'`*\u201d\u2019)\]]*[ \t]*(?:\r?\n|$))")


def crash_signal(code: int | None) -> str | None:
    """The POSIX signal of the fault a Windows crash status stands for, signed or unsigned; None for any other code."""
    if code is None or not -(1 << 31) <= code < (1 << 32):
        return None
    return _CRASH_STATUS.get(code & 0xFFFFFFFF)


def exit_status_crashes(text: str) -> list[tuple[int, int, str]]:
    """(start, end, signal) of each exit code in ``text`` that is a Windows crash status."""
    if "exit" not in text:
        return []
    out = []
    for match in _EXIT_STATUS.finditer(text):
        raw = match.group("code")
        sig = crash_signal(int(raw, 16) if raw[:2] in ("0x", "0X") else int(raw))
        if sig:
            out.append((match.start(), match.end(), sig))
    return out


# a crash status as a record writes it: signed or unsigned decimal, or hex
_ANY_STATUS = lazy_regex(r"(?<![\w.-])(?:-?\d{10}|0[xX][0-9A-Fa-f]{8})(?![\w.])")


def status_in(text: str | None, signal: str | None = None) -> int | None:
    """The first Windows crash status (as its unsigned value) that ``text`` holds, of the fault of ``signal`` where
    it is given; None where it holds none."""
    if not text or signal is None and not any(marker in text for marker in ("0x", "0X", "-1073", "3221")):
        return None
    for match in _ANY_STATUS.finditer(text):
        raw = match.group(0)
        code = int(raw, 16) if raw[:2] in ("0x", "0X") else int(raw)
        sig = crash_signal(code)
        if sig is not None and (signal is None or sig == signal):
            return code & 0xFFFFFFFF
    return None


def how_it_ended(signal: str, text: str | None) -> str:
    """The words of a process's end by ``signal``, said as the Windows crash status it was where ``text`` (its
    record) holds one of that fault: Windows ends a faulting process with the fault's status as its exit code; no
    signal was sent ("crashed with Windows status 0xC0000005 (STATUS_ACCESS_VIOLATION, the fault Linux reports as
    SIGSEGV)"); otherwise "was killed by SIGSEGV"."""
    code = status_in(text, signal)
    if code is None:
        return f"was killed by {signal}"
    return (f"crashed with Windows status 0x{code:08X} ({_STATUS_NAMES[code][1]}, the fault Linux reports as "
            f"{signal})")
