"""`triage launch [options] -- LAUNCHER ARGS...`: run the job beside a per-node agent."""

from __future__ import annotations

import argparse

from triage.config import add_arguments, launch_options, resolve, settings_from
from triage.errors import UsageError
from triage.options import LaunchSettings

EPILOG = """\
examples:
  triage launch -- torchrun --nproc-per-node 2 examples/clean_job.py
  triage launch --run-dir /shared/runs/x -- srun python train.py

Every rank's output is tagged [host:rank] on the console and kept losslessly in
RUN_DIR/HOST/ranks/RANK/output.log and RUN_DIR/HOST/merged.log. Option values come from
flags, then triage.yaml (or --config FILE), then TRIAGE_<NAME> variables, then defaults.
triage exits with the launcher's exit code (128+N if it was killed by signal N), or 75 when
it detected a hang and stopped the job.
"""


class LaunchCommand:
    name = "launch"
    help = "run a distributed job (torchrun, srun, ...) with tagged lossless logs, heartbeats and hang detection"

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        parser.epilog = EPILOG
        parser.usage = "triage launch [options] -- LAUNCHER [ARGS...]"
        add_arguments(parser, launch_options())
        parser.add_argument("launcher", nargs=argparse.REMAINDER, metavar="-- LAUNCHER ARGS",
                            help="the command that starts the job on this node (torchrun, srun, python ...)")

    def run(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
        from triage.agent.launch.supervisor import launch

        argv = list(args.launcher)
        if argv and argv[0] == "--":
            argv = argv[1:]
        if not argv:
            raise UsageError("nothing to launch: give the launcher after --",
                             hint="e.g. `triage launch -- torchrun --nproc-per-node 2 train.py`")
        options = launch_options()
        values = resolve(options, {o.name: getattr(args, o.name, None) for o in options}, args.config)
        return launch(argv, settings_from(LaunchSettings, options, values))
