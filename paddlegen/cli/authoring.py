"""Authoring commands: init, explain, import, dockerfile. Options in, one library call, output."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource
from click.shell_completion import CompletionItem

from paddlegen.authoring.presets import PRESETS
from paddlegen.cli.common import (
    WORKLOAD_NAMES,
    emit,
    errors_format_option,
    format_option,
    note,
    stdout_is_output,
)
from paddlegen.errors import LossyImportError
from paddlegen.spec.accelerators import ACCELERATORS
from paddlegen.spec.model import GPU_RESOURCE
from paddlegen.workloads import DEFAULT_WORKLOAD, PS_WORKLOAD, conversion_targets

PRESET_NAMES = list(PRESETS)

if TYPE_CHECKING:
    from paddlegen.authoring.init_questions import Question


def complete_spec_paths(
    _ctx: click.Context, _param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Shell completion: folders (to descend into) and *.yaml / *.yml files."""
    prefix = incomplete[: incomplete.rfind("/") + 1]  # the folder typed so far, "" for none
    try:
        entries = sorted(Path(prefix or ".").iterdir())
    except OSError:
        return []
    typed = incomplete[len(prefix) :]
    return [
        CompletionItem(prefix + p.name + ("/" if p.is_dir() else ""))
        for p in entries
        if p.name.startswith(typed)
        and (typed.startswith(".") or not p.name.startswith("."))  # hidden: only if asked
        and (p.is_dir() or p.suffix in (".yaml", ".yml"))
    ]


def _complete_fields(
    _ctx: click.Context, _param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    from paddlegen.authoring.explain import field_paths

    return [CompletionItem(p) for p in field_paths() if p.startswith(incomplete)]


def _printing(output: str | None) -> None:
    """Without a file (or with -), stdout is the command's product."""
    if not output or output == "-":
        stdout_is_output()


SCHEMA_HELP = (
    "The schema reference of the yaml-language-server modeline, as written (a path relative to "
    "the spec's folder, or a URL). Default: the trainingjob.v1.schema.json the spec's git "
    "repository holds at or above the spec's folder, or in a direct subfolder of one of "
    "those (`paddlegen schemas export --spec-only schemas` writes one), relative to the spec; "
    "else no "
    "modeline."
)


def _write_or_print(text: str, output: str | None, force: bool) -> None:
    if output and output != "-":
        from paddlegen.authoring.init import write_new_file

        _said_written(output, write_new_file(output, text, force))
    else:
        click.echo(text, nl=False)


def _said_written(path: str, written: bool) -> None:
    click.echo(f"paddlegen: {'wrote' if written else 'unchanged:'} {path}", err=True)


def _say(message: str | None) -> None:
    """The library's word on what was written, when it has one."""
    if message:
        click.echo(message, err=True)


def _given(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)


@click.command()
@click.argument(
    "path",
    default="trainingjob.yaml",
    shell_complete=complete_spec_paths,
    type=click.Path(dir_okay=False, allow_dash=True),
)
@click.option(
    "--workload",
    type=click.Choice(WORKLOAD_NAMES),
    default=DEFAULT_WORKLOAD,
    show_default=True,
    help=f"What to render (with --ps, {PS_WORKLOAD} unless given): see `paddlegen explain "
    "spec.workload`.",
)
@click.option(
    "--preset",
    type=click.Choice(PRESET_NAMES),
    help="An LLM trainer's entry point as the command: paddleformers (paddleformers-cli train "
    "CONFIG) or erniekit (erniekit train CONFIG), CONFIG being train.yaml on the storage. "
    "paddlegen's master wrapper gives it NNODES, RANK, MASTER_ADDR and MASTER_PORT from the "
    "launcher's contract; without --gpus the spec also gets the env it needs on CPU pods.",
)
@click.option("--name", help="metadata.name (default: the file name without .yaml).")
@click.option("--namespace", help="metadata.namespace (default: none).")
@click.option("--image", help="Container image, with a tag.")
@click.option("--command", "command", help='Start command as shell words, e.g. "python3 train.py".')
@click.option(
    "--ps",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Parameter servers (paddlejob, kubeflow-paddlejob).",
)
@click.option(
    "--workers",
    type=int,
    default=1,
    show_default=True,
    help="Trainers (pods of distributed-job, collective-job and trainjob).",
)
@click.option(
    "--gpus",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="NVIDIA GPUs per trainer (worker) pod.",
)
@click.option(
    "--ps-gpus",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="NVIDIA GPUs per parameter-server pod.",
)
@click.option(
    "--accelerator",
    type=click.Choice(sorted(ACCELERATORS)),
    default=GPU_RESOURCE,
    show_default=True,
    help="The device --gpus and --ps-gpus count, by its device plugin's resource name: "
    + "; ".join(f"{name} ({device})" for name, device in sorted(ACCELERATORS.items()))
    + ". Not asked: a flag only.",
)
@click.option(
    "--volcano/--no-volcano",
    default=False,
    show_default=True,
    help="Gang-schedule with Volcano (the operator's PodGroup, or Volcano's own for a Job).",
)
@click.option(
    "--kueue",
    metavar="QUEUE",
    help="Queue the job in Kueue: the LocalQueue of its namespace (default: not queued; not "
    "for paddlejob).",
)
@click.option(
    "--storage",
    default="none",
    show_default=True,
    help="none (not for distributed-job, whose image reads from the volume), "
    "nfs://SERVER/PATH, efs://FS-ID/PATH (CSI driver), efs://FS-ID.REGION/PATH (NFS), "
    "cephfs://CLUSTER-ID/FS-NAME/PATH, pvc://CLAIM, hostpath:///PATH or dynamic://[CLASS].",
)
@click.option(
    "--mount-path", default="/mnt/data", show_default=True, help="Where the storage is mounted."
)
@click.option("--capacity", default="10Gi", show_default=True, help="Storage size (PV/PVC).")
@click.option("--cpu", help="CPU request per pod (default: 1; with GPUs, 3 per GPU of the pod).")
@click.option(
    "--memory",
    help="Memory request and limit per pod (default: 2Gi; with GPUs, 12Gi per GPU of the pod).",
)
@click.option(
    "--schema",
    metavar="REF",
    help=SCHEMA_HELP,
)
@click.option("--no-input", is_flag=True, help="Ask nothing: flags and defaults only.")
@click.option("--force", is_flag=True, help="Replace PATH if it exists.")
@errors_format_option
@click.pass_context
def init(ctx: click.Context, /, path: str, no_input: bool, force: bool, **answers: Any) -> None:
    """Write a new commented spec to PATH, asking for what flags leave out.

    PATH defaults to trainingjob.yaml; - prints the spec. Each answer is checked against the
    spec schema and checks as it is given, and asked again with the reason when wrong; a wrong
    flag is a usage error naming it, before anything is asked or written. So the spec validates
    without a finding. It starts with the yaml-language-server modeline for editor completion.
    --gpus are the trainers' (workers'); parameter servers get --ps-gpus. distributed-job
    needs --storage: its image reads the trainer config and data from that volume.
    collective-job and trainjob without --command run Paddle's launcher on args [train.py];
    with --preset, an LLM trainer's entry point on its config.

    \b
    Examples:
      paddlegen init jobs/wide-and-deep.yaml
      paddlegen init jobs/resnet.yaml --no-input --image registry.example.com/resnet:v1 \\
        --workers 4 --gpus 1 --volcano --storage nfs://10.0.0.5/data
      paddlegen init jobs/sft.yaml --no-input --preset paddleformers \\
        --image registry.example.com/sft:v1 --workers 2 --gpus 8 --storage pvc://llm
    """
    from paddlegen.authoring.init import InitOptions, init_spec, modeline_note

    _printing(path)
    answers["name"] = answers["name"] or (Path(path).stem if path != "-" else None)
    if no_input and answers["image"] is None:
        raise click.UsageError("--image is required with --no-input")
    if no_input and not answers["name"]:
        raise click.UsageError("--name is required when writing to stdout")
    if answers["ps"] and not _given(ctx, "workload"):
        # Parameter servers: the default becomes the workload that runs them (and what the
        # question proposes), not the collective one, which has none.
        answers["workload"] = PS_WORKLOAD
    # Questions to come are judged when answered; the flags given are judged now.
    pending = set() if no_input else {name for name in answers if not _given(ctx, name)}
    _refuse_bad_flags(ctx, answers, pending)
    if pending:
        try:
            _ask(answers, pending)
        except click.Abort:  # Ctrl-D at a prompt, or stdin ran out (Ctrl-C is Interrupted)
            from paddlegen.errors import NoAnswerError

            click.echo(err=True)  # the message starts its own line, not the prompt's
            raise NoAnswerError(
                "init: no answer (end of input); nothing written. Without a terminal, give "
                "the answers as flags with --no-input"
            ) from None
        _refuse_bad_flags(ctx, answers, set())  # defaults of questions never asked
    text = init_spec(InitOptions(**answers), path)
    _write_or_print(text, path, force)
    _say(modeline_note(path, text))


def _refuse_bad_flags(ctx: click.Context, answers: dict[str, Any], pending: set[str]) -> None:
    """A usage error (exit 2) naming the flag of every answer that is wrong, if any."""
    from paddlegen.authoring.init import answer_problems
    from paddlegen.report import printable

    problems = answer_problems(answers, pending)
    if not problems:
        return
    lines = []
    for param in ctx.command.params:  # in --help order
        name = param.name or ""
        if name in problems:
            default = "" if _given(ctx, name) else f" (default {answers[name]!r})"
            flag = param.get_error_hint(ctx)
            lines.append(printable(f"Invalid value for {flag}{default}: {problems[name]}"))
    raise click.UsageError("\n".join(lines))


def _ask(answers: dict[str, Any], pending: set[str]) -> None:
    """Prompt for every answer no flag gave, as the library's questions come (click.prompt
    reads stdin, so tests can feed it)."""
    from paddlegen.authoring.init_questions import questions

    for question in questions(answers):
        if question.name not in pending:
            continue
        if question.kind is bool:
            answers[question.name] = click.confirm(question.text, default=question.default)
        else:
            answers[question.name] = _prompt(question, answers, pending)
        pending.discard(question.name)


def _prompt(question: Question, answers: dict[str, Any], pending: set[str]) -> Any:
    """The answer to ``question``, judged as it is given: a wrong one is asked again at once,
    with the reason."""
    from paddlegen.authoring.init import answer_problems
    from paddlegen.report import printable

    if question.choices:
        kind: Any = click.Choice(question.choices)
    elif question.minimum is not None:
        kind = click.IntRange(question.minimum)
    else:
        kind = click.types.convert_type(question.kind)

    def judge(raw: Any) -> Any:
        value = kind(raw)
        problems = answer_problems({**answers, question.name: value}, pending - {question.name})
        if problems:  # this answer's, or an earlier one's that this answer breaks
            reason = problems.get(question.name) or next(iter(problems.values()))
            raise click.BadParameter(printable(reason))
        return value

    return click.prompt(
        question.text,
        type=kind,
        value_proc=judge,
        default=question.default,
        show_default=question.show_default,
    )


@click.command()
@click.argument("field", required=False, shell_complete=_complete_fields)
@errors_format_option
def explain(field: str | None) -> None:
    """Describe a spec field and the output fields it controls, or a rule.

    FIELD is dotted (spec.worker.replicas; list items need no index). Prints the description,
    type, default, allowed values, examples and, per workload, the output fields it sets.
    Without FIELD: the top-level fields. A rule id (image-tag) instead prints what the rule
    checks, its severities and why it matters.

    \b
    Examples:
      paddlegen explain
      paddlegen explain spec.worker.replicas
      paddlegen explain spec.volumes.nfs
      paddlegen explain image-tag
    """
    from paddlegen.report import explanation

    stdout_is_output()
    click.echo(explanation(field), nl=False)


@click.command("import")
@click.argument(
    "files",
    nargs=-1,
    required=True,
    shell_complete=complete_spec_paths,
    type=click.Path(dir_okay=False, allow_dash=True),
)
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    help="Write the spec to this file instead of stdout; to a folder (one that exists, or a "
    "path ending in /), one spec per job: FOLDER/<job>.yaml.",
)
@click.option("--force", is_flag=True, help="Replace the spec files if they exist.")
@click.option(
    "--lossy",
    is_flag=True,
    help="Accept a spec that would run differently from the input: exit 0 all the same "
    "(the lossy notes are still printed).",
)
@click.option(
    "--to",
    "to",
    type=click.Choice(conversion_targets()),
    help="Convert a PaddleJob to this workload: a PaddleFlow or Kubeflow one to "
    "collective-job (no operator), a PaddleFlow one to kubeflow-paddlejob (the Kubeflow "
    "training-operator); what does not carry over as it was (parameter servers, the "
    "operator's settings and env) is noted.",
)
@click.option("--schema", metavar="REF", help=SCHEMA_HELP)
@format_option
def import_command(
    files: tuple[str, ...],
    output: str | None,
    force: bool,
    lossy: bool,
    to: str | None,
    schema: str | None,
    fmt: str,
) -> None:
    """Turn existing Kubernetes manifests into specs, one per job.

    FILE may be - for stdin. Reads a batch/v1 Job (single, the classic pserver/trainer image's
    distributed one with CONF_PADDLE_* env, or an Indexed one with Paddle's launcher contract
    and its headless Service), a batch.paddlepaddle.org/v1 or kubeflow.org/v1 PaddleJob, a
    trainer.kubeflow.org/v1alpha1 TrainJob (with its own TrainingRuntime: run.restarts), a
    jobset.x-k8s.io/v1alpha2 JobSet of Paddle ranks (a collective-job with run.restarts), and
    the PodGroup, PVs, PVCs and data Job in the same stream. Every field or object not carried
    over as it was is a note on stderr, at its line and column where it has one: a warning
    [import-lossy] when the rendered spec would run differently (more or fewer pods, a dropped
    container, volume, env, resource, scheduling or placement setting), else an info
    [import-note] (server-set fields, defaults, derived names). --to collective-job converts a
    PaddleFlow or Kubeflow PaddleJob to a collective-job spec (no operator), --to
    kubeflow-paddlejob a PaddleFlow one to a Kubeflow PaddleJob spec (its parameter servers
    become the Master replicas), noting what does not carry over as it was (parameter servers,
    the operator's settings and env). An input of several
    jobs needs -o FOLDER/, which gets a spec per job (<job>.yaml). The specs are written in any
    case; exit 1 when one is invalid, or lossy without --lossy.

    \b
    Examples:
      paddlegen import job.yaml pv-pvc.yaml -o jobs/demo.yaml
      kubectl get paddlejob demo -o yaml | paddlegen import - > jobs/demo.yaml
      paddlegen import manifests/*.yaml -o jobs/
      paddlegen import paddlejob.yaml --to collective-job -o jobs/demo.yaml
      paddlegen import paddlejob.yaml --to kubeflow-paddlejob -o jobs/demo.yaml
    """
    from paddlegen.authoring.import_io import SpecOutput, import_files

    where = SpecOutput(output)
    _printing(where.file or where.folder)
    result = import_files(files, where, to, schema)
    specs = where.files(result)
    if not specs:
        click.echo(result.jobs[0].text, nl=False)
    for path, written in where.write(specs, force).items():
        _said_written(path, written)
    _say(where.modeline_note(specs))
    result.refuse_invalid()  # the group's handler lists the findings
    emit(result.findings(), fmt)
    try:
        result.refuse_lossy(lossy)
    except LossyImportError as exc:
        if fmt == "text":
            note(f"paddlegen: {exc.message}")
        exc.shown = True  # its findings, the lossy notes, are in the report already
        raise


@click.command()
@click.argument("spec", type=click.Path(dir_okay=False), shell_complete=complete_spec_paths)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Write the Dockerfile here instead of stdout.",
)
@click.option("--force", is_flag=True, help="Replace OUTPUT if it exists.")
@errors_format_option
def dockerfile(spec: str, output: str | None, force: bool) -> None:
    """Write the runtime image's Dockerfile from spec.build.

    Build and push it under spec.image, the name the manifests use. The output is parsed back
    before it is printed, so a malformed Dockerfile is never written.

    \b
    Examples:
      paddlegen dockerfile jobs/demo.yaml -o Dockerfile
      docker build -t "$(yq .spec.image jobs/demo.yaml)" . && docker push ...
    """
    from paddlegen.authoring.dockerfile import dockerfile_for_spec

    _printing(output)
    _write_or_print(dockerfile_for_spec(spec), output, force)


@click.command()
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Write the runtimes here instead of stdout.",
)
@click.option("--force", is_flag=True, help="Replace OUTPUT if it exists.")
@errors_format_option
def runtime(output: str | None, force: bool) -> None:
    """Print paddlegen's Paddle ClusterTrainingRuntimes (workload trainjob), to install once.

    Four Kubeflow Trainer v2 runtimes in one YAML stream: paddle-distributed, and
    paddle-distributed-volcano, which Volcano gang-schedules (a spec with scheduling.scheduler
    volcano references it), and each as -queued, whose pod failure policy lets Kueue preempt
    (a spec with scheduling.kueue references it). Each runs Paddle's launcher on every node
    with collective-job's contract. Needs Kubeflow Trainer v2.3 and JobSet installed.

    \b
    Examples:
      paddlegen runtime | kubectl apply --server-side -f -
      paddlegen runtime -o platform/paddle-runtimes.yaml
    """
    from paddlegen.workloads.trainjob.runtime import runtimes_text

    _printing(output)
    _write_or_print(runtimes_text(), output, force)
