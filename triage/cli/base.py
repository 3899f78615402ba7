"""The shape every subcommand has: one module and one ``XCommand`` class per subcommand."""

from __future__ import annotations

import argparse
from typing import Protocol


class Command(Protocol):
    """A subcommand. ``prepare_parser`` adds its flags; ``run`` returns the process exit code."""

    name: str
    help: str

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> int: ...
