"""The other end a failure line names (a peer's address, a store a client could not reach, a node a launcher could
not reach over ssh), what would settle a set-up failure a network line tells, and how such a line is cut for a
summary without losing either. Used by :mod:`triage.parsing.crashlog` (which re-exports the public names)."""

from __future__ import annotations

import re

from triage.lazy_regex import lazy_regex

# The other end of a link, in the shapes NCCL and gloo print it: a host name (with or without a digit: "gpu-a",
# "master"), an IPv4 or IPv6 address, with NCCL's "<port>" or ":port" ("[host]:port" for gloo and IPv6)
_ADDRESS = (r"\[[\w.:%-]{1,80}\](?:<\d+>|:\d+)"                       # [10.0.0.5]:47232, [fe80::1%eth0]<29500>
            r"|(?=[.:%-]{0,80}[\w%])[\w.:%-]{1,80}<\d+>"                  # gpu-a<45763>, fe80::1<1>, 172....<1>
            r"|\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?(?![\w.])"                # 10.0.0.2, 10.0.0.2:29500
            r"|[A-Za-z][\w-]{0,62}(?:\.[A-Za-z][\w-]{0,62})*(?<!\.py)(?<!\.cpp)(?<!\.cc)(?<!\.cu)(?<!\.h)"
            r":\d{2,5}(?![\w.:])")                                       # master:29500 (no file.py:123)
PEER = lazy_regex(r"(?:\b(?:peer|from|to|error)\s+|\bremote[= ]\s*|\baddr(?:ess)?[= ]\s*|"
                  # gloo's pair that could not connect: "connect [10.1.2.3]:37861: Connection refused", and its other
                  # errors on the pair's peer ("Socket closed [10.1.2.3]:37861", "Connect timeout [...]", "writev
                  # [...]: Broken pipe")
                  r"\b(?:connect|Connect timeout|Socket (?:unexpectedly )?closed|writev)\s+(?=\[))(?P<addr>" +
                  _ADDRESS + ")|"
                  r"connect to \((?P<host>[\w.:-]+), (?P<port>\d+)\)|"
                  # the node a launcher could not reach over ssh (DeepSpeed's runner, pdsh)
                  r"host=(?P<sshhost>[\w.-]+) was not reachable via ssh|"
                  r"(?P<pdshhost>[\w.-]+): ssh exited with exit code|"
                  # the node whose end dropped the launcher's session: ssh's "Connection to node7 closed by remote
                  # host.", MPICH Hydra's "connection to proxy 2 at host node7 failed"
                  r"Connection to (?P<sshclosed>[\w.-]+) closed by remote host|"
                  r"connection to proxy \d+ at host (?P<proxyhost>[\w.-]+) failed")
# NCCL's socket helpers name the other end of the call: "socketProgressOpt: Call to recv from 10.0.0.5<49901> failed"
_SOCKET_CALL = lazy_regex(r"Call to (?:recv|send|connect)\b")

# What would settle a set-up failure that a network line tells, when the line alone does not say it
_SETUP_NOTES = (
    (lazy_regex(r"Address already in use|EADDRINUSE|failed to listen on any local network address"),
     (" (the store's port is taken: another job or a stale process on that node holds it; choose another "
      "MASTER_PORT / --master_port)")),
    (lazy_regex(r"shared memory segment|/dev/shm|posix_fallocate|ncclShmOpen"),
     (" (NCCL's shared-memory transport: /dev/shm too small? a container's default is 64 MB: docker --shm-size, "
      "or NCCL_SHM_DISABLE=1)")),
    (lazy_regex(r"via ssh|ssh exited"),
     (" (the launcher could not reach that node over ssh: passwordless ssh between the nodes, or one launcher per "
      "node)")),
    # gloo's pair refuses to connect two ends whose addresses are of different families (IPv4 against IPv6): each
    # process's gloo device takes its address from its hostname, or from GLOO_SOCKET_IFNAME's interface
    (lazy_regex(r"\baddress family mismatch\b"),
     (" (gloo's pair: this process's address and its peer's are of different families, IPv4 against IPv6; each "
      "process takes its address from its hostname or GLOO_SOCKET_IFNAME: make them resolve to one family on every "
      "host)")))

_SHM_NOTE = " (shared memory: /dev/shm too small? a container's default is 64 MB: docker --shm-size)"


def noted(text: str) -> str:
    """A network line's text with what would settle it, when it is a known set-up failure. A long line is cut
    around what it says: the part that names the peer and the set-up failure is kept (:func:`clip_keeping`)."""
    peer = PEER.search(text)
    keep = [(peer.start(), min(len(text), peer.end() + 40))] if peer is not None else []   # (and what befell it)
    for pattern, note in _SETUP_NOTES:
        if (said := pattern.search(text)) is not None:
            if "NCCL_SHM" in note and "NCCL" not in text and "nccl" not in text:
                note = _SHM_NOTE        # (shared memory in another library's words: no NCCL knob)
            return clip_keeping(text, 300, [*keep, said.span()]) + note
    return clip_keeping(text, 400, keep)


# a C library's error message (strerror's, as perror and most tools end their line with it: "...: No such file or
# directory") glued to the next line's first word where a paste lost the line end between them ("fatal error:
# cuda_runtime.h: No such file or directorycompilation terminated."): the message ends its line, so the rest is the
# next line's
_GLUED_STRERROR = lazy_regex(
    r"\b(?:No such file or directory|Permission denied|No space left on device|Disk quota exceeded|Connection "
    r"refused|Connection reset by peer|Connection timed out|Cannot allocate memory|Too many open files|Input/output "
    r"error|Broken pipe|Address already in use|Network is unreachable|No route to host|Operation not permitted|"
    r"Read-only file system|Is a directory|Not a directory|File exists|Resource temporarily unavailable|Device or "
    r"resource busy|Bad file descriptor|Transport endpoint is not connected)(?=[A-Za-z])")


def shortened(text: str, limit: int = 300) -> str:
    """A failure line's text cut to ``limit`` characters for a summary, keeping the note this module put after it
    (what would settle a set-up failure): the line is cut, never the note; a C library's error message glued to the
    next line's words (_GLUED_STRERROR) ends it."""
    text = _unglued_strerror(text)
    if len(text) <= limit:
        return text
    for note in _NOTES:
        if text.endswith(note):
            body = text[:-len(note)]
            keep = [said.span() for said in (PEER.search(body), _CUDA_SETUP_WORDS.search(body)) if said is not None]
            return clip_keeping(body, max(limit - len(note), 120), keep) + note
    return cut_at_word(text, limit)


def _unglued_strerror(text: str) -> str:
    glued = _GLUED_STRERROR.search(text) if "o" in text else None
    if glued is None:
        return text
    note = next((note for note in _NOTES
                 if text.endswith(note) and len(text) - len(note) >= glued.end()), "")
    return text[:glued.end()] + note


def cut_at_word(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, at the last space within the last fifth of the limit (a word
    is never cut mid-way where a boundary is that near), else at the limit (one long token: a path, a URL)."""
    if len(text) <= limit:
        return text
    space = text.rfind(" ", limit - limit // 5, limit + 1)
    return text[:space].rstrip() if space > 0 else text[:limit]


def clip_keeping(text: str, limit: int, keep: list[tuple[int, int]]) -> str:
    """``text`` cut to about ``limit`` characters, keeping the spans ``keep`` (what the line is about: a peer's
    address, the words that name the failure): its head, " ... ", then the part around the last span kept that the
    head does not hold. Never raises."""
    if len(text) <= limit:
        return text
    late = [(lo, hi) for lo, hi in keep if hi > limit and hi - lo < limit // 2]
    if not late:
        return text[:limit]
    first = min(lo for lo, _hi in late)
    last = max(hi for _lo, hi in late)
    window = min(max(last - first, 0) + 60, limit - 40)
    start = max(0, min(first - 30, last - window + 30))
    head = max(limit - window - 5, 20)
    if start <= head:
        return text[:start + window]
    return f"{text[:head]} ... {text[start:start + window]}"


# A GPU runtime that found no code for this GPU's architecture in the build it loaded (HIP's hipErrorNoBinaryForGpu,
# CUDA's "no kernel image is available for execution on the device"): the build and the GPU do not match
NO_BINARY_NOTE = (" (the build holds no code object for this GPU's architecture: a GPU/toolkit mismatch, not a fault "
                  "of the GPU or of the code)")
CUDA_SETUP_NOTE = (" (this process asked for a GPU it cannot see: more processes than visible GPUs? compare "
                   "--nproc_per_node / the process count with CUDA_VISIBLE_DEVICES and the GPUs on the node)")
# CUDA's other errors at device selection (cudaGetErrorString's words, the driver API's names): no GPU would take a
# context from this process (cudaErrorDevicesUnavailable, 46: "all CUDA-capable devices are busy or unavailable",
# CUDA 11.x on "CUDA-capable device(s) is/are busy or unavailable"; the driver API's CUDA_ERROR_DEVICE_UNAVAILABLE),
# the process sees no GPU at all (cudaErrorNoDevice, 100), or the driver is older than the runtime the program was
# built with (cudaErrorInsufficientDriver, 35)
CUDA_BUSY_NOTE = (" (no GPU would take this process: one in Exclusive Process compute mode that another process, or "
                  "the parent, already holds; `nvidia-smi -q -d COMPUTE` shows the mode: one process per GPU, each "
                  "touching only its own (CUDA_VISIBLE_DEVICES))")
CUDA_NO_DEVICE_NOTE = (" (this process sees no GPU: CUDA_VISIBLE_DEVICES empty or naming none, a container started "
                       "without its GPUs, or no NVIDIA driver loaded; `nvidia-smi` on that host lists what it sees)")
# (cudaErrorTooManyPeers, 60: "peer mapping resources exhausted", the hardware's resources for peer access used up:
# CUDA's peer-to-peer allows a device at most eight peers, so a process that enables access between more GPUs fails at
# its multi-GPU set-up)
CUDA_PEERS_NOTE = (" (more GPUs set up to map each other's memory than CUDA's peer-to-peer allows a device (eight "
                   "peers): the run's multi-GPU set-up, not a fault of a GPU; use at most eight GPUs per process, or "
                   "fewer peers)")
CUDA_DRIVER_NOTE = (" (the NVIDIA driver on this host is older than the CUDA runtime the program was built for: "
                    "`nvidia-smi` shows the driver and the newest CUDA it supports; update the driver or install a "
                    "build for that CUDA)")
_CUDA_SETUP_NOTES = (
    (lazy_regex(r"CUDA-capable device(?:s are|\(s\) is/are) busy or unavailable|\bcudaErrorDevicesUnavailable\b|"
                r"\bCUDA_ERROR_DEVICE_UNAVAILABLE\b",
                re.IGNORECASE), CUDA_BUSY_NOTE),
    # (torch's own words for the same errors at CUDA's start, c10/cuda/CUDAFunctions.cpp and torch/cuda/__init__.py:
    # "No CUDA GPUs are available" for cudaErrorNoDevice, "Found no NVIDIA driver on your system. ...", "The NVIDIA
    # driver on your system is too old (found version 10010). ..." for cudaErrorInsufficientDriver)
    (lazy_regex(r"no CUDA-capable device is detected|\bcudaErrorNoDevice\b|\bCUDA_ERROR_NO_DEVICE\b|"
                r"\bNo CUDA GPUs are available\b|\bFound no NVIDIA driver on your system\b",
                re.IGNORECASE), CUDA_NO_DEVICE_NOTE),
    (lazy_regex(r"driver version is insufficient for CUDA runtime version|\bcudaErrorInsufficientDriver\b|"
                r"\bNVIDIA driver on your system is too old\b",
                re.IGNORECASE), CUDA_DRIVER_NOTE),
    (lazy_regex(r"peer mapping resources exhausted|\bcudaErrorTooManyPeers\b|\bCUDA_ERROR_TOO_MANY_PEERS\b",
                re.IGNORECASE), CUDA_PEERS_NOTE))


# the words of those errors, kept where a long line is cut for a summary (THC's "THCudaCheck FAIL file=<path> line=66
# error=46 : all CUDA-capable devices are busy or unavailable")
_CUDA_SETUP_WORDS = lazy_regex(r"invalid device ordinal|no CUDA-capable device is detected|"
                               r"CUDA-capable device(?:s are|\(s\) is/are) busy or unavailable|"
                               r"CUDA driver version is insufficient for CUDA runtime version|"
                               r"No CUDA GPUs are available|Found no NVIDIA driver on your system|"
                               r"NVIDIA driver on your system is too old \(found version \d+\)|"
                               r"peer mapping resources exhausted", re.IGNORECASE)


def cuda_setup_note(text: str) -> str:
    """What would settle a CUDA error at device selection that ``text`` holds (triage.parsing.crashlog reads them as
    an exception at start-up): the note for its error, else an invalid device ordinal's."""
    return next((note for pattern, note in _CUDA_SETUP_NOTES if pattern.search(text) is not None), CUDA_SETUP_NOTE)


# every note a failure line's text may end with (shortened() keeps it)
_NOTES = (*(note for _pattern, note in _SETUP_NOTES), CUDA_SETUP_NOTE,
          *(note for _pattern, note in _CUDA_SETUP_NOTES), NO_BINARY_NOTE)


def peer_host(addr: str) -> str | None:
    """The host of a peer address: "gpu-a<45763>" -> "gpu-a", "[fe80::1]:29500" -> "fe80::1",
    "10.0.0.2:29500" -> "10.0.0.2", "fe80::1<29500>" -> "fe80::1"."""
    if addr.startswith("["):
        return addr[1:].split("]", 1)[0] or None
    host = addr.split("<", 1)[0]
    if "<" not in addr and host.count(":") == 1:
        host = host.rsplit(":", 1)[0]                    # host:port (an IPv6 address has more colons)
    return host or None


def peer_of(text: str) -> str | None:
    """The other end a failure line names: a store a client could not reach, a node a launcher could not reach
    over ssh, a transport's peer."""
    peer = PEER.search(text)
    if peer is None:
        return None
    if peer.group("host"):
        return f"{peer.group('host')}:{peer.group('port')}"          # the store a client could not reach
    if peer.group("sshhost") or peer.group("pdshhost") or peer.group("sshclosed") or peer.group("proxyhost"):
        return (peer.group("sshhost") or peer.group("pdshhost") or peer.group("sshclosed")
                or peer.group("proxyhost"))                           # the node a launcher could not reach, or lost
    if ("peer" in text or "NET/" in text or "onnect to" in text or "remote" in text or "connect [" in text
            or "connect() failed" in text or "transport/tcp/" in text or _SOCKET_CALL.search(text)):
        return peer.group("addr")
    return None
