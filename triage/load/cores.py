"""The core collector's output (``<rank>/core.json`` + ``gdb-core.txt``) as :class:`CoreOutput`, its gdb
text parsed once here."""

from __future__ import annotations

from pathlib import Path

from triage.layout import BundlePaths, BundleRankPaths
from triage.model.evidence import CoreOutput
from triage.parsing.gdb import parse_gdb_backtrace
from triage.regular_files import read_json_file, read_regular_bytes

MAX_GDB_TEXT = 64 * 1024 * 1024


def read_core_output(out_dir: Path, host: str | None = None) -> CoreOutput | None:
    info_path = BundleRankPaths(out_dir).core_info
    try:
        info = read_json_file(info_path)
    except (OSError, ValueError):
        return None
    gdb_path = BundleRankPaths(out_dir).gdb_core
    try:
        text: str | None = read_regular_bytes(gdb_path, MAX_GDB_TEXT).decode("utf-8", "replace")
    except OSError:
        text = None
    facts = info if isinstance(info, dict) else {}
    executable = facts.get("executable")
    backtrace = parse_gdb_backtrace(text or "", executable if isinstance(executable, str) else None)
    return CoreOutput(facts, backtrace, str(info_path), str(gdb_path) if text is not None else None, host)


def bundle_core_outputs(bundle: Path) -> list[CoreOutput]:
    """Every core the core collector put in a node bundle (``*/core.json`` with its notes); the
    manifest gives the host."""
    host = None
    try:
        manifest = read_json_file(BundlePaths(bundle).manifest)
        host = manifest.get("host") if isinstance(manifest, dict) else None
    except (OSError, ValueError):
        pass
    outputs = []
    for info_path in BundlePaths(bundle).core_infos():
        output = read_core_output(info_path.parent, str(host) if host else None)
        if output is not None and output.info.get("notes"):
            outputs.append(output)
    return outputs
