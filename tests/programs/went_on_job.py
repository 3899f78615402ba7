"""A healthy 2-rank gloo job whose ranks log what libraries print at start-up in error words (a metrics
client's ERROR, git's `fatal:`, a torchvision UserWarning), then train and finish: an all-clear, never a failure."""

import torch
import torch.distributed as dist


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    print("wandb: ERROR Failed to sample metric: Not Supported", flush=True)
    # (on stdout, as a script that runs `git describe 2>&1` shows it: torchrun tees stdout and stderr from two
    # files, so a stderr line's place among the stdout lines of the captured output is not fixed)
    print("fatal: not a git repository (or any of the parent directories): .git", flush=True)
    if rank == 1:
        print("Failed to load image Python extension: libc10_cuda.so: cannot open shared object file", flush=True)
    t = torch.ones(4)
    for step in range(3):
        dist.all_reduce(t)
        print(f"step {step} loss {1.0 / (step + 1):.3f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
