"""Writing specs for people: the schema modeline, `paddlegen init`'s commented spec, new files."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from paddlegen.errors import InputError, OutputError, SpecError
from paddlegen.yamlio import load_all

# The schema's $id: one name every checkout and install shares. Editors without network access
# can point the modeline at `paddlegen schema > trainingjob.v1.schema.json` instead (--schema).
SCHEMA_ID = "https://paddlegen.dev/schemas/trainingjob.v1.schema.json"
STORAGE_FORMS = (
    "none",
    "nfs://SERVER/PATH",
    "efs://FS-ID.REGION/PATH",
    "cephfs://MONITOR:PORT[,MONITOR:PORT]/PATH",
    "pvc://CLAIM",
    "hostpath:///PATH",
    "dynamic://[STORAGECLASS]",
)


def modeline(schema: str = SCHEMA_ID) -> str:
    return f"# yaml-language-server: $schema={schema}\n"


def spec_text(data: dict[str, Any], note: str, schema: str = SCHEMA_ID) -> str:
    """A spec as YAML text under the modeline and a one-line note on where it came from."""
    from paddlegen.yamlio import dump_yaml

    return modeline(schema) + f"# {note}\n" + dump_yaml(data)


def write_new_file(path: str | Path, text: str, force: bool = False) -> None:
    """Write ``text`` to ``path``; an existing file is only replaced with ``force``."""
    target = Path(path)
    if target.exists() and not force:
        raise OutputError(f"{target}: already exists (use --force to replace it)")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from None


def storage_volume(url: str, mount_path: str, capacity: str) -> dict[str, Any] | None:
    """The spec.volumes entry for a storage URL (see STORAGE_FORMS), or None for `none`."""
    if url in ("", "none"):
        return None
    parts = urlsplit(url)
    where, path = parts.netloc, parts.path or "/"
    if parts.scheme == "nfs" and where:
        source: dict[str, Any] = {"nfs": {"server": where, "path": path}}
    elif parts.scheme == "efs" and "." in where:
        fs_id, region = where.split(".", 1)
        source = {"efs": {"fileSystemId": fs_id, "region": region, "path": path}}
    elif parts.scheme == "cephfs" and where:
        source = {
            "cephfs": {
                "monitors": where.split(","),
                "user": "admin",
                "secretName": "cephfs-secret",
                "path": path,
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
        volume.update(capacity=capacity, accessModes=["ReadWriteMany"])
    return volume


@dataclass(frozen=True)
class InitOptions:
    """What `paddlegen init` asks for; every field is also a flag."""

    name: str
    image: str
    workload: str = "paddlejob"
    namespace: str | None = None
    command: str | None = None  # shell words, e.g. "python3 train.py"
    ps: int = 0
    workers: int = 1
    gpus: int = 0
    volcano: bool = False
    storage: str = "none"  # one of STORAGE_FORMS
    mount_path: str = "/mnt/data"
    capacity: str = "10Gi"
    cpu: str = "1"
    memory: str = "2Gi"
    schema: str = SCHEMA_ID


def init_spec(options: InitOptions, source: str = "<init>") -> str:
    """A commented spec for ``options``; raises SpecError if it would not validate."""
    data = _init_data(options)
    text = (
        modeline(options.schema) + "# Written by `paddlegen init`. Fields: `paddlegen "
        "explain spec`.\n# Render: `paddlegen render THIS_FILE -o deploy/`.\n"
        + "\n".join(_commented(data, ()))
        + "\n"
    )
    from paddlegen.api import validate_document
    from paddlegen.spec.loader import parse_spec

    found = validate_document(parse_spec(text, source))
    if any(d.is_error for d in found):
        raise SpecError(f"{source}: the answers make an invalid spec", found)
    return text


def _init_data(o: InitOptions) -> dict[str, Any]:
    spec: dict[str, Any] = {"workload": o.workload, "image": o.image}
    if o.command:
        spec["command"] = shlex.split(o.command)
    spec["resources"] = {
        "requests": {"cpu": o.cpu, "memory": o.memory},
        "limits": {"memory": o.memory},
    }
    if o.gpus:
        spec["gpus"] = o.gpus
    if o.ps:
        spec["ps"] = {"replicas": o.ps}
    spec["worker"] = {"replicas": o.workers}
    volume = storage_volume(o.storage, o.mount_path, o.capacity)
    if volume:
        spec["volumes"] = [volume]
    if o.volcano:
        spec["scheduling"] = {"scheduler": "volcano", "queue": "default"}
    if o.workload == "paddlejob":
        spec["paddlejob"] = {"cleanPodPolicy": "OnCompletion", **({"withGloo": 1} if o.ps else {})}
    if o.workload == "distributed-job":
        spec["distributed"] = {
            "volume": volume["name"] if volume else "data",
            "trainConfigDir": "quick_start",
        }
        spec["run"] = {"activeDeadlineSeconds": 86400}
    metadata = {"name": o.name, **({"namespace": o.namespace} if o.namespace else {})}
    return {"apiVersion": "paddlegen/v1", "kind": "TrainingJob", "metadata": metadata, "spec": spec}


# End-of-line comments of `init`'s output, by field path ("[]" for any list item).
_COMMENTS = {
    "metadata.name": "DNS-1035 label; prefix of every generated name",
    "metadata.namespace": "-> the kustomization's namespace",
    "spec.workload": "job | distributed-job | paddlejob | kubeflow-paddlejob",
    "spec.image": "pin a tag: the same commit must run the same code",
    "spec.command": "the image's ENTRYPOINT when left out",
    "spec.resources": "per pod, for every role; a role may set its own",
    "spec.gpus": "per pod -> limits nvidia.com/gpu",
    "spec.ps": "parameter servers: the PaddleJob runs in PS mode",
    "spec.worker": "trainers",
    "spec.volumes": "mounted into every training pod",
    "spec.volumes.[].capacity": "PV/PVC size",
    "spec.scheduling": "Volcano gang scheduling: a PodGroup; every pod starts or none",
    "spec.paddlejob.cleanPodPolicy": "Never keeps pods for debugging",
    "spec.paddlejob.withGloo": "1: Gloo on the workers (needs ps)",
    "spec.distributed.trainConfigDir": "folder under JOB_PATH/JOB_NAME with the trainer config",
    "spec.run.activeDeadlineSeconds": "ends a job whose pods never all start",
}
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


def _commented(data: dict[str, Any], path: tuple[str, ...], indent: str = "") -> list[str]:
    lines = []
    for key, value in data.items():
        here = (*path, key)
        note = _COMMENTS.get(".".join(here))
        tail = f"  # {note}" if note else ""
        if isinstance(value, dict) and value and here[-1] not in ("requests", "limits"):
            lines.append(f"{indent}{key}:{tail}")
            lines += _commented(value, here, indent + "  ")
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"{indent}{key}:{tail}")
            for item in value:
                body = _commented(item, (*here, "[]"), indent + "    ")
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
