"""The user's own cache of what triage compiles at every start (docs/performance.md, "Large logs").

A report's imports create ~110 dataclasses, and the dataclasses module writes the source of each class's
methods (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, the frozen ``__setattr__``) and compiles it
with ``exec``: ~600 small compilations, ~60% of the imports' CPU. The code objects those compilations give
depend only on the source text and the interpreter, so they are kept, like the ``.pyc`` files Python keeps
of modules, and read back at the next start: :func:`install` has the dataclasses module compile through
:func:`_exec` (the same ``exec`` of the same code object, compiled or read back), and :func:`save` writes
what was compiled anew.

Where: ``$XDG_CACHE_HOME/triage`` (an absolute path), else ``~/.cache/triage``: a directory of the user's
own, 0700, that no one else can write to or swap (:func:`triage.private_files.directory_problem`). A file
is read only when it is a regular file (never through a link: ``O_NOFOLLOW``), the user's own, readable
and writable by no one else, of a bounded size, for this interpreter's bytecode (its magic number and
cache tag), and its content matches the digest (BLAKE2b-256) in its header; anything else is ignored (and replaced at
the next save). What it holds is code the user's own triage compiled: a file someone else could plant is
never read. Nothing is written where Python writes no bytecode (``-B``, ``PYTHONDONTWRITEBYTECODE``).
Every failure to read or write only means compiling as before.

The regular expressions a command compiles are kept the same way, in a file of their own (``regex-code``, named also
by the regex engine's ``_sre.MAGIC``): for each pattern and flags, what ``re``'s compiler hands the engine (the
engine's code words, the flags, the groups' names and numbers), so that a later start has the engine build the
pattern from them (``_sre.compile``, which checks the code words) rather than parse and compile it again (~0.1 ms a
pattern, ~100 patterns a report). :func:`install` has ``re`` compile through :func:`_regex`; a pattern compiled anew
is kept only where the pattern built from the kept parts equals ``re``'s own, code word for code word (a
``re.Pattern`` compares its code), and what is returned is always ``re``'s own.

What a function of a pattern found (the literals a gated pattern requires, triage.parsing.regex_gate) is kept in a
third file (``gate-literals``) by :func:`memo`, keyed by everything the value depends on (the computing module's own
source digest among them): strings, flags and tuples, never code.
"""

from __future__ import annotations

import builtins
import contextlib
import marshal
import os
import re
import stat
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:    # the keys: CPython's own SHA-256 (~2 ms to load at every start; hashlib loads OpenSSL's: ~6 ms), same digest
    from _sha256 import sha256  # type: ignore[import-not-found,unused-ignore]
except ImportError:     # (another interpreter, or Python 3.12+, where it is _sha2)
    try:
        from _sha2 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:
        from hashlib import sha256  # type: ignore[assignment,no-redef,unused-ignore]
try:    # a file's digest: BLAKE2b-256 from CPython's own _blake2 (~1.2 ms for a report's 0.9 MB file; SHA-256 ~3.5)
    from _blake2 import blake2b  # type: ignore[import-not-found,unused-ignore]
except ImportError:     # (another interpreter)
    from hashlib import blake2b  # type: ignore[no-redef,unused-ignore]

NAME = "dataclass-code-2"     # -2: the format of MAGIC 2 (a checkout of format 1 beside keeps its own file)
REGEX_NAME = "regex-code-2"
MAGIC = b"triage compiled cache 2\n"   # 2: the file's digest BLAKE2b-256 (1: SHA-256)
MAX_BYTES = 16 << 20          # the report's classes: ~0.6 MB
MAX_ENTRIES = 8000            # past this, a save keeps only what this process used (old classes' code goes)

_loaded: dict[bytes, types.CodeType] | None = None
_used: set[bytes] = set()
_new: dict[bytes, types.CodeType] = {}
_installed = False
_reading = False        # a cache file being read (its imports compile patterns of their own)

# the patterns' parts, keyed by (source, flags): (flags, code words, groups - 1, {name: group}, (name or None, ...))
Parts = tuple[int, list[int], int, dict[str, int], tuple[Any, ...]]
_regex_loaded: dict[tuple[str | bytes, int], Parts] | None = None
_regex_used: set[tuple[str | bytes, int]] = set()
_regex_new: dict[tuple[str | bytes, int], Parts] = {}
_re_compile: Callable[..., Any] | None = None     # re's own compiler, where install() put _regex in its place
# what a function of a pattern's source found (the literal gates' parse, triage.parsing.regex_gate), keyed by (the
# function's version, its arguments): read back where install() was called, as the patterns' parts are
MEMO_NAME = "gate-literals-1"
_memo_loaded: dict[tuple[Any, ...], Any] | None = None
_memo_used: set[tuple[Any, ...]] = set()
_memo_new: dict[tuple[Any, ...], Any] = {}


def directory() -> Path | None:
    """``$XDG_CACHE_HOME/triage`` where that is absolute, else ``~/.cache/triage``; None without a home."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        home = os.environ.get("HOME") or ""
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "triage"


def _tag() -> bytes:
    from importlib.util import MAGIC_NUMBER

    return MAGIC_NUMBER + (sys.implementation.cache_tag or "").encode() + b"\n"


def read(name: str) -> bytes | None:
    """The payload of the cache file ``name``, or None where there is none that passes every check above."""
    global _reading
    if _reading:        # (a pattern compiled by the imports below: compiled as before, not read back)
        return None
    _reading = True
    try:
        return _read(name)
    finally:
        _reading = False


def _read(name: str) -> bytes | None:
    from triage.private_files import directory_problem

    where = directory()
    if where is None or directory_problem(where) is not None:
        return None
    try:
        fd = os.open(where / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077
                or info.st_size > MAX_BYTES):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    head = MAGIC + _tag()
    digest = data[len(head):len(head) + 32]
    payload = data[len(head) + 32:]
    if not data.startswith(head) or len(data) > MAX_BYTES or _digest(payload) != digest:
        return None
    return payload


def write(name: str, payload: bytes) -> bool:
    """Write the cache file ``name`` (a new 0600 file renamed over the old one); False where it could not be."""
    from triage.private_files import UnsafeDirectoryError, make_private_dir

    where = directory()
    if where is None or _no_bytecode():
        return False
    data = MAGIC + _tag() + _digest(payload) + payload
    try:
        make_private_dir(where)
        tmp = where / f".{name}.{os.urandom(6).hex()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except (OSError, UnsafeDirectoryError):
        return False
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, where / name)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    return True


def _digest(payload: bytes) -> bytes:
    """The 32-byte digest a file's header holds of its payload."""
    return blake2b(payload, digest_size=32).digest()


def _no_bytecode() -> bool:
    return bool(sys.flags.dont_write_bytecode)


def _file() -> str:
    return f"{NAME}-{sys.implementation.cache_tag}.bin"


def _table(name: str) -> dict[Any, Any]:
    """The dict marshalled in the cache file ``name``; {} where read() refused it or it holds no dict."""
    payload = read(name)
    if payload is None:
        return {}
    try:
        table = marshal.loads(payload)  # noqa: S302 (the user's own file, every check of read() passed)
    except (EOFError, ValueError, TypeError):
        return {}
    return table if isinstance(table, dict) else {}


def _codes() -> dict[bytes, types.CodeType]:
    global _loaded
    if _loaded is None:
        _loaded = {}        # (first: a compile while the file is read finds it empty)
        _loaded = {key: code for key, code in _table(_file()).items()
                   if isinstance(key, bytes) and isinstance(code, types.CodeType)}
    return _loaded


def compiled(source: str) -> types.CodeType:
    """``compile(source, "<string>", "exec")``: read back from the cache where it holds it."""
    key = sha256(source.encode("utf-8", "surrogatepass")).digest()
    code = _codes().get(key) or _new.get(key)
    if code is None:
        code = compile(source, "<string>", "exec")
        _new[key] = code
    _used.add(key)
    return code


def _exec(source: Any, globals: dict[str, Any] | None = None, locals: Any = None) -> None:
    """``exec`` as the dataclasses module calls it (a source text, its globals or None for its own, and a
    namespace): the same code object run the same way; anything else is passed on as it came."""
    import dataclasses

    if globals is None:
        globals = vars(dataclasses)    # (what exec(source, None, ns) means there)
    if isinstance(source, str) and locals is not None:
        source = compiled(source)
    # the dataclasses module's own generated methods, as it would run them itself
    if locals is None:
        builtins.exec(source, globals)  # noqa: S102
    else:
        builtins.exec(source, globals, locals)  # noqa: S102


def install() -> None:
    """Have the dataclasses module compile through the cache (once a process; the CLI calls it first). Never
    in a rank: only triage's own commands call it."""
    global _installed
    if _installed:
        return
    _installed = True
    import dataclasses

    if "exec" not in vars(dataclasses):
        dataclasses.exec = _exec  # type: ignore[attr-defined]
    global _re_compile
    compiler = _re_compiler()
    if compiler is not None and _sre_engine() is not None and compiler.compile is not _regex:
        _re_compile = compiler.compile
        compiler.compile = _regex


def _re_compiler() -> Any:
    """``re._compiler`` (Python 3.11 on), whose ``compile`` ``re`` calls for a pattern not in its own cache; None
    where it has another shape (3.10's ``sre_compile``: its patterns are compiled as before)."""
    compiler = getattr(re, "_compiler", None)
    return compiler if callable(getattr(compiler, "compile", None)) and hasattr(compiler, "_code") \
        and hasattr(compiler, "_parser") else None


# re's own compiler, as this module found it on import (before install() could put _regex in its place): never
# _regex itself, so a _regex that found itself as "re's own" (a second install, a test's stand-in) cannot recurse
RE_OWN_COMPILE: Callable[..., Any] = getattr(_re_compiler(), "compile", None) or re.compile   # (3.10: unused)


def _sre_engine() -> Any:
    try:
        import _sre  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return _sre if callable(getattr(_sre, "compile", None)) and hasattr(_sre, "MAGIC") else None


def _regex_file() -> str:
    return f"{REGEX_NAME}-{sys.implementation.cache_tag}-{getattr(_sre_engine(), 'MAGIC', 0)}.bin"


def _regexes() -> dict[tuple[str | bytes, int], Parts]:
    global _regex_loaded
    if _regex_loaded is None:
        _regex_loaded = {}
        _regex_loaded = {key: parts for key, parts in _table(_regex_file()).items() if _well_formed(key, parts)}
    return _regex_loaded


def _well_formed(key: object, parts: object) -> bool:
    return (isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], (str, bytes)) and type(key[1]) is int
            and isinstance(parts, tuple) and len(parts) == 5 and type(parts[0]) is int and isinstance(parts[1], list)
            and type(parts[2]) is int and isinstance(parts[3], dict) and isinstance(parts[4], tuple))


def _parts(source: str | bytes, flags: int) -> Parts:
    """What ``re``'s compiler hands the engine for ``source`` and ``flags``: the parsed pattern's code words, its
    flags with those set inline, the number of its groups, and its group names both ways."""
    compiler = _re_compiler()
    tree = compiler._parser.parse(source, flags)
    state = tree.state
    names = dict(state.groupdict)
    by_number: list[str | None] = [None] * state.groups
    for name, number in names.items():
        by_number[number] = name
    code = [int(word) for word in compiler._code(tree, flags)]      # (its opcodes are named ints: plain ones kept)
    return flags | state.flags, code, state.groups - 1, names, tuple(by_number)


def _regex(source: Any, flags: int = 0) -> Any:
    """``re._compiler.compile(source, flags)``: the pattern built from the kept parts where the cache holds them,
    else ``re``'s own (its parts kept where they build the same pattern)."""
    compile_own = _re_compile if _re_compile is not None and _re_compile is not _regex else RE_OWN_COMPILE
    if not isinstance(source, (str, bytes)) or type(flags) is not int or flags & re.DEBUG or _reading:
        return compile_own(source, flags)
    key = (source, flags)
    engine = _sre_engine()
    parts = _regexes().get(key) or _regex_new.get(key)
    if parts is not None and (pattern := _built(engine, source, parts)) is not None:
        _regex_used.add(key)
        return pattern
    pattern = compile_own(source, flags)
    try:
        parts = _parts(source, flags)
    except Exception:  # noqa: BLE001 - not kept: compiled at every start, as before
        return pattern
    if _built(engine, source, parts) == pattern:
        _regex_new[key] = parts
        _regex_used.add(key)
    return pattern


def _memo_file() -> str:
    return f"{MEMO_NAME}-{sys.implementation.cache_tag}.bin"


def _memos() -> dict[tuple[Any, ...], Any]:
    global _memo_loaded
    if _memo_loaded is None:
        _memo_loaded = {}
        _memo_loaded = {key: value for key, value in _table(_memo_file()).items() if isinstance(key, tuple)}
    return _memo_loaded


def memo(key: tuple[Any, ...], compute: Callable[[], Any], valid: Callable[[Any], bool]) -> Any:
    """``compute()``, read back from the cache where it holds ``key`` and the value kept passes ``valid``; kept for the
    next start where install() was called (a triage command; never in a library's or a rank's process). ``key`` must
    name everything the value depends on (the computing code's own version among them); the value must be what
    ``marshal`` keeps (str, int, bool, None, tuples of them)."""
    if not _installed:
        return compute()
    found = _memos().get(key, _MISSING)
    if found is _MISSING or not valid(found):
        found = _memo_new.get(key, _MISSING)
    if found is _MISSING:
        found = _memo_new[key] = compute()
    _memo_used.add(key)
    return found


_MISSING = object()


def _built(engine: Any, source: str | bytes, parts: Parts) -> Any:
    """The pattern the engine builds from ``parts``; None where it refuses them."""
    try:
        return engine.compile(source, *parts)
    except Exception:  # noqa: BLE001 - parts the engine refuses: compiled as before
        return None


def save() -> bool:
    """Write the code and the patterns compiled anew since the cache was read (nothing when none were): the old
    entries with the new ones, or only those this process used where they would pass ``MAX_ENTRIES``."""
    wrote = False
    if _new and _save(_file(), _codes(), _new, _used):
        wrote = True
    if _regex_new and _save(_regex_file(), _regexes(), _regex_new, _regex_used):
        wrote = True
    if _memo_new and _save(_memo_file(), _memos(), _memo_new, _memo_used):
        wrote = True
    return wrote


def _save(name: str, loaded: dict[Any, Any], new: dict[Any, Any], used: set[Any]) -> bool:
    kept = dict(loaded)
    kept.update(new)
    if len(kept) > MAX_ENTRIES:
        kept = {key: kept[key] for key in used if key in kept}
    try:
        payload = marshal.dumps(kept)
    except ValueError:
        return False
    if len(payload) + 200 > MAX_BYTES or not write(name, payload):
        return False
    loaded.update(new)
    new.clear()
    return True
