# Sourced by the scripts in this folder: picks the Python environment triage lives in.
#   - the virtual environment that is active ($VIRTUAL_ENV), or an active conda env;
#   - otherwise the project's own .venv (scripts/setup.sh creates it).
# pip never runs on a system interpreter: PEP 668 refuses it on Debian 12 and Ubuntu 24.04.
if [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then
  TRIAGE_ENV=$VIRTUAL_ENV
elif [ -n "${CONDA_PREFIX:-}" ] && [ -x "$CONDA_PREFIX/bin/python" ] && [ "${CONDA_DEFAULT_ENV:-base}" != base ]; then
  TRIAGE_ENV=$CONDA_PREFIX
else
  TRIAGE_ENV=$(pwd)/.venv
fi
TRIAGE_PY=$TRIAGE_ENV/bin/python
export PATH="$TRIAGE_ENV/bin:$PATH"
