"""torchrun's command line, read in one place (pure, never raises).

``torchrun [options] PROGRAM [program args]``: the options end at the first word that is not an
option (the training script, or the module after ``-m``). Each option takes one value, as
``--opt VALUE`` or ``--opt=VALUE``, except the flags below; ``_`` and ``-`` are the same in names
(``--nproc_per_node`` is ``--nproc-per-node``) and, as in argparse, the last occurrence wins.

The readers turn one option's text into a value and say, in one line, what is wrong with a bad
one (``--nnodes '3:2': expected N or MIN:MAX with 1 <= MIN <= MAX``): `triage check` refuses the
command with that line, the live agent falls back to "not known".
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

TORCHRUN_MODULES = ("torch.distributed.run", "torch.distributed.launch")
# options that say how to run the program (no value)
PROGRAM_FLAGS = frozenset({"-m", "--module", "--no-python", "--run-path"})
# every option that takes no value
FLAGS = PROGRAM_FLAGS | {"--standalone", "--virtual-local-rank"}
NPROC_WORDS = frozenset({"gpu", "cpu", "auto", "xpu"})    # --nproc-per-node by device count
DEFAULT_RDZV_PORT = 29400        # torchrun's port when --rdzv-endpoint names none
MAX_WORDS = 1000                 # options read from one command line


@dataclass(frozen=True)
class TorchrunArgs:
    """torchrun's options, as written (names normalised to ``--with-dashes``)."""

    options: tuple[tuple[str, str], ...] = ()   # (name, value) in order; "" for a flag
    program_at: int | None = None               # index in argv of the program's first word
    program_flags: tuple[str, ...] = ()         # -m, --no-python, --run-path as given
    missing_value: str | None = None            # the last option, given without its value

    def get(self, name: str) -> str | None:
        """The value of ``--name`` (the last one given), None when absent."""
        found = None
        for key, value in self.options:
            if key == name:
                found = value
        return found

    def has(self, name: str) -> bool:
        return any(key == name for key, _ in self.options)


def torchrun_index(argv: Sequence[str]) -> int | None:
    """Index of torchrun's first option: after ``.../torchrun`` or ``-m torch.distributed.run``."""
    for index, word in enumerate(argv[:MAX_WORDS]):
        if os.path.basename(word) == "torchrun":
            return index + 1
        if word in TORCHRUN_MODULES and index > 0 and argv[index - 1] == "-m":
            return index + 1
    return None


def _name(word: str) -> str:
    return "-" + word[1:].replace("_", "-") if word.startswith("-") else word


def parse_torchrun_args(argv: Sequence[str], start: int = 0) -> TorchrunArgs:
    """torchrun's options in ``argv[start:]``, up to the program."""
    options: list[tuple[str, str]] = []
    flags: list[str] = []
    index = start
    end = min(len(argv), start + MAX_WORDS)
    while index < end:
        word = argv[index]
        if word == "--":                # the end of the options: the program follows
            return TorchrunArgs(tuple(options), index + 1 if index + 1 < len(argv) else None, tuple(flags))
        if not word.startswith("-") or word == "-":
            return TorchrunArgs(tuple(options), index, tuple(flags))
        raw, eq, value = word.partition("=")
        name = _name(raw)
        if eq:
            options.append((name, value))
        elif name in FLAGS:
            options.append((name, ""))
            if name in PROGRAM_FLAGS:
                flags.append(word)
        elif index + 1 < len(argv):
            options.append((name, argv[index + 1]))
            index += 1
        else:
            return TorchrunArgs(tuple(options), None, tuple(flags), missing_value=word)
        index += 1
    return TorchrunArgs(tuple(options), None, tuple(flags))


def read_nnodes(value: str) -> tuple[tuple[int, int] | None, str | None]:
    """``--nnodes N`` or ``MIN:MAX`` -> ((min, max), None); a bad value -> (None, the problem)."""
    low, colon, high = value.partition(":")
    try:
        lo, hi = int(low), int(high if colon else low)
    except ValueError:
        return None, f"--nnodes {value!r}: expected N or MIN:MAX"
    if lo < 1 or hi < lo:
        return None, f"--nnodes {value!r}: expected N or MIN:MAX with 1 <= MIN <= MAX"
    return (lo, hi), None


def read_count(name: str, value: str, minimum: int) -> tuple[int | None, str | None]:
    """A whole number of at least ``minimum`` (``--nproc-per-node gpu`` and the like: (None, None))."""
    try:
        number = int(value)
    except ValueError:
        if name == "--nproc-per-node" and value in NPROC_WORDS:
            return None, None
        return None, f"{name} {value!r}: not a whole number"
    if number < minimum:
        return None, f"{name} {value!r}: out of range"
    return number, None


def read_port(name: str, value: str) -> tuple[int | None, str | None]:
    try:
        return int(value), None
    except ValueError:
        return None, f"{name} {value!r}: not a number"


def read_endpoint(value: str) -> tuple[tuple[str, int] | None, str | None]:
    """``--rdzv-endpoint HOST[:PORT]`` (``[v6]:port`` too) -> ((host, port), None); no port: 29400."""
    host, colon, port = value.rpartition(":")
    if not colon or host.count(":") and not host.startswith("["):
        host, port = value, ""          # no port (or a bare IPv6 address)
    try:
        return (host.strip("[]"), int(port) if port else DEFAULT_RDZV_PORT), None
    except ValueError:
        return None, f"--rdzv-endpoint {value!r}: port is not a number"


def read_rdzv_conf(value: str) -> dict[str, str]:
    """``--rdzv-conf join_timeout=90,last_call_timeout=5`` -> {key: value} (parts without ``=`` are left out)."""
    return dict(part.split("=", 1) for part in value.split(",") if "=" in part)


def read_seconds(value: str | None) -> float | None:
    """A positive finite number of seconds (``join_timeout=90``), else None."""
    try:
        seconds = float(value) if value is not None else math.nan
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds > 0 else None


__all__ = ["FLAGS", "PROGRAM_FLAGS", "TORCHRUN_MODULES", "TorchrunArgs", "parse_torchrun_args", "read_count",
           "read_endpoint", "read_nnodes", "read_port", "read_rdzv_conf", "read_seconds", "torchrun_index"]
