"""A pickle decoder that runs no code: pickles are programs, FR dumps are plain data.

It is bounded too: a small pickle cannot make triage allocate gigabytes (``bytearray(N)``), nest
deeper than :data:`MAX_DEPTH`, or use shared references (the memo, or DUP) to describe a structure
that takes more than :data:`MAX_NODES` steps to walk as a tree. Each of these is an UnpicklingError.

Code and ``bytearray(N)`` are refused while decoding (``find_class`` allowlists, ``persistent_id``
is refused). Depth and sharing are checked after decoding by :func:`check_shape`, one pass per
nesting level made of C calls only (``gc.get_referents``, ``map``, ``set``): no Python code runs
per value. Only a pickle whose containers are referenced more than once (which a memo GET or a DUP
makes, and which real dumps do not have) pays for :func:`check_bounds`, the exact walk.
"""

from __future__ import annotations

import gc
import io
import pickle
from itertools import compress
from typing import Any

MAX_DEPTH = 200                 # an FR dump nests about 6 deep
MAX_NODES = 5_000_000           # values visited when the result is walked as a tree
MAX_BYTEARRAY = 64 * 1024 * 1024


def _bytearray(*args: Any) -> bytearray:
    """``bytearray`` as pickle protocol 2 calls it, but never ``bytearray(N)`` with a count."""
    if args and isinstance(args[0], int) and not 0 <= args[0] <= MAX_BYTEARRAY:
        raise pickle.UnpicklingError(f"refusing bytearray({args[0]}): larger than {MAX_BYTEARRAY} bytes")
    return bytearray(*args)


# Constructors of builtin containers and scalars that old pickle protocols name as globals
# (protocol 2 writes sets as builtins.set and bytes as _codecs.encode). They run no user code.
_ALLOWED: dict[tuple[str, str], Any] = {
    ("builtins", "set"): set, ("builtins", "frozenset"): frozenset, ("builtins", "bytearray"): _bytearray,
    ("builtins", "complex"): complex, ("collections", "OrderedDict"): dict,
}
_ALLOWED.update({("__builtin__", name): value for (_module, name), value in list(_ALLOWED.items())})


def _latin1_bytes(text: str, encoding: str = "latin1") -> bytes:
    if encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError(f"refusing _codecs.encode with {encoding!r}")
    return text.encode("latin1")


class _RestrictedUnpickler(pickle.Unpickler):
    """Allows only builtin containers and scalars: any other global or a persistent id is refused."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("_codecs", "encode"):
            return _latin1_bytes
        allowed = _ALLOWED.get((module, name))
        if allowed is None:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name}: FR dumps hold only plain data")
        return allowed

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("refusing a persistent id: FR dumps hold only plain data")


def safe_unpickle(data: bytes) -> Any:
    """Decode a pickle that may hold only dicts, lists, tuples, sets, str, bytes, numbers, bools
    and None. Raises pickle.UnpicklingError (or EOFError...) on anything else."""
    value = restricted_loads(data)
    check_shape(value)
    return value


def restricted_loads(data: bytes) -> Any:
    """The decoding half of :func:`safe_unpickle`: no code runs and no ``bytearray(N)`` is made
    (both refused while decoding; the C unpickler keeps its own stack, so nesting costs no
    recursion), but depth and shared references are NOT checked.

    Only for a consumer that walks a fixed schema and counts what it visits against a budget
    proportional to ``len(data)`` (the distinct objects are bounded by the pickle's size; only a
    walk that meets a shared object once per reference can take longer), never stringifies a
    container, and caps every per-value operation on a string: the Flight Recorder parsers
    (parsing/flight_recorder/entries.py, ``Walk``). Anything that walks arbitrary values takes
    :func:`safe_unpickle`."""
    try:
        return _RestrictedUnpickler(io.BytesIO(data)).load()
    except (RecursionError, MemoryError) as error:
        raise pickle.UnpicklingError(f"refusing a pickle that is too large or too deep ({type(error).__name__})") \
            from None


_CONTAINERS = (dict, list, tuple, set, frozenset)
_IS_CONTAINER = frozenset(_CONTAINERS).__contains__


def check_shape(value: Any, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> None:
    """:func:`check_bounds`'s guarantees, walked level by level with C calls only.

    Each level is the list of containers one step deeper, a shared container once per reference
    (as a tree walk meets it), so the depth is the number of levels and the work is the tree size,
    which is bounded before each step. Only a value over a bound pays for the exact walk, which
    names the cause (deep, shared, a cycle)."""
    level = [value] if type(value) in _CONTAINERS else []
    depth = nodes = 0
    while level:
        depth += 1
        nodes += sum(map(len, level))              # members (a dict's items) of this level
        if depth > max_depth or nodes > max_nodes:
            break
        members = gc.get_referents(*level)
        level = list(compress(members, map(_IS_CONTAINER, map(type, members))))
    else:
        return
    check_bounds(value, max_depth, max_nodes)       # exact: raises naming the cause (deep, shared, cycle)
    if depth > max_depth:                           # a long path that the exact walk met by a short one first
        raise pickle.UnpicklingError(f"refusing a pickle nested deeper than {max_depth}")


def check_bounds(value: Any, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> None:
    """Refuse ``value`` if, walked as a tree, it is deeper than ``max_depth``, has more than
    ``max_nodes`` values, or contains itself. Linear in the size of the decoded data: each
    container's tree size is worked out once (by id) however often it is referenced."""
    sizes: dict[int, tuple[int, int]] = {}          # id -> (tree size, height)
    open_ids: set[int] = set()                      # the containers on the current path
    stack: list[tuple[Any, list[Any] | None, int]] = [(value, None, 0)]
    while stack:
        item, kids, scalars = stack.pop()
        key = id(item)
        if kids is not None:                        # all children done: this one is done
            size, height = 1 + scalars, 0
            for kid in kids:
                kid_size, kid_height = sizes[id(kid)]
                size += kid_size
                height = max(height, kid_height)
            open_ids.discard(key)
            sizes[key] = (size, height + 1)
            if size > max_nodes:
                raise pickle.UnpicklingError(f"refusing a pickle that expands to more than {max_nodes} values "
                                             "(shared references)")
            continue
        if key in sizes or not isinstance(item, _CONTAINERS):
            continue
        if key in open_ids:
            raise pickle.UnpicklingError("refusing a pickle that contains itself (a cycle)")
        open_ids.add(key)
        if len(open_ids) > max_depth:
            raise pickle.UnpicklingError(f"refusing a pickle nested deeper than {max_depth}")
        members = [*item.keys(), *item.values()] if isinstance(item, dict) else item
        children = [m for m in members if isinstance(m, _CONTAINERS)]
        stack.append((item, children, len(members) - len(children)))
        stack.extend((kid, None, 0) for kid in children if id(kid) not in sizes)
