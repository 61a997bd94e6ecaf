"""Import's notes and Context; in workloads/ because authoring imports the workloads, not back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from paddlegen.errors import Diagnostic, Rule
from paddlegen.spec.model import MANAGED_BY, recommended_labels
from paddlegen.workloads.import_positions import FieldPath

ARGOCD_PREFIX = "argocd.argoproj.io/"  # sync annotations paddlegen writes itself


# Every mapper *pops* what it carries over from a copy of the input object, so whatever is left
# at the end is exactly what did not make it into the spec, and is listed (authoring/importer.py).
def take(obj: Any, *keys: str | int, default: Any = None) -> Any:
    """Remove and return ``obj[k1][k2]...``, pruning parents left empty."""
    if not keys:
        return default
    head, rest = keys[0], keys[1:]
    try:
        child = obj[head]
    except (KeyError, IndexError, TypeError):
        return default
    if not rest:
        return obj.pop(head)
    value = take(child, *rest, default=default)
    if isinstance(child, (dict, list)) and not child:
        obj.pop(head)
    return value


def take_same(
    given: dict[str, Any], expected: dict[str, Any], prefix: FieldPath = ()
) -> list[tuple[FieldPath, Any]]:
    """Remove from ``given`` every leaf it holds as ``expected`` does (``leftovers`` then
    lists what differs); return the leaves of ``expected`` that ``given`` lacks. Lists of
    mappings go item by item, their items left in place (emptied) so that what is left keeps
    its index; a list of scalars is one leaf."""
    lacking: list[tuple[FieldPath, Any]] = []
    for key, want in expected.items():
        at = (*prefix, key)
        if key not in given:
            lacking.append((at, want))
        elif given[key] == want:
            given.pop(key)
        elif isinstance(want, dict) and isinstance(given[key], dict):
            lacking += take_same(given[key], want, at)
            if not given[key]:
                given.pop(key)
        elif _mappings(want) and _mappings(given[key]):
            items = given[key]
            for i, item in enumerate(want):
                if i < len(items):
                    lacking += take_same(items[i], item, (*at, i))
                else:
                    lacking.append(((*at, i), item))
            if not any(items):
                given.pop(key)
    return lacking


def _mappings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)


def leftovers(obj: Any, prefix: FieldPath = ()) -> list[tuple[FieldPath, Any]]:
    """``(path, value)`` of every leaf still in ``obj`` (emptied containers carry nothing; a
    list of scalars is one leaf)."""
    if isinstance(obj, (dict, list)) and not obj:
        return []
    if isinstance(obj, dict):
        return [leaf for k, v in obj.items() for leaf in leftovers(v, (*prefix, k))]
    if isinstance(obj, list) and any(isinstance(v, (dict, list)) for v in obj):
        return [leaf for i, v in enumerate(obj) for leaf in leftovers(v, (*prefix, i))]
    return [(prefix, obj)]


def dotted(path: FieldPath) -> str:
    """``path`` as notes write it: ``spec.template.spec.containers[0].ports``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out


# What a note says about the rendered objects: they run the same as the input (cosmetic: a
# server-set field, a default made explicit, a name paddlegen derives) or differently (lossy: a
# pod, container, volume, command, env, resource, scheduling or placement setting lost or changed).
NoteKind = Literal["cosmetic", "lossy"]
COSMETIC: NoteKind = "cosmetic"
LOSSY: NoteKind = "lossy"
IMPORT_NOTE = Rule(
    "import-note",
    (
        "what `import` changed without changing what runs (a server-set field, a default made "
        "explicit, a name paddlegen derives)"
    ),
    explanation=(
        "What `import` changed without changing what runs: a field the server set, a default made "
        "explicit, a name paddlegen derives."
    ),
    severity="info",
)

IMPORT_LOSSY = Rule(
    "import-lossy",
    "what `import` could not carry over: the spec would run differently",
    explanation=(
        "What `import` could not carry over: the spec would run differently from the object it was "
        "imported from. `--lossy` accepts it."
    ),
    severity="warning",
)
_RULES = {COSMETIC: IMPORT_NOTE, LOSSY: IMPORT_LOSSY}


@dataclass(frozen=True)
class Note:
    """One thing import did not carry over as it was. ``where`` starts with the object's
    ``Kind/name`` (a role may follow); ``file`` is the input that held the object."""

    kind: NoteKind
    where: str
    message: str
    file: str = ""
    # The field of the object the note is about, and where the input file holds it.
    at: FieldPath = ()
    line: int = 0
    col: int = 0

    @property
    def label(self) -> str:
        return self.where.partition(" ")[0]

    @property
    def lossy(self) -> bool:
        return self.kind == LOSSY

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"

    def diagnostic(self) -> Diagnostic:
        """The note as a finding: lossy ones warn (import-lossy), cosmetic ones inform."""
        rule = _RULES[self.kind]
        return Diagnostic(
            self.file,
            self.line,
            self.col,
            severity=rule.severity,
            path=self.where,
            message=self.message,
            rule=rule.id,
        )


def key_of(obj: dict[str, Any]) -> tuple[str, str]:
    """An object's apiVersion and kind, as a workload's entry names its main one."""
    return obj["apiVersion"], obj["kind"]


def label_of(obj: dict[str, Any]) -> str:
    """An object as notes name it, Kind/name."""
    return f"{obj['kind']}/{obj['metadata']['name']}"


@dataclass
class Context:
    """State one import shares: the job's identity, notes, and PVs/PVCs not yet used."""

    name: str
    namespace: str | None
    labels: dict[str, str]  # the job's own labels (recommended ones removed)
    annotations: dict[str, str]
    pvs: dict[str, dict[str, Any]]
    pvcs: dict[str, dict[str, Any]]
    notes: list[Note] = field(default_factory=list)
    # PVs and PVCs turned into volumes; what is left of them is reported like everything else.
    consumed: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    claims: dict[str, tuple[dict[str, Any], str | None]] = field(default_factory=dict)
    # spec volume name -> (claim name, PV name) as the input named them
    storage_names: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    # an operator's schedulingPolicy.minResources: derived, compared with what paddlegen sums
    gang_min_resources: dict[str, Any] | None = None
    gang_at: FieldPath = ()  # where the main object holds them
    data_priority: str | None = None  # the data Job's priorityClassName
    subdomain: str | None = None  # the pods' as the input named them (collective-job's Service)
    # The job's other objects in the input, for a mapper that reads one beside the main
    # object (a TrainJob's own TrainingRuntime); it puts what it reads in ``consumed``.
    others: list[dict[str, Any]] = field(default_factory=list)

    def note(self, kind: NoteKind, where: str, message: str, at: FieldPath = ()) -> None:
        """A note on the object ``where`` names; ``at``: the field of it the note is about,
        as the input held it (positioned in the input's file)."""
        self.notes.append(Note(kind, where, message, at=at))

    def drop_notes(self, at: FieldPath) -> None:
        """Forget the notes on field ``at``: a conversion to another workload says anew what
        becomes of it."""
        self.notes = [n for n in self.notes if n.at != at]


def strip_meta(meta: dict[str, Any], ctx: Context) -> None:
    """Remove the labels and annotations the spec regenerates on every object."""
    labels = meta.get("labels", {})
    if labels.get("app.kubernetes.io/managed-by") == MANAGED_BY:
        for key, value in recommended_labels(ctx.name).items():
            if labels.get(key) == value:
                labels.pop(key)
    for table, mine in ((labels, ctx.labels), (meta.get("annotations", {}), ctx.annotations)):
        for key in [
            k for k in table if k in mine and table[k] == mine[k] or k.startswith(ARGOCD_PREFIX)
        ]:
            table.pop(key)
    for key in ("labels", "annotations"):
        if key in meta and not meta[key]:
            meta.pop(key)


def expect_name(obj: dict[str, Any], expected: str, ctx: Context) -> None:
    """A cosmetic note when ``obj``, which paddlegen derives, is not named ``expected``."""
    if obj["metadata"]["name"] != expected:
        ctx.note(COSMETIC, label_of(obj), f"renamed {expected} (paddlegen derives the name)")
