"""The in-worker agent, started by the triage sitecustomize at interpreter start.

What :func:`install` does in a rank of a ``triage launch`` (and nothing anywhere else):

1. opens ``<run>/<host>/ranks/<rank>/output.log`` (append) and dup2's it onto fds 1 and 2, so
   every byte the rank writes, from Python or C, lands there even if the node agent dies;
2. enables faulthandler into ``faulthandler.log`` (fatal signals with all threads; SIGTERM, chained,
   with the receiving thread's own stack only: walking other threads from a signal handler can
   crash on a thread in the middle of a change, and the bundle took every thread's stack before
   triage stops a job);
3. writes ``worker.json`` and starts the heartbeat thread (:mod:`triage.worker.heartbeat`) and
   the control-socket thread (:mod:`triage.worker.control`);
4. records how the process ends in ``exit.json`` (atexit, chained sys.excepthook) and saves the
   Flight Recorder to ``fr-exit.json`` at normal exit.

Every entry point catches everything: the agent never raises into user code.
"""

from __future__ import annotations

import _thread
import atexit
import contextlib
import faulthandler
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from triage.worker import flight
from triage.worker.files import WRITE_FLAGS, write_bytes, write_json
from triage.worker.redact import redact_argv, redact_text

RANK_VARS_DEFAULT = ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")
LAUNCHER_MODULES = ("torch.distributed.run", "torch.distributed.launch")


class _State:
    def __init__(self, rank: int, rank_dir: str, host: str) -> None:
        self.rank = rank
        self.rank_dir = rank_dir
        self.host = host
        self.pid = os.getpid()
        self.step: int | None = None
        self.step_time: float | None = None
        self.exit_code: int | None = None
        self.exit_arg: int | str | None = None       # what sys.exit() was given, when the parent sees another status
        self.exit_seen: str | None = None            # "sys.exit" or "exception": what set exit_code (None: neither)
        self.exit_frame: tuple[Any, int] | None = None  # sys.exit(): the main thread's outermost frame, its f_lasti
        self.caught: dict[str, Any] | None = None    # a sys.exit() the program caught: what it was given
        self.main_thread = _thread.get_ident()
        self.exception: dict[str, Any] | None = None
        self.faulthandler_file: IO[bytes] | None = None
        self.control_name = ""
        self.control_squatted: str | None = None     # the name someone else held first, if any


_state: _State | None = None


def record_step(n: int | None = None) -> None:
    """Called by ``triage.step()``: advance (or set) the step counter the heartbeat reports."""
    state = _state
    if state is None:
        return
    state.step = (state.step or 0) + 1 if n is None else int(n)
    state.step_time = time.time()


def _rank_from_env() -> int | None:
    names = os.environ.get("TRIAGE_RANK_VARS", "")
    for name in [n.strip() for n in names.split(",") if n.strip()] or list(RANK_VARS_DEFAULT):
        value = os.environ.get(name)
        if value is not None and value.strip().lstrip("-").isdigit():
            return int(value)
    return None


def _is_launcher_process() -> bool:
    """True in torchrun / python -m torch.distributed.run itself: it must stay untouched. Only what
    the interpreter runs counts (its ``-m`` module or its script, after its own options), never the
    arguments of the program: a rank started as ``train.py --launcher torchrun`` is a rank."""
    argv = [str(arg) for arg in getattr(sys, "orig_argv", sys.argv)]
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return i + 1 < len(argv) and os.path.basename(argv[i + 1]) == "torchrun"
        if arg.startswith("--"):                 # --check-hash-based-pycs MODE and the like
            i += 2 if arg == "--check-hash-based-pycs" else 1
            continue
        if not arg.startswith("-") or arg == "-":
            return os.path.basename(arg) == "torchrun"      # the script
        # a cluster of short options (-u, -Wignore, -um mod): m, c, W and X take a value
        for k, flag in enumerate(arg[1:], start=1):
            if flag in "mcWX":
                value = arg[k + 1:] or (argv[i + 1] if i + 1 < len(argv) else "")
                if flag == "m":
                    return value in LAUNCHER_MODULES
                if flag == "c":
                    return False
                i += 0 if arg[k + 1:] else 1
                break
        i += 1
    return False


def _short_host() -> str:
    real = socket.gethostname().split(".")[0]
    configured = os.environ.get("TRIAGE_HOST")
    if configured and os.environ.get("TRIAGE_REAL_HOST") == real:
        return configured
    return real


def _redirect_output(rank_dir: str) -> None:
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            with contextlib.suppress(Exception):
                stream.flush()
    fd = os.open(os.path.join(rank_dir, "output.log"), WRITE_FLAGS | os.O_APPEND, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    if os.environ.get("TRIAGE_WORKER_LINE_BUFFERED") == "1" and sys.stdout is not None:
        with contextlib.suppress(Exception):
            sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]


def _enable_faulthandler(state: _State) -> None:
    fd = os.open(os.path.join(state.rank_dir, "faulthandler.log"), WRITE_FLAGS | os.O_APPEND, 0o600)
    os.fchmod(fd, 0o600)
    handle = os.fdopen(fd, "ab", buffering=0)
    state.faulthandler_file = handle
    faulthandler.enable(file=handle, all_threads=True)
    if signal.getsignal(signal.SIGTERM) != signal.SIG_IGN:
        # Not over an ignored SIGTERM: a handler replaces SIG_IGN, and exec resets a handler to the
        # default, so the programs this rank starts would die of the SIGTERM they ignore without triage
        faulthandler.register(signal.SIGTERM, file=handle, all_threads=False, chain=True)


def _worker_info(state: _State, rank_var_env: dict[str, str]) -> dict[str, Any]:
    env = os.environ
    return {
        "rank": state.rank,
        "local_rank": _int_or_none(env.get("LOCAL_RANK")),
        "world_size": _int_or_none(env.get("WORLD_SIZE") or env.get("SLURM_NTASKS")),
        "pid": state.pid,
        "ppid": os.getppid(),
        "host": state.host,
        "real_host": socket.gethostname(),
        "control_socket": "@" + state.control_name if state.control_name else None,
        "control_socket_squatted": state.control_squatted,
        "python": sys.executable,
        "argv": redact_argv(list(getattr(sys, "orig_argv", sys.argv))),
        "cwd": os.getcwd(),
        "started": time.time(),
        "rank_env": rank_var_env,
        "torchelastic_restart_count": _int_or_none(env.get("TORCHELASTIC_RESTART_COUNT")),
    }


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _exit_record(state: _State, how: str) -> dict[str, Any]:
    record = {"pid": state.pid, "rank": state.rank, "how": how, "exit_code": state.exit_code,
              "exit_arg": state.exit_arg, "exit_seen": state.exit_seen,
              "time": time.time(), "exception": state.exception, "step": state.step}
    if state.caught is not None:
        record["caught"] = state.caught
    return record


def _chain_excepthook(state: _State) -> None:
    previous: Callable[..., Any] = sys.excepthook

    def hook(exc_type: Any, exc: Any, tb: Any) -> None:
        with contextlib.suppress(Exception):
            _record_exception(state, exc_type, exc, tb)
        previous(exc_type, exc, tb)

    sys.excepthook = hook


def _record_exception(state: _State, exc_type: Any, exc: Any, tb: Any) -> None:
    if os.getpid() != state.pid:
        return
    where = _innermost(tb)
    state.exception = {"type": exc_type.__name__, "module": exc_type.__module__,
                       "message": redact_text(str(exc)[:4000]), "time": time.time(), "where": where}
    state.exit_code = 130 if issubclass(exc_type, KeyboardInterrupt) else 1
    state.exit_seen = "exception"
    state.exit_frame = None
    write_json(os.path.join(state.rank_dir, "exit.json"), _exit_record(state, "exception"))


def _innermost(tb: Any) -> str | None:
    """``file:line in function`` of the traceback's innermost frame, read off the traceback itself. Nothing
    is imported or read here: importing ``traceback`` (its ``linecache`` and ``tokenize``) at this point
    makes CPython forget that a KeyboardInterrupt went unhandled, and the rank then exits 1 instead of
    dying of SIGINT as it would without triage."""
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    return f"{code.co_filename}:{tb.tb_lineno} in {code.co_name}"


def _wrap_sys_exit(state: _State) -> None:
    original = sys.exit

    def exit(status: Any = None) -> Any:
        # in another thread, SystemExit ends only that thread: the process goes on
        if _thread.get_ident() == state.main_thread:
            with contextlib.suppress(Exception):
                state.exit_code = exit_status(status)
                state.exit_arg = _exit_arg(status, state.exit_code)
                state.exit_seen = "sys.exit"
                state.exit_frame = _outermost_frame()
        return original(status)

    exit.__doc__ = original.__doc__
    sys.exit = exit


# The opcodes a frame returns by (RETURN_VALUE; RETURN_CONST from 3.12), read off two compiled functions: no
# import of dis or opcode into the rank.
_RETURN_OPS = frozenset({(lambda: None).__code__.co_code[-2], (lambda x: x).__code__.co_code[-2]})


def _outermost_frame() -> tuple[Any, int] | None:
    """The main thread's outermost frame (the script's ``<module>``, or runpy's under ``-m``) and the instruction
    it is at, taken when sys.exit() is called. Only that frame is kept (its locals are the module's globals, or
    runpy's few): the frames between, which may hold a job's tensors, are not."""
    frame = sys._getframe(2)
    while frame.f_back is not None:
        frame = frame.f_back
    return frame, frame.f_lasti


def _went_on(seen: tuple[Any, int] | None) -> bool:
    """Whether the program caught the SystemExit of the sys.exit() that took ``seen``: its outermost frame has
    since moved on and returned (so nothing left it by an exception: the status is 0). A SystemExit that ends
    the process leaves that frame where it was. Anything else (a later ``raise SystemExit(5)``, a Python that
    keeps no such position) is False: the sys.exit() the hook saw stays the record, never a 0 that may be false."""
    if seen is None:
        return False
    frame, then = seen
    now = frame.f_lasti
    code = frame.f_code.co_code
    return isinstance(now, int) and now != then and 0 <= now < len(code) and code[now] in _RETURN_OPS


def exit_status(code: Any) -> int:
    """The status the parent's waitpid() sees for ``sys.exit(code)``, as CPython ends: None gives 0; an
    integer its low 8 bits (256 gives 0, -1 gives 255), or 255 beyond a C long; anything else 1 (printed)."""
    if code is None:
        return 0
    if isinstance(code, int):               # bool included: sys.exit(False) exits 0
        return code & 0xFF if -(1 << 63) <= code < (1 << 63) else 255
    return 1


def _exit_arg(code: Any, status: int) -> int | str | None:
    """What sys.exit() was given, kept when it is not the status itself (its text is the job's message)."""
    if code is None or (isinstance(code, int) and code == status):
        return None
    if isinstance(code, int) and -(1 << 63) <= code < (1 << 63):
        return int(code)
    return redact_text(str(code)[:300])


def _at_exit(state: _State) -> None:
    with contextlib.suppress(Exception):
        _write_exit_files(state)


def _write_exit_files(state: _State) -> None:
    if os.getpid() != state.pid:
        return
    if state.exit_code is None:
        state.exit_code = 0
    if state.exit_seen == "sys.exit" and state.exit_code != 0 and _went_on(state.exit_frame):
        # the program caught its sys.exit(N) and went on to a normal end: its parent sees 0
        state.caught = {"exit_code": state.exit_code, "exit_arg": state.exit_arg}
        state.exit_code, state.exit_arg = 0, None
    state.exit_frame = None
    how = "exception" if state.exception else "exit"
    record = _exit_record(state, how)
    path = os.path.join(state.rank_dir, "exit.json")
    write_json(path, record)                 # first: nothing below may cost the rank its exit record
    try:
        data = flight.full_json()
    except Exception:  # noqa: BLE001 - no Flight Recorder in this torch (flight.Unavailable), or unreadable
        data = None
    if data and b'"entries"' in data:
        write_bytes(os.path.join(state.rank_dir, "fr-exit.json"), data)
    # a job shorter than a heartbeat interval never had a beat that saw its collectives: say here
    # whether the Flight Recorder recorded them (exit.json's fr_state, as the heartbeat's)
    record["fr_state"] = flight.exit_state(data)
    write_json(path, record)


def install() -> None:
    """Start the agent in this process if it is a rank of a triage launch; never raises."""
    global _state
    try:
        owner = os.environ.get("TRIAGE_WORKER_PID")
        if _state is not None or (owner and owner != str(os.getpid())):
            return  # already installed, or a child process of a worker (its fds already point at the log)
        run_dir = os.environ.get("TRIAGE_RUN_DIR")
        rank = _rank_from_env()
        if not run_dir or rank is None or _is_launcher_process():
            return
        host = _short_host()
        rank_dir = os.path.join(run_dir, host, "ranks", str(rank))
        os.makedirs(rank_dir, mode=0o700, exist_ok=True)
        _redirect_output(rank_dir)
        state = _State(rank, rank_dir, host)
        _state = state
        os.environ["TRIAGE_WORKER_PID"] = str(state.pid)
        if os.environ.get("TRIAGE_NCCL_DEBUG") == "1":
            os.environ["NCCL_DEBUG_FILE"] = os.path.join(rank_dir, "nccl.log")
        _start(state)
    except Exception as exc:  # noqa: BLE001
        with contextlib.suppress(Exception):
            sys.stderr.write(f"triage: in-worker agent disabled: {type(exc).__name__}: {exc}\n")


def _start(state: _State) -> None:
    # lazy: loaded into the rank only when the agent starts (triage.step() alone does not)
    from triage.worker import control, heartbeat, numerics

    _enable_faulthandler(state)
    names = [n for n in os.environ.get("TRIAGE_RANK_VARS", "").split(",") if n]
    rank_env = {n: os.environ[n] for n in names if n in os.environ}
    job = os.environ.get("TRIAGE_JOB_ID", "job")
    state.control_name = f"triage/{job}/{state.host}/{state.rank}/{state.pid}"
    interval = float(os.environ.get("TRIAGE_HEARTBEAT_INTERVAL", "1.0") or 1.0)
    thread = heartbeat.HeartbeatThread(state, interval)
    server = control.ControlThread(state)
    write_json(os.path.join(state.rank_dir, "worker.json"), _worker_info(state, rank_env))
    _chain_excepthook(state)
    _wrap_sys_exit(state)
    numerics.start(state.rank_dir, state.rank)   # opt-in (TRIAGE_NUMERICS); hooks only once torch is imported
    atexit.register(_at_exit, state)
    thread.start()
    server.start()
