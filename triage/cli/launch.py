"""`triage launch` (placeholder until its owner lands it)."""

from __future__ import annotations

import argparse


class LaunchCommand:
    name = "launch"
    help = "not implemented yet"

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        pass

    def run(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
        parser.error("not implemented yet")
        return 2
