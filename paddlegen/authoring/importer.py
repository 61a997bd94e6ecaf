"""`paddlegen import`: Kubernetes manifests back to a spec; whatever is not carried over is listed.

The training object (a PaddleFlow or Kubeflow PaddleJob, the seeds' distributed batch Job, else a
single-pod Job) makes the spec; a data Job, a PodGroup, PVs, PVCs and distributed-job's RBAC in
the same stream fill in dataPrep, scheduling and volumes. Mappers pop what they use from copies
of the objects, so what remains is exactly what the spec does not carry; it is listed.
"""

from __future__ import annotations

import difflib
import importlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import yaml

from paddlegen.authoring.import_pod import ARGOCD_PREFIX, Context, leftovers, strip_meta, take
from paddlegen.authoring.import_workloads import (
    Spec,
    data_job,
    is_data_job,
    is_distributed,
)
from paddlegen.errors import Diagnostic, InputError
from paddlegen.spec.model import MANAGED_BY, recommended_labels
from paddlegen.workloads import WORKLOADS
from paddlegen.yamlio import load_all

Mapper = Callable[[dict[str, Any], Context, str], Spec]
BATCH_JOB = ("batch/v1", "Job")


def _importers() -> dict[tuple[str, str], Mapper]:
    """Each workload's main kind and the function reading it back, as its entry names it."""
    found: dict[tuple[str, str], Mapper] = {}
    for w in WORKLOADS.values():
        module, _, function = w.importer.partition(":")
        found[w.kind] = getattr(importlib.import_module(module), function)
    return found


IMPORTERS = _importers()
# The operators' objects: a PaddleJob beats any batch Job in the same stream.
OPERATOR_JOBS = {kind: mapper for kind, mapper in IMPORTERS.items() if kind != BATCH_JOB}
PODGROUP = ("scheduling.volcano.sh/v1beta1", "PodGroup")
# distributed-job renders these for the image's peer discovery; importing them is a no-op.
RBAC = {
    ("v1", "ServiceAccount"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
}
_SERVER_SET = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
)


@dataclass(frozen=True)
class Imported:
    spec: dict[str, Any]
    text: str  # the spec as a file, under the schema modeline
    unmapped: list[str]  # one line per input field or object not carried over, or changed
    diagnostics: list[Diagnostic]  # validating the spec: an incomplete input shows here


def _label(obj: dict[str, Any]) -> str:
    return f"{obj['kind']}/{obj['metadata']['name']}"


def read_manifests(sources: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    """Every object of the YAML streams ``(name, text)``; `kind: List` items included."""
    objects: list[dict[str, Any]] = []
    for name, text in sources:
        try:
            docs = load_all(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark else name
            raise InputError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
        for doc in docs:
            items = (
                doc.get("items", [])
                if isinstance(doc, dict) and doc.get("kind") == "List"
                else [doc]
                if doc is not None
                else []
            )
            for obj in items:
                if not (
                    isinstance(obj, dict)
                    and {"apiVersion", "kind"} <= obj.keys()
                    and isinstance(obj.get("metadata", {}).get("name"), str)
                ):
                    raise InputError(
                        f"{name}: a document is not a Kubernetes object (apiVersion, "
                        "kind and metadata.name)"
                    )
                objects.append(obj)
    return objects


def _key(obj: dict[str, Any]) -> tuple[str, str]:
    return obj["apiVersion"], obj["kind"]


def _main(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The training object: a PaddleJob, else the distributed Job, else the one other Job."""
    operator = [o for o in objects if _key(o) in OPERATOR_JOBS]
    jobs = [o for o in objects if _key(o) == BATCH_JOB]
    for candidates in (
        operator,
        [j for j in jobs if is_distributed(j)],
        [j for j in jobs if not is_data_job(j)],
        jobs,
    ):
        if len(candidates) == 1:
            return candidates[0]
        if len(candidates) > 1:
            raise InputError(
                "several training objects ("
                + ", ".join(map(_label, candidates))
                + "); a spec describes one job: import them one at a time"
            )
    found = ", ".join(map(_label, objects)) or "nothing"
    raise InputError(
        f"no training object (a batch/v1 Job or a PaddleJob) in the input; found: {found}"
    )


def import_manifests(sources: Iterable[tuple[str, str]], name: str = "<imported>") -> Imported:
    """The spec for the manifests in ``sources``, what it does not carry over, and its
    validation (``name`` is the spec's file name in diagnostics)."""
    sources = list(sources)
    objects = read_manifests(sources)
    main = _main(objects)
    meta = main["metadata"]
    job = meta["name"]
    ctx = Context(
        job,
        meta.get("namespace"),
        _own_labels(job, meta.get("labels", {})),
        {k: v for k, v in meta.get("annotations", {}).items() if not k.startswith(ARGOCD_PREFIX)},
        pvs={o["metadata"]["name"]: o for o in objects if _key(o) == ("v1", "PersistentVolume")},
        pvcs={
            o["metadata"]["name"]: o for o in objects if _key(o) == ("v1", "PersistentVolumeClaim")
        },
    )
    mapper = IMPORTERS[_key(main)]
    spec = mapper(main, ctx, _label(main))
    used = [main]
    data = next(
        (o for o in objects if o is not main and _key(o) == BATCH_JOB and is_data_job(o)), None
    )
    if data is not None:
        data_job(data, spec, ctx, _label(data))
        _expect_name(data, f"{job}-data", ctx)
        used.append(data)
    group = next((o for o in objects if _key(o) == PODGROUP), None)
    if group is not None:
        _podgroup(group, spec, ctx)
        used.append(group)
    if spec["workload"] == "distributed-job":
        used += [o for o in objects if _key(o) in RBAC and _rbac_is_derived(o, job)]
    used += [obj for _, obj in ctx.consumed]
    result = _spec(ctx, spec)
    from paddlegen.api import validate_document
    from paddlegen.authoring.init import spec_text
    from paddlegen.spec.loader import parse_spec

    text = spec_text(
        result, "imported by `paddlegen import` from " + ", ".join(source for source, _ in sources)
    )
    found = validate_document(parse_spec(text, name))
    notes = ctx.notes
    if not any(d.is_error for d in found):
        notes += _model_notes(result, ctx, group)
    for obj in used:
        notes += _report(obj, main, ctx)
    notes += [
        f"{_label(o)}: no spec counterpart; not imported"
        for o in objects
        if not any(o is u for u in used)
    ]
    return Imported(result, text, notes, found)


def _own_labels(name: str, labels: dict[str, str]) -> dict[str, str]:
    """The user's labels: paddlegen's recommended ones are regenerated."""
    if labels.get("app.kubernetes.io/managed-by") != MANAGED_BY:
        return dict(labels)
    ours = recommended_labels(name)
    return {k: v for k, v in labels.items() if ours.get(k) != v}


def _expect_name(obj: dict[str, Any], expected: str, ctx: Context) -> None:
    if obj["metadata"]["name"] != expected:
        ctx.note(_label(obj), f"renamed {expected} (paddlegen derives the name)")


def _podgroup(group: dict[str, Any], spec: Spec, ctx: Context) -> None:
    scheduling = spec.setdefault("scheduling", {"scheduler": "volcano"})
    scheduling["scheduler"] = "volcano"
    body = group.get("spec", {})
    for key, mine in (
        ("minMember", "minAvailable"),
        ("queue", "queue"),
        ("priorityClassName", "priorityClassName"),
    ):
        if key in body:
            scheduling[mine] = take(body, key)
    _expect_name(group, ctx.name, ctx)


_ROLE_RULES = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]


def _rbac_is_derived(obj: dict[str, Any], name: str) -> bool:
    """distributed-job's own ServiceAccount, Role and RoleBinding, which it regenerates; fields
    that differ from what it regenerates stay in the object and are listed."""
    if obj["metadata"]["name"] != name:
        return False
    if obj.get("rules") == _ROLE_RULES:
        take(obj, "rules")
    if obj.get("roleRef", {}).get("name") == name:
        take(obj, "roleRef")
    if all(
        s.get("kind") == "ServiceAccount" and s.get("name") == name
        for s in obj.get("subjects", [{}])
    ):
        take(obj, "subjects")
    return True


def _spec(ctx: Context, spec: Spec) -> dict[str, Any]:
    """The whole spec document, spec fields in the schema's order."""
    from paddlegen.authoring.explain import spec_schema

    order = list(spec_schema()["$defs"]["spec"]["properties"])
    metadata: dict[str, Any] = {"name": ctx.name}
    for key, value in (
        ("namespace", ctx.namespace),
        ("labels", ctx.labels),
        ("annotations", ctx.annotations),
    ):
        if value:
            metadata[key] = value
    ordered = dict(sorted(spec.items(), key=lambda kv: order.index(kv[0])))
    return {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": metadata,
        "spec": ordered,
    }


def _model_notes(data: dict[str, Any], ctx: Context, group: dict[str, Any] | None) -> list[str]:
    """What the spec derives differently from the input: storage names, the gang's resources."""
    from paddlegen.spec.model import build_job

    job = build_job(data)
    notes = []
    for volume in job.volumes:
        claim, pv = ctx.storage_names.get(volume.name, (None, None))
        for kind, theirs, mine in (
            ("PersistentVolumeClaim", claim, volume.claimName),
            ("PersistentVolume", pv, volume.pvName),
        ):
            if theirs and mine and theirs != mine:
                notes.append(f"{kind}/{theirs}: renamed {mine} (paddlegen derives the name)")
    given = (group or {}).get("spec", {}).pop("minResources", None)
    if given is not None and {k: str(v) for k, v in given.items()} != job.min_resources:
        notes.append(
            f"PodGroup/{ctx.name}: minResources {json.dumps(given)} becomes "
            f"{json.dumps(job.min_resources)} (the sum of the pods' requests)"
        )
    return notes


def _report(obj: dict[str, Any], main: dict[str, Any], ctx: Context) -> list[str]:
    """One line per field left in ``obj`` after mapping."""
    label, api, kind = _label(obj), obj["apiVersion"], obj["kind"]
    known = _crd_fields(main) if obj is main else set()
    meta = obj["metadata"]
    take(meta, "name")
    if meta.get("namespace") == ctx.namespace:
        take(meta, "namespace")
    strip_meta(meta, ctx)
    server = [key for key in _SERVER_SET if take(meta, key) is not None]
    if take(obj, "status") is not None:
        server.append("status")
    lines = [f"{label}: server-set {', '.join(server)} ignored"] if server else []
    take(obj, "apiVersion")
    take(obj, "kind")
    for line in leftovers(obj):
        field = line.split(" = ", 1)[0]
        top = field.split(".")[1].split("[")[0] if field.startswith("spec.") else ""
        hint = ""
        if known and top not in known:
            close = difflib.get_close_matches(top, known, n=1)
            hint = f" (not a field of {api} {kind}: the API server drops it" + (
                f"; did you mean '{close[0]}'?)" if close else ")"
            )
        lines.append(f"{label}: {line}: not carried over{hint}")
    return lines


def _crd_fields(obj: dict[str, Any]) -> set[str]:
    """The spec fields the operator's CRD knows (for a did-you-mean on a typo)."""
    if _key(obj) not in OPERATOR_JOBS:
        return set()
    from paddlegen.resources import data_path

    group, version = obj["apiVersion"].split("/")
    crd = data_path("schemas", "crds", group, f"{obj['kind'].lower()}_{version}.json")
    schema = json.loads(crd.read_text(encoding="utf-8"))
    return set(schema["properties"]["spec"]["properties"])
