"""The tests' specs and renders: each workload's smallest spec with a test's own fields."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from paddlegen import report
from paddlegen.errors import Diagnostic
from paddlegen.pipeline import build, load
from paddlegen.spec.loader import Document, parse_spec
from paddlegen.spec.overlays import deep_merge
from paddlegen.workloads import DEFAULT_WORKLOAD, WORKLOADS
from paddlegen.yamlio import dump_yaml

HEADER = "apiVersion: paddlegen/v1\nkind: TrainingJob\n"
# A spec as a test gives it: the document, or its YAML text.
Source = Mapping[str, Any] | str


def spec(
    workload: str = DEFAULT_WORKLOAD, *, metadata: Mapping[str, Any] | None = None, **fields: Any
) -> dict[str, Any]:
    """``workload``'s smallest spec (``Workload.example``) with ``metadata`` and the spec
    ``fields`` merged in as an overlay merges: maps key by key, a list or a scalar replaces,
    None removes."""
    given = copy.deepcopy({"metadata": metadata or {}, "spec": fields})
    merged: dict[str, Any] = deep_merge(WORKLOADS[workload].example, given)
    return merged


def text_of(source: Source) -> str:
    """The YAML text of a spec."""
    return source if isinstance(source, str) else dump_yaml(dict(source))


def diagnostics(source: Source, *, ignore: Iterable[str] = ()) -> list[Diagnostic]:
    """Every finding on a spec, as `paddlegen validate` finds them (``ignore`` as --ignore)."""
    return load.validate_document(parse_spec(text_of(source), "spec.yaml"), ignore=ignore)


# The first lines of a spec a test writes from `spec:` on: a finding's line counts them (3).
DEMO = HEADER + "metadata: {name: demo}\n"
# Warnings almost every small spec gets, which the tests of other rules leave out of a report
# (tests/unit/test_security_defaults.py covers limits-missing).
COMMON_WARNINGS = ("limits-missing", "image-tag")


def report_of(
    doc: Document, workload: str | None = None, quiet: Iterable[str] = COMMON_WARNINGS
) -> list[str]:
    """The text report of a loaded spec, without its summary line nor the ``quiet`` rules'."""
    ends = (" in spec.yaml", *(f"[{rule}]" for rule in quiet))
    found = load.validate_document(doc, workload)
    return [line for line in report.text(found).splitlines() if not line.endswith(ends)]


def findings(
    body: str, workload: str | None = None, quiet: Iterable[str] = COMMON_WARNINGS
) -> list[str]:
    """The text report (``report_of``) of the spec DEMO + ``body``."""
    return report_of(parse_spec(DEMO + body, "spec.yaml"), workload, quiet)


def rules(body: str) -> list[str]:
    """The rules of the findings on the spec DEMO + ``body``, in the report's order."""
    return [line.rsplit("[", 1)[1].rstrip("]") for line in findings(body)]


def rendered(
    source: Source,
    *,
    ignore: Iterable[str] = (),
    warnings: Iterable[str] | None = None,
    argocd: bool = True,
) -> build.Rendered:
    """What a spec renders, in memory. It must have no error; given ``warnings``, no warning
    of another rule either (``ignore`` silences rules as --ignore does)."""
    doc = parse_spec(text_of(source), "spec.yaml")
    found = load.validate_document(doc, ignore=ignore)
    allowed = None if warnings is None else set(warnings)
    unwanted = [d for d in found if d.is_error or (allowed is not None and d.rule not in allowed)]
    assert not unwanted, unwanted
    return build.render_valid(doc, warnings=found, argocd=argocd)


def rendered_objects(source: Source, **options: Any) -> dict[tuple[str, str], Any]:
    """The objects a spec renders (``rendered``), by kind and name."""
    return {(m.kind, m.name): m.obj for m in rendered(source, **options).manifests}


def render_file(folder: Path, source: Source) -> build.Rendered:
    """What a spec written to ``folder``/spec.yaml renders, as `paddlegen render` reads it."""
    path = folder / "spec.yaml"
    path.write_text(text_of(source), encoding="utf-8")
    (done,) = build.render_specs([path])
    return done


def objects_by_kind(plan: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """A plan's objects by kind (for specs where every kind occurs once)."""
    found = [
        yaml.safe_load(text)
        for path, text in plan.items()
        if not path.endswith("kustomization.yaml")
    ]
    return {obj["kind"]: obj for obj in found}


def job_spec(name: str, image: str = "img:1", extra: str = "") -> str:
    """A minimal valid `job` spec's text (memory limit set, so no warning), plus ``extra`` spec
    lines: tests of a finding's line and column add theirs."""
    return (
        f"{HEADER}metadata:\n  name: {name}\nspec:\n  workload: job\n  image: {image}\n"
        f"  resources: {{limits: {{memory: 1Gi}}}}\n{extra}"
    )


def workers(workload: str, replicas: int = 2) -> dict[str, Any]:
    """The spec field for ``replicas`` workers: none for a workload that runs one pod."""
    return {} if WORKLOADS[workload].single_pod else {"worker": {"replicas": replicas}}


def volumes(workload: str, *more: Mapping[str, Any]) -> list[Any]:
    """``workload``'s example's volumes (its own settings may name one), then ``more``."""
    return [*WORKLOADS[workload].example["spec"].get("volumes", []), *more]


# spec.scheduling.kueue, and every workload Kueue can queue (Workload.queueable)
KUEUE = {"kueue": {"queue": "team-a", "priorityClass": "high"}}
KUEUE_WORKLOADS = [name for name, w in WORKLOADS.items() if w.queueable]
_DATA = {
    "name": "data",
    "mountPath": "/data",
    "nfs": {"server": "nfs.example", "path": "/x"},
    "capacity": "1Gi",
}


def kueue_spec(
    workload: str, scheduling: Mapping[str, Any] | None = KUEUE, **fields: Any
) -> dict[str, Any]:
    """A spec of ``workload`` in namespace team-a, two ranks unless it runs one pod, with a
    data Job, and ``scheduling`` (the Kueue queue by default)."""
    return spec(
        workload,
        metadata={"namespace": "team-a"},
        resources={"requests": {"cpu": "1"}},
        volumes=volumes(workload, _DATA),
        dataPrep={"volume": "data"},
        **workers(workload),
        scheduling=scheduling,
        **fields,
    )


# --- tc-checks: one rule's findings --------------------------------------------------------------


def only(body: str, rule: str, workload: str | None = None) -> list[str]:
    """The findings (``findings``) of ``rule`` alone on the spec DEMO + ``body``."""
    return [line for line in findings(body, workload) if line.endswith(f"[{rule}]")]
