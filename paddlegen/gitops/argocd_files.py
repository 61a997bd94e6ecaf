"""Where `paddlegen argocd` writes each file, and the header every one of them carries."""

from __future__ import annotations

from paddlegen.output.layout import HEADER
from paddlegen.output.writer import WriteReport

ARGOCD_NAMESPACE = "argocd"
# The top of the folder holds only the objects to apply (`kubectl apply -f argocd/`, which reads
# no subfolder without -R; the Applications of --mode applications are in applications/). What
# is installed otherwise lives below it: the plugin's configuration, which is no API object
# (kubectl fails on its kind), goes into the sidecar's image, and the health checks are a patch
# of argocd-cm (applied, they would become its last-applied configuration: see health_configmap).
CMP_FILE = "sidecar/plugin.yaml"
DOCKERFILE = "sidecar/Dockerfile"  # the sidecar's image, built from sidecar/ with the wheel
HEALTH_FILE = "patches/argocd-cm-health.yaml"
SIDECAR_PATCH_FILE = "patches/argocd-repo-server-sidecar.yaml"
SIDECAR_FILES = frozenset({CMP_FILE, DOCKERFILE, SIDECAR_PATCH_FILE})  # with --sidecar only
# Where paddlegen wrote them before, at the top (the CLI notes the move when it removes them).
MOVED = {"cmp-plugin.yaml": CMP_FILE, "argocd-cm-health.yaml": HEALTH_FILE}
Plan = dict[str, str]  # relative path in the output folder -> file text


def moved(report: WriteReport) -> dict[str, str]:
    """The files a write removed from where paddlegen wrote them before, and where they are
    now (written, or already there)."""
    now = {*report.written, *report.unchanged}
    return {rel: MOVED[rel] for rel in report.removed if MOVED.get(rel) in now}


def sidecar_removed(report: WriteReport) -> list[str]:
    """The plugin sidecar's files a write removed (a run without --sidecar), where they were."""
    gone = moved(report)
    return [
        rel
        for rel in report.removed
        if rel not in gone and SIDECAR_FILES.intersection({rel, MOVED.get(rel)})
    ]


def removed_applications(report: WriteReport) -> list[str]:
    """The Application files a write removed: deleting them from Argo CD deletes their jobs'
    live objects."""
    return [rel for rel in report.removed if rel.startswith("applications/")]


def header(purpose: str) -> str:
    # HEADER marks the file as generated: re-running `paddlegen argocd` may replace it.
    return HEADER + "".join(f"# {line}\n" for line in purpose.splitlines())
