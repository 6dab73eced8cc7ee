"""The shards of an audit (`--shards paper|claim`): the chosen claims split into several pytest
runs, run here one after another or as a submitit job array (`--executor slurm`: Slurm where there
is one, local processes otherwise); a job that ends without a result is submitted again.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from properties.cli_common import UsageError
from properties.proctree import _run_pytest


def shard_groups(chosen: list[str], mode: str) -> list[list[str]]:
    """The claim ids of each shard.  `none`: one shard; `paper`: one per paper prefix; `claim`:
    one per claim file, so that claims registered in one file (which share its cached runs) run
    in the same shard."""
    from properties.registry import REGISTERED_IN

    if mode == "none":
        return [list(chosen)] if chosen else []
    key = ((lambda i: i.split(".", 1)[0]) if mode == "paper"
           else (lambda i: REGISTERED_IN.get(i, i)))
    groups: dict[str, list[str]] = {}
    for i in chosen:
        groups.setdefault(key(i), []).append(i)
    return [sorted(g) for _, g in sorted(groups.items())]


class ShardInterrupted(RuntimeError):
    """A cluster job's pytest was stopped by a signal (scancel, preemption): the job did not
    complete, and the audit resubmits it."""


class ShardJob:
    """What a cluster job runs: one shard's pytest command (its rows go to --audit-raw), with the
    same process-tree handling as a local run.  `checkpoint` makes it requeueable: on a
    preemption or time-out signal submitit requeues it, and the rerun reads every run the first
    attempt stored from the shared run cache."""

    def __call__(self, cmd: list[str], env: dict) -> int:
        rc, interrupted = _run_pytest(cmd, env)
        if interrupted:
            raise ShardInterrupted(f"the shard's pytest was stopped by a signal (exit {rc})")
        return rc

    def checkpoint(self, cmd, env):
        import submitit

        return submitit.helpers.DelayedSubmission(ShardJob(), cmd, env)


MAX_RESUBMIT = 2  # a shard job that ends without a result is submitted again this many times
_ENDED = {"CANCELLED", "FAILED", "NODE_FAIL", "PREEMPTED", "TIMEOUT", "BOOT_FAIL", "DEADLINE",
          "OUT_OF_MEMORY", "COMPLETED", "SPECIAL_EXIT", "REVOKED"}


def _queue_state(job) -> str | None:
    """A Slurm job's state from squeue ('' once it has left the queue), or None where that
    cannot be told (not a Slurm job, no squeue).  submitit reads job states with sacct, which
    a cluster without job accounting lacks: there a cancelled job would stay UNKNOWN forever."""
    if type(job).__name__ != "SlurmJob":
        return None
    try:
        out = subprocess.run(["squeue", "-h", "-j", str(job.job_id), "-o", "%T"],
                             capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode not in (0, 1):
        return None
    return out.stdout.strip().split("\n")[0].strip().upper() if out.stdout.strip() else ""


def _ended_without_result(job, seen: dict, k: int) -> bool:
    """True once squeue has said, on three checks a few seconds apart, that `job` ended (or left
    the queue) while no result of it has appeared."""
    now = time.monotonic()
    last, count = seen.get(k, (0.0, 0))
    if now - last < 3.0:
        return False
    state = _queue_state(job)
    ended = state is not None and (state == "" or state in _ENDED)
    seen[k] = (now, count + 1 if ended else 0)
    return ended and count + 1 >= 3 and not job.paths.result_pickle.exists()


def _run_shards(cmds, env, executor: str, folder: Path) -> tuple[int, bool, dict]:
    """Run the shards' pytest commands: `local` one after another in this machine's process
    group handling; `slurm` as a submitit job array (AutoExecutor: Slurm where there is one,
    local processes otherwise).  A job that ends without a result (cancelled, preempted, its
    node lost) is submitted again, up to MAX_RESUBMIT times ($THEOREM_AUDIT_MAX_RESUBMIT); one
    that still fails is given up.  Returns (worst exit code, interrupted, {shard index: why it
    failed for good})."""
    if executor == "local":
        rcs, interrupted = [], False
        for c in cmds:
            rc, interrupted = _run_pytest(c, env)
            rcs.append(rc)
            if interrupted:
                break
        return _worst(rcs), interrupted, {}
    try:
        import submitit
    except ImportError:
        raise UsageError("--executor slurm needs submitit: pip install 'theorem-audit[cluster]'") from None
    max_resubmit = int(os.environ.get("THEOREM_AUDIT_MAX_RESUBMIT", MAX_RESUBMIT))
    ex = submitit.AutoExecutor(folder=str(folder / "submitit"))
    ex.update_parameters(timeout_min=int(os.environ.get("THEOREM_AUDIT_TIMEOUT_MIN", "120")),
                         cpus_per_task=int(os.environ.get("THEOREM_AUDIT_CPUS", "2")),
                         name=os.environ.get("THEOREM_AUDIT_JOB_NAME", "theorem-audit"))
    try:
        with ex.batch():
            jobs = {k: ex.submit(ShardJob(), c, env) for k, c in enumerate(cmds)}
    except Exception as e:  # noqa: BLE001 -- sbatch refused the array: no controller, a bad
        # partition or account; nothing was submitted, so there is nothing to cancel
        text = str(e).strip().splitlines()
        raise UsageError(f"--executor slurm: the cluster refused the shards' job array "
                         f"({type(e).__name__}: {text[0] if text else 'no message'}); is its "
                         "controller up (sinfo)? --executor local runs the shards here") from None
    pending, rcs, failed, tries, seen = dict(jobs), {}, {}, {k: 0 for k in jobs}, {}
    try:
        while pending:
            for k, job in list(pending.items()):
                why = None
                if job.done():
                    try:
                        rcs[k] = job.result()
                    except Exception as e:  # noqa: BLE001 -- the job ended without a result
                        text = str(e).strip().splitlines()
                        why = f"job {job.job_id} {type(e).__name__}: {text[0] if text else ''}"
                elif _ended_without_result(job, seen, k):
                    why = f"job {job.job_id} left the queue without a result"
                else:
                    continue
                del pending[k]
                seen.pop(k, None)
                if why is None:
                    continue
                if tries[k] < max_resubmit:
                    tries[k] += 1
                    print(f"shard {k}: {why}; submitting it again ({tries[k]}/{max_resubmit}; "
                          "the runs it stored are read from the run cache)", file=sys.stderr)
                    pending[k] = ex.submit(ShardJob(), cmds[k], env)
                else:
                    failed[k] = why
                    print(f"shard {k}: {why}; given up", file=sys.stderr)
            time.sleep(0.5)
    except KeyboardInterrupt:
        for j in pending.values():
            j.cancel(check=False)
        return 2, True, failed
    return _worst(rcs.values()), False, failed


def _worst(rcs) -> int:
    """pytest exit codes of several shards as one: an error (2-4) beats failures (1) beats
    nothing collected (5) beats success."""
    order = {0: 0, 5: 1, 1: 2}
    return max(rcs, key=lambda r: order.get(r, 3), default=5)
