"""triage bootstrap: put first on PYTHONPATH by ``triage launch``.

Starts the in-worker agent (a no-op unless this process is a rank of a ``triage launch``)
and then runs the next ``sitecustomize`` found on sys.path, as Python would have without us.
Never raises.
"""

import os
import sys


def _triage_start() -> None:
    names = os.environ.get("TRIAGE_RANK_VARS", "")
    if not os.environ.get("TRIAGE_RUN_DIR") or not any(n and n in os.environ for n in names.split(",")):
        return
    owner = os.environ.get("TRIAGE_WORKER_PID")
    if owner and owner != str(os.getpid()):
        # a process that a rank started (a subprocess, a compile worker, a spawned DataLoader
        # worker) inherits the rank's environment: it is no rank, so nothing of triage is imported
        # into it (before, each one imported the agent's modules and kept triage.worker* in sys.modules)
        return
    _triage_install()


def _triage_install() -> None:
    """Start the in-worker agent, loaded from the triage that installed this file, never by a search of
    sys.path: a ``triage`` package or ``triage.py`` of the job's own (its project, an empty PYTHONPATH
    entry that means the working directory) is neither run here nor replaced by ours. Only
    ``triage.worker*`` stay in sys.modules: the job's own ``import triage`` finds what it would
    have found without triage launch. The agent is started inside that window: its own imports
    (``from triage.worker import ...``) make Python import the top-level ``triage`` again."""
    # lazy: at interpreter start-up, only in a rank of a triage launch
    import importlib
    import importlib.machinery
    import importlib.util

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    had = sys.modules.get("triage")
    spec = importlib.machinery.PathFinder.find_spec("triage", [root])
    if spec is None or spec.loader is None:
        return
    package = importlib.util.module_from_spec(spec)
    sys.modules["triage"] = package
    try:
        spec.loader.exec_module(package)
        importlib.import_module("triage.worker.agent").install()
    except Exception:  # noqa: BLE001, S110 - no agent, and the rank goes on as without triage
        pass
    finally:
        if had is None:
            sys.modules.pop("triage", None)
        else:
            sys.modules["triage"] = had


def _triage_chain() -> None:
    """Import the next sitecustomize on sys.path (the one we shadow), if any."""
    import importlib.machinery  # lazy: at interpreter start-up, only when there is a sitecustomize to chain to
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - as site.py does: report and carry on
        if sys.flags.verbose:
            sys.excepthook(*sys.exc_info())
        else:
            print(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{type(exc).__name__}: {exc}",
                  file=sys.stderr)


try:
    _triage_start()
except Exception as _exc:  # noqa: BLE001 - never break the user's interpreter
    del _exc
_triage_chain()
