"""`triage check [options] -- LAUNCHER ARGS...`: can the nodes talk? Is it the cluster or the code?"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

from triage.errors import UsageError
from triage.layout import RunPaths

DEFAULT_TIMEOUT = 120.0

EPILOG = """\
examples:
  triage check -- torchrun --standalone --nproc-per-node 4
  triage check --check-dir /shared/check1 -- torchrun --nnodes 2 --nproc-per-node 8 \\
      --rdzv-backend c10d --rdzv-endpoint node1:29400
  srun --ntasks-per-node 1 triage check -- torchrun ...      (or: sbatch slurm/triage-check.sbatch)

triage supplies the program every rank runs: it joins the store, probes the links between
nodes, runs barrier/all_reduce/all_gather, a send/recv ring and a bus-bandwidth measurement
on gloo (and NCCL when there are GPUs), and notes interfaces, *_SOCKET_IFNAME/NCCL_* variables,
GPUs and clock offsets. Every node writes into the check directory (shared between nodes);
the verdict comes first. Nothing runs past --timeout.

exit codes: 0 all is well, 1 a problem was found, 2 bad input
"""


def parse_timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"--timeout {text!r}: not a number of seconds") from None
    if math.isnan(value) or math.isinf(value) or value <= 0:
        raise UsageError(f"--timeout {text!r}: must be a positive, finite number of seconds",
                         hint=f"e.g. --timeout 60 (default {DEFAULT_TIMEOUT:g})")
    return value


def _check_dir(args: argparse.Namespace) -> Path:
    if args.check_dir and args.run_dir:
        raise UsageError("give either --check-dir or --run-dir, not both")
    if args.check_dir:
        return Path(args.check_dir)
    if args.run_dir:
        return RunPaths(Path(args.run_dir)).check.root
    job, step = os.environ.get("SLURM_JOB_ID"), os.environ.get("SLURM_STEP_ID")
    if job:     # the same name on every node of the step: srun starts them all in the submission directory
        name = f"triage-check-{job}.{step}" if step else f"triage-check-{job}"
    else:
        name = time.strftime("triage-check-%Y%m%d-%H%M%S", time.gmtime())
    return Path(name)


class CheckCommand:
    name = "check"
    help = "check that every node and rank can join, run collectives and reach each other (no user script)"

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        parser.epilog = EPILOG
        parser.usage = "triage check [options] -- LAUNCHER [ARGS...]"
        parser.add_argument("--timeout", default=str(DEFAULT_TIMEOUT), metavar="SECONDS",
                            help=f"the whole check ends within this time (default {DEFAULT_TIMEOUT:g})")
        parser.add_argument("--check-dir", metavar="DIR",
                            help="where every node and rank writes its results; on a path all nodes share "
                                 "(default ./triage-check-JOB[.STEP] under SLURM, else ./triage-check-DATE)")
        parser.add_argument("--run-dir", metavar="DIR",
                            help="write into RUN_DIR/check, so `triage report RUN_DIR` can say the cluster checked")
        parser.add_argument("--format", choices=("text", "json", "html"), default="text", help="output format")
        parser.add_argument("launcher", nargs=argparse.REMAINDER, metavar="-- LAUNCHER ARGS",
                            help="the launcher without a program (torchrun and its options); triage adds the worker")

    def run(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
        from triage.check.launcher import parse_launch
        from triage.check.render import json_document, render_html, render_json, render_lead_text, render_text
        from triage.check.run import check_node

        timeout = parse_timeout(str(args.timeout))
        launch = parse_launch(list(args.launcher))
        check_dir = _check_dir(args)
        outcome = check_node(launch, check_dir, timeout)
        lead = outcome.lead
        note = None if lead else (f"this node's own view: no verdict from the lead node appeared in {check_dir}; "
                                  f"give every node the same --check-dir on a shared filesystem")
        lead_code = outcome.from_lead.get("exit_code") if outcome.from_lead is not None else None
        try:
            if outcome.from_lead is not None and not lead:
                if args.format == "json":
                    render_json({**outcome.from_lead, "check_dir": str(check_dir), "lead": False}, sys.stdout)
                else:
                    render_lead_text(outcome.from_lead, check_dir, sys.stdout)
                return int(lead_code) if lead_code in (0, 1) else 1
            if args.format == "json":
                render_json({**json_document(outcome.verdict, check_dir, lead), "note": note}, sys.stdout)
            elif args.format == "html":
                render_html(outcome.verdict, check_dir, sys.stdout, note)
            else:
                render_text(outcome.verdict, check_dir, sys.stdout, note)
            sys.stdout.flush()
        except BrokenPipeError:     # `triage check ... | head`: the reader left, the verdict is in the directory
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            if outcome.from_lead is not None and not lead:
                return int(lead_code) if lead_code in (0, 1) else 1
        if lead and outcome.verdict.ok:
            print("next: run the job under `triage launch -- LAUNCHER ...`; if it hangs, `triage report RUN_DIR` "
                  "names the rank (give `triage check --run-dir RUN_DIR` to keep this check beside it)",
                  file=sys.stderr)
        elif lead:
            print(f"next: read what each node's launcher printed in {check_dir}/nodes/*.log and each rank's "
                  f"steps in {check_dir}/ranks/rank-N.json", file=sys.stderr)
        return outcome.verdict.exit_code
