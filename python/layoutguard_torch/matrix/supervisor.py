"""Runs the requested ops in worker processes, so that an op that aborts, segfaults or hangs
costs only its own row: a dead worker's op is recorded as an error and a fresh worker takes the
next one. Each worker runs one op at a time with one intra-op thread; `jobs` workers run side
by side."""
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time

READY_TIMEOUT_S = 300


class WorkerStartError(RuntimeError):
    """A worker died or hung before it could take work (an import error, say)."""


class _Worker:
    def __init__(self, env):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "layoutguard_torch.matrix.worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        self.buffer = b""
        self.ready = False
        self.task = None
        self.samples = []
        self.current = None      # the "start" event of the sample in progress
        self.deadline = time.monotonic() + READY_TIMEOUT_S
        self.started_task = 0.0

    def send(self, task, timeout):
        self.task, self.samples, self.current = task, [], None
        self.started_task = time.monotonic()
        self.deadline = self.started_task + timeout
        self.proc.stdin.write((json.dumps({"kind": task[0], "name": task[1]}) + "\n").encode())
        self.proc.stdin.flush()

    def lines(self, data):
        self.buffer += data
        *complete, self.buffer = self.buffer.split(b"\n")
        return [json.loads(l) for l in complete if l.strip()]

    def stderr_tail(self):
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace").strip().splitlines()[-5:]

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.stderr.close()


def _death(returncode):
    if returncode is not None and returncode < 0:
        return f"process died: signal {-returncode} ({signal.Signals(-returncode).name})"
    return f"process died: exit status {returncode}"


def _failed_sample(worker, message):
    start = worker.current or {"index": len(worker.samples), "example": ""}
    err = {"verdict": "error", "error": message}
    return {"event": "sample", "index": start["index"], "example": start["example"],
            "lifted": False, "forward": err, "backward": dict(err)}


def run(tasks, env, jobs, timeout, on_result):
    """Runs each (kind, name) of `tasks`; calls on_result(task, summary, samples, seconds)."""
    pending = list(tasks)
    workers = []
    sel = selectors.DefaultSelector()
    failed_starts = 0

    def spawn():
        w = _Worker(env)
        sel.register(w.proc.stdout, selectors.EVENT_READ, w)
        workers.append(w)

    def retire(w, message):
        nonlocal failed_starts
        sel.unregister(w.proc.stdout)
        workers.remove(w)
        w.proc.stdin.close() if not w.proc.stdin.closed else None
        if w.task is None:
            tail = w.stderr_tail()
            w.kill()
            failed_starts += 1
            if failed_starts >= 3:
                raise WorkerStartError(f"the worker does not start ({message}): " + " | ".join(tail))
            return
        w.kill()
        task = w.task
        on_result(task, {}, w.samples + [_failed_sample(w, message)], time.monotonic() - w.started_task)

    try:
        while pending or any(w.task for w in workers):
            while len(workers) < min(jobs, len(pending) + sum(1 for w in workers if w.task)):
                spawn()
            for w in workers:
                if w.ready and w.task is None and pending:
                    w.send(pending.pop(0), timeout)
            wait = max(0.0, min(w.deadline for w in workers) - time.monotonic())
            events = sel.select(timeout=min(wait, 5.0))
            for key, _ in events:
                w = key.data
                data = os.read(w.proc.stdout.fileno(), 1 << 16)
                if not data:
                    retire(w, _death(w.proc.wait()))
                    continue
                for msg in w.lines(data):
                    kind = msg.get("event")
                    if kind == "ready":
                        w.ready, w.deadline = True, float("inf")
                    elif kind == "start":
                        w.current = msg
                    elif kind == "sample":
                        w.samples.append(msg)
                        w.current = None
                    elif kind == "done":
                        task, got = w.task, w.samples
                        w.task, w.samples, w.deadline = None, [], float("inf")
                        on_result(task, msg, got, time.monotonic() - w.started_task)
            now = time.monotonic()
            for w in list(workers):
                if now > w.deadline:
                    what = f"timeout after {timeout:g} s" if w.task else "worker start timed out"
                    retire(w, what)
    finally:
        for w in list(workers):
            if w.proc.stdin and not w.proc.stdin.closed:
                w.proc.stdin.close()
            w.kill()
