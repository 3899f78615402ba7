"""A pickle decoder that runs no code: pickles are programs, FR dumps are plain data."""

from __future__ import annotations

import io
import pickle
from typing import Any

# Constructors of builtin containers and scalars that old pickle protocols name as globals
# (protocol 2 writes sets as builtins.set and bytes as _codecs.encode). They run no user code.
_ALLOWED: dict[tuple[str, str], Any] = {
    ("builtins", "set"): set, ("builtins", "frozenset"): frozenset, ("builtins", "bytearray"): bytearray,
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
    return _RestrictedUnpickler(io.BytesIO(data)).load()
