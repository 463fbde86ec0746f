"""One rank of the DDP test (gloo, CPU, gradient_as_bucket_view=True), two training steps, run
by test_ddp.py under layoutguard_torch, as a rank of its own or, with --spawn PORT, as the
parent of two ranks that torch.multiprocessing.spawn starts (the DDP tutorial's way).

By default it makes the classic mistake of converting the model to channels_last after
wrapping it in DistributedDataParallel: DDP's buckets keep the NCHW strides they were built
with, so each convolution weight's .grad (a view into its bucket) has strides other than the
weight's. With --keep-1x1-nchw the model is converted before it is wrapped, all but its 1x1
convolution, whose weight keeps its NCHW strides; the rank then prints which parameters' .grad
strides differ from their own after the first backward, for the test to compare with the
report."""
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


def main(keep_1x1_nchw=False):
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = Block()
    if keep_1x1_nchw:
        model.expand.to(memory_format=torch.channels_last)  # project, the 1x1, stays NCHW
        ddp = DistributedDataParallel(model, gradient_as_bucket_view=True)
    else:
        ddp = DistributedDataParallel(model, gradient_as_bucket_view=True)
        model.to(memory_format=torch.channels_last)  # too late: the buckets are laid out already
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    differ = []
    for step in range(2):
        x = torch.randn(4, 8, 12, 12).contiguous(memory_format=torch.channels_last)
        opt.zero_grad()
        ddp(x).square().mean().backward()
        if step == 0:
            differ = [f"module.{name}" for name, p in model.named_parameters() if p.grad.stride() != p.stride()]
        opt.step()
    dist.barrier()
    dist.destroy_process_group()
    # One write: ranks started by spawn share the parent's stdout.
    os.write(1, f"rank {os.environ['RANK']} done in process {os.getpid()}; grad strides differ: "
                f"{','.join(differ) or 'none'}\n".encode())


def spawned_rank(rank, world_size, port):
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world_size), MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    main()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--spawn"]:
        torch.multiprocessing.spawn(spawned_rank, args=(2, sys.argv[2]), nprocs=2)
    else:
        main(keep_1x1_nchw=sys.argv[1:] == ["--keep-1x1-nchw"])
