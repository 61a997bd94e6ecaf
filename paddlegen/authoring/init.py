"""Writing specs for people: the schema modeline, `paddlegen init`'s commented spec, new files."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shlex
import tempfile
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from paddlegen.authoring.presets import (
    LLM_CPU_PER_GPU,
    LLM_MEMORY_PER_GPU_GI,
    PRESETS,
    preset_ignores,
    preset_sections,
)
from paddlegen.errors import Diagnostic, InputError, OutputError, SpecError
from paddlegen.rules.images import IMAGE_REQUIRED
from paddlegen.rules.volumes import CEPHFS_SECRET_NAMESPACE, VOLUME_REFERENCE
from paddlegen.spec.model import GPU_RESOURCE
from paddlegen.workloads import DEFAULT_WORKLOAD, WORKLOADS
from paddlegen.yamlio import load_all

STORAGE_FORMS = (
    "none",
    "nfs://SERVER/PATH",
    "efs://FS-ID/PATH",
    "efs://FS-ID.REGION/PATH",
    "cephfs://CLUSTER-ID/FS-NAME[/PATH]",
    "pvc://CLAIM",
    "hostpath:///PATH",
    "dynamic://[STORAGECLASS]",
)


def schema_reference(spec_file: str | None = None) -> str | None:
    """Where a spec written to ``spec_file`` finds its schema, for the modeline: the schema
    file its repository holds (``paddlegen schemas export DIR`` writes one), relative to the
    spec's folder, so that the reference holds in every clone (a virtualenv's or a checkout's
    path holds on one machine only).

    Looked for in the spec's folder and each folder above it up to the repository's root (the
    folder holding ``.git``), nearest first, each in itself and then in its direct subfolders
    (``schemas/``, ``.schemas/``) by name. None when there is none, outside a repository, and
    for stdout and other names that are no file (``-``, ``<stdout>``).
    """
    if not spec_file or spec_file == "-" or spec_file.startswith("<"):
        return None
    folder = os.path.dirname(os.path.abspath(spec_file))
    for above in _up_to_the_repository_root(folder):
        for schema in _schema_files(above):
            return Path(os.path.relpath(schema, folder)).as_posix()
    return None


def _up_to_the_repository_root(folder: str) -> list[str]:
    """``folder`` and the folders above it up to the one holding ``.git``; none outside a
    repository."""
    chain = []
    while True:
        chain.append(folder)
        if os.path.exists(os.path.join(folder, ".git")):
            return chain
        parent = os.path.dirname(folder)
        if parent == folder:
            return []
        folder = parent


def _schema_files(folder: str) -> list[str]:
    """The spec schema's file in ``folder``, then in its direct subfolders by name."""
    from paddlegen.resources import spec_schema_path

    name = spec_schema_path().name
    try:
        subfolders = sorted(e.name for e in os.scandir(folder) if e.is_dir() and e.name != ".git")
    except OSError:  # not made yet (init writes a new folder), or unreadable
        subfolders = []
    candidates = [os.path.join(folder, name)]
    candidates += [os.path.join(folder, sub, name) for sub in subfolders]
    return [c for c in candidates if os.path.isfile(c)]


MODELINE = "# yaml-language-server: $schema="


def modeline(schema: str | None = None, spec_file: str | None = None) -> str:
    """The yaml-language-server modeline: ``schema`` as given, else ``schema_reference``;
    nothing when neither names a schema."""
    reference = schema or schema_reference(spec_file)
    return f"{MODELINE}{reference}\n" if reference else ""


def modeline_note(spec_file: str | None, text: str) -> str | None:
    """Why the spec ``text`` written to ``spec_file`` got no modeline, and how it gets one;
    None when it has one, or went to stdout (no file to say it of)."""
    from paddlegen.resources import spec_schema_path

    if not spec_file or spec_file == "-" or text.startswith(MODELINE):
        return None
    said = f"paddlegen: no yaml-language-server modeline in {spec_file}: "
    if not _up_to_the_repository_root(os.path.dirname(os.path.abspath(spec_file))):
        return said + "it is in no git repository, which would hold the schema; pass --schema REF"
    return said + (
        f"its repository holds no {spec_schema_path().name} at or above its folder; "
        "`paddlegen schemas export --spec-only schemas` at the repository's root writes one "
        "to commit, "
        "which the next init or import points at (or pass --schema REF)"
    )


def spec_text(
    data: dict[str, Any], note: str, spec_file: str | None = None, schema: str | None = None
) -> str:
    """A spec as YAML text under the modeline (``schema``, else for a spec written to
    ``spec_file``) and a one-line note on where it came from."""
    from paddlegen.yamlio import dump_yaml

    return modeline(schema, spec_file) + f"# {note}\n" + dump_yaml(data)


def write_new_file(path: str | Path, text: str, force: bool = False) -> bool:
    """Write ``text`` to ``path``; an existing file is only replaced with ``force``, and one
    that already holds ``text`` is left alone (running the same command twice is no error).
    Returns whether the file was written."""
    target = Path(path)
    if target.is_file() and _holds(target, text):
        return False
    if os.path.lexists(target) and not force:  # a dangling symlink is there too
        raise OutputError(f"{target}: already exists (use --force to replace it)")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # A temporary sibling, then one rename: a reader never sees half a file.
        fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            # mkstemp makes 0600; the file gets what write_text would give it
            os.chmod(temp, _file_mode(target))
            os.replace(temp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
    except OSError as exc:
        raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    return True


def write_new_files(files: dict[str, str], force: bool = False) -> list[str]:
    """``write_new_file`` for each of ``files`` (path -> text), refusing before any is written
    when one exists and holds other text (without ``force``). Returns the files written."""
    taken = [
        path
        for path, text in files.items()
        if os.path.lexists(path)
        and not force
        and not (Path(path).is_file() and _holds(Path(path), text))
    ]
    if taken:
        raise OutputError(
            f"{', '.join(taken)}: already exist{'s' if len(taken) == 1 else ''}; nothing "
            "written (use --force to replace them)"
        )
    return [path for path, text in files.items() if write_new_file(path, text, force)]


def _file_mode(target: Path) -> int:
    """The mode a new file gets under the umask, or the mode of the file it replaces."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0o022)  # read it; set it back at once
        os.umask(umask)
        return 0o666 & ~umask


def _holds(target: Path, text: str) -> bool:
    try:
        return target.read_bytes() == text.encode("utf-8")
    except OSError:
        return False


def storage_volume(url: str, mount_path: str, capacity: str) -> dict[str, Any] | None:
    """The spec.volumes entry for a storage URL (see STORAGE_FORMS), or None for `none`."""
    if url in ("", "none"):
        return None
    parts = urlsplit(url)
    where, path = parts.netloc, parts.path or "/"
    if parts.scheme == "nfs" and where:
        source: dict[str, Any] = {"nfs": {"server": where, "path": path}}
    elif parts.scheme == "efs" and "." in where:  # with the region: the NFS form
        fs_id, region = where.split(".", 1)
        source = {"efs": {"fileSystemId": fs_id, "region": region, "path": path, "nfs": True}}
    elif parts.scheme == "efs" and where:  # the EFS CSI driver
        source = {"efs": {"fileSystemId": where, "path": path}}
    elif parts.scheme == "cephfs" and (":" in where or "," in where):
        raise InputError(
            f"storage '{url}' names Ceph monitors, which only the in-tree CephFS plugin takes: "
            "it does nothing from Kubernetes 1.31; for the CSI driver use "
            "cephfs://CLUSTER-ID/FS-NAME[/PATH] (the driver finds the monitors by CLUSTER-ID)"
        )
    elif parts.scheme == "cephfs" and where and path.strip("/"):
        fs_name, _, root = path.strip("/").partition("/")
        source = {
            "cephfs": {
                "clusterID": where,
                "fsName": fs_name,
                "secretName": "cephfs-secret",
                "path": "/" + root,
            }
        }
    elif parts.scheme == "pvc" and where:
        source = {"claim": {"name": where}}
    elif parts.scheme == "hostpath" and not where:
        source = {"hostPath": {"path": path}}
    elif parts.scheme == "dynamic":
        source = {"dynamic": {"storageClassName": where} if where else {}}
    else:
        raise InputError(f"storage '{url}' is not one of: {', '.join(STORAGE_FORMS)}")
    volume: dict[str, Any] = {"name": "data", "mountPath": mount_path, **source}
    if "claim" not in source and "hostPath" not in source:
        volume["capacity"] = capacity
    if "claim" not in source and "hostPath" not in source and "dynamic" not in source:
        # A dynamic claim's default fits the job (ReadWriteOnce for one pod): most block and
        # local StorageClasses cannot provide ReadWriteMany.
        volume["accessModes"] = ["ReadWriteMany"]
    return volume


@dataclass(frozen=True)
class InitOptions:
    """What `paddlegen init` asks for; every field is also a flag. ``None``: not answered yet,
    left out of the spec (the questions come one at a time, each judged when given)."""

    name: str | None = None
    image: str | None = None
    workload: str = DEFAULT_WORKLOAD
    namespace: str | None = None
    command: str | None = None  # shell words, e.g. "python3 train.py"
    ps: int = 0
    workers: int = 1
    gpus: int = 0  # per trainer (worker) pod
    ps_gpus: int = 0  # per parameter-server pod
    accelerator: str = GPU_RESOURCE  # the device gpus and ps_gpus count (spec.accelerator)
    volcano: bool = False
    kueue: str | None = None  # the LocalQueue; None: not queued
    storage: str = "none"  # one of STORAGE_FORMS
    mount_path: str = "/mnt/data"
    capacity: str = "10Gi"
    cpu: str | None = None  # per pod; None: CPU_DEFAULT, or CPU_PER_GPU times the GPUs
    memory: str | None = None  # per pod, request and limit; None: likewise
    schema: str | None = None  # the modeline's; None: the repository's file (schema_reference)
    preset: str | None = None  # one of presets.PRESETS: an LLM trainer's entry point


# A pod's requests without GPUs, and with them per GPU: a GPU pod's data
# loaders need CPUs and memory to keep the GPUs fed, and NCCL and the loaders' shared memory a
# /dev/shm larger than the container runtime's 64 MiB. Per GPU, so that one pod fits the
# smallest common GPU nodes (4 vCPUs and 16 GiB per GPU, e.g. AWS g4dn.xlarge, GCP n1-standard-4
# with a T4), and 8 GPUs (24 CPUs, 96Gi) fit every common 8-GPU node (64 to 224 vCPUs). A
# preset's LLM pods take more (presets.LLM_CPU_PER_GPU).
CPU_DEFAULT, MEMORY_DEFAULT_GI = 1, 2
CPU_PER_GPU, MEMORY_PER_GPU_GI, SHM_PER_GPU_GI = 3, 12, 4


def pod_requests(options: InitOptions, gpus: int, shm_gi: int = 0) -> tuple[str, str]:
    """The (cpu, memory) init writes for a pod with ``gpus``: the flags' when given. A pod
    without GPUs in a job with a /dev/shm of ``shm_gi`` (every pod mounts it) gets that on
    top: its pages count against the memory limit (rule shm-memory)."""
    gpus = _count(gpus)
    llm = options.preset is not None
    cpu_per_gpu, memory_per_gpu = (
        (LLM_CPU_PER_GPU, LLM_MEMORY_PER_GPU_GI) if llm else (CPU_PER_GPU, MEMORY_PER_GPU_GI)
    )
    cpu = str(cpu_per_gpu * gpus if gpus else CPU_DEFAULT)
    memory = f"{memory_per_gpu * gpus if gpus else MEMORY_DEFAULT_GI + shm_gi}Gi"
    return (
        cpu if options.cpu is None else options.cpu,  # "" too is the user's (and refused)
        memory if options.memory is None else options.memory,
    )


def _count(value: Any) -> int:
    """A GPU count to scale by: an answer of another type (the schema refuses it) scales
    nothing, nor does one beyond the schema's range."""
    return value if type(value) is int and 0 < value <= 64 else 0


def init_spec(options: InitOptions, source: str = "<init>") -> str:
    """A commented spec for ``options``; raises SpecError if it would not validate.

    Callers judge the answers first (``answer_problems``), so an error here is paddlegen's own.
    """
    text = _init_text(options, source)
    found = _findings(text, source)
    if any(d.is_error for d in found):
        raise SpecError(f"{source}: not written: the answers make an invalid spec", found)
    return text


def answer_problems(answers: Mapping[str, Any], pending: Collection[str] = ()) -> dict[str, str]:
    """What is wrong with ``answers`` (InitOptions fields), as {field: reason}.

    The judge is the spec schema and the checks: every finding on the spec the answers make,
    warnings too, goes to the answer that sets its field (``init`` writes a spec without
    findings). Answers in ``pending`` are still to be asked: their findings are left out, so
    an answer is judged with the ones given before it.
    """
    options = InitOptions(**answers)
    found = _unparsable(options)
    while True:  # the schema hides the checks' findings: judge again without the wrong answers
        stand_ins = {field: _STAND_INS[field] for field in found}
        if options.name is None:
            stand_ins["name"] = _STAND_INS["name"]
        more: dict[str, str] = {}
        for d in _findings(_init_text(dataclasses.replace(options, **stand_ins)), "<answers>"):
            if d.severity == "info":  # nothing wrong: the spec says it in a comment instead
                continue
            owner = _owner(d)
            if owner is not None and owner not in found:
                more.setdefault(owner, _reason_for(d, options.workload))
        if not more:
            return {field: reason for field, reason in found.items() if field not in pending}
        found |= more


# What stands in for a wrong answer, or a name not given yet, while the others are judged.
_STAND_INS: dict[str, Any] = {
    **{f.name: f.default for f in dataclasses.fields(InitOptions)},
    "name": "j",
}


# The answer that sets each spec field init writes (longest paths first): a finding at or
# below a path is that answer's to fix.
_OWNERS = (
    ("$.spec.ps.resources.requests.memory", "memory"),
    ("$.spec.ps.resources.limits.memory", "memory"),
    ("$.spec.ps.resources.requests.cpu", "cpu"),
    ("$.spec.resources.requests.memory", "memory"),
    ("$.spec.resources.limits.memory", "memory"),
    ("$.spec.resources.requests.cpu", "cpu"),
    ("$.spec.volumes[0].mountPath", "mount_path"),
    ("$.spec.volumes[0].capacity", "capacity"),
    ("$.spec.distributed.volume", "storage"),
    ("$.metadata.namespace", "namespace"),
    ("$.spec.worker.gpus", "gpus"),
    ("$.spec.scheduling.kueue", "kueue"),
    ("$.spec.scheduling", "volcano"),
    ("$.spec.workload", "workload"),
    ("$.metadata.name", "name"),
    ("$.spec.command", "command"),
    ("$.spec.ps.gpus", "ps_gpus"),
    ("$.spec.volumes", "storage"),
    ("$.spec.shm", "gpus"),
    ("$.spec.worker", "workers"),
    ("$.spec.image", "image"),
    ("$.spec.ps", "ps"),
)
# Rules whose finding another answer fixes than the one its path names.
_RULE_OWNERS = {
    IMAGE_REQUIRED.id: "image",  # reported on $.spec itself
    CEPHFS_SECRET_NAMESPACE.id: "namespace",  # on the cephfs volume: its Secret's namespace
}
# Where the checks' wording speaks of the spec, and init's user answered a question (a
# volume-reference finding: the workload's settings name a volume, Workload.needs_storage).
_REASONS = {
    CEPHFS_SECRET_NAMESPACE.id: "cephfs storage needs a namespace: the CSI driver reads the "
    "Secret cephfs-secret (userID and userKey) from the job's namespace",
}


def _reason_for(d: Diagnostic, workload: str) -> str:
    if d.rule == VOLUME_REFERENCE.id and WORKLOADS[workload].needs_storage:
        return f"workload '{workload}' needs storage: {WORKLOADS[workload].needs_storage}"
    return _REASONS.get(d.rule) or _reason(d)


def _owner(d: Diagnostic) -> str | None:
    if d.rule in _RULE_OWNERS:
        return _RULE_OWNERS[d.rule]
    for path, owner in _OWNERS:
        if d.path == path or d.path.startswith((f"{path}.", f"{path}[")):
            return owner
    return None


def _reason(d: Diagnostic) -> str:
    return f"{d.message} ({d.hint})" if d.hint else d.message


def _unparsable(o: InitOptions) -> dict[str, str]:
    """Answers init cannot turn into spec fields at all, by field."""
    found = {}
    try:
        storage_volume(o.storage, o.mount_path, o.capacity)
    except InputError as exc:
        found["storage"] = exc.message
    try:
        shlex.split(o.command or "")
    except ValueError as exc:
        found["command"] = f"{o.command!r} is not shell words: {str(exc).lower()}"
    if o.ps_gpus and not o.ps:
        found["ps_gpus"] = f"{o.ps_gpus} GPUs per parameter server, but there are none (ps 0)"
    if o.accelerator != GPU_RESOURCE and not (o.gpus or o.ps_gpus):
        found["accelerator"] = f"{o.accelerator} for pods that count none (--gpus, --ps-gpus)"
    if o.preset is not None and o.preset not in PRESETS:
        found["preset"] = f"{o.preset!r} is not one of: {', '.join(PRESETS)}"
    elif o.preset is not None and not WORKLOADS[o.workload].launcher:
        found["workload"] = (
            f"preset '{o.preset}' runs {PRESETS[o.preset].cli}, which starts Paddle's launcher: "
            "a workload that gives it the launcher's contract ("
            + ", ".join(name for name, w in WORKLOADS.items() if w.launcher)
            + ")"
        )
    return found


def _findings(text: str, source: str) -> list[Diagnostic]:
    from paddlegen.pipeline.load import validate_document
    from paddlegen.spec.loader import parse_spec

    try:
        return validate_document(parse_spec(text, source))
    except SpecError as exc:  # an answer the loader refuses (over its size limit, say)
        return exc.diagnostics


def _init_text(options: InitOptions, spec_file: str | None = None) -> str:
    return (
        modeline(options.schema, spec_file) + "# Written by `paddlegen init`. Fields: `paddlegen "
        "explain spec`.\n# Render: `paddlegen render THIS_FILE -o deploy/`.\n"
        + "\n".join(_commented(_init_data(options), (), _comments(options)))
        + "\n"
    )


def _init_data(o: InitOptions) -> dict[str, Any]:
    spec: dict[str, Any] = {"workload": o.workload}
    if o.image is not None:
        spec["image"] = o.image
    if o.command:
        spec["command"] = shlex.split(o.command)
    if o.preset is not None:
        volume = storage_volume(o.storage, o.mount_path, o.capacity)
        spec.update(preset_sections(o.preset, o.command, o.gpus, o.mount_path if volume else None))
    elif not o.command and WORKLOADS[o.workload].launcher:
        spec["args"] = ["train.py"]  # what the workload's default command, the launcher, runs
    # The spec-wide resources are the trainers'; parameter servers with another GPU count get
    # their own (unless --cpu and --memory give every pod the same).
    ps_gpus = o.ps_gpus if o.ps else 0
    if o.accelerator != GPU_RESOURCE:
        spec["accelerator"] = o.accelerator
    shm = SHM_PER_GPU_GI * max(_count(o.gpus), _count(ps_gpus))
    spec["resources"] = _resources(*pod_requests(o, o.gpus, shm))
    if shm:
        spec["shm"] = f"{shm}Gi"
    # GPUs go to the trainers; parameter servers only get the ones asked for them.
    if o.ps:
        spec["ps"] = {"replicas": o.ps, **({"gpus": o.ps_gpus} if o.ps_gpus else {})}
        if pod_requests(o, ps_gpus, shm) != pod_requests(o, o.gpus, shm):
            spec["ps"]["resources"] = _resources(*pod_requests(o, ps_gpus, shm))
    spec["worker"] = {"replicas": o.workers, **({"gpus": o.gpus} if o.gpus else {})}
    volume = storage_volume(o.storage, o.mount_path, o.capacity)
    if volume:
        spec["volumes"] = [volume]
    if o.volcano:
        spec["scheduling"] = {"scheduler": "volcano", "queue": "default"}
    if o.kueue is not None:
        spec.setdefault("scheduling", {})["kueue"] = {"queue": o.kueue}
    spec.update(WORKLOADS[o.workload].init_sections(o.ps))
    metadata = {"name": o.name, **({"namespace": o.namespace} if o.namespace else {})}
    data = {"apiVersion": "paddlegen/v1", "kind": "TrainingJob", "metadata": metadata}
    ignores = preset_ignores(o.gpus) if o.preset is not None else []
    return {**data, **({"ignore": ignores} if ignores else {}), "spec": spec}


def _resources(cpu: str, memory: str) -> dict[str, Any]:
    return {"requests": {"cpu": cpu, "memory": memory}, "limits": {"memory": memory}}


# End-of-line comments of `init`'s output, by field path ("[]" for any list item).
_COMMENTS = {
    "metadata.name": "DNS-1035 label; prefix of every generated name",
    "metadata.namespace": "-> the kustomization's namespace",
    "spec.workload": " | ".join(WORKLOADS),
    "spec.image": "pin a tag: the same commit must run the same code",
    "spec.command": "the image's ENTRYPOINT when left out",
    "spec.resources": "per pod, for every role; a role may set its own",
    "spec.shm": "/dev/shm for NCCL and data loaders; counts against the memory limit",
    "spec.ps": "parameter servers: the PaddleJob runs in PS mode",
    "spec.ps.resources": "the parameter servers' own (no GPUs, or other GPUs)",
    "spec.accelerator": "the device `gpus` counts, as its device plugin names it",
    "spec.worker": "trainers",
    "spec.volumes": "mounted into every training pod",
    "spec.volumes.[].capacity": "PV/PVC size",
    "spec.volumes.[].cephfs": "a static volume of the CephFS CSI driver",
    "spec.volumes.[].cephfs.clusterID": "the cluster's entry in the driver's ceph-csi-config",
    "spec.volumes.[].cephfs.secretName": "userID and userKey, in the job's namespace",
    "spec.scheduling.scheduler": "Volcano gang scheduling: a PodGroup; every pod starts or none",
    "spec.scheduling.kueue.queue": "a LocalQueue of the namespace (`paddlegen kueue` makes them)",
    "spec.paddlejob.cleanPodPolicy": "Never keeps pods for debugging",
    "spec.paddlejob.withGloo": "1: Gloo on the workers (needs ps)",
    "spec.distributed.volume": "the shared volume with the trainer config and data (JOB_PATH)",
    "spec.distributed.trainConfigDir": "folder under JOB_PATH/JOB_NAME with the trainer config",
    "spec.run.activeDeadlineSeconds": "ends a job whose pods never all start",
}


def _comments(o: InitOptions) -> dict[str, str]:
    preset = {}
    if o.preset in PRESETS:
        preset = {
            "spec.command": f"the {PRESETS[o.preset].title} trainer, after paddlegen's master "
            "wrapper (which sets NNODES, RANK, MASTER_ADDR, MASTER_PORT)",
            "spec.env": f"{PRESETS[o.preset].cli} on pods without GPUs (Paddle's CPU wheel)",
        }
    devices = {
        "spec.ps.gpus": f"per parameter-server pod -> limits {o.accelerator}",
        "spec.worker.gpus": f"per trainer pod -> limits {o.accelerator}",
    }
    return {**_COMMENTS, **devices, **WORKLOADS[o.workload].init_comments, **preset}


_PLAIN = re.compile(r"^[A-Za-z0-9/][A-Za-z0-9._/:@+=-]*$")
# What YAML may not hold raw (its reader refuses it) or reads as a line break: escaped.
_UNSAFE = re.compile("[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _scalar(value: Any) -> str:
    """A plain YAML scalar where that reads back as the same string, else JSON (valid YAML)."""
    if (
        isinstance(value, str)
        and _PLAIN.match(value)
        and len(value) > 1
        and load_all(value) == [value]
    ):
        return value
    text = json.dumps(value, ensure_ascii=False)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _commented(
    data: dict[str, Any], path: tuple[str, ...], comments: dict[str, str], indent: str = ""
) -> list[str]:
    lines = []
    for key, value in data.items():
        here = (*path, key)
        note = comments.get(".".join(here))
        tail = f"  # {note}" if note else ""
        if isinstance(value, dict) and value and here[-1] not in ("requests", "limits"):
            lines.append(f"{indent}{key}:{tail}")
            lines += _commented(value, here, comments, indent + "  ")
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"{indent}{key}:{tail}")
            for item in value:
                body = _commented(item, (*here, "[]"), comments, indent + "    ")
                lines += [f"{indent}  - {body[0].lstrip()}", *body[1:]]
        else:
            flow = (
                "{" + ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items()) + "}"
                if isinstance(value, dict)
                else "[" + ", ".join(_scalar(v) for v in value) + "]"
                if isinstance(value, list)
                else _scalar(value)
            )
            lines.append(f"{indent}{key}: {flow}{tail}")
    return lines
