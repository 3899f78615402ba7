"""Kernel messages that matter for GPU jobs: NVIDIA Xid and NVSwitch SXid, segfaults, OOM kills.

Accepts dmesg, ``dmesg -T``, ``dmesg --time-format iso``, journalctl -k (syslog and ISO) lines;
markers are found anywhere in a line, so other prefixes are tolerated too.
"""

from __future__ import annotations

import enum
import re
import time
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TypeAlias

from triage.lazy_regex import lazy_regex


class XidCause(str, enum.Enum):
    HARDWARE = "hardware"
    APPLICATION = "application"
    DRIVER = "driver"
    SECONDARY = "secondary"      # a consequence of an earlier error: look for the first Xid
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class XidInfo:
    code: int
    meaning: str
    cause: XidCause
    action: str


_H, _A, _D, _S = XidCause.HARDWARE, XidCause.APPLICATION, XidCause.DRIVER, XidCause.SECONDARY
_RESET = "reset the GPU (nvidia-smi -r) or reboot the node; drain it if the error repeats"
_RESTART = "restart the application"
_XID_TABLE: dict[int, tuple[str, XidCause, str]] = {
    13: ("graphics engine exception", _A, _RESTART + "; if it repeats, re-run with CUDA_LAUNCH_BLOCKING=1"),
    31: ("GPU memory page fault (MMU fault / illegal address)", _A,
         _RESTART + "; usually an out-of-bounds kernel: re-run with compute-sanitizer"),
    43: ("GPU stopped processing", _A, _RESTART + "; if it repeats, suspect the driver"),
    45: ("preemptive cleanup after another error", _S, "look for the first Xid before this one"),
    48: ("double-bit ECC error", _H, _RESET + "; an RMA candidate if it repeats"),
    62: ("internal micro-controller halt", _H, _RESET),
    63: ("ECC page retirement / row remap event", _H, "nothing to do now: the memory was remapped"),
    64: ("ECC page retirement / row remap failure", _H, _RESET + "; an RMA candidate"),
    68: ("NVDEC (video decoder) exception", _D, _RESTART + "; update the driver if it repeats"),
    69: ("graphics engine class error", _A, _RESTART),
    74: ("NVLink error", _H, "check links with `nvidia-smi nvlink -s`; " + _RESET),
    79: ("GPU has fallen off the bus", _H, "reboot the node; check PCIe seating, power and thermals"),
    92: ("high single-bit ECC error rate", _H, "watch the GPU; drain it if the rate grows"),
    94: ("contained ECC error", _H, _RESTART + " (the error was contained to it)"),
    95: ("uncontained ECC error", _H, _RESET),
    109: ("context-switch timeout", _D, _RESET),
    119: ("GSP RPC timeout", _D, _RESET + "; update the driver if it repeats"),
    120: ("GSP error", _D, _RESET + "; update the driver if it repeats"),
    140: ("unrecovered ECC error", _H, _RESET),
    143: ("GPU initialization failure", _H, _RESET),
}
for _code in range(144, 151):
    _XID_TABLE[_code] = ("NVLink5 error", _H, "check links with `nvidia-smi nvlink -s`; " + _RESET)


def decode_xid(code: int) -> XidInfo:
    """Meaning, likely cause and what to do for an NVIDIA Xid code."""
    if code in _XID_TABLE:
        meaning, cause, action = _XID_TABLE[code]
        return XidInfo(code, meaning, cause, action)
    return XidInfo(code, "unlisted Xid", XidCause.UNKNOWN,
                   "look the code up in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors)")


@dataclass(frozen=True)
class DmesgTime:
    seconds_since_boot: float | None
    wallclock: str | None        # as printed ("Thu Sep 11 10:58:45 2025", ISO, or syslog)

    def unix(self, boot_time: float | None = None) -> float | None:
        """Unix time of the message: from an ISO or ``dmesg -T`` (local time) wallclock, else
        ``boot_time + seconds_since_boot`` when the host's boot time is given. Syslog stamps
        carry no year and give None."""
        if self.wallclock:
            text = self.wallclock
            try:
                if text[:4].isdigit():
                    return datetime.fromisoformat(_iso_for_py310(text)).timestamp()
                return time.mktime(time.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y"))
            except (ValueError, OverflowError):
                pass
        if self.seconds_since_boot is not None and boot_time is not None:
            return boot_time + self.seconds_since_boot
        return None


_ISO_PARTS = lazy_regex(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(?:[.,](\d+))?(Z|[+-]\d\d:?\d\d)?$")


def _iso_for_py310(text: str) -> str:
    """An ISO stamp in the subset datetime.fromisoformat reads on Python 3.10."""
    match = _ISO_PARTS.match(text.strip())
    if not match:
        return text
    date, clock, frac, zone = match.groups()
    out = f"{date}T{clock}" + (f".{(frac + '000000')[:6]}" if frac else "")
    if zone:
        out += "+00:00" if zone == "Z" else f"{zone[:3]}:{zone[-2:]}"
    return out


@dataclass(frozen=True)
class XidEvent:
    code: int
    pci: str | None              # None when absent or redacted
    pid: int | None
    process: str | None
    text: str
    info: XidInfo
    timestamp: DmesgTime
    raw: str
    caused_by: int | None = None  # "caused by previous Xid N"


@dataclass(frozen=True)
class SXidEvent:
    code: int
    pci: str | None
    device: str | None           # "nvidia-nvswitch3"
    fatal: bool | None
    link: int | None
    text: str
    timestamp: DmesgTime
    raw: str


@dataclass(frozen=True)
class SegfaultEvent:
    process: str
    pid: int
    addr: str | None
    ip: str | None
    library: str | None
    timestamp: DmesgTime
    raw: str


@dataclass(frozen=True)
class OomEvent:
    pid: int
    process: str | None
    timestamp: DmesgTime
    raw: str


DmesgEvent: TypeAlias = XidEvent | SXidEvent | SegfaultEvent | OomEvent

_T_BOOT = lazy_regex(r"\[\s*(\d+\.\d+)\]")
_T_CTIME = lazy_regex(r"\[(\w{3} \w{3}\s+\d+ \d\d:\d\d:\d\d \d{4})\]")
_T_ISO = lazy_regex(r"(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)")
_T_SYSLOG = lazy_regex(r"^(\w{3}\s+\d+ \d\d:\d\d:\d\d)\s")

_PCI = r"\((?:PCI:)?(?P<pci>[^)]*)\)"
_XID = lazy_regex(r"NVRM: Xid " + _PCI + r":\s*(?P<code>\d+)(?:,\s*(?P<text>.*))?")
_PID_NAME = lazy_regex(r"^pid=(?P<pid>\d+|'?<?unknown>?'?)?,\s*name=(?P<name>[^,]*),\s*")
_CAUSED_BY = lazy_regex(r"caused by previous Xid (\d+)", re.IGNORECASE)
_SXID = lazy_regex(r"(?P<dev>nvidia-nvswitch\d*)?:?\s*SXid " + _PCI + r":\s*(?P<code>\d+),\s*(?P<text>.*)")
_LINK = lazy_regex(r"\bLink (\d+)")
_SEGV = lazy_regex(
    r"(?P<proc>\S+?)\[(?P<pid>\d+)\]: segfault at (?P<addr>\S+) ip (?P<ip>\S+)"
    r"(?:.*?\bin (?P<lib>[^\[\s]+))?"
)
_OOM = lazy_regex(r"(?:Killed|Kill) process (?P<pid>\d+) \((?P<name>[^)]*)\)")
_OOM_KILL = lazy_regex(r"oom-kill:.*?task=(?P<name>[^,]*),pid=(?P<pid>\d+)")
_BUS_PCI = lazy_regex(r"\b([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)")
_MARKERS = ("NVRM", "SXid", "segfault at", "Killed process", "Kill process", "oom-kill:", "fallen off")


def _time(prefix: str) -> DmesgTime:
    boot = _T_BOOT.search(prefix)
    wall = _T_CTIME.search(prefix) or _T_ISO.search(prefix) or _T_SYSLOG.search(prefix)
    return DmesgTime(float(boot.group(1)) if boot else None, wall.group(1) if wall else None)


def _clean_pci(pci: str | None) -> str | None:
    if not pci:
        return None
    pci = pci.strip()
    if not pci or "x" in pci.lower().replace("0x", "") or "redact" in pci.lower() or "*" in pci:
        return None
    return pci


def _xid(match: re.Match[str], line: str) -> XidEvent:
    code = int(match.group("code"))
    text = (match.group("text") or "").strip()
    pid = name = None
    pn = _PID_NAME.match(text)
    if pn:
        pid_text = pn.group("pid") or ""
        pid = int(pid_text) if pid_text.isascii() and pid_text.isdigit() else None
        name = pn.group("name").strip() or None
        text = text[pn.end():].strip()
    caused = _CAUSED_BY.search(text)
    return XidEvent(code, _clean_pci(match.group("pci")), pid, name, text, decode_xid(code),
                    _time(line[:match.start()]), line, int(caused.group(1)) if caused else None)


def parse_dmesg_line(line: str) -> DmesgEvent | None:
    """One Xid, SXid, segfault or OOM event from a kernel log line, or None. Never raises."""
    line = line.rstrip("\r\n")
    if not any(marker in line for marker in _MARKERS):
        return None
    if (match := _XID.search(line)) is not None:
        return _xid(match, line)
    if "fallen off the bus" in line and "NVRM" in line:
        pci = _BUS_PCI.search(line)
        start = line.find("NVRM")
        return XidEvent(79, pci.group(1) if pci else None, None, None, line[start:].strip(),
                        decode_xid(79), _time(line[:start]), line)
    if (match := _SXID.search(line)) is not None:
        text = match.group("text").strip()
        sev = text.split(",", 1)[0].strip().lower()
        fatal = True if sev == "fatal" else False if sev in ("non-fatal", "nonfatal") else None
        link = _LINK.search(text)
        return SXidEvent(int(match.group("code")), _clean_pci(match.group("pci")), match.group("dev"),
                         fatal, int(link.group(1)) if link else None, text,
                         _time(line[:match.start()]), line)
    if (match := _SEGV.search(line)) is not None:
        return SegfaultEvent(match.group("proc"), int(match.group("pid")), match.group("addr"),
                             match.group("ip"), match.group("lib"), _time(line[:match.start()]), line)
    if (match := _OOM.search(line) or _OOM_KILL.search(line)) is not None:
        return OomEvent(int(match.group("pid")), match.group("name") or None,
                        _time(line[:match.start()]), line)
    return None


def scan_dmesg(text: str) -> tuple[DmesgEvent, ...]:
    """Every event in a kernel log, in order. One OOM kill often prints both an "oom-kill:"
    and a "Killed process" line: both are returned. Driver 570+'s multi-line "fallen off the
    bus" report becomes one Xid 79 that takes the PCI id from the report's first line."""
    events: list[DmesgEvent] = []
    recent_pci: str | None = None
    for line in text.splitlines():
        event = parse_dmesg_line(line)
        if "NVRM" in line and (pci := _BUS_PCI.search(line)):
            recent_pci = pci.group(1)
        if event is None:
            continue
        if isinstance(event, XidEvent) and event.code == 79 and "Xid" not in line:
            if event.pci is None and recent_pci is not None:
                event = replace(event, pci=recent_pci)
            previous = events[-1] if events else None
            if isinstance(previous, XidEvent) and previous.code == 79 and previous.pci == event.pci \
                    and previous.timestamp.wallclock == event.timestamp.wallclock \
                    and _close(previous.timestamp, event.timestamp):
                continue  # the same report, one more line of it
        events.append(event)
    return tuple(events)


def _close(a: DmesgTime, b: DmesgTime) -> bool:
    if a.seconds_since_boot is None or b.seconds_since_boot is None:
        return True
    return abs(a.seconds_since_boot - b.seconds_since_boot) < 5.0


_RELEVANT = _MARKERS + ("nvidia-nvswitch", "invoked oom-killer", "Out of memory", "NVLink", "GPU at PCI")


def relevant_lines(text: str) -> list[str]:
    """The kernel log lines worth keeping for a GPU job (Xid and its context, SXid with its
    Severity/Data lines, segfaults, OOM)."""
    return [line for line in text.splitlines() if any(marker in line for marker in _RELEVANT)]
