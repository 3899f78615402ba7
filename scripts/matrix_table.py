"""Writes one torch version's row of the matrix table in docs/compatibility.md (scripts/torch_matrix.sh).

Usage: python scripts/matrix_table.py VERSION --junit RESULTS.xml --fr "yes|no (why)"
       python scripts/matrix_table.py VERSION --not-installed
The table lies between the two MATRIX markers of the page; the row of VERSION is replaced (dated
today), the other rows stay, ordered by version. A cell is ``pass``, ``FAIL`` or ``skip``.
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "compatibility.md"
BEGIN, END = "<!-- MATRIX:BEGIN -->", "<!-- MATRIX:END -->"
SCENARIOS = ("mismatch", "stall", "exception", "segfault", "dtype", "subgroup", "init_hang",
             "dataloader_worker", "long_checkpoint")
HEADER = ("| torch | run on | FR for gloo | " + " | ".join(s.replace("_", " ") for s in SCENARIOS) + " |\n"
          + "|---" * (3 + len(SCENARIOS)) + "|\n")


def results(junit: Path) -> dict[str, str]:
    out = dict.fromkeys(SCENARIOS, "not run")
    for case in ET.parse(junit).getroot().iter("testcase"):  # noqa: S314
        name = case.get("name", "").removeprefix("test_")
        if name not in out:
            continue
        if case.find("failure") is not None or case.find("error") is not None:
            out[name] = "FAIL"
        elif case.find("skipped") is not None:
            out[name] = "skip"
        else:
            out[name] = "pass"
    return out


def _key(row: str) -> tuple[int, ...]:
    version = row.split("|")[1].strip()
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def write_row(version: str, cells: dict[str, str], fr: str) -> None:
    text = PAGE.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"matrix_table: {PAGE} has no {BEGIN} ... {END} section")
    head, rest = text.split(BEGIN, 1)
    table, tail = rest.split(END, 1)
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| torch ")
            and line.split("|")[1].strip() != version]
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    rows.append(f"| {version} | {today} | {fr} | " + " | ".join(cells[s] for s in SCENARIOS) + " |")
    rows.sort(key=_key)
    PAGE.write_text(head + BEGIN + "\n" + HEADER + "\n".join(rows) + "\n" + END + tail, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version")
    parser.add_argument("--junit", type=Path)
    parser.add_argument("--fr", default="?")
    parser.add_argument("--not-installed", action="store_true")
    args = parser.parse_args(argv)
    if args.not_installed:
        write_row(args.version, dict.fromkeys(SCENARIOS, "not installed"), "?")
        return 0
    if args.junit is None or not args.junit.is_file():
        print(f"matrix_table: no JUnit results for torch {args.version}", file=sys.stderr)
        return 2
    cells = results(args.junit)
    write_row(args.version, cells, args.fr)
    return 1 if "FAIL" in cells.values() else 0


if __name__ == "__main__":
    sys.exit(main())
