"""Paddle's launcher on every pod, as collective-job and trainjob run it: its command, rank 0's
master wrapper, the pod failure policy, and the env of its contract each pod reads from itself.

Paddle's sources cited are python/paddle/distributed/launch/ at v3.3.1; Kubernetes' are
pkg/controller/job/ at v1.37.2 unless a path says otherwise."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING, Any

from paddlegen.spec.model import CHECKPOINT_DIR_ENV, Volume

if TYPE_CHECKING:
    from paddlegen.spec.model import Job, Role

# The launcher, when the spec gives no command: the spec's args are then the training script
# and its flags.
LAUNCHER = ["python3", "-m", "paddle.distributed.launch"]
_PYTHON = re.compile(r"python(3(\.[0-9]+)?)?")  # a Python's name: python, python3, python3.12
# The Job controller writes each pod's index into this annotation (and a label of the same
# name) and appends JOB_COMPLETION_INDEX, read from it, *after* the container's own env
# (indexed_job_utils.go:462-477). The kubelet expands $(VAR) only from entries before the one
# it expands, so no env of ours could say $(JOB_COMPLETION_INDEX): the rank reads the
# annotation itself (set on every index since Kubernetes 1.21).
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
RANK_PATH = f"metadata.annotations['{COMPLETION_INDEX}']"
# The launcher's HTTP master starts its store only on the pod whose own IP is the master's
# host (controllers/master.py:80-93: `ip in ['127.0.0.1', self.ctx.node.ip]`, node.ip being
# POD_IP, plugins/__init__.py:70-73); a name there leaves every pod waiting for a store that
# never starts. The others must reach rank 0 by its name, as its IP is not known before it
# runs. One pod template serves every index, so the choice is made at run time: rank 0 puts
# its own IP before the master's port, then every rank execs the spec's command unchanged
# ($0 and $@: the words after this script). POSIX sh, no $( or $$, which the kubelet would
# expand in a command.
# Before that, a pod without PADDLE_NNODES stops at once (NO_NODE_COUNT_EXIT): the launcher
# would take it for a job of one node (context/args_envs.py:108-113) and skip the rendezvous
# (controllers/master.py:138-140), so every pod would train alone and "succeed". A TrainJob
# written by hand against paddlegen's runtime lacks it (the runtime leaves the count to the
# TrainJob: Trainer's plain ML policy adds only the TrainJob's env, plainml.go:46-71).
NO_NODE_COUNT_EXIT = 64  # EX_USAGE: not one of the exit codes a stopped rank ends with
_NODE_COUNT_AND_MASTER = (
    'if [ -z "${PADDLE_NNODES:-}" ]; then echo "paddlegen: PADDLE_NNODES is not set: every pod '
    'would train alone; give the pods the number of nodes (a TrainJob: spec.trainer.env)" >&2; '
    f"exit {NO_NODE_COUNT_EXIT}; fi; "
    'if [ "$PADDLE_RANK" = 0 ]; then export PADDLE_MASTER="$POD_IP:${PADDLE_MASTER##*:}"; fi; '
)
_EXEC = 'exec "$0" "$@"'
MASTER_SCRIPT = _NODE_COUNT_AND_MASTER + _EXEC
WRAPPER = ["/bin/sh", "-c", MASTER_SCRIPT]
# The kubelet stops a container by signalling its first process alone, PID 1 of the pod's PID
# namespace, which the kernel gives only the signals it has a handler for. Paddle's launcher,
# exec'd by WRAPPER, has one: it forwards SIGTERM (and SIGINT) to its trainers and waits up to
# 30 s (controllers/controller.py:148-155). A command that starts the launcher as a child (the
# LLM CLIs below: paddleformers-cli catches KeyboardInterrupt alone, paddleformers 1.2.0
# cli/cli.py main) would ignore the SIGTERM as PID 1, and every rank would be killed unsaved at
# the end of the grace period. So for any command but the launcher the wrapper stays PID 1
# (`FORWARDING_WRAPPER`): it starts the command in a session and process group of its own
# (setsid, util-linux or busybox), and on SIGTERM or SIGINT signals that group, waits for the
# command and then for every process left in its group (the launcher outlives a CLI that the
# signal ends at once: it saves, for up to its 30 s), and exits with the command's status: a
# signal's 143 (128 + 15), or the launcher's own 15, 1, 137, which the pod failure policies
# match (`QUEUED_STOP_EXIT_CODES`). The group gets SIGTERM for either signal: a
# non-interactive shell starts an asynchronous command with SIGINT ignored (POSIX Shell
# Command Language 2.11), and a Python program that finds SIGINT ignored never raises
# KeyboardInterrupt; the launcher stops on either the same way. `wait` returns early when a
# trapped signal arrives, hence the second wait. dash's kill takes `-s SIG -- -PGID`.
_FORWARD = (
    'setsid "$0" "$@" & child=$!; stopped=; '
    "trap 'stopped=1; kill -s TERM -- \"-$child\" 2>/dev/null' TERM INT; "
    'wait "$child"; status=$?; '
    'while kill -s 0 "$child" 2>/dev/null; do wait "$child"; status=$?; done; '
    'while [ -n "$stopped" ] && kill -s 0 -- "-$child" 2>/dev/null; do sleep 1; done; '
    'exit "$status"'
)
FORWARDING_WRAPPER = ["/bin/sh", "-c", _NODE_COUNT_AND_MASTER + _FORWARD]
# The LLM entry points that start Paddle's launcher themselves: PaddleFormers'
# `paddleformers-cli` (paddleformers 1.2.0 cli/cli.py:73-76, :155-158) and ERNIEKit's
# `erniekit` (erniekit 1.3.0 cli.py:96-98, :187-190). Each reads the node count, its rank
# (paddleformers-cli only) and the master from NNODES, RANK and MASTER_ADDR:MASTER_PORT, and
# hands them to the launcher as --nnodes, --rank and --master, defaulting to a job of one node
# at 127.0.0.1:8080. The contract's PADDLE_* env overrides those flags (context/__init__.py:
# 100-107), so the launcher follows the contract whatever they say; the wrapper sets them
# from the contract all the same, after rank 0's master rewrite, so that everything that reads
# them (the CLIs' logs, a program, a script) sees what the launcher uses: rank 0's own IP, as
# PADDLE_MASTER, which no env entry could say ($(VAR) cannot cut PADDLE_MASTER in two, and rank
# 0's IP is only known when it runs). (`LLM_WRAPPER`)
LLM_CLIS = ("paddleformers-cli", "erniekit")
LLM_ENV = {
    "NNODES": "PADDLE_NNODES",
    "RANK": "PADDLE_RANK",
    "MASTER_ADDR": "the host of PADDLE_MASTER",
    "MASTER_PORT": "the port of PADDLE_MASTER",
}
_LLM_EXPORT = (
    'export NNODES="$PADDLE_NNODES" RANK="$PADDLE_RANK" MASTER_ADDR="${PADDLE_MASTER%:*}" '
    'MASTER_PORT="${PADDLE_MASTER##*:}"; '
)
LLM_SCRIPT = _NODE_COUNT_AND_MASTER + _LLM_EXPORT + _FORWARD
LLM_WRAPPER = ["/bin/sh", "-c", LLM_SCRIPT]
# The LLM CLIs' wrapper as paddlegen wrote it before it forwarded the stop signal (it exec'd
# the CLI, as WRAPPER then did every command): `import` reads it back too.
_EXEC_WRAPPERS = (["/bin/sh", "-c", _NODE_COUNT_AND_MASTER + _LLM_EXPORT + _EXEC],)
# One failed rank fails the Job at once, every pod stopped: a rank that starts again alone
# cannot rejoin the others (the launcher's rendezvous happens once, at start), so no index is
# retried. An eviction (node drain, preemption, node lost: the DisruptionTarget condition) is
# such a failure too, said first so that the Job's condition names it rather than the exit
# code it caused. First match wins (pod_failure_policy.go:34-76). A pod that fails before its
# container ran (a kubelet refusing it, an init container failing) matches neither, counts
# against backoffLimit and is replaced: no rank has trained with it yet. (`failure_policy`)
# Under Kueue, preemption suspends the Job, and the Job controller deletes its pods with no
# DisruptionTarget (Kubernetes v1.37.2 pkg/controller/job/job_controller.go:1763-1772; the
# policy is matched whether the Job is suspended or not, :1077-1085). Paddle's launcher exits
# 15 on the SIGTERM (paddle 3.3.1 distributed/launch/controllers/controller.py:165-177), or is
# killed at the end of the grace period, 137 (seen on the real node with a grace of 5 s), and
# a program a shell runs ends 143; and a rank whose peer, rank 0 with the launcher's store,
# was stopped first ends 1 before its own SIGTERM (seen on the real node). The Job
# controller's FailJob scan matches a pod whatever its tracking finalizer (:1716-1729), so
# any exit-code FailJob rule could fail, for good, a job Kueue meant to requeue. A queued job
# counts every non-zero exit instead, and a suspension's are never counted: the Job
# controller takes its tracking finalizer off a suspended Job's pods before it deletes them
# (job_controller.go:1284-1291), and a failed pod without it is not counted (:2028-2035); on
# re-admission every rank starts again together. A rank that fails on its own (an exception,
# the OOM killer's 137: the kubelet kills the whole cgroup on cgroup v2, memory.oom.group,
# pkg/kubelet/kubelet.go:775-787) is counted: each such failure brings the Job nearer its
# backoffLimit, so ranks that fail at every attempt fail the job after a bounded number of
# attempts; Ignore would re-create them for ever. (`QUEUED_STOP_EXIT_CODES`: the codes a
# preemption's stopped ranks end with, among those counted.)
QUEUED_STOP_EXIT_CODES = [1, 15, 137, 143]
# What `init` writes: ranks that started wait in the launcher's rendezvous for the rest, so
# the run is bounded; and what its command comment says (trainjob's too).
BOUNDED_RUN = {"activeDeadlineSeconds": 86400}
COMMAND_COMMENT = "after paddlegen's rank-0 master wrapper; Paddle's launcher when left out"


def failure_policy(container: str, queued: bool = False) -> dict[str, Any]:
    """The pod failure policy for pods whose training container is ``container``; a
    ``queued`` job's (Kueue) counts a failed rank against backoffLimit instead of failing the
    job, so that a suspension does not fail it."""
    return {
        "rules": [
            {
                "action": "FailJob",
                "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
            },
            {
                "action": "Count" if queued else "FailJob",
                "onExitCodes": {"containerName": container, "operator": "NotIn", "values": [0]},
            },
        ]
    }


# Under a read-only root file system Paddle writes in two places the image holds: `import
# paddle` asks for a temporary directory (paddle/dataset/common.py:44, tempfile.gettempdir(),
# which raises when none of /tmp, /var/tmp, /usr/tmp and / can be written: seen on the real
# node), and the launcher writes each process's log to log/workerlog.N under its working
# directory (launch/job/container.py:101-126, utils/process_context.py:47-49). Every rank exits
# 1 at start. An emptyDir at /tmp, the pod's own, serves both, the launcher's logs moved there
# by PADDLE_LOG_DIR (context/args_envs.py:33; the launcher makes the folder,
# job/container.py:108). (`writable_scratch`)
SCRATCH = "/tmp"
SCRATCH_VOLUME = "paddle-tmp"
LOG_DIR = f"{SCRATCH}/paddle-log"


def writable_scratch(job: Job, role: Role) -> tuple[list[dict[str, Any]], list[Volume]]:
    """The env and the volumes of ``role``'s pods: under a read-only root file system, an
    emptyDir at /tmp (unless the spec mounts one of its own there) with the launcher's logs
    (unless the spec places them itself)."""
    if not job.security.readOnlyRootFilesystem:
        return [], job.volumes
    env = (
        []
        if any(e["name"] == "PADDLE_LOG_DIR" for e in role.env)
        else [{"name": "PADDLE_LOG_DIR", "value": LOG_DIR}]
    )
    if any(v.mountPath == SCRATCH for v in job.volumes):
        return env, job.volumes
    scratch = Volume(
        SCRATCH_VOLUME, SCRATCH, False, "emptyDir", {}, None, [], None, None, [], None, None
    )
    return env, [*job.volumes, scratch]


def field_env(name: str, path: str) -> dict[str, Any]:
    """Env ``name`` from the pod's own field ``path`` (the downward API)."""
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def rank_env() -> list[dict[str, Any]]:
    """The contract's env that every pod reads from itself: its IP and its rank, the
    completion index of an Indexed Job's pod."""
    return [
        field_env("POD_IP", "status.podIP"),
        field_env("PADDLE_RANK", RANK_PATH),
    ]


def starts_llm_cli(command: list[str] | None) -> bool:
    """Whether ``command`` starts one of LLM_CLIS (by name or path)."""
    if not command:
        return False
    return posixpath.basename(str(command[0])) in LLM_CLIS


def is_launcher(command: list[str] | None) -> bool:
    """Whether ``command`` is Paddle's launcher itself, run by a Python (None: the launcher,
    the default)."""
    if not command:
        return True
    python = _PYTHON.fullmatch(posixpath.basename(str(command[0])))
    return python is not None and command[1:3] == LAUNCHER[1:]


def wrapper(command: list[str] | None) -> list[str]:
    """The master wrapper for ``command``: the launcher is exec'd, any other command stays
    the wrapper's child, which forwards the stop signal to it (an LLM CLI's also sets the env
    it reads, LLM_ENV)."""
    if starts_llm_cli(command):
        return LLM_WRAPPER
    return WRAPPER if is_launcher(command) else FORWARDING_WRAPPER


def unwrapped(command: list[str]) -> list[str] | None:
    """``command`` without paddlegen's master wrapper (any, of this version or an earlier
    one), or None when it has none."""
    for known in (WRAPPER, FORWARDING_WRAPPER, LLM_WRAPPER, *_EXEC_WRAPPERS):
        if command[: len(known)] == known:
            return command[len(known) :]
    return None


def command(role: Role) -> list[str]:
    """The master wrapper before the spec's command, else before the launcher."""
    return [*wrapper(role.command), *(role.command or LAUNCHER)]


# spec.checkpoint sets PADDLE_CHECKPOINT_DIR, which neither LLM CLI reads: their trainers save
# in, and resume from the last checkpoint-* of, the config's `output_dir` (PaddleFormers 1.2.0
# cli/train/sft/workflow.py:239, get_last_checkpoint(training_args.output_dir); ERNIEKit
# erniekit/train/sft/workflow.py run_sft, get_last_checkpoint(finetuning_args.output_dir)).
# Both take OmegaConf overrides after a YAML or JSON config, `CLI train CONFIG key=value ...`
# (paddleformers cli/hparams/parser.py:101-103; erniekit/hparams/parser.py read_args, the same
# OmegaConf.from_cli(sys.argv[3:]) merged over the config), so with a checkpoint the pods'
# args end with `output_dir=$(PADDLE_CHECKPOINT_DIR)`, which the kubelet expands from the
# container's env (the checkpoint contract's, workloads/base.py checkpoint_env). Any other
# form of the CLI's words (another subcommand, a config of another kind, whose words the CLI
# parses as flags) cannot take it, and one that sets output_dir itself keeps its own: the
# rule llm-checkpoint says so (shared/rules.py).
OUTPUT_DIR = "output_dir"
CHECKPOINT_OVERRIDE = f"{OUTPUT_DIR}=$({CHECKPOINT_DIR_ENV})"
_CONFIGS = (".yaml", ".yml", ".json")


def takes_overrides(words: list[str]) -> bool:
    """Whether an LLM CLI's ``words`` (command and args) train from a config that OmegaConf
    overrides may follow."""
    return len(words) >= 3 and words[1] == "train" and str(words[2]).endswith(_CONFIGS)


def output_dir_at(words: list[str]) -> int | None:
    """The index of the override of output_dir among ``words``' overrides, if any."""
    found = [i for i, word in enumerate(words[3:], 3) if str(word).startswith(OUTPUT_DIR + "=")]
    return found[-1] if found else None


def checkpoint_args(job: Job, role: Role) -> list[str] | None:
    """``role``'s args, and with a checkpoint, for an LLM CLI that takes overrides and sets
    no output_dir, the override that saves and resumes in the checkpoint folder."""
    words = [*(role.command or []), *(role.args or [])]
    if job.checkpoint is None or not starts_llm_cli(role.command):
        return role.args
    if not takes_overrides(words) or output_dir_at(words) is not None:
        return role.args
    return [*(role.args or []), CHECKPOINT_OVERRIDE]


def without_checkpoint_override(spec: dict[str, Any]) -> None:
    """The spec's args without the override ``checkpoint_args`` appends, where the spec
    (with its checkpoint) would append it again: import reads rendered output back."""
    command, args = spec.get("command") or [], spec.get("args") or []
    if not starts_llm_cli(command) or not args or args[-1] != CHECKPOINT_OVERRIDE:
        return
    words = [*command, *args[:-1]]
    if takes_overrides(words) and output_dir_at(words) is None:
        del args[-1]
        if not args:
            spec.pop("args")
