"""One rank of the DDP test: the classic mistake of converting a model to channels_last after
wrapping it in DistributedDataParallel (gloo, CPU, gradient_as_bucket_view=True): DDP's
buckets keep the NCHW strides they were built with, so each convolution weight's .grad (a
view into its bucket) has strides other than the weight's. Two training steps; run by
test_ddp.py under layoutguard_torch, as a rank of its own or, with --spawn PORT, as the parent
of two ranks that torch.multiprocessing.spawn starts (the DDP tutorial's way)."""
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.expand = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.project = torch.nn.Conv2d(16, 8, 1)
        self.bn = torch.nn.BatchNorm2d(8)

    def forward(self, x):
        return torch.relu(self.bn(self.project(torch.relu(self.expand(x)))))


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = Block()
    ddp = DistributedDataParallel(model, gradient_as_bucket_view=True)
    model.to(memory_format=torch.channels_last)  # too late: the buckets are laid out already
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for _ in range(2):
        x = torch.randn(4, 8, 12, 12).contiguous(memory_format=torch.channels_last)
        opt.zero_grad()
        ddp(x).square().mean().backward()
        opt.step()
    dist.barrier()
    dist.destroy_process_group()
    # One write: ranks started by spawn share the parent's stdout.
    os.write(1, f"rank {os.environ['RANK']} done in process {os.getpid()}\n".encode())


def spawned_rank(rank, world_size, port):
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world_size), MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    main()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--spawn"]:
        torch.multiprocessing.spawn(spawned_rank, args=(2, sys.argv[2]), nprocs=2)
    else:
        main()
