"""`paddlegen explain FIELD`: a spec field's schema documentation, and what it renders to."""

from __future__ import annotations

import difflib
import json
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from paddlegen.errors import InputError, Rule
from paddlegen.spec.model import OBJECT_SOURCES
from paddlegen.spec.network import MULTUS_NETWORKS, NCCL_ENV
from paddlegen.spec.scheduling import KUEUE_PRIORITY_LABEL, KUEUE_QUEUE_LABEL
from paddlegen.workloads import WORKLOADS
from paddlegen.workloads.base import GROUP_MIN_MEMBER, GROUP_NAME, QUEUE_NAME, RUN_KEYS

# Where a role's pod template sits in each workload's main object ({tmpl} below); <role> is
# ps, worker or heter, <Role> Master or Worker. The workloads' own entries say.
POD_TEMPLATE = {w.name: w.pod_template for w in WORKLOADS.values()}
MAIN_OBJECT = {w.name: w.kind_name for w in WORKLOADS.values()}
_ALL = tuple(WORKLOADS)
_SIDECARS = tuple(w.name for w in WORKLOADS.values() if not w.no_sidecars)
_CONTAINER = "{tmpl}.spec.containers[paddle]"
_DATA_CONTAINER = "DataJob spec.template.spec.containers[paddle]"
# The pod settings (spec.model.POD_FIELDS): where a pod template carries each. The data Job
# takes the spec-wide value of each too.
_POD_PLACES = {
    "imagePullSecrets": "spec.imagePullSecrets",
    "serviceAccountName": "spec.serviceAccountName",
    "podLabels": "metadata.labels",
    "podAnnotations": "metadata.annotations",
    "priorityClassName": "spec.priorityClassName",
    "terminationGracePeriodSeconds": "spec.terminationGracePeriodSeconds",
    "runtimeClassName": "spec.runtimeClassName",
    "automountServiceAccountToken": "spec.automountServiceAccountToken",
    "dnsPolicy": "spec.dnsPolicy",
    "dnsConfig": "spec.dnsConfig",
    "topologySpreadConstraints": "spec.topologySpreadConstraints",
}


def _each(workloads: tuple[str, ...], *places: str) -> dict[str, list[str]]:
    return {w: list(places) for w in workloads}


def _gang(field: str) -> dict[str, list[str]]:
    """Where an operator builds the PodGroup, its schedulingPolicy's field; for a batch Job,
    the annotation Volcano's podgroup controller reads it from (workloads/base.py)."""
    batch = {
        "minAvailable": f"{{kind}} metadata.annotations[{GROUP_MIN_MEMBER}]",
        "queue": f"{{{{tmpl}}}}.metadata.annotations[{QUEUE_NAME}]",
    }[field]
    return {
        w.name: [
            f"{w.scheduling_policy}.{field}"
            if w.scheduling_policy
            else batch.format(kind=w.kind_name)
        ]
        for w in WORKLOADS.values()
    }


def _gang_member() -> dict[str, list[str]]:
    """What makes a pod Volcano's: its scheduler, and the group it joins (an operator's) or
    the queue Volcano's group for its Job takes."""
    return {
        w.name: [
            "{tmpl}.spec.schedulerName",
            f"{{tmpl}}.metadata.annotations[{GROUP_NAME if w.scheduling_policy else QUEUE_NAME}]",
        ]
        for w in WORKLOADS.values()
    }


def _outputs() -> dict[str, dict[str, list[str]]]:
    """The output fields the important spec fields control, per workload: the fields every
    workload renders alike, then each workload's own (``Workload.explain``)."""
    table: dict[str, dict[str, list[str]]] = {
        "metadata.name": {w: [f"{k} metadata.name"] for w, k in MAIN_OBJECT.items()},
        "metadata.namespace": {w: [f"{k} metadata.namespace"] for w, k in MAIN_OBJECT.items()},
        "metadata.labels": {
            w: [f"{k} metadata.labels", "{tmpl}.metadata.labels"] for w, k in MAIN_OBJECT.items()
        },
        "spec.image": _each(_ALL, f"{_CONTAINER}.image"),
        "spec.command": _each(_ALL, f"{_CONTAINER}.command"),
        "spec.args": _each(_ALL, f"{_CONTAINER}.args"),
        "spec.env": _each(_ALL, f"{_CONTAINER}.env"),
        "spec.envFrom": _each(_ALL, f"{_CONTAINER}.envFrom"),
        "spec.resources": _each(_ALL, f"{_CONTAINER}.resources"),
        # <accelerator>: spec.accelerator, nvidia.com/gpu unless it says otherwise
        "spec.gpus": _each(_ALL, f"{_CONTAINER}.resources.limits[<accelerator>]"),
        "spec.accelerator": _each(_ALL, f"{_CONTAINER}.resources.limits"),
        "spec.nodeSelector": _each(_ALL, "{tmpl}.spec.nodeSelector"),
        # the training pods' only, of every role (workloads/base.py pod)
        "spec.networks": _each(_ALL, f"{{tmpl}}.metadata.annotations[{MULTUS_NETWORKS}]"),
        "spec.security.capabilities.add": _each(
            _ALL, f"{_CONTAINER}.securityContext.capabilities.add"
        ),
        **{
            f"spec.nccl.{key}": _each(_ALL, f"{_CONTAINER}.env[{name}].value")
            for key, name in NCCL_ENV.items()
        },
        "spec.shm": _each(_ALL, "{tmpl}.spec.volumes[dshm].emptyDir.sizeLimit"),
        **{
            f"spec.{key}": _each(_ALL, f"{{tmpl}}.{place}", f"DataJob spec.template.{place}")
            for key, place in _POD_PLACES.items()
        },
        # the training pods' only (the data Job's pod runs none); sidecars first
        "spec.initContainers": _each(_ALL, "{tmpl}.spec.initContainers"),
        "spec.sidecars": _each(_SIDECARS, "{tmpl}.spec.initContainers"),
        "spec.volumes.mountPath": _each(_ALL, f"{_CONTAINER}.volumeMounts[<name>].mountPath"),
        **{
            f"spec.volumes.{source}": _each(_ALL, f"{{tmpl}}.spec.volumes[<name>].{source}")
            for source in OBJECT_SOURCES
        },
        "spec.volumes.capacity": _each(
            _ALL,
            "PersistentVolume spec.capacity.storage",
            "PersistentVolumeClaim spec.resources.requests.storage",
        ),
        "spec.scheduling.scheduler": _gang_member(),
        "spec.scheduling.minAvailable": _gang("minAvailable"),
        "spec.scheduling.queue": _gang("queue"),
        # the training object's only; Kueue cannot queue a PaddleFlow PaddleJob (kueue-workload)
        **{
            f"spec.scheduling.kueue.{field}": {
                w: [f"{k} metadata.labels[{label}]"]
                for w, k in MAIN_OBJECT.items()
                if WORKLOADS[w].queueable
            }
            for field, label in (
                ("queue", KUEUE_QUEUE_LABEL),
                ("priorityClass", KUEUE_PRIORITY_LABEL),
            )
        },
        **{
            f"spec.run.{key}": {
                w.name: [f"{w.run_policy}.{key}"]
                for w in WORKLOADS.values()
                if w.run_policy and key in w.run_keys
            }
            for key in RUN_KEYS
        },
        "spec.dataPrep.image": _each(_ALL, f"{_DATA_CONTAINER}.image"),
        "spec.dataPrep.splitCount": _each(_ALL, f"{_DATA_CONTAINER}.env[SPLIT_COUNT].value"),
        "spec.dataPrep.outDir": _each(_ALL, f"{_DATA_CONTAINER}.env[OUT_DIR].value"),
        "spec.dataPrep.backoffLimit": _each(_ALL, "DataJob spec.backoffLimit"),
    }
    for w in WORKLOADS.values():
        for field, places in w.explain.items():
            table.setdefault(field, {})[w.name] = list(places)
        # No place for a field at all (an empty entry, or a setting its object cannot carry,
        # which a rule refuses): the field renders to nothing in that workload.
        for field in [*(f for f, p in w.explain.items() if not p), *w.unsupported]:
            table.get(field if "." in field else f"spec.{field}", {}).pop(w.name, None)
    return table


# `Kind path` with `[x]` selecting the list item named x (a runtime patch: whose manager is
# x), or the map key x, <name> the volume's name, {tmpl} the pod template and DataJob the
# `<job>-data` Job. A test changes each field and checks that every place listed changes.
OUTPUTS = _outputs()


def outputs(field: str) -> dict[str, list[str]]:
    """OUTPUTS of a field (list indices dropped), with {tmpl} filled in per workload."""
    return {
        w: [p.replace("{tmpl}", POD_TEMPLATE[w]) for p in places]
        for w, places in OUTPUTS.get(_normal(field), {}).items()
    }


@lru_cache(maxsize=1)
def spec_schema() -> dict[str, Any]:
    from paddlegen.resources import spec_schema_path

    schema: dict[str, Any] = json.loads(spec_schema_path().read_text(encoding="utf-8"))
    return schema


def _normal(field: str) -> str:
    """`spec.volumes[0].nfs` and `spec.volumes[].nfs` are `spec.volumes.nfs`."""
    return re.sub(r"\[[^\]]*\]", "", field).strip(".")


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    """The node with its $ref chain merged in; the node's own keywords win."""
    if "$ref" not in node:
        return node
    target = spec_schema()["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return {**_resolve(target), **{k: v for k, v in node.items() if k != "$ref"}}


def _children(node: dict[str, Any]) -> dict[str, Any]:
    """Named sub-fields; a list's items stand for the list (`spec.volumes.name`)."""
    node = _resolve(node)
    if "items" in node:
        node = _resolve(node["items"])
    return dict(node.get("properties", {}))


@dataclass(frozen=True)
class FieldDoc:
    path: str
    node: dict[str, Any]  # $refs merged
    children: dict[str, dict[str, Any]]
    outputs: dict[str, list[str]]


def field_exists(field: str) -> bool:
    try:
        explain(field)
    except InputError:
        return False
    return True


def explain(field: str | None = None) -> FieldDoc:
    """The documentation of ``field`` (dotted, e.g. spec.worker.replicas); None: the top level."""
    path = _normal(field or "")
    node: dict[str, Any] = spec_schema()
    walked: list[str] = []
    for part in path.split(".") if path else []:
        children = _children(node)
        if part not in children:
            where = ".".join(walked) or "the top level"
            close = difflib.get_close_matches(part, children, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            if not walked and field_exists(f"spec.{path}"):
                hint = f" (did you mean 'spec.{path}'?)"  # the spec's fields, named from spec
            raise InputError(
                f"no field '{part}' in {where}{hint}; fields: "
                + (", ".join(children) or "none (free-form)")
            )
        node = children[part]
        walked.append(part)
    node = _resolve(node)
    return FieldDoc(
        path or "(top level)",
        node,
        {k: _resolve(v) for k, v in _children(node).items()},
        outputs(path),
    )


def field_paths() -> Iterator[str]:
    """Every dotted field path of the schema (for shell completion)."""

    def walk(node: dict[str, Any], prefix: str, depth: int) -> Iterator[str]:
        for name, child in _children(node).items():
            path = f"{prefix}{name}"
            yield path
            if depth < 6:
                yield from walk(child, path + ".", depth + 1)

    yield from walk(spec_schema(), "", 0)


def _type(node: dict[str, Any]) -> str:
    if "const" in node:
        return f"constant {json.dumps(node['const'])}"
    names = {bool: "boolean", int: "integer", str: "string"}
    kind = node.get("type") or " or ".join(
        dict.fromkeys(names.get(type(v), "any") for v in node.get("enum", [None]))
    )
    kinds = " or ".join(kind) if isinstance(kind, list) else kind
    if kind == "array" and "items" in node:
        kinds += " of " + _type(_resolve(node["items"]))
    low, high = node.get("minimum"), node.get("maximum")
    if low is not None or high is not None:
        kinds += f", {'' if low is None else low}..{'' if high is None else high}"
    return kinds


def format_doc(doc: FieldDoc) -> str:
    """The text `paddlegen explain` prints."""
    node = doc.node
    lines = [doc.path, f"  {node.get('description', '')}", f"type:      {_type(node)}"]
    if "enum" in node:
        lines.append("allowed:   " + ", ".join(json.dumps(v) for v in node["enum"]))
    if "default" in node:
        lines.append(f"default:   {json.dumps(node['default'])}")
    if node.get("examples"):
        lines.append("examples:  " + "; ".join(json.dumps(v) for v in node["examples"]))
    if doc.outputs:
        lines.append("controls:")
        width = max(map(len, doc.outputs))
        lines += [
            f"  {w:<{width}}  {place}" for w, places in doc.outputs.items() for place in places
        ]
    if doc.children:
        lines.append("fields:")
        width = max(map(len, doc.children))
        lines += [
            f"  {name:<{width}}  {_type(child)}: {child.get('description', '')}"
            for name, child in doc.children.items()
        ]
    return "\n".join(lines) + "\n"


def format_rule(rule: Rule, required: bool = False) -> str:
    """The text `paddlegen explain RULE` prints: the id and severities, what the rule checks,
    and why it matters."""
    said = ", ".join(rule.severities) + (", required" if required else "")
    lines = [f"{rule.id} ({said})", f"  {rule.summary}", ""]
    lines += textwrap.wrap(
        rule.explanation, 88, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False
    )
    return "\n".join(lines) + "\n"
