"""The bridge in the processes a PyTorch program starts: forked ones (DataLoader workers) are
copies of a switched-on parent and write none of its files; spawned ones (torch.multiprocessing
spawn, spawn and forkserver pools and DataLoaders) start as fresh interpreters and are switched
on in the parent's mode and options, writing the files whose paths name them (%p)."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import lg_unittest


def run_script(program, env_extra, runner=True, args=()):
    """Runs `program` as a script in a fresh interpreter, under the runner unless told not to."""
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "program.py")
        with open(script, "w") as f:
            f.write(program)
        env = {k: v for k, v in os.environ.items() if k not in ("LAYOUTGUARD", "LAYOUTGUARD_OPTIONS")}
        env.update(env_extra)
        cmd = [sys.executable] + (["-m", "layoutguard_torch"] if runner else []) + [script, *args]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def read_json(path):
    with open(path) as f:
        return json.load(f)


def read_events(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


# A loss (softmax over C in module "head") in each of two ranks that torch.multiprocessing
# starts by spawning; the parent runs one conv of its own. Each process prints its id. With
# the argument "_exit" the parent ends without its exit handler: it writes no report. The top
# level runs an op (avg_pool2d) that the ranks run again as their main module's, unchecked
# unless the top level switches on (ENABLED_AT_TOP_LEVEL).
SPAWNED_RANKS = """
import os, sys, torch
import torch.multiprocessing as mp
# top level
SAMPLE = torch.nn.functional.avg_pool2d(torch.randn(1, 4, 6, 6).contiguous(memory_format=torch.channels_last), 1)
class Head(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, 1)
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 4, 1)
        self.head = Head()
    def forward(self, x):
        return self.head(self.conv(x))
def rank_main(rank):
    os.write(1, f"child {os.getpid()}\\n".encode())  # one write: the ranks share the pipe
    net = Net().to(memory_format=torch.channels_last)
    net(torch.randn(2, 4, 6, 6).contiguous(memory_format=torch.channels_last)).sum().backward()
if __name__ == "__main__":
    print("parent", os.getpid(), flush=True)
    torch.nn.Conv2d(4, 4, 1)(SAMPLE)
    mp.spawn(rank_main, nprocs=2)
    print("program done", flush=True)
    if sys.argv[1:] == ["_exit"]:
        os._exit(0)
"""


ENABLED_AT_TOP_LEVEL = SPAWNED_RANKS.replace("# top level\n", "import layoutguard_torch as lgt\nlgt.enable()\n")

# A dataset whose items lose channels_last in the worker process that makes them (line 8).
LOSSY_IMAGES = """
import torch
from torch.utils.data import DataLoader, Dataset
class Images(Dataset):
    def __len__(self): return 8
    def __getitem__(self, i):
        x = torch.randn(1, 4, 6, 6).contiguous(memory_format=torch.channels_last)
        return torch.softmax(x, 1)[0]
"""


# A pool's task that loses channels_last in the worker and returns the worker's process id.
SOFTMAX_IN_WORKER = """def softmax_in_worker(_):
    torch.softmax(torch.randn(1, 4, 6, 6).contiguous(memory_format=torch.channels_last), 1)
    return os.getpid()
"""


def process_ids(stdout):
    parent = int(re.search(r"^parent (\d+)$", stdout, re.M).group(1))
    children = sorted(int(p) for p in re.findall(r"^child (\d+)$", stdout, re.M))
    return parent, children


class InTempDir(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


class SpawnedProcesses(InTempDir):
    def test_spawned_ranks_check_and_write_the_files_their_paths_name(self):
        # %p names one report and one event stream per process: the ranks' hold their own
        # losses, the parent's only its own calls.
        report, events = os.path.join(self.tmp, "report-%p.json"), os.path.join(self.tmp, "events-%p.jsonl")
        run = run_script(SPAWNED_RANKS, {"LAYOUTGUARD": "record",
                                         "LAYOUTGUARD_OPTIONS": f"report={report}:events={events}:summary=0"})
        self.assertEqual(run.returncode, 0, run.stderr)
        parent, children = process_ids(run.stdout)
        self.assertEqual(len(children), 2, run.stdout)
        self.assertEqual(sorted(glob.glob(os.path.join(self.tmp, "report-*.json"))),
                         sorted(report.replace("%p", str(p)) for p in [parent] + children))
        for child in children:
            found = read_json(report.replace("%p", str(child)))["violations"]
            self.assertEqual([(v["op"], v["module"]) for v in found], [("aten::softmax", "head")], child)
            ops = [e["op"] for e in read_events(events.replace("%p", str(child)))]
            self.assertIn("aten::softmax", ops)
            self.assertIn("aten::convolution_backward", ops)
            self.assertNotIn("aten::avg_pool2d", ops)  # the top level, run again for its definitions
        self.assertEqual(read_json(report.replace("%p", str(parent)))["violations"], [])
        parent_ops = [e["op"] for e in read_events(events.replace("%p", str(parent)))]
        self.assertIn("aten::avg_pool2d", parent_ops)
        self.assertIn("aten::conv2d", parent_ops)
        self.assertNotIn("aten::softmax", parent_ops)

    def test_a_path_without_placeholder_stays_the_parents(self):
        # Each rank would replace the parent's report and event stream with its own: it writes
        # neither, says so, and its warnings and its summary (headed by its process) go to the
        # shared terminal. The parent ends without writing its report, so none may exist. The
        # ranks switch on at the top level too, and check its op there: even that op's event
        # stays out of the parent's stream.
        report, events = os.path.join(self.tmp, "report.json"), os.path.join(self.tmp, "events.jsonl")
        run = run_script(ENABLED_AT_TOP_LEVEL,
                         {"LAYOUTGUARD": "warn", "LAYOUTGUARD_OPTIONS": f"report={report}:events={events}"},
                         args=["_exit"])
        self.assertEqual(run.returncode, 0, run.stderr)
        parent, children = process_ids(run.stdout)
        self.assertEqual(len(children), 2, run.stdout)
        for child in children:
            for what, path in (("report", report), ("event stream", events)):
                self.assertIn(f"[layoutguard] process {child}, started by process {parent}, writes no {what}: "
                              f"'{path}' is its parent's; put %p in the path for one per process", run.stderr)
            self.assertIn(f"[layoutguard] process {child}, started by process {parent}:\n[layoutguard] summary:",
                          run.stderr)
        self.assertEqual(run.stderr.count("aten::softmax lost channels_last"), 2, run.stderr)
        self.assertFalse(os.path.exists(report))
        lines = read_events(events)
        self.assertEqual([e["op"] for e in lines].count("aten::avg_pool2d"), 1)  # the parent's top level
        self.assertIn("aten::conv2d", [e["op"] for e in lines])
        self.assertNotIn("aten::softmax", [e["op"] for e in lines])
        self.assertEqual([e["seq"] for e in lines], list(range(len(lines))))

    def test_throw_mode_fails_the_rank_at_the_line_of_the_loss(self):
        run = run_script(SPAWNED_RANKS, {"LAYOUTGUARD": "throw", "LAYOUTGUARD_OPTIONS": "summary=0"})
        self.assertNotEqual(run.returncode, 0, run.stdout)
        self.assertNotIn("program done", run.stdout)
        self.assertIn("LayoutViolationError", run.stderr)
        self.assertIn("aten::softmax lost channels_last", run.stderr)
        line = SPAWNED_RANKS.split("\n").index("        return torch.softmax(x, 1)") + 1
        self.assertIn(f"program.py:{line} in forward", run.stderr)

    def test_enable_and_set_options_reach_spawned_and_forkserver_workers(self):
        # No LAYOUTGUARD in the environment: the mode and options set through the API reach a
        # spawn pool's and a forkserver pool's workers, and a spawn Pool's (closed and joined:
        # leaving its with-block terminates the workers before their exit handlers). A process
        # started from a thread in an off block stays off: it checks nothing, and writes no
        # report; neither does an idle forkserver worker.
        program = f"""
import concurrent.futures, multiprocessing, os, torch
import layoutguard_torch as lgt
""" + SOFTMAX_IN_WORKER + f"""if __name__ == "__main__":
    lgt.enable("record")
    lgt.set_options("report={self.tmp}/report-%p.json:summary=0")
    for method in ("spawn", "forkserver"):
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context(method)) as pool:
            print(method, pool.submit(softmax_in_worker, 0).result(), flush=True)
    pool = multiprocessing.get_context("spawn").Pool(1)
    print("pool", pool.apply(softmax_in_worker, (0,)), flush=True)
    pool.close()
    pool.join()
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver")) as pool:
        print("idle", pool.submit(os.getpid).result(), flush=True)
    with lgt.guard("off"):
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            print("off", pool.submit(softmax_in_worker, 0).result(), flush=True)
"""
        run = run_script(program, {}, runner=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        pids = dict(line.split() for line in run.stdout.split("\n") if line)
        for way in ("spawn", "forkserver", "pool"):
            found = read_json(os.path.join(self.tmp, f"report-{pids[way]}.json"))["violations"]
            self.assertEqual([v["op"] for v in found], ["aten::softmax"], way)
        for way in ("idle", "off"):
            self.assertFalse(os.path.exists(os.path.join(self.tmp, f"report-{pids[way]}.json")), way)

    def test_replacement_workers_run_in_the_mode_of_the_block_that_made_the_pool(self):
        # A Pool's replacement workers (maxtasksperchild) are started by the pool's own thread,
        # which took the mode of the block that made the pool along: record in a record block
        # (the process-wide mode is warn), off in an off block.
        program = f"""
import multiprocessing, os, torch
import layoutguard_torch as lgt
""" + SOFTMAX_IN_WORKER + f"""if __name__ == "__main__":
    lgt.enable("warn")
    lgt.set_options("report={self.tmp}/report-%p.json:summary=0")
    for mode in ("record", "off"):
        with lgt.guard(mode):
            pool = multiprocessing.get_context("spawn").Pool(1, maxtasksperchild=1)
        print(mode + "-first", pool.apply(softmax_in_worker, (0,)), flush=True)
        print(mode + "-replacement", pool.apply(softmax_in_worker, (0,)), flush=True)
        pool.close()
        pool.join()
"""
        run = run_script(program, {}, runner=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        pids = dict(line.split() for line in run.stdout.split("\n") if line)
        self.assertNotEqual(pids["record-first"], pids["record-replacement"])
        for way in ("record-first", "record-replacement"):
            found = read_json(os.path.join(self.tmp, f"report-{pids[way]}.json"))["violations"]
            self.assertEqual([v["op"] for v in found], ["aten::softmax"], way)
        for way in ("off-first", "off-replacement"):
            self.assertFalse(os.path.exists(os.path.join(self.tmp, f"report-{pids[way]}.json")), way)
        self.assertNotIn("lost channels_last", run.stderr)  # no worker ran in warn

    def test_a_child_started_from_an_off_block_stays_off_under_layoutguard(self):
        # LAYOUTGUARD (the runner sets it) would switch the child on as its main module imports
        # the package; started from an off block, it stays off, and leaves the parent's report
        # alone (the parent ends without writing it, so none may exist).
        report = os.path.join(self.tmp, "report.json")
        program = """
import multiprocessing, os, torch
import layoutguard_torch as lgt
def softmax():
    torch.softmax(torch.randn(1, 4, 6, 6).contiguous(memory_format=torch.channels_last), 1)
if __name__ == "__main__":
    with lgt.guard("off"):
        child = multiprocessing.get_context("spawn").Process(target=softmax)
        child.start()
    child.join()
    print("exit code", child.exitcode, flush=True)
    os._exit(0)
"""
        run = run_script(program, {"LAYOUTGUARD": "warn", "LAYOUTGUARD_OPTIONS": f"report={report}"})
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("exit code 0", run.stdout)
        self.assertNotIn("lost channels_last", run.stderr)
        self.assertNotIn("writes no report", run.stderr)
        self.assertFalse(os.path.exists(report))

    def test_a_child_that_cannot_switch_on_still_runs_its_target(self):
        # The child cannot import the package (a broken copy first on the parent's sys.path), or
        # its settings fail (a bad LAYOUTGUARD_TORCH_UNBOXED, read as the bridge switches on):
        # it says why it checks nothing, and runs its target unchecked.
        broken = os.path.join(self.tmp, "broken")
        os.makedirs(os.path.join(broken, "layoutguard_torch"))
        with open(os.path.join(broken, "layoutguard_torch", "__init__.py"), "w") as f:
            f.write("raise ImportError('a broken copy')\n")
        program = f"""
import multiprocessing, os, sys, torch
""" + SOFTMAX_IN_WORKER + f"""if __name__ == "__main__":
    import layoutguard_torch as lgt  # not in the children, which import this file as their main module
    lgt.enable("warn")
    path = list(sys.path)
    sys.path.insert(0, {broken!r})
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        print("import", pool.apply(softmax_in_worker, (0,)), flush=True)
    sys.path[:] = path
    os.environ["LAYOUTGUARD_TORCH_UNBOXED"] = "sometimes"
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        print("settings", pool.apply(softmax_in_worker, (0,)), flush=True)
"""
        run = run_script(program, {"LAYOUTGUARD_OPTIONS": "summary=0"}, runner=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        pids = dict(line.split() for line in run.stdout.split("\n") if line)
        self.assertIn(f"[layoutguard] process {pids['import']}, started by process ", run.stderr)
        self.assertIn("checks nothing: layoutguard_torch cannot be imported here (ImportError: a broken copy)",
                      run.stderr)
        self.assertIn(f"[layoutguard] process {pids['settings']}, started by process ", run.stderr)
        self.assertIn("checks nothing: ConfigError: ", run.stderr)
        self.assertIn("LAYOUTGUARD_TORCH_UNBOXED", run.stderr)
        self.assertNotIn("lost channels_last", run.stderr)

    def test_workers_of_a_switched_on_forkserver_start_afresh(self):
        # The forkserver imports a module that switches on and runs an op before it forks the
        # workers: they are forked children of a process that loaded the bridge, with its
        # settings, records and exit handler, and start afresh all the same. A worker that
        # checks nothing writes no report.
        with open(os.path.join(self.tmp, "switch_on_early.py"), "w") as f:
            f.write("import torch, layoutguard_torch as lgt\nlgt.enable()\n"
                    "torch.nn.functional.avg_pool2d(torch.randn(1, 4, 6, 6).contiguous("
                    "memory_format=torch.channels_last), 1)\n")
        program = f"""
import concurrent.futures, multiprocessing, os, sys, torch
""" + SOFTMAX_IN_WORKER + f"""if __name__ == "__main__":
    print("main", os.getpid(), flush=True)
    multiprocessing.set_forkserver_preload(["switch_on_early"])
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver")) as pool:
        print("forkserver", pool.submit(softmax_in_worker, 0).result(), flush=True)
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver")) as pool:
        print("idle", pool.submit(os.getpid).result(), flush=True)
"""
        report = os.path.join(self.tmp, "report-%p.json")
        # The forkserver imports its preload modules from the environment's path only. One
        # OpenMP thread: a process forked from one whose OpenMP team ran (the forkserver's op)
        # hangs in its first parallel region, with or without the bridge.
        path = os.pathsep.join([self.tmp] + [p for p in [os.environ.get("PYTHONPATH")] if p])
        run = run_script(program, {"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": f"report={report}:summary=0",
                                   "PYTHONPATH": path, "OMP_NUM_THREADS": "1"})
        self.assertEqual(run.returncode, 0, run.stderr)
        pids = dict(line.split() for line in run.stdout.split("\n") if line)
        worker = pids["forkserver"]
        self.assertFalse(os.path.exists(report.replace("%p", pids["idle"])))
        # The forkserver wrote its own report at exit, with its own op (the runner's process
        # writes one too, without ops).
        self.assertEqual(read_json(report.replace("%p", pids["main"]))["checked_calls"], 0)
        servers = [f for f in glob.glob(report.replace("%p", "*"))
                   if f not in (report.replace("%p", worker), report.replace("%p", pids["main"]))]
        self.assertEqual(len(servers), 1, servers)
        self.assertIn("aten::avg_pool2d", [o["op"] for o in read_json(servers[0])["ops"]])
        written = read_json(report.replace("%p", worker))
        self.assertEqual([v["op"] for v in written["violations"]], ["aten::softmax"])
        self.assertNotIn("aten::avg_pool2d", [o["op"] for o in written["ops"]])

    def test_spawned_dataloader_workers_check_their_calls(self):
        program = LOSSY_IMAGES + """
if __name__ == "__main__":
    for batch in DataLoader(Images(), batch_size=2, num_workers=1, multiprocessing_context="spawn"):
        pass
    print("program done")
"""
        run = run_script(program, {"LAYOUTGUARD": "warn", "LAYOUTGUARD_OPTIONS": "summary=0"})
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("program done", run.stdout)
        self.assertIn("aten::softmax lost channels_last", run.stderr)
        self.assertIn("program.py:8 in __getitem__", run.stderr)


class ForkedProcesses(InTempDir):
    def test_forked_workers_check_but_write_none_of_the_parents_files(self):
        # DataLoader workers are forked: they inherit the settings, whose paths name the
        # parent's files, and a copy of its records. They keep checking (warn mode logs their
        # losses), but their calls stay out of the parent's event stream and report.
        program = LOSSY_IMAGES + """
conv = torch.nn.Conv2d(4, 4, 1).to(memory_format=torch.channels_last)
for batch in DataLoader(Images(), batch_size=4, num_workers=2, multiprocessing_context="fork"):
    conv(batch.contiguous(memory_format=torch.channels_last)).sum().backward()
print("program done")
"""
        events, report = os.path.join(self.tmp, "events.jsonl"), os.path.join(self.tmp, "report.json")
        run = run_script(program, {"LAYOUTGUARD": "record",
                                   "LAYOUTGUARD_OPTIONS": f"events={events}:report={report}:summary=0"})
        self.assertEqual(run.returncode, 0, run.stderr)
        lines = read_events(events)
        self.assertIn("aten::conv2d", [e["op"] for e in lines])
        self.assertNotIn("aten::softmax", [e["op"] for e in lines])
        self.assertEqual([e["seq"] for e in lines], list(range(lines[0]["seq"], lines[0]["seq"] + len(lines))))
        self.assertEqual([v["op"] for v in read_json(report)["violations"]], [])
        run = run_script(program, {"LAYOUTGUARD": "warn", "LAYOUTGUARD_OPTIONS": "summary=0"})
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("aten::softmax lost channels_last", run.stderr)

    def test_a_child_forked_before_the_first_op_writes_none_of_the_parents_files(self):
        # The parent forks before it ran any op, then writes its first event; the child's first
        # event comes after it. Were the child not a forked child, its stream would replace the
        # parent's file, and the parent's later lines would go to the replaced one.
        events = os.path.join(self.tmp, "events.jsonl")
        program = """
import multiprocessing, torch
def child(go):
    go.wait()
    torch.softmax(torch.randn(1, 4, 6, 6).contiguous(memory_format=torch.channels_last), 1)
if __name__ == "__main__":
    ctx = multiprocessing.get_context("fork")
    go = ctx.Event()
    worker = ctx.Process(target=child, args=(go,))
    worker.start()
    x = torch.randn(1, 4, 6, 6).contiguous(memory_format=torch.channels_last)
    go.set()
    worker.join()
    torch.nn.functional.relu(torch.nn.Conv2d(4, 4, 1)(x))
    print("program done")
"""
        run = run_script(program, {"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": f"events={events}:summary=0"})
        self.assertEqual(run.returncode, 0, run.stderr)
        ops = [e["op"] for e in read_events(events)]
        self.assertIn("aten::contiguous", ops)
        self.assertIn("aten::conv2d", ops)
        self.assertNotIn("aten::softmax", ops)


if __name__ == "__main__":
    lg_unittest.main()
