"""2-process DDP (gloo, CPU) under layoutguard_torch: the gradient contract names each
parameter whose .grad strides differ from its own, in each rank's report (report=...%r.json,
or %p for ranks that torch.multiprocessing.spawn starts), where DDP itself only warns that
"grad strides do not match bucket view strides". Two models: one converted to channels_last
after DDP laid out its buckets, and one converted before but for its 1x1 convolution's weight."""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import unittest

import lg_unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_two_ranks(tmp, *worker_args):
    """Runs two ranks of ddp_worker.py under the runner in record mode, each writing its report
    to tmp/report-rankR.json (report=...%r); returns each rank's stdout. The port is free when
    picked but may be taken before rank 0 binds it (other suites run beside this one): ranks
    that time out are killed and started once more on a new port."""
    for attempt in (1, 2):
        try:
            return start_two_ranks(tmp, worker_args, timeout=150)
        except subprocess.TimeoutExpired:
            if attempt == 2:
                raise


def start_two_ranks(tmp, worker_args, timeout):
    report = os.path.join(tmp, "report-rank%r.json")
    port = str(free_port())
    procs = []
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=port,
                   LAYOUTGUARD="record", LAYOUTGUARD_OPTIONS=f"report={report}:summary=0", OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "layoutguard_torch", os.path.join(HERE, "ddp_worker.py"), *worker_args], env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    try:
        outputs = [p.communicate(timeout=timeout) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    for rank, (p, (out, err)) in enumerate(zip(procs, outputs)):
        if p.returncode != 0 or f"rank {rank} done in process {p.pid}" not in out:
            raise AssertionError(f"rank {rank} failed ({p.returncode}):\n{out}\n{err}")
    return [out for out, _ in outputs]


def grad_stride_violations(report):
    with open(report) as f:
        violations = json.load(f)["violations"]
    return {v["module"]: v for v in violations if v["op"] == "autograd::grad_strides"}


class DistributedDataParallel(unittest.TestCase):
    def test_each_rank_names_the_parameter(self):
        with tempfile.TemporaryDirectory() as tmp:
            run_two_ranks(tmp)
            for rank in range(2):
                self.assert_names_the_weights(os.path.join(tmp, f"report-rank{rank}.json"))

    def test_1x1_weights_left_nchw(self):
        # A model converted before it is wrapped, all but its 1x1 convolution. Whether that
        # weight's .grad takes other strides than the weight depends on the build's kernels
        # (1.13's CPU kernels give it the weight's, and there the test checks that nothing is
        # named falsely: a 1x1 weight's NCHW and channels-last strides differ in size-1 dims
        # only); the report must name exactly the parameters whose strides the rank saw
        # differ, in each rank.
        with tempfile.TemporaryDirectory() as tmp:
            outputs = run_two_ranks(tmp, "--keep-1x1-nchw")
            for rank, out in enumerate(outputs):
                seen = re.search(r"grad strides differ: (\S+)", out).group(1)
                differ = [] if seen == "none" else seen.split(",")
                print(f"  rank {rank}: parameters whose .grad strides differ: {differ or 'none'}")
                self.assertLessEqual(set(differ), {"module.project.weight"}, "only the 1x1 weight was left NCHW")
                named = grad_stride_violations(os.path.join(tmp, f"report-rank{rank}.json"))
                self.assertEqual(sorted(named), differ)

    def test_ranks_started_by_spawn_name_the_parameter(self):
        # The runner switches on the parent; torch.multiprocessing.spawn's ranks switch on as
        # they start. They have no RANK when the settings are read: %p names their reports.
        with tempfile.TemporaryDirectory() as tmp:
            report = os.path.join(tmp, "report-%p.json")
            env = dict(os.environ, LAYOUTGUARD="record", LAYOUTGUARD_OPTIONS=f"report={report}:summary=0",
                       OMP_NUM_THREADS="1")
            run = subprocess.run([sys.executable, "-m", "layoutguard_torch", os.path.join(HERE, "ddp_worker.py"),
                                  "--spawn", str(free_port())], env=env, capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)
            ranks = dict(re.findall(r"^rank (\d) done in process (\d+);", run.stdout, re.M))
            self.assertEqual(sorted(ranks), ["0", "1"], run.stdout)
            for pid in ranks.values():
                self.assert_names_the_weights(report.replace("%p", pid))

    def assert_names_the_weights(self, report):
        contract = grad_stride_violations(report)
        self.assertEqual(sorted(contract), ["module.expand.weight", "module.project.weight"], contract)
        v = contract["module.expand.weight"]
        self.assertEqual(v["inputs"][0]["strides"], [72, 1, 24, 8])    # the weight: channels_last
        self.assertEqual(v["outputs"][0]["strides"], [72, 9, 3, 1])    # its .grad: the bucket's NCHW
        # The first step only: DDP rebuilds its buckets after it, from the strides then.
        self.assertEqual(v["count"], 1)


if __name__ == "__main__":
    lg_unittest.main()
