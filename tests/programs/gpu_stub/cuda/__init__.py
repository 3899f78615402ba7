"""A stand-in for ``torch.cuda`` at the process boundary (CPU-only tests): its ``synchronize``
spins the way CUDA's spin-wait does (a core at 100%, the GIL released, the same frame) and never
returns, as behind a kernel that never ends. Only the frame's name and path matter to triage."""

import hashlib

_BLOCK = b"\0" * (64 << 20)


def synchronize() -> None:
    while True:
        hashlib.sha256(_BLOCK).digest()
