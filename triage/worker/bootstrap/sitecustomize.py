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
    try:
        # lazy: this file runs in every Python process started under `triage launch`; only ranks load the agent
        from triage.worker import agent
    except ImportError:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        sys.path.append(root)
        try:
            from triage.worker import agent
        except Exception:  # noqa: BLE001
            return
    agent.install()


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
