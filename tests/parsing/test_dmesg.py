from __future__ import annotations

import time

import pytest

from triage.parsing.dmesg import (
    DmesgTime,
    OomEvent,
    SegfaultEvent,
    SXidEvent,
    XidCause,
    XidEvent,
    decode_xid,
    parse_dmesg_line,
    relevant_lines,
    scan_dmesg,
)


@pytest.mark.parametrize(("code", "cause"), [
    (13, XidCause.APPLICATION), (31, XidCause.APPLICATION), (43, XidCause.APPLICATION),
    (45, XidCause.SECONDARY), (48, XidCause.HARDWARE), (62, XidCause.HARDWARE), (63, XidCause.HARDWARE),
    (64, XidCause.HARDWARE), (74, XidCause.HARDWARE), (79, XidCause.HARDWARE), (92, XidCause.HARDWARE),
    (94, XidCause.HARDWARE), (95, XidCause.HARDWARE), (109, XidCause.DRIVER), (119, XidCause.DRIVER),
    (120, XidCause.DRIVER), (140, XidCause.HARDWARE), (143, XidCause.HARDWARE), (144, XidCause.HARDWARE),
    (150, XidCause.HARDWARE), (9999, XidCause.UNKNOWN),
])
def test_decode_xid(code: int, cause: XidCause) -> None:
    info = decode_xid(code)
    assert info.code == code and info.cause is cause
    assert info.meaning and info.action


def test_xid_79_advice() -> None:
    assert "fallen off the bus" in decode_xid(79).meaning
    assert "reboot" in decode_xid(79).action
    assert "first Xid" in decode_xid(45).action


@pytest.mark.parametrize(("line", "code", "pci", "pid", "proc", "boot", "wall"), [
    ("[  123.456789] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
     79, "0000:3b:00", 1234, "python", 123.456789, None),
    (("[Thu Sep 11 10:58:45 2025] NVRM: Xid (PCI:0000:3b:00): 31, pid=4121, name=pt_main_thread, Ch 00000008, "
     "intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f01_a0000000."),
     31, "0000:3b:00", 4121, "pt_main_thread", None, "Thu Sep 11 10:58:45 2025"),
    ("Sep 11 10:58:45 node07 kernel: NVRM: Xid (PCI:0000:3b:00): 45, pid=4121, name=python, Ch 00000010",
     45, "0000:3b:00", 4121, "python", None, "Sep 11 10:58:45"),
    (("2025-09-11T10:58:45,123456+00:00 NVRM: Xid (PCI:XXXX:XX:XX): 48, pid=1, name=x, An uncorrectable double "
     "bit error"), 48, None, 1, "x", None, "2025-09-11T10:58:45,123456+00:00"),
    (("2025-09-11T10:58:45.123456+0000 node07 kernel: NVRM: Xid (PCI:<redacted>): 94, pid='<unknown>', "
     "name=<unknown>, Contained: SM (0x1). RST: No"), 94, None, None, "<unknown>", None, "2025-09-11T10:58:45.123456+0000"),
    ("kernel: NVRM: Xid (0000:3b:00): 13, 0000 00000000 0000c5c0 00000334 00000000 00000000",
     13, "0000:3b:00", None, None, None, None),
    ("[ 5.1] NVRM: Xid (PCI:0000:b3:00): 119, Timeout after 6s of waiting for RPC response from GPU0 GSP!",
     119, "0000:b3:00", None, None, 5.1, None),
])
def test_xid_lines(line: str, code: int, pci: str | None, pid: int | None, proc: str | None, boot: float | None,
                   wall: str | None) -> None:
    event = parse_dmesg_line(line)
    assert isinstance(event, XidEvent)
    assert (event.code, event.pci, event.pid, event.process) == (code, pci, pid, proc)
    assert (event.timestamp.seconds_since_boot, event.timestamp.wallclock) == (boot, wall)
    assert event.info == decode_xid(code)
    assert event.raw == line


def test_caused_by_previous_xid() -> None:
    event = parse_dmesg_line("[ 9.0] NVRM: Xid (PCI:0000:3b:00): 45, pid=7, name=python, Ch 00000010 "
                             "(caused by previous Xid 31)")
    assert isinstance(event, XidEvent)
    assert event.caused_by == 31


def test_fallen_off_the_bus_without_number() -> None:
    text = """[  812.000001] NVRM: The NVIDIA GPU 0000:3b:00.0
[  812.000002] NVRM: (PCI ID: 10de:2330) installed in this system has
[  812.000003] NVRM: fallen off the bus and is not responding to commands.
[  812.100000] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.
"""
    (event,) = scan_dmesg(text)
    assert isinstance(event, XidEvent)
    assert (event.code, event.pci, event.timestamp.seconds_since_boot) == (79, "0000:3b:00.0", 812.000003)
    assert len(relevant_lines(text)) == 4
    # two GPUs off the bus: two events
    other = text.replace("0000:3b:00.0", "0000:86:00.0").replace("[  812.", "[  900.")
    assert [e.pci for e in scan_dmesg(text + other)] == ["0000:3b:00.0", "0000:86:00.0"]  # type: ignore[union-attr]
    # with the numbered Xid line too, both are kept (the numbered one carries pid and name)
    numbered = "[  812.2] NVRM: Xid (PCI:0000:3b:00): 79, pid=7, name=python, GPU has fallen off the bus.\n"
    assert [e.code for e in scan_dmesg(text + numbered)] == [79, 79]


def test_sxid() -> None:
    line = "[  99.1] nvidia-nvswitch3: SXid (PCI:0000:c4:00.0): 12028, Non-fatal, Link 53 egress non-posted PRIV error"
    event = parse_dmesg_line(line)
    assert isinstance(event, SXidEvent)
    assert (event.code, event.pci, event.device, event.fatal, event.link) == (
        12028, "0000:c4:00.0", "nvidia-nvswitch3", False, 53)
    fatal = parse_dmesg_line("nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 30 LTSSM Fault Up")
    assert isinstance(fatal, SXidEvent) and fatal.fatal is True
    severity = "[ 99.1] nvidia-nvswitch3: SXid (PCI:0000:c4:00.0): 12028, Severity 0 Engine instance 53 Sub-engine 00"
    assert isinstance(parse_dmesg_line(severity), SXidEvent)
    data = "[ 99.1] nvidia-nvswitch3: SXid (PCI:0000:c4:00.0): 12028, Data {0x00000000, 0x00000000}"
    assert data in relevant_lines(data)


@pytest.mark.parametrize(("line", "proc", "pid", "addr", "lib"), [
    (("[  99.1] python[1234]: segfault at 0 ip 00007f3b2c1d2e3f sp 00007ffd1c0b1e20 error 4 in "
     "libtorch_cuda.so[7f3b2a000000+4e000000] likely on CPU 3 (core 3, socket 0)"),
     "python", 1234, "0", "libtorch_cuda.so"),
    (("[Thu Sep 11 10:58:45 2025] pt_main_thread[88]: segfault at 7f00dead ip 00007f3b2c1d2e3f sp 00007ffd1c0b1e20 "
     "error 6"), "pt_main_thread", 88, "7f00dead", None),
])
def test_segfault(line: str, proc: str, pid: int, addr: str, lib: str | None) -> None:
    event = parse_dmesg_line(line)
    assert isinstance(event, SegfaultEvent)
    assert (event.process, event.pid, event.addr, event.library) == (proc, pid, addr, lib)


@pytest.mark.parametrize(("line", "pid", "proc"), [
    ("[  99.2] Out of memory: Killed process 1234 (python) total-vm:100kB, anon-rss:1kB, file-rss:0kB", 1234, "python"),
    ("[  99.2] Memory cgroup out of memory: Killed process 77 (pt_main_thread) total-vm:1kB", 77, "pt_main_thread"),
    ("[  99.2] Out of memory: Kill process 55 (python3) score 900 or sacrifice child", 55, "python3"),
    (("[  99.2] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,"
     "task_memcg=/,task=python,pid=1234,uid=0"), 1234, "python"),
])
def test_oom(line: str, pid: int, proc: str) -> None:
    event = parse_dmesg_line(line)
    assert isinstance(event, OomEvent)
    assert (event.pid, event.process) == (pid, proc)


@pytest.mark.parametrize("line", [
    "", "[  1.0] usb 1-1: new high-speed USB device", "NVRM: loading NVIDIA UNIX x86_64 Kernel Module",
    "NVRM: Xid (PCI:0000:3b:00): notanumber", "segfault at", "Killed process", "[ 1.0] SXid",
])
def test_not_events(line: str) -> None:
    assert parse_dmesg_line(line) is None


def test_relevant_lines_filters() -> None:
    text = "[ 1.0] usb 1-1: new device\n[ 2.0] NVRM: Xid (PCI:0000:3b:00): 31, pid=1, name=python, MMU Fault\n[ 3.0] python invoked oom-killer: gfp_mask=0x100cca\n[ 4.0] EXT4-fs (sda1): mounted filesystem"
    assert relevant_lines(text) == text.splitlines()[1:3]


@pytest.mark.parametrize(("stamp", "boot", "expected"), [
    (DmesgTime(None, "2025-09-11T10:58:45,123456+00:00"), None, 1757588325.123456),
    (DmesgTime(None, "2025-09-11T10:58:45.5+0000"), None, 1757588325.5),
    (DmesgTime(None, "2025-09-11T10:58:45.123456789Z"), None, 1757588325.123456),
    (DmesgTime(12.5, None), 1000.0, 1012.5),
    (DmesgTime(12.5, None), None, None),
    (DmesgTime(None, "Sep 11 10:58:45"), None, None),
    (DmesgTime(None, "garbage"), None, None),
])
def test_dmesg_time_to_unix(stamp: DmesgTime, boot: float | None, expected: float | None) -> None:
    result = stamp.unix(boot)
    assert result == pytest.approx(expected) if expected is not None else result is None


def test_ctime_stamp_is_local_time() -> None:
    stamp = DmesgTime(None, "Thu Sep 11 10:58:45 2025")
    assert stamp.unix() == time.mktime((2025, 9, 11, 10, 58, 45, 0, 0, -1))
