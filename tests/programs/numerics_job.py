"""A small DDP job on gloo for the numerics tests: NUM_STEPS steps of a 3-layer model, one
non-finite value made on purpose.

NUM_SCENARIO:
- ``clean``: every value finite;
- ``log_nan``: the ``act`` layer takes the log of its (partly negative) input on NUM_BAD_RANK at step
  NUM_BAD_STEP: NaN from finite inputs, which DDP's all_reduce spreads;
- ``data_inf``: the batch of NUM_BAD_RANK at NUM_BAD_STEP holds an Inf (the data loader's fault);
- ``bf16_overflow``: the ``act`` layer computes in bfloat16 and scales by 1e38 on NUM_BAD_RANK at
  NUM_BAD_STEP: it overflows to Inf;
- ``grad_nan``: the ``act`` layer's backward (its forward is finite everywhere) makes a NaN in the
  gradient on NUM_BAD_RANK at NUM_BAD_STEP: only that rank's local gradients (of ``fc1``) hold it
  until DDP's all_reduce spreads it;
- ``same_batch``: every rank's batch at NUM_BAD_STEP holds an Inf;
- ``amp_skip``: a CPU grad scaler whose first scale (2**127) overflows the gradients of a loss
  scaled by 1000: it skips the first steps, backs off (by 2**-20), and recovers.

NUM_VARIANT (comma-separated): ``own_hooks`` (the model registers forward and backward hooks of
its own), ``compile`` (``torch.compile`` of the block), ``shared`` (one block used twice),
``inplace`` (a ReLU(inplace=True) on a Linear's output), ``fsdp`` (FSDP2's ``fully_shard`` on
``block`` and on the model, instead of DDP), ``fsdp1`` (FSDP1's ``FullyShardedDataParallel``, instead
of DDP), ``bucket_view`` (DDP's ``gradient_as_bucket_view``: each gradient a view of the bucket
that DDP all_reduces while backward goes on), ``gpu_busy`` (with NUM_DEVICE=cuda: the GPU spins ~30 ms after each backward, before
``optimizer.step()``, so that the CPU runs ahead of it: the watch's reads arrive late).

NUM_DEVICE: ``cpu`` (the default) or ``cuda``: the model and the batches on GPU 0 (every rank on the
same GPU: one GPU is enough, gloo carries DDP's all_reduce; tests/gpu).
"""

import gc
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

SCENARIO = os.environ.get("NUM_SCENARIO", "clean")
BAD_RANK = int(os.environ.get("NUM_BAD_RANK", "1"))
BAD_STEP = int(os.environ.get("NUM_BAD_STEP", "3"))
STEPS = int(os.environ.get("NUM_STEPS", "6"))
VARIANTS = set(filter(None, os.environ.get("NUM_VARIANT", "").split(",")))
DEVICE = torch.device(os.environ.get("NUM_DEVICE", "cpu"))
NOW = {"step": 0, "rank": 0}


def bad_here() -> bool:
    return NOW["step"] == BAD_STEP and NOW["rank"] == BAD_RANK


class NanGrad(torch.autograd.Function):
    """The identity whose backward makes one NaN on the bad rank at the bad step."""

    @staticmethod
    def forward(ctx: object, x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    @staticmethod
    def backward(ctx: object, grad: torch.Tensor) -> torch.Tensor:
        if bad_here():
            grad = grad.clone()
            grad[0, 0] = float("nan")
        return grad


class Act(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if SCENARIO == "grad_nan":
            return torch.log1p(NanGrad.apply(x).abs())
        if SCENARIO == "log_nan" and bad_here():
            return torch.log(x)                     # x has negative values: NaN
        if SCENARIO == "bf16_overflow":
            scale = 1e38 if bad_here() else 1.0
            return (x.to(torch.bfloat16) * scale).float()
        return torch.log1p(x.abs())


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.lin(x))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = Act()
        self.block: nn.Module = Block()
        self.proj = nn.Linear(16, 16)
        self.relu = nn.ReLU(inplace=True) if "inplace" in VARIANTS else nn.Identity()
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act(self.fc1(x))
        h = self.block(h)
        if "shared" in VARIANTS:
            h = self.block(h)
        return self.fc2(self.relu(self.proj(h)))


def batch(rank: int, step: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randn(32, 8, generator=gen) * 3
    y = torch.randn(32, 1, generator=gen)
    if step == BAD_STEP and (SCENARIO == "same_batch" or (SCENARIO == "data_inf" and rank == BAD_RANK)):
        x[0, 0] = float("inf")
    return x, y


def wrap(net: Net) -> nn.Module:
    if "fsdp" in VARIANTS:                              # FSDP2: parameters become DTensor shards
        from torch.distributed.fsdp import fully_shard
        fully_shard(net.block)
        fully_shard(net)
        return net
    if "fsdp1" in VARIANTS:
        from torch.distributed.fsdp import FullyShardedDataParallel
        return FullyShardedDataParallel(net, use_orig_params=True, device_id=torch.device("cpu"))
    return DistributedDataParallel(net, device_ids=[DEVICE.index or 0] if DEVICE.type == "cuda" else None,
                                   gradient_as_bucket_view="bucket_view" in VARIANTS)


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    NOW["rank"] = rank
    torch.manual_seed(0)
    if DEVICE.type == "cuda":
        torch.cuda.set_device(DEVICE.index or 0)
    net = Net().to(DEVICE)
    seen: list[str] = []
    if "own_hooks" in VARIANTS:
        net.fc1.register_forward_hook(lambda m, i, o: seen.append("fwd"))
        net.fc2.register_full_backward_hook(lambda m, gi, go: seen.append("bwd"))
    if "compile" in VARIANTS:
        net.block = torch.compile(net.block, backend="eager")
    model = wrap(net)
    opt = torch.optim.SGD(model.parameters(), lr=1e-5 if SCENARIO == "amp_skip" else 0.01)  # amp: loss x1000
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 127, backoff_factor=2.0 ** -20,
                                  growth_interval=1000) if SCENARIO == "amp_skip" else None
    for step in range(STEPS):
        NOW["step"] = step
        x, y = (t.to(DEVICE) for t in batch(rank, step))
        opt.zero_grad()
        loss = F.mse_loss(model(x), y) * (1000.0 if scaler is not None else 1.0)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            if "gpu_busy" in VARIANTS and DEVICE.type == "cuda":
                torch.cuda._sleep(50_000_000)       # ~30 ms of GPU clock cycles: queued, not waited for
            opt.step()
        print(f"rank {rank} iteration {step} loss {loss.item():.4g}", flush=True)
    if "own_hooks" in VARIANTS:
        print(f"rank {rank} own hooks ran {len(seen)} times", flush=True)
    # DDP and FSDP hold reference cycles, and through them the process group: without a collection here the
    # group (its gloo threads) outlives destroy_process_group until the interpreter's own teardown, where
    # torch can die of `terminate called without an active exception` (docs/hang-policy.md).
    del model, opt, net
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
