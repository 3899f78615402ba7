"""Read what an ELF core file says about the process that died, with ``struct`` only.

From the PT_NOTE segment: NT_PRPSINFO (pid, command name, arguments), NT_PRSTATUS (one per
thread: tid and the signal), NT_SIGINFO (signal, code, faulting address), NT_AUXV (the entry
point) and NT_FILE (mapped files), which together name the executable. Also checks that the
file is as long as its program headers say (a truncated core lies about memory).

x86-64 and aarch64 Linux cores (64-bit, little-endian) are understood; anything else is
reported as "not a supported core" rather than guessed at.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

from triage.regular_files import open_regular

ELF_MAGIC = b"\x7fELF"
ET_CORE = 4
PT_NOTE = 4
NT_PRSTATUS = 1
NT_PRPSINFO = 3
NT_AUXV = 6
NT_SIGINFO = 0x53494749
NT_FILE = 0x46494C45
AT_ENTRY = 9
MAX_NOTES_BYTES = 64 * 1024 * 1024

SIGNAL_NAMES = {
    1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS",
    8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
    14: "SIGALRM", 15: "SIGTERM", 24: "SIGXCPU", 25: "SIGXFSZ", 31: "SIGSYS",
}


class CoreFormatError(Exception):
    """The file is not a core this reader understands (message says why, one line)."""


@dataclass(frozen=True)
class MappedFile:
    start: int
    end: int
    offset: int
    path: str


@dataclass(frozen=True)
class CoreNotes:
    path: str
    size: int
    expected_size: int                  # what the program headers need; > size means truncated
    mtime: float
    pid: int | None = None
    command_name: str | None = None     # pr_fname (the main thread's comm, 15 chars)
    arguments: str | None = None        # pr_psargs (first 80 bytes of the command line)
    signal: int | None = None
    signal_code: int | None = None
    fault_address: int | None = None
    thread_ids: tuple[int, ...] = ()    # first one is the thread that took the signal
    entry: int | None = None
    files: tuple[MappedFile, ...] = ()
    machine: int = 0

    @property
    def truncated(self) -> bool:
        return self.size < self.expected_size

    @property
    def signal_name(self) -> str | None:
        if self.signal is None:
            return None
        return SIGNAL_NAMES.get(self.signal, f"signal {self.signal}")

    @property
    def faulting_tid(self) -> int | None:
        return self.thread_ids[0] if self.thread_ids else None

    def executable(self) -> str | None:
        """The file mapped at the entry point (robust to renamed threads and argv[0] tricks)."""
        if self.entry is not None:
            for mapped in self.files:
                if mapped.start <= self.entry < mapped.end:
                    return mapped.path
        for mapped in self.files:  # fallback: the first file mapped at offset 0
            if mapped.offset == 0:
                return mapped.path
        return None

    def mapped_paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.path for m in self.files))


def read_core_notes(path: Path) -> CoreNotes:
    """Raise CoreFormatError (not OSError) when ``path`` is not a readable 64-bit ELF core."""
    try:
        with open_regular(path) as handle:
            stat = os.fstat(handle.fileno())
            header = handle.read(64)
            if len(header) < 4 or header[:4] != ELF_MAGIC:
                raise CoreFormatError("not an ELF file, so not a core dump")
            if len(header) < 64 or header[4] != 2 or header[5] != 1:
                raise CoreFormatError("not a 64-bit little-endian ELF file (only those cores are read)")
            e_type, machine = struct.unpack_from("<HH", header, 16)
            if e_type != ET_CORE:
                kind = {2: "an executable", 3: "a shared object or PIE executable", 1: "an object file"}
                raise CoreFormatError(f"an ELF file but not a core dump (it is {kind.get(e_type, f'type {e_type}')})")
            phoff, = struct.unpack_from("<Q", header, 32)
            phentsize, phnum = struct.unpack_from("<HH", header, 54)
            if phentsize < 56:
                raise CoreFormatError(f"bad program header entry size {phentsize} (a crafted or damaged core)")
            handle.seek(phoff)
            table = handle.read(phentsize * phnum)
            if len(table) < phentsize * phnum:
                raise CoreFormatError("truncated core: the program header table is cut off")
            expected, notes = _segments(handle, table, phentsize, phnum)
    except (OSError, OverflowError, ValueError) as error:
        raise CoreFormatError(f"cannot read it: {getattr(error, 'strerror', None) or error}") from None
    try:
        fields = _parse_notes(notes)
    except (struct.error, ValueError, IndexError, OverflowError) as error:
        raise CoreFormatError(f"damaged ELF notes ({error}): a crafted or damaged core") from None
    return CoreNotes(path=str(path), size=stat.st_size, expected_size=expected, mtime=stat.st_mtime,
                     machine=machine, **fields)  # type: ignore[arg-type]


def _segments(handle: object, table: bytes, phentsize: int, phnum: int) -> tuple[int, bytes]:
    expected = 0
    notes = b""
    for index in range(phnum):
        p_type, _flags, offset, _vaddr, _paddr, filesz = struct.unpack_from("<IIQQQQ", table, index * phentsize)
        expected = max(expected, offset + filesz)
        if p_type == PT_NOTE and len(notes) + filesz <= MAX_NOTES_BYTES:   # bounded in total
            handle.seek(offset)  # type: ignore[attr-defined]
            notes += handle.read(filesz)  # type: ignore[attr-defined]
    return expected, notes


def _iter_notes(data: bytes) -> list[tuple[int, bytes, bytes]]:
    notes = []
    pos = 0
    while pos + 12 <= len(data):
        namesz, descsz, kind = struct.unpack_from("<III", data, pos)
        pos += 12
        name = data[pos:pos + namesz]
        pos += (namesz + 3) & ~3
        desc = data[pos:pos + descsz]
        pos += (descsz + 3) & ~3
        notes.append((kind, name.rstrip(b"\0"), desc))
    return notes


def _cstr(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace").strip()


def _parse_notes(data: bytes) -> dict[str, object]:
    out: dict[str, object] = {}
    tids: list[int] = []
    for kind, name, desc in _iter_notes(data):
        if name != b"CORE":
            continue
        if kind == NT_PRSTATUS and len(desc) >= 36:
            cursig, = struct.unpack_from("<H", desc, 12)
            tids.append(struct.unpack_from("<i", desc, 32)[0])
            out.setdefault("signal", cursig or None)
        elif kind == NT_PRPSINFO and len(desc) >= 136:
            out["pid"] = struct.unpack_from("<i", desc, 24)[0]
            out["command_name"] = _cstr(desc[40:56])
            out["arguments"] = _cstr(desc[56:136])
        elif kind == NT_SIGINFO and len(desc) >= 24:
            signo, _errno, code = struct.unpack_from("<iii", desc, 0)
            out["signal"] = signo
            out["signal_code"] = code
            out["fault_address"] = struct.unpack_from("<Q", desc, 16)[0]
        elif kind == NT_AUXV:
            for pos in range(0, len(desc) - 15, 16):
                key, value = struct.unpack_from("<QQ", desc, pos)
                if key == AT_ENTRY:
                    out["entry"] = value
        elif kind == NT_FILE:
            out["files"] = _parse_nt_file(desc)
    out["thread_ids"] = tuple(tids)
    return out


def _parse_nt_file(desc: bytes) -> tuple[MappedFile, ...]:
    if len(desc) < 16:
        return ()
    count, page_size = struct.unpack_from("<QQ", desc, 0)
    table_end = 16 + count * 24
    if table_end > len(desc):
        return ()
    names = desc[table_end:].split(b"\0")
    files = []
    for index in range(count):
        start, end, offset = struct.unpack_from("<QQQ", desc, 16 + index * 24)
        path = names[index].decode("utf-8", "replace") if index < len(names) else "?"
        files.append(MappedFile(start, end, offset * page_size, path))
    return tuple(files)


def elf_debug_state(path: Path) -> str:
    """What debugging help a binary carries.

    One of: debug_info; symbols (.symtab only); debuglink (debug info may be in a separate
    file); stripped (none of these); unreadable.
    """
    try:
        with open_regular(path) as handle:
            header = handle.read(64)
            if len(header) < 64 or header[:4] != ELF_MAGIC or header[4] != 2 or header[5] != 1:
                return "unreadable"
            shoff, = struct.unpack_from("<Q", header, 40)
            shentsize, shnum, shstrndx = struct.unpack_from("<HHH", header, 58)
            if not shoff or not shnum or shstrndx >= shnum:
                return "stripped"
            if shentsize < 64:
                return "unreadable"
            handle.seek(shoff)
            table = handle.read(shentsize * shnum)
            str_offset, str_size = struct.unpack_from("<QQ", table, shstrndx * shentsize + 24)
            handle.seek(str_offset)
            names = handle.read(min(str_size, 1 << 20))
    except (OSError, struct.error):
        return "unreadable"
    found = set()
    for index in range(len(table) // shentsize):
        name_offset, = struct.unpack_from("<I", table, index * shentsize)
        found.add(_cstr(names[name_offset:name_offset + 64]))
    if len(table) < shentsize * shnum and not found:
        return "unreadable"
    if ".debug_info" in found:
        return "debug_info"
    if ".symtab" in found:
        return "symbols"
    return "debuglink" if ".gnu_debuglink" in found else "stripped"
