"""SSH to the nodes with paramiko: strict host keys, ~/.ssh/config, keys; commands as quoted argv."""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paramiko

from triage.errors import RemoteError
from triage.remote.names import validate_host
from triage.remote.transfer import MAX_STREAM_BYTES

DEFAULT_CONFIG = Path("~/.ssh/config")
DEFAULT_KNOWN_HOSTS = (Path("~/.ssh/known_hosts"), Path("/etc/ssh/ssh_known_hosts"))


@dataclass(frozen=True)
class SshOptions:
    config_file: Path | None = None              # None: ~/.ssh/config if it exists
    known_hosts: tuple[Path, ...] = ()           # empty: ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts
    connect_timeout: float = 10.0


@dataclass(frozen=True)
class SshTarget:
    alias: str            # what the user typed (without user@)
    hostname: str         # after ~/.ssh/config HostName
    port: int
    user: str | None
    identity_files: tuple[str, ...]

    @property
    def label(self) -> str:
        return self.alias


def _config(options: SshOptions) -> paramiko.SSHConfig:
    path = (options.config_file or DEFAULT_CONFIG).expanduser()
    if options.config_file is not None and not path.is_file():
        raise RemoteError(f"ssh config {path}: no such file", hint="check --ssh-config")
    if not path.is_file():
        return paramiko.SSHConfig()
    try:
        return paramiko.SSHConfig.from_path(str(path))
    except (OSError, paramiko.ssh_exception.ConfigParseError) as error:
        raise RemoteError(f"ssh config {path}: cannot read it: {error}", hint="check --ssh-config") from error


def resolve(item: str, options: SshOptions) -> SshTarget:
    """``[user@]alias`` -> where to connect, as ~/.ssh/config says (HostName, Port, User, IdentityFile)."""
    user, _, alias = item.rpartition("@")
    validate_host(alias)
    found = _config(options).lookup(alias)
    hostname = str(found.get("hostname", alias))
    validate_host(hostname)
    try:
        port = int(found.get("port", 22))
    except ValueError as error:
        raise RemoteError(f"{alias}: bad Port in ssh config: {found.get('port')!r}") from error
    identities = tuple(os.path.expanduser(str(p)) for p in found.get("identityfile", []))
    return SshTarget(alias=alias, hostname=hostname, port=port, user=user or found.get("user"),
                     identity_files=identities)


def _load_known_hosts(client: paramiko.SSHClient, options: SshOptions) -> None:
    files = options.known_hosts or DEFAULT_KNOWN_HOSTS
    loaded = 0
    for path in (p.expanduser() for p in files):
        if path.is_file():
            try:
                client.load_system_host_keys(str(path))
            except (OSError, paramiko.SSHException) as error:
                raise RemoteError(f"known_hosts file {path}: cannot read it: {error}") from error
            loaded += 1
        elif options.known_hosts:
            raise RemoteError(f"known_hosts file {path}: no such file", hint="check --known-hosts")
    del loaded


def connect(target: SshTarget, options: SshOptions) -> paramiko.SSHClient:
    """An authenticated connection, or :class:`RemoteError` with one line saying why not."""
    client = paramiko.SSHClient()
    _load_known_hosts(client, options)
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    where = f"{target.alias} ({target.hostname}:{target.port})"
    try:
        keys: Any = list(target.identity_files) or None     # paramiko accepts a list (stubs say str)
        client.connect(
            target.hostname, port=target.port, username=target.user, key_filename=keys,
            timeout=options.connect_timeout, banner_timeout=options.connect_timeout,
            auth_timeout=options.connect_timeout,
        )
    except paramiko.BadHostKeyException as error:
        client.close()
        raise RemoteError(
            f"{where}: host key does not match known_hosts (got {error.key.get_name()} "
            f"{error.key.get_fingerprint().hex()}): refusing to connect",
            hint="if the host was really reinstalled, remove the old key with `ssh-keygen -R HOST` and verify "
                 "the new one; otherwise someone may be intercepting the connection") from error
    except paramiko.AuthenticationException as error:
        client.close()
        raise RemoteError(f"{where}: authentication failed: {error}",
                          hint="check the key (IdentityFile in ~/.ssh/config) and the user") from error
    except paramiko.SSHException as error:
        client.close()
        text = str(error)
        if "not found in known_hosts" in text:
            raise RemoteError(f"{where}: host key unknown (not in known_hosts): refusing to connect",
                              hint="verify the host and add its key, e.g. by running `ssh HOST true` once") from error
        raise RemoteError(f"{where}: SSH failed: {text}") from error
    except OSError as error:
        client.close()
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error) or "timed out"
        raise RemoteError(f"{where}: cannot connect: {reason}") from error
    return client


MAX_STDERR_BYTES = 1 << 20


def run_command(client: paramiko.SSHClient, argv: Sequence[str], timeout: float,
                label: str) -> tuple[int, bytes, bytes]:
    """Run argv (quoted once with shlex for the remote shell); return (status, stdout, stderr)."""
    command = shlex.join(argv)
    transport = client.get_transport()
    if transport is None:
        raise RemoteError(f"{label}: SSH connection closed")
    channel = transport.open_session(timeout=timeout)
    try:
        channel.settimeout(1.0)
        channel.exec_command(command)
        out, err = bytearray(), bytearray()
        deadline = time.monotonic() + timeout
        while True:
            if time.monotonic() > deadline:
                raise RemoteError(f"{label}: remote collection did not finish in {timeout:.0f}s")
            got = False
            while channel.recv_ready():
                out += channel.recv(1 << 16)
                got = True
                if len(out) > MAX_STREAM_BYTES:      # the bound holds while reading, not after
                    raise RemoteError(f"{label}: bundle stream larger than {MAX_STREAM_BYTES} bytes: refused")
            while channel.recv_stderr_ready():
                err += channel.recv_stderr(1 << 16)
                del err[:-MAX_STDERR_BYTES]
                got = True
            if channel.exit_status_ready() and not channel.recv_ready() and not channel.recv_stderr_ready():
                break
            if not got:
                time.sleep(0.02)
        return channel.recv_exit_status(), bytes(out), bytes(err)
    finally:
        channel.close()
