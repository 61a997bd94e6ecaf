"""The rules more than one workload has: Paddle's launcher's and PaddleFlow's PaddleJob's."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from paddlegen.spec.loader import FieldPath
from paddlegen.spec.model import COLLECTIVE_PORT, LAUNCHER_PORTS
from paddlegen.spec.rule import Context, Finding, SpecRule, worker_replicas
from paddlegen.workloads.shared.launcher import (
    CHECKPOINT_OVERRIDE,
    LAUNCHER,
    LLM_ENV,
    OUTPUT_DIR,
    output_dir_at,
    starts_llm_cli,
    takes_overrides,
)

# The launcher's rules, of the workloads whose pods all run Paddle's launcher
# (collective-job, trainjob).


def _roles(ctx: Context) -> Iterator[Finding]:
    for role in ("ps", "heter"):
        if role in ctx.spec:
            yield ctx.finding(
                ("spec", role),
                f"workload '{ctx.workload}' has no '{role}' role: every pod is a trainer of "
                "the collective (data-parallel) job",
                "set worker.replicas to the number of pods, or use workload 'paddlejob' for "
                "parameter servers",
                key=True,
            )


COLLECTIVE_ROLES = SpecRule(
    "collective-roles",
    "`collective-job` and `trainjob` have no `ps` or `heter` role: every pod is a trainer",
    explanation=(
        "`collective-job` and `trainjob` run a data-parallel job in which every pod is a trainer. "
        "A `ps` or `heter` role has no place in it; workload `paddlejob` runs parameter servers."
    ),
    severity="error",
    silenceable=True,
    check=_roles,
)


def _command(ctx: Context) -> Iterator[Finding]:
    worker = ctx.spec.get("worker", {})
    if not any(body.get(key) for body in (ctx.spec, worker) for key in ("command", "args")):
        yield ctx.finding(
            ("spec",),
            "nothing to run: without a command the pods run Paddle's launcher ("
            + " ".join(LAUNCHER)
            + "), which needs the training script as args",
            "set args, e.g. args: [train.py] (the launcher runs it on every pod), or a command",
            key=True,
        )


COLLECTIVE_COMMAND = SpecRule(
    "collective-command",
    "a `collective-job` or `trainjob` runs something: `args` (the training script, which "
    "the default "
    "command, Paddle's launcher, runs) or a `command`",
    explanation=(
        "Without a command the pods run Paddle's launcher, which needs the training script as "
        "`args`. A spec with neither runs nothing."
    ),
    severity="error",
    silenceable=True,
    check=_command,
)


def _restart(ctx: Context) -> Iterator[Finding]:
    restart = ctx.spec.get("run", {}).get("restartPolicy")
    if restart == "OnFailure":
        yield ctx.finding(
            ("spec", "run", "restartPolicy"),
            f"a {ctx.workload}'s pods run with restartPolicy Never: a rank restarted in place "
            "cannot rejoin the others, and the Job's pod failure policy, which fails the whole "
            "job at once, takes no other",
            "remove run.restartPolicy; a new run of the job restarts every rank",
        )


COLLECTIVE_RESTART = SpecRule(
    "collective-restart",
    "a `collective-job`'s or `trainjob`'s pods run with `restartPolicy: Never`: its pod "
    "failure policy "
    "takes no other, and a rank restarted in place cannot rejoin the others",
    explanation=(
        "A `collective-job`'s or `trainjob`'s pods run with `restartPolicy: Never`: its pod "
        "failure policy, which fails the whole job at once, takes no other, and a rank restarted "
        "in place cannot rejoin the others. A new run of the job restarts every rank."
    ),
    severity="error",
    silenceable=True,
    check=_restart,
)


# Env that makes Paddle's launcher replace the master and node count it was given with its own
# (python/paddle/distributed/launch/plugins/__init__.py:45-67 at v3.3.1, collective_compatible).
_LAUNCHER_OVERRIDES = ("PADDLE_TRAINER_ENDPOINTS", "DISTRIBUTED_TRAINER_ENDPOINTS")


# The launcher's flags that the contract's env overrides (context/__init__.py:100-107), by the
# env that does.
_CONTRACT_FLAGS = {
    "--master": "PADDLE_MASTER",
    "--nnodes": "PADDLE_NNODES",
    "--rank": "PADDLE_RANK",
    "--job_id": "PADDLE_JOB_ID",
    "--host": "POD_IP",
}


def _contract(ctx: Context) -> Mapping[str, str]:
    """The env the pods get from the workload, by the source of each: with an LLM CLI as the
    command, also the env its master wrapper sets for it (shared/launcher.py LLM_ENV)."""
    worker = ctx.spec.get("worker", {})
    command = worker.get("command", ctx.spec.get("command"))
    if not starts_llm_cli(command):
        return ctx.entry.launcher
    return {
        **ctx.entry.launcher,
        **{
            name: f"{source}, for {command[0]} (its master wrapper)"
            for name, source in LLM_ENV.items()
        },
    }


def _env(ctx: Context) -> Iterator[Finding]:
    contract = _contract(ctx)
    worker = ctx.spec.get("worker", {})
    for base in (("spec",), ("spec", "worker")):
        body = ctx.spec if len(base) == 1 else worker
        for i, entry in enumerate(body.get("env", [])):
            name = entry["name"]
            if name in contract:
                yield ctx.finding(
                    (*base, "env", i, "name"),
                    f"env '{name}' is set by workload '{ctx.workload}' from {contract[name]}",
                    "remove it here",
                )
            elif name in _LAUNCHER_OVERRIDES:
                yield ctx.finding(
                    (*base, "env", i, "name"),
                    f"env '{name}' makes Paddle's launcher replace the master and the node count "
                    f"that workload '{ctx.workload}' gives it with its own",
                    "remove it here: the launcher gives each process its endpoints",
                )


COLLECTIVE_ENV = SpecRule(
    "collective-env",
    "no env that `collective-job` or `trainjob` sets itself (`POD_IP`, `PADDLE_RANK`, "
    "`PADDLE_NNODES`, "
    "`PADDLE_JOB_ID`, `PADDLE_MASTER`; with `paddleformers-cli` or `erniekit` as the command, "
    "also `NNODES`, `RANK`, `MASTER_ADDR`, `MASTER_PORT`), nor `PADDLE_TRAINER_ENDPOINTS` or "
    "`DISTRIBUTED_TRAINER_ENDPOINTS`, which make the launcher replace the master and node "
    "count",
    explanation=(
        "These workloads give every pod the launcher's contract in env (`POD_IP`, `PADDLE_RANK`, "
        "`PADDLE_NNODES`, `PADDLE_JOB_ID`, `PADDLE_MASTER`, and an LLM CLI's own). The spec's "
        "entry would override it; `PADDLE_TRAINER_ENDPOINTS` or `DISTRIBUTED_TRAINER_ENDPOINTS` "
        "make the launcher replace the master and node count it was given."
    ),
    severity="error",
    silenceable=True,
    check=_env,
)


def _collective_flags(ctx: Context) -> Iterator[Finding]:
    """The launcher's own flags that the contract's env overrides, among its words before the
    training script (each of its flags takes one value) in the command and args pods run."""
    words = _run_words(ctx)
    starts = [i for i, (_, word) in enumerate(words) if word == "paddle.distributed.launch"]
    i = starts[0] + 1 if starts else len(words)
    while i < len(words) and words[i][1].startswith("--"):
        where, flag = words[i]
        name = flag.split("=", 1)[0]
        if name in _CONTRACT_FLAGS and where is not None:
            yield ctx.finding(
                where,
                f"the launcher's {name} is overridden by env {_CONTRACT_FLAGS[name]}, which "
                f"workload '{ctx.workload}' sets",
                f"remove {name} and its value",
            )
        i += 1 if "=" in flag else 2


def _run_words(ctx: Context) -> list[tuple[FieldPath | None, str]]:
    """The words a collective-job's or trainjob's pods run after the master wrapper, each
    with its place in the spec (None: the launcher paddlegen runs when the spec gives no
    command)."""
    worker = ctx.spec.get("worker", {})
    words: list[tuple[FieldPath | None, str]] = []
    for key in ("command", "args"):
        body, base = (worker, ("spec", "worker")) if key in worker else (ctx.spec, ("spec",))
        if key in body:
            words += [((*base, key, i), word) for i, word in enumerate(body[key])]
        elif key == "command":
            words += [(None, word) for word in LAUNCHER]
    return words


# What starts Paddle's launcher, as a word or part of one (a shell's script): its module (and
# the older fleet one), its console script fleetrun (Paddle's setup.py entry point), and the
# LLM entry points that start it themselves (PaddleFormers' paddleformers-cli, ERNIEKit's
# erniekit: both call paddle.distributed.launch).
_LAUNCHER_MARKS = (
    "paddle.distributed.launch",
    "paddle.distributed.fleet.launch",
    "fleetrun",
    "paddleformers-cli",
    "erniekit",
)


def _launcher(ctx: Context) -> Iterator[Finding]:
    """A command that starts no launcher: the pods' program would read the contract's env
    nowhere (init_parallel_env reads PADDLE_TRAINER_ID and PADDLE_TRAINERS_NUM, which only the
    launcher sets: paddle 3.3.1 distributed/parallel.py:741-742), so each pod would train as a
    world of one (:1065-1069) and succeed: N lone trainings."""
    words = _run_words(ctx)
    located = [where for where, _ in words if where is not None]
    if worker_replicas(ctx) == 1 or not located:  # one pod is a job of one; no words: -command
        return
    if any(mark in word for _, word in words for mark in _LAUNCHER_MARKS):
        return
    yield ctx.finding(
        located[0][:-1],
        f"the pods' command starts no Paddle launcher: each of the {worker_replicas(ctx)} pods "
        "would train alone, as a job of one, and succeed",
        "leave command out (Paddle's launcher then runs the args), or start it yourself: "
        + " ".join(LAUNCHER)
        + " train.py",
    )


COLLECTIVE_LAUNCHER = SpecRule(
    "collective-launcher",
    "a `collective-job`'s or `trainjob`'s pods start Paddle's launcher (the default command, "
    "or `python3 -m paddle.distributed.launch`, `fleetrun`, `paddleformers-cli`, `erniekit` in "
    "`command`): a program started without it trains alone on every pod",
    explanation=(
        "`init_parallel_env` reads what only Paddle's launcher sets. A command that starts no "
        "launcher makes each pod train alone, as a world of one, and succeed: N lone trainings "
        "instead of one job."
    ),
    severity="warning",
    silenceable=True,
    check=_launcher,
)


def _queued_deadline(ctx: Context) -> Iterator[Finding]:
    """A queued job's ranks that wait for each other, bounded by nothing: a failed rank ends
    the job and a rank stopped by a signal counts against backoffLimit, but a rank that waits
    in the rendezvous for one that never comes, or a collective that hangs, runs until its
    deadline, holding the queue's quota."""
    if ctx.kueue is None or worker_replicas(ctx) < 2:
        return
    if "activeDeadlineSeconds" in ctx.spec.get("run", {}):
        return
    yield ctx.finding(
        ("spec", "scheduling", "kueue"),
        "a queued job of several ranks without run.activeDeadlineSeconds: ranks that wait for "
        "one that never comes, or a collective that hangs, hold the queue's quota for ever",
        "set run.activeDeadlineSeconds (paddlegen init writes 86400)",
        key=True,
    )


COLLECTIVE_DEADLINE = SpecRule(
    "collective-deadline",
    "a queued `collective-job` or `trainjob` of several ranks has `run.activeDeadlineSeconds`: "
    "ranks waiting for one that never comes, or a hung collective, would hold the queue's "
    "quota for ever",
    explanation=(
        "A failed rank ends a queued job, but a rank that waits in the rendezvous for one that "
        "never comes, or a collective that hangs, runs until the job's deadline. Without "
        "`run.activeDeadlineSeconds` it holds the queue's quota for ever."
    ),
    severity="warning",
    silenceable=True,
    check=_queued_deadline,
)


COLLECTIVE_ARGS = SpecRule(
    "collective-args",
    "the launcher's own flags that the env overrides (`--master`, `--nnodes`, `--rank`, "
    "`--job_id`, `--host`, before the training script)",
    explanation=(
        "The launcher's own flags `--master`, `--nnodes`, `--rank`, `--job_id` and `--host` are "
        "overridden by the contract's env that these workloads set. Given before the training "
        "script, they do nothing but mislead."
    ),
    severity="warning",
    silenceable=True,
    check=_collective_flags,
)


def _checkpoint_dir(ctx: Context) -> str | None:
    """The checkpoint folder the spec names (spec/model.py Checkpoint.dir), None when its
    volume is not the spec's (volume-reference says so)."""
    given = ctx.spec["checkpoint"]
    volume = next((v for v in ctx.spec.get("volumes", []) if v["name"] == given["volume"]), None)
    if volume is None:
        return None
    return f"{volume['mountPath'].rstrip('/')}/{given.get('path', ctx.data['metadata']['name'])}"


def _llm_checkpoint(ctx: Context) -> Iterator[Finding]:
    """With a checkpoint, an LLM CLI's words that cannot take the output_dir override
    paddlegen appends, or that set another output_dir (shared/launcher.py
    checkpoint_args)."""
    words = _run_words(ctx)
    plain = [word for _, word in words]
    if "checkpoint" not in ctx.spec or not starts_llm_cli(plain):
        return
    cli = plain[0]
    if not takes_overrides(plain):
        yield ctx.finding(
            words[0][0][:-1] if words[0][0] else ("spec",),
            f"spec.checkpoint cannot reach {cli}: its trainer saves in and resumes from its "
            f"config's {OUTPUT_DIR}, which paddlegen sets as an override after the config, and "
            f"these words are not `{cli} train CONFIG.yaml` (or .yml, .json)",
            f"run `{cli} train CONFIG.yaml`, or set {OUTPUT_DIR} in the config to the "
            "checkpoint folder yourself",
        )
        return
    i = output_dir_at(plain)
    if i is None:
        return
    where, word = words[i]
    folder = _checkpoint_dir(ctx)
    value = word.split("=", 1)[1]
    if folder is None or word == CHECKPOINT_OVERRIDE or value == folder:
        return
    yield ctx.finding(
        where or ("spec",),
        f"{cli}'s trainer saves in and resumes from {value}, not the checkpoint folder "
        f"{folder}: paddlegen leaves the spec's own {OUTPUT_DIR} as it is",
        f"remove {word} (paddlegen then appends {CHECKPOINT_OVERRIDE}), or drop spec.checkpoint",
    )


LLM_CHECKPOINT = SpecRule(
    "llm-checkpoint",
    "with `checkpoint`, an LLM CLI (`paddleformers-cli`, `erniekit`) saves in the checkpoint "
    f"folder: paddlegen appends `{CHECKPOINT_OVERRIDE}` after its config, which its words "
    f"must allow (`train CONFIG.yaml`) and not set `{OUTPUT_DIR}` to another folder",
    explanation=(
        "`paddleformers-cli` and `erniekit` never read `PADDLE_CHECKPOINT_DIR`: their trainers "
        f"save in, and resume from the last checkpoint of, the config's `{OUTPUT_DIR}`. With "
        "`checkpoint`, paddlegen hands it the checkpoint folder as an override after the "
        f"config (`{CHECKPOINT_OVERRIDE}`). Words of another form (another subcommand, a "
        f"config that is not YAML or JSON) cannot take it, and an `{OUTPUT_DIR}=` of the "
        "spec's own stays: a restart then resumes from somewhere else, or from nothing."
    ),
    severity="warning",
    silenceable=True,
    check=_llm_checkpoint,
)


# The launcher's rules, in the registry's order.
def _launcher_port(ctx: Context) -> Iterator[Finding]:
    """The port rank 0's launcher serves its rendezvous store on: spec.<section>.port of the
    workload whose pods the operator's or paddlegen's PADDLE_MASTER points there."""
    section = ctx.entry.settings
    if section is None or ctx.spec.get(section.section, {}).get("port") not in LAUNCHER_PORTS:
        return
    port = ctx.spec[section.section]["port"]
    yield ctx.finding(
        ("spec", section.section, "port"),
        f"port {port} lies in {LAUNCHER_PORTS[0]}-{LAUNCHER_PORTS[-1]}, where Paddle's launcher "
        "draws the ports of its own processes (PORT_RANGE): rank 0's launcher draws them before "
        "it serves the rendezvous on this port, so one of its trainers may be given it and fail "
        "to bind it",
        f"use a port below {LAUNCHER_PORTS[0]}, such as the default {COLLECTIVE_PORT}",
    )


LAUNCHER_PORT = SpecRule(
    "launcher-port",
    f"the rendezvous port (`collective.port`, `kubeflow.port`) lies outside "
    f"{LAUNCHER_PORTS[0]}-{LAUNCHER_PORTS[-1]}, where Paddle's launcher draws the ports of its "
    "own processes",
    explanation=(
        "Rank 0's launcher serves the rendezvous store on the job's port, and draws the ports of "
        f"its own processes from {LAUNCHER_PORTS[0]}-{LAUNCHER_PORTS[-1]} (`PORT_RANGE`) before "
        "it does: a port in that range may be given to one of its trainers too, which then "
        "fails to bind it. A warning, not an error: the chance is small for one run, and a "
        "port an imported job used is kept. The defaults lie below the range."
    ),
    severity="warning",
    silenceable=True,
    check=_launcher_port,
)


LAUNCHER_RULES = (
    COLLECTIVE_ROLES,
    COLLECTIVE_COMMAND,
    COLLECTIVE_RESTART,
    COLLECTIVE_ENV,
    COLLECTIVE_ARGS,
    COLLECTIVE_LAUNCHER,
    COLLECTIVE_DEADLINE,
    LLM_CHECKPOINT,
)


# The rules of PaddleFlow's PaddleJob (v0.3.5), which the Kubeflow PaddleJob has too.


def _kueue_workload(ctx: Context) -> Iterator[Finding]:
    """Kueue holds a job suspended until its queue has quota: only a workload it can suspend,
    and whose integration it has, can be queued (docs/scheduling.md#kueue-queues)."""
    if ctx.kueue is None:
        return
    here: FieldPath = ("spec", "scheduling", "kueue")
    if ctx.workload == "paddlejob":
        # PaddleFlow's PaddleJob (v0.3.5) has no suspend, and Kueue no integration for its
        # kind (v0.19.2 pkg/controller/jobs/ has none for batch.paddlepaddle.org).
        yield ctx.finding(
            here,
            "Kueue cannot queue a PaddleFlow PaddleJob: its operator (v0.3.5) has no suspend, "
            "which is how Kueue holds a job until its queue has quota, and Kueue has no "
            "integration for it",
            "use workload collective-job, trainjob or kubeflow-paddlejob: Kueue queues each",
            key=True,
        )
    else:  # kubeflow-paddlejob
        yield ctx.finding(
            here,
            "Kueue queues a Kubeflow PaddleJob only with its kubeflow.org/paddlejob integration "
            "turned on, which it is not by default from Kueue v0.19",
            'add "kubeflow.org/paddlejob" to integrations.frameworks of Kueue\'s '
            "Configuration, or use workload collective-job or trainjob",
            key=True,
            severity="info",
        )


KUEUE_WORKLOAD = SpecRule(
    "kueue-workload",
    "`scheduling.kueue` only for a workload Kueue can hold suspended: not `paddlejob` "
    "(PaddleFlow's PaddleJob has no `suspend`; use `collective-job`, `trainjob` or "
    "`kubeflow-paddlejob`); for `kubeflow-paddlejob` a note that Kueue's "
    "`kubeflow.org/paddlejob` integration is off by default from v0.19",
    explanation=(
        "Kueue holds a job suspended until its queue has quota, so it can queue only an object "
        "with a `suspend` field and an integration of its own. PaddleFlow's PaddleJob has neither "
        "(an error); for a Kubeflow PaddleJob a note says Kueue's `kubeflow.org/paddlejob` "
        "integration is off by default from v0.19."
    ),
    severity="error",
    also=("info",),
    silenceable=True,
    check=_kueue_workload,
)


# Paddle's own images, by their repository path's end and the tag's major version.
_PADDLE_IMAGE = re.compile(r"(?:^|/)paddlepaddle/paddle:(\d+)\.")


def _ps_end(ctx: Context) -> Iterator[Finding]:
    """A parameter-server job ends only when a trainer stops the servers, and a PaddleJob is
    Completed only when every role succeeded (PaddleFlow v0.3.5
    controllers/paddlejob_helper.go:86-134); Paddle 3.3.1's fleet.stop_worker() does not stop
    them (python/paddle/distributed/ps/the_one_ps.py:1394-1402), and its CPU build has no
    parameter-server runtime: the servers run on after the trainers, for ever."""
    if "ps" not in ctx.spec:
        return
    image = ctx.spec["ps"].get("image", ctx.spec.get("image", ""))
    major = _PADDLE_IMAGE.search(image)
    # a PaddleFlow PaddleJob has no deadline to set: nothing to say there but the image
    boundable = "activeDeadlineSeconds" in ctx.entry.run_keys
    bounded = not boundable or "activeDeadlineSeconds" in ctx.spec.get("run", {})
    if major and int(major.group(1)) >= 3:
        yield ctx.finding(
            ("spec", "ps"),
            f"the parameter servers run {image}: Paddle 3's trainers do not stop the servers "
            "when they end (fleet.stop_worker), so the job never completes"
            + ("" if bounded else ", and nothing bounds it"),
            "use a Paddle 2.x image for parameter-server training, or collective training "
            "(workload collective-job)" + ("" if bounded else "; set run.activeDeadlineSeconds"),
            key=True,
        )
    elif not bounded:
        yield ctx.finding(
            ("spec", "ps"),
            "parameter servers run until a trainer stops them (fleet.stop_worker() at the "
            "end of the training program): a program that does not leaves the job running "
            "for ever",
            "set run.activeDeadlineSeconds to bound the job",
            key=True,
        )


PS_END = SpecRule(
    "ps-end",
    "a `kubeflow-paddlejob` with parameter servers is bounded (`run.activeDeadlineSeconds`): "
    "its servers run until a trainer stops them; and a `paddlejob`'s or "
    "`kubeflow-paddlejob`'s servers do not run a Paddle 3 image, whose trainers never stop "
    "them",
    explanation=(
        "A parameter-server job ends only when a trainer stops the servers. Paddle 3's trainers "
        "never do, so servers on a Paddle 3 image run on for ever; on a `kubeflow-paddlejob`, "
        "`run.activeDeadlineSeconds` bounds a job whose program does not stop them."
    ),
    severity="warning",
    silenceable=True,
    check=_ps_end,
)
