"""Moving a node bundle back: a tar stream (over srun or SSH stdout), unpacked safely."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from triage.errors import RemoteError, UsageError
from triage.layout import BundlePaths, RunPaths
from triage.private_files import make_private_dir
from triage.remote.names import validate_host

MAX_STREAM_BYTES = 2 << 30     # refuse absurd streams (a node bundle is bounded by its collectors)


def pack(run_dir: Path, members: list[Path], out: BinaryIO) -> None:
    """Write ``members`` (paths inside ``run_dir``) as an uncompressed tar to ``out``."""
    with tarfile.open(fileobj=out, mode="w|") as tar:
        for path in members:
            _add_tree(tar, run_dir, path)


def _add_tree(tar: tarfile.TarFile, run_dir: Path, path: Path) -> None:
    """Add ``path`` and what is under it. Files being written (dot-files such as a worker's
    ``.fr.pickle.partial``) stay out, and a file that vanishes while we walk is skipped."""
    if path.name.startswith("."):
        return
    try:
        tar.add(str(path), arcname=str(path.relative_to(run_dir)), recursive=False)
        children = sorted(path.iterdir()) if path.is_dir() else []
    except FileNotFoundError:
        return
    for child in children:
        _add_tree(tar, run_dir, child)


def _check_member(member: tarfile.TarInfo, host: str, label: str) -> None:
    name = PurePosixPath(member.name)
    if name.is_absolute() or ".." in name.parts or not name.parts or name.parts[0] != host:
        raise RemoteError(f"{label}: refusing bundle stream: unexpected path {member.name!r}")
    if not (member.isfile() or member.isdir()):
        raise RemoteError(f"{label}: refusing bundle stream: {member.name!r} is not a plain file or directory")


def node_dir_name(node: str) -> str:
    """The directory a node's bundle goes to: the node that was asked (``user@`` and ``:port`` dropped)."""
    name = node.rsplit("@", 1)[-1]
    if name.count(":") == 1:
        name = name.split(":", 1)[0]
    try:
        return validate_host(name.strip("[]"))
    except UsageError as error:
        raise RemoteError(f"{node}: not a usable host directory name") from error


def unpack(data: bytes, run_dir: Path, label: str, node: str | None = None) -> Path:
    """Extract a stream made by :func:`pack` into ``run_dir``; returns the bundle directory.

    Every member must sit under one host directory, be a plain file or directory, and contain no
    absolute path or ``..``. The host directory written here is named after ``node``, the node
    that was asked, never after what the stream says (without ``node``: the stream's, validated).
    """
    if len(data) > MAX_STREAM_BYTES:
        raise RemoteError(f"{label}: bundle stream too large ({len(data)} bytes)")
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            members = tar.getmembers()
            if not members:
                raise RemoteError(f"{label}: empty bundle stream")
            host = PurePosixPath(members[0].name).parts[0]
            try:
                validate_host(host)
            except UsageError as error:
                raise RemoteError(f"{label}: refusing bundle stream: bad host directory {host!r}") from error
            for member in members:
                _check_member(member, host, label)
            local = node_dir_name(node) if node is not None else host
            make_private_dir(run_dir)
            for member in members:
                target = run_dir.joinpath(local, *PurePosixPath(member.name).parts[1:])
                if member.isdir():
                    make_private_dir(target)
                    continue
                make_private_dir(target.parent)
                source = tar.extractfile(member)
                if source is None:
                    continue
                flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
                with source, open(os.open(target, flags, 0o600), "wb") as sink:
                    sink.write(source.read())
    except tarfile.TarError as error:
        raise RemoteError(f"{label}: bundle stream is not a valid tar ({error})") from error
    members_parts = [(local, *PurePosixPath(m.name).parts[1:]) for m in members]
    bundles = sorted({parts[:3] for parts in members_parts if len(parts) >= 3})
    manifests = [run_dir.joinpath(*parts) for parts in bundles
                 if run_dir.joinpath(*parts[:2]) == RunPaths(run_dir).host(parts[0]).bundles_dir]
    if len(manifests) != 1 or not BundlePaths(manifests[0]).is_bundle():
        raise RemoteError(f"{label}: bundle stream holds no single bundle with a manifest")
    return manifests[0]
