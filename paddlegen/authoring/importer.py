"""`paddlegen import`: Kubernetes manifests back to specs; whatever is not carried over is listed.

Each training object (a PaddleJob, a TrainJob, a JobSet, a batch Job), read by the workload
that claims it (``Workload.imports``), makes a spec; a data Job, a PodGroup, PVs and PVCs that
belong to it (import_split.py) fill in dataPrep, scheduling and volumes, and what its workload
renders beside it (``Imports.derived``) is carried over. Mappers pop what
they use from copies of the objects, so what remains is exactly what the spec does not carry;
it is listed. Every note says whether the rendered spec would run differently from the input
(lossy) or the same (cosmetic: what the cluster sets by itself, workloads/import_defaults.py, or
a name paddlegen derives).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from paddlegen.authoring.import_data import data_job, is_data_job
from paddlegen.authoring.import_derived import without_derived
from paddlegen.authoring.import_read import located_objects
from paddlegen.authoring.import_shapes import refuse_misshapen
from paddlegen.authoring.import_split import split_jobs
from paddlegen.errors import Diagnostic, InputError, LossyImportError, SpecError
from paddlegen.spec.model import MANAGED_BY, RUN_RECORD_SUFFIX, recommended_labels
from paddlegen.spec.scheduling import KUEUE_PRIORITY_LABEL, KUEUE_QUEUE_LABEL
from paddlegen.workloads import WORKLOADS, conversion_targets, workload_of
from paddlegen.workloads.base import (
    KUEUE_PREFERRED_TOPOLOGY,
    KUEUE_REQUIRED_TOPOLOGY,
    Importer,
    Imports,
    Spec,
)
from paddlegen.workloads.import_defaults import (
    SERVER_METADATA,
    TOOL_ANNOTATIONS,
    is_server_label,
    set_by_cluster,
)
from paddlegen.workloads.import_notes import (
    ARGOCD_PREFIX,
    COSMETIC,
    LOSSY,
    Context,
    Note,
    dotted,
    expect_name,
    key_of,
    label_of,
    leftovers,
    strip_meta,
    take,
)
from paddlegen.workloads.import_positions import FieldPath, Origin

BATCH_JOB = ("batch/v1", "Job")
# What each workload reads its objects back with (loading it loads the workload's importers,
# which only an import needs).
IMPORTS: dict[str, Imports] = {name: w.imports() for name, w in WORKLOADS.items()}


def _readers() -> dict[tuple[str, str], list[Importer]]:
    """Each kind of training object the workloads render and the importers reading it back:
    those that claim some objects of the kind first, then the one that reads every other."""
    readers: dict[tuple[str, str], list[Importer]] = {}
    for imports in IMPORTS.values():
        for importer in imports.objects:
            readers.setdefault(importer.kind.api_kind, []).append(importer)
    return {kind: sorted(found, key=lambda i: i.claims is None) for kind, found in readers.items()}


READERS = _readers()
# The controllers' objects (PaddleJobs, TrainJobs, JobSets): a job, as any batch Job that is
# no data Job.
OPERATOR_JOBS = set(READERS) - {BATCH_JOB}
PODGROUP = ("scheduling.volcano.sh/v1beta1", "PodGroup")
CONFIGMAP = ("v1", "ConfigMap")


@dataclass(frozen=True)
class Imported:
    spec: dict[str, Any]
    text: str  # the spec as a file, under the schema modeline
    # One per input field or object not carried over, or changed: lossy when the rendered
    # objects would run differently from the input, cosmetic when they would run the same.
    notes: list[Note]
    diagnostics: list[Diagnostic]  # validating the spec: an incomplete input shows here
    label: str = ""  # the training object it was made from, Kind/name

    @property
    def lossy(self) -> list[Note]:
        return [n for n in self.notes if n.lossy]

    @property
    def name(self) -> str:
        """The job's name (the spec's metadata.name)."""
        return str(self.spec["metadata"]["name"])

    @property
    def described(self) -> str:
        """The training object it was made from, and its namespace, for a message."""
        namespace = self.spec["metadata"].get("namespace")
        return self.label + (f" in namespace {namespace}" if namespace else "")


def read_manifests(sources: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    """Every object of the YAML streams ``(name, text)``; `kind: List` items included."""
    return [obj for name, text in sources for obj, _ in located_objects(name, text)]


@dataclass(frozen=True)
class ImportedJobs:
    """An input of one job or several: a spec for each, and a note for every object of the
    input that belongs to none of them (only with several jobs: one job takes every object)."""

    jobs: list[Imported]
    notes: list[Note]

    @property
    def lossy(self) -> list[Note]:
        return [n for job in self.jobs for n in job.lossy] + [n for n in self.notes if n.lossy]

    def findings(self) -> list[Diagnostic]:
        """Each job's notes in the order of the input, as a compiler lists its findings (those
        about a whole object first, as made), then what validating its spec found; then the
        notes about no one job."""
        return [
            d
            for job in self.jobs
            for d in sorted((n.diagnostic() for n in job.notes), key=_in_the_input)
            + job.diagnostics
        ] + sorted((n.diagnostic() for n in self.notes), key=_in_the_input)

    def refuse_invalid(self) -> None:
        """SpecError with every finding when a spec is invalid (the specs are written all the
        same: an incomplete input makes one, to complete by hand)."""
        if any(d.is_error for job in self.jobs for d in job.diagnostics):
            raise SpecError("an imported spec is invalid", self.findings())

    def refuse_lossy(self, accept: bool = False) -> None:
        """LossyImportError when a spec would run differently from its input, unless
        ``accept``; the lossy notes themselves are among ``findings``."""
        if self.lossy and not accept:
            count = len(self.lossy)
            raise LossyImportError(
                f"{count} lossy note{'s' if count != 1 else ''}: the spec would not run as the "
                "input does; edit it, or accept it with --lossy"
            )

    def spec_files(self, spec_file: Callable[[str], str]) -> dict[str, str]:
        """Each job's spec as a file, at ``spec_file(job name)`` (path -> text); InputError
        when two jobs would share one."""
        by_file: dict[str, list[Imported]] = {}
        for job in self.jobs:
            by_file.setdefault(spec_file(job.name), []).append(job)
        for path, same in by_file.items():
            if len(same) > 1:
                raise InputError(
                    " and ".join(job.described for job in same) + f" would both be written to "
                    f"{path}: paddlegen renders one folder per job name, so two jobs of one "
                    "name cannot be rendered side by side; rename one in the input "
                    "(metadata.name), or import them one at a time"
                )
        return {path: same[0].text for path, same in by_file.items()}


def import_jobs(
    sources: Iterable[tuple[str, str]],
    name: Callable[[str], str] = lambda job: "<imported>",
    to: str | None = None,
    schema: str | None = None,
) -> ImportedJobs:
    """A spec per job of the manifests in ``sources`` (see import_split.py), each with what it
    does not carry over and its validation; ``name(job)`` is the spec's file name in its
    diagnostics, and where its modeline finds the schema from (``schema``: the modeline's
    reference as given). ``to``: a workload to convert
    each job to (one whose ``Workload.converts_from`` lists the job's workload)."""
    if to is not None and to not in conversion_targets():
        raise InputError(
            f"cannot convert to workload '{to}'; import converts to: "
            + ", ".join(conversion_targets())
        )
    sources = list(sources)
    located = [found for source, text in sources for found in located_objects(source, text)]
    origins: dict[int, Origin] = {id(obj): origin for obj, origin in located}
    files = {key: origin.source.name for key, origin in origins.items()}
    refuse_misshapen(located)
    objects = [obj for obj, _ in located]
    groups, stray = split_jobs(objects, OPERATOR_JOBS, BATCH_JOB)
    if not groups:
        found = ", ".join(map(label_of, objects)) or "nothing"
        raise InputError(
            f"no training object (a batch/v1 Job, a PaddleJob, a TrainJob or a JobSet) in the "
            f"input; "
            f"found: {found}"
        )
    jobs = []
    for main, group in groups:
        # One job: every input, as always. Several: the inputs that hold the job's objects.
        held = {files[id(o)] for o in group} if len(groups) > 1 else {s for s, _ in sources}
        origin = "imported by `paddlegen import` from " + ", ".join(
            source for source, _ in sources if source in held
        )
        spec_file = name(main["metadata"]["name"])
        jobs.append(_import_job(main, group, origin, spec_file, origins, to, schema))
    names = ", ".join(job.label for job in jobs)
    notes = [
        Note(
            LOSSY,
            label_of(o),
            f"belongs to none of the jobs ({names}) alone; not imported",
            files[id(o)],
        )
        for o in stray
    ]
    return ImportedJobs(jobs, notes)


def import_manifests(sources: Iterable[tuple[str, str]], name: str = "<imported>") -> Imported:
    """The spec for the manifests in ``sources``, which hold one job, what it does not carry
    over, and its validation (``name`` is the spec's file name in diagnostics, and where the
    modeline finds the schema from). An input of several jobs is refused: ``import_jobs``
    reads those."""
    result = import_jobs(sources, lambda _: name)
    if len(result.jobs) > 1:
        raise InputError(several_jobs(result))
    return result.jobs[0]


def _in_the_input(found: Diagnostic) -> tuple[str, int, int]:
    return found.file, found.line, found.col


def several_jobs(result: ImportedJobs) -> str:
    """Why several jobs cannot go into one spec, and the way out."""
    names = ", ".join(job.label for job in result.jobs)
    return (
        f"the input holds {len(result.jobs)} jobs ({names}), and a spec describes one: "
        "write a spec per job with -o DIR/ (DIR/<job>.yaml)"
    )


def _import_job(
    main: dict[str, Any],
    objects: list[dict[str, Any]],
    origin: str,
    name: str,
    origins: dict[int, Origin],
    to: str | None = None,
    schema: str | None = None,
) -> Imported:
    """One job's spec from its training object ``main`` and the ``objects`` around it (the
    mappers pop what they carry over from them)."""
    label = label_of(main)
    by_label: dict[str, Origin] = {}
    for obj in objects:
        by_label.setdefault(label_of(obj), origins[id(obj)])
    ctx = _context(main, objects)
    spec, used, group = _map(main, objects, ctx, to)
    result = _spec(ctx, spec)
    text, found = _checked(result, origin, name, schema)
    if not any(d.is_error for d in found):
        lean = without_derived(result)
        if lean != result:
            result = lean
            text, found = _checked(result, origin, name, schema)
    notes = ctx.notes
    if not any(d.is_error for d in found):
        notes += _model_notes(result, ctx, group, label)
    for obj in used:
        notes += _report(obj, main, ctx, origins[id(obj)])
    notes += [
        Note(LOSSY, label_of(o), "no spec counterpart; not imported")
        for o in objects
        if not any(o is u for u in used)
    ]
    return Imported(result, text, [_placed(n, by_label) for n in notes], found, label)


def _placed(note: Note, origins: dict[str, Origin]) -> Note:
    """``note`` with the file that held its object, and the line and column of its field."""
    origin = origins.get(note.label)
    if origin is None:
        return note
    line, col = (note.line, note.col) if note.line else origin.nearest(note.at)
    return replace(note, file=origin.source.name, line=line, col=col)


def _checked(
    data: dict[str, Any], origin: str, name: str, schema: str | None = None
) -> tuple[str, list[Diagnostic]]:
    """The spec as a file (``name``, under the modeline and ``origin``) and its validation."""
    from paddlegen.authoring.init import spec_text
    from paddlegen.pipeline.load import validate_document
    from paddlegen.spec.loader import parse_spec

    text = spec_text(data, origin, name, schema)
    return text, validate_document(parse_spec(text, name))


def _context(main: dict[str, Any], objects: list[dict[str, Any]]) -> Context:
    """What the mappers share: the job's identity (its own labels and annotations, not the
    ones the cluster or paddlegen set), the PVs and PVCs of the input, and its other
    objects."""
    meta = main["metadata"]
    job = meta["name"]
    return Context(
        job,
        meta.get("namespace"),
        _own_labels(job, meta.get("labels", {}), batch=key_of(main) == BATCH_JOB),
        {
            k: v
            for k, v in meta.get("annotations", {}).items()
            if not k.startswith(ARGOCD_PREFIX) and k not in TOOL_ANNOTATIONS
        },
        pvs={o["metadata"]["name"]: o for o in objects if key_of(o) == ("v1", "PersistentVolume")},
        pvcs={
            o["metadata"]["name"]: o
            for o in objects
            if key_of(o) == ("v1", "PersistentVolumeClaim")
        },
        others=[o for o in objects if o is not main],
    )


def _map(
    main: dict[str, Any], objects: list[dict[str, Any]], ctx: Context, to: str | None = None
) -> tuple[Spec, list[dict[str, Any]], dict[str, Any] | None]:
    """The spec fields of the training object and the objects around it (converted to
    workload ``to``, if given), the objects used, and the PodGroup if there is one."""
    job = ctx.name
    spec = _reader(main).read(main, ctx, label_of(main))
    if to is not None and spec["workload"] != to:
        spec = _convert(spec, to, ctx, label_of(main))
    _kueue(main, spec, ctx)
    _kueue_topology(spec)
    used = [main]
    data = next(
        (o for o in objects if o is not main and key_of(o) == BATCH_JOB and is_data_job(o)), None
    )
    if data is not None:
        data_job(data, spec, ctx, label_of(data))
        expect_name(data, f"{job}-data", ctx)
        used.append(data)
    group = next((o for o in objects if key_of(o) == PODGROUP), None)
    if group is not None:
        _podgroup(group, spec, ctx)
        used.append(group)
    _pod_priority(spec, ctx, label_of(main))
    derived = IMPORTS[spec["workload"]].derived
    if derived is not None:
        used += derived(objects, spec, ctx)
    used += [o for o in objects if _is_run_record(o, job)]
    used += [obj for _, obj in ctx.consumed]
    return spec, used, group


def _reader(obj: dict[str, Any]) -> Importer:
    """The importer of training object ``obj``: the one that claims it, else the one reading
    every object of its kind that no other claims."""
    return next(i for i in READERS[key_of(obj)] if i.claims is None or i.claims(obj))


def _convert(spec: Spec, to: str, ctx: Context, where: str) -> Spec:
    """``spec``, read from ``where``, as a spec of workload ``to``; refused for a workload the
    conversion does not take."""
    sources = WORKLOADS[to].converts_from
    convert = IMPORTS[to].convert
    if spec["workload"] not in sources:
        title = WORKLOADS[spec["workload"]].title
        raise InputError(
            f"{where}: cannot convert a {title} (workload {spec['workload']}) to {to}: "
            f"--to {to} converts {' and '.join(WORKLOADS[s].title + 's' for s in sources)}; "
            "import it without --to"
        )
    assert convert is not None  # a workload that converts has a converter (test_workloads.py)
    return convert(spec, ctx, where)


def _kueue(main: dict[str, Any], spec: Spec, ctx: Context) -> None:
    """Kueue's labels on the training object are spec.scheduling.kueue. Kueue cannot queue
    every workload's object (Workload.queueable: a PaddleFlow PaddleJob has no suspend):
    there they are lost, not carried into a spec that the kueue-workload rule would refuse."""
    labels = main["metadata"].get("labels", {})
    kueue = {
        field: labels.pop(label)  # carried over: not reported as left over (_report)
        for field, label in (("queue", KUEUE_QUEUE_LABEL), ("priorityClass", KUEUE_PRIORITY_LABEL))
        if label in labels
    }
    if not kueue:
        return
    workload = WORKLOADS[spec["workload"]]
    if not workload.queueable or "queue" not in kueue:
        ctx.note(
            LOSSY,
            label_of(main),
            f"Kueue's labels {kueue} are lost: "
            + (
                f"Kueue cannot queue a {workload.title} (it has no suspend)"
                if not workload.queueable
                else "a priority class without a queue queues nothing"
            ),
        )
        return
    spec.setdefault("scheduling", {})["kueue"] = kueue


def _kueue_topology(spec: Spec) -> None:
    """Kueue's topology annotation, on every pod template of a queued job, is
    spec.scheduling.topology (workloads/base.py topology_annotations renders it). On some
    roles only, or on a job Kueue does not queue, it stays a pod annotation, which renders
    the same."""
    annotations = spec.get("podAnnotations", {})
    scheduling = spec.get("scheduling", {})
    found = [
        (key, kind)
        for key, kind in (
            (KUEUE_REQUIRED_TOPOLOGY, "required"),
            (KUEUE_PREFERRED_TOPOLOGY, "preferred"),
        )
        if key in annotations
    ]
    if "kueue" not in scheduling or len(found) != 1:
        return
    key, kind = found[0]
    scheduling["topology"] = {kind: annotations.pop(key)}
    if not annotations:
        spec.pop("podAnnotations")


def _pod_priority(spec: Spec, ctx: Context, where: str) -> None:
    """The pods' priorityClassName is the spec's (workloads/import_pod.py). Under Volcano a batch
    Job's pods also give the gang its priority, so there it is the gang's field,
    scheduling.priorityClassName, which the pods carry when they have none of their own,
    unless the data Job has it too (the data Job takes spec.priorityClassName, never the
    gang's). A gang (PodGroup) of another priority keeps its own, by which Volcano orders and
    preempts jobs, and the pods take it."""
    given = spec.get("priorityClassName")
    scheduling = spec.get("scheduling", {})
    batch = not WORKLOADS[spec["workload"]].scheduling_policy
    if given is None or scheduling.get("scheduler") != "volcano" or not batch:
        return
    gang = scheduling.setdefault("priorityClassName", given)
    if gang != given:
        spec.pop("priorityClassName")
        ctx.note(
            LOSSY,
            where,
            f"priorityClassName {given!r} is lost: the gang's is {gang!r} "
            "(spec.scheduling.priorityClassName, by which Volcano orders and preempts jobs; "
            "a Job's pods carry it)",
        )
    elif "dataPrep" not in spec or ctx.data_priority != given:
        spec.pop("priorityClassName")


def _own_labels(name: str, labels: dict[str, str], *, batch: bool) -> dict[str, str]:
    """The user's labels: paddlegen's recommended ones are regenerated, the API server sets
    its own on a batch Job again, and Kueue's are spec.scheduling.kueue."""
    managed = labels.get("app.kubernetes.io/managed-by") == MANAGED_BY
    ours = recommended_labels(name) if managed else {}
    return {
        k: v
        for k, v in labels.items()
        if ours.get(k) != v
        and not (batch and is_server_label(k, v, name))
        and k not in (KUEUE_QUEUE_LABEL, KUEUE_PRIORITY_LABEL)  # spec.scheduling.kueue: _kueue
    }


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
    expect_name(group, ctx.name, ctx)


def _is_run_record(obj: dict[str, Any], name: str) -> bool:
    """The run record paddlegen renders beside a job (paddlegen/render/syncwaves.py): a digest
    of the job's objects, made again by every render."""
    if key_of(obj) != CONFIGMAP or obj["metadata"]["name"] != name + RUN_RECORD_SUFFIX:
        return False
    take(obj, "data")
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


def _model_notes(
    data: dict[str, Any], ctx: Context, group: dict[str, Any] | None, label: str
) -> list[Note]:
    """What the spec derives differently from the input: storage names (cosmetic: the pods
    mount the same storage), the gang's resources (lossy: Volcano admits the gang by them;
    ``label``: the job's object, whose schedulingPolicy may give them)."""
    from paddlegen.spec.model import build_job

    job = build_job(data, workload_of(data))
    notes = []
    for volume in job.volumes:
        claim, pv = ctx.storage_names.get(volume.name, (None, None))
        for kind, theirs, mine in (
            ("PersistentVolumeClaim", claim, volume.claimName),
            ("PersistentVolume", pv, volume.pvName),
        ):
            if theirs and mine and theirs != mine:
                renamed = f"renamed {mine} (paddlegen derives the name)"
                notes.append(Note(COSMETIC, f"{kind}/{theirs}", renamed))
    given = (group or {}).get("spec", {}).pop("minResources", None)
    where = label_of(group) if group else ""
    at: FieldPath = ("spec", "minResources")
    if given is None and ctx.gang_min_resources is not None:
        given, where, at = ctx.gang_min_resources, label, ctx.gang_at
    if given is not None and {k: str(v) for k, v in given.items()} != job.min_resources:
        notes.append(
            Note(
                LOSSY,
                where,
                f"minResources {json.dumps(given)} becomes {json.dumps(job.min_resources)} "
                "(the sum of the pods' requests)",
                at=at,
            )
        )
    return notes


_SET_BY_CLUSTER = {
    "server-set": "server-set {} ignored",
    "default": "defaults {} left to the API server, which sets them again",
    "unused": "{} ignored (the controller names each pod itself)",
}


def _report(obj: dict[str, Any], main: dict[str, Any], ctx: Context, origin: Origin) -> list[Note]:
    """A note per field left in ``obj`` after mapping, at that field in the input, but one
    cosmetic note for all the fields the cluster sets by itself."""
    label = label_of(obj)
    known = _crd_fields(main) if obj is main else set()
    meta = obj["metadata"]
    take(meta, "name")
    if meta.get("namespace") == ctx.namespace:
        take(meta, "namespace")
    strip_meta(meta, ctx)
    found: dict[str, list[str]] = {why: [] for why in _SET_BY_CLUSTER}
    found["server-set"] = [key for key in SERVER_METADATA if take(meta, key) is not None]
    if take(obj, "status") is not None:
        found["server-set"].append("status")
    api, kind = take(obj, "apiVersion"), take(obj, "kind")
    lost = []
    for at, value in leftovers(obj):
        path = dotted(at)
        why = set_by_cluster(path, value, kind, label.partition("/")[2])
        if why:
            found[why].append(path)
            continue
        note = _lost(label, f"{api} {kind}", path, value, known)
        # where the input holds another value, an item before it was taken: the list then
        line, col = origin.position(at, value) or origin.nearest(_before_items(at))
        lost.append(replace(note, line=line, col=col))
    return [
        *(
            Note(COSMETIC, label, _SET_BY_CLUSTER[why].format(", ".join(paths)))
            for why, paths in found.items()
            if paths
        ),
        *lost,
    ]


def _before_items(at: FieldPath) -> FieldPath:
    """``at`` up to its first list index."""
    return at[: next((i for i, key in enumerate(at) if isinstance(key, int)), len(at))]


def _lost(label: str, what: str, path: str, value: Any, known: set[str]) -> Note:
    """A field not carried over: lossy, unless the operator's CRD (``known``: its spec fields)
    does not know it, so that the API server dropped it from the input too."""
    line = f"{path} = {json.dumps(value, ensure_ascii=False)}: not carried over"
    top = path.split(".")[1].split("[")[0] if path.startswith("spec.") else ""
    if not known or top in known:
        return Note(LOSSY, label, line)
    close = difflib.get_close_matches(top, known, n=1)
    line += f" (not a field of {what}: the API server drops it" + (
        f"; did you mean '{close[0]}'?)" if close else ")"
    )
    return Note(COSMETIC, label, line)


def _crd_fields(obj: dict[str, Any]) -> set[str]:
    """The spec fields the operator's CRD knows (for a did-you-mean on a typo)."""
    if key_of(obj) not in OPERATOR_JOBS:
        return set()
    from paddlegen.resources import data_path

    group, version = obj["apiVersion"].split("/")
    crd = data_path("schemas", "crds", group, f"{obj['kind'].lower()}_{version}.json")
    schema = json.loads(crd.read_text(encoding="utf-8"))
    return set(schema["properties"]["spec"]["properties"])
