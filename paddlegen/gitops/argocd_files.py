"""Where `paddlegen argocd` writes each file, the header each carries, and what a write did."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from paddlegen.output.layout import HEADER
from paddlegen.output.writer import WriteReport

API_VERSION = "argoproj.io/v1alpha1"  # of Argo CD's objects and its plugin's configuration
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
# Where paddlegen wrote them before, at the top (a write's notes say so when it removes them).
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


@dataclass(frozen=True)
class ArgocdFiles:
    """What `paddlegen argocd` wrote, and what its caller should say about it."""

    report: WriteReport
    fallbacks: list[str]  # jobs that deploy their base for lack of the overlay asked for
    without_namespace: list[str]  # Applications whose objects land in no namespace
    placements: list[str]  # with --destination: where the Applications deploy
    moved: dict[str, str]  # files removed from an older place -> where they are now
    sidecar_removed: list[str]  # the plugin sidecar's files, removed (no --sidecar)
    removed_applications: list[str]  # Application files removed: their live objects go too
    # warnings: older versions' sidecars the patch ran and runs no more
    dropped_sidecars: list[str] = field(default_factory=list)

    def notes(self, out_dir: str, env: str | None = None) -> list[str]:
        """What the write of ``out_dir`` (deploying environment ``env``) did that its reader
        should know, a sentence each: where Applications deploy, what was moved, removed or
        kept, and what a sync of a job lasts."""
        found = [*self.placements]
        found += [f"{job} has no overlay '{env}': its base is deployed" for job in self.fallbacks]
        found += [
            f"warning: Application {app}: its objects name no namespace and it deploys to none, "
            'so Argo CD cannot sync them ("Namespace for ... is missing"): set '
            "metadata.namespace in the job's spec, or pass --dest-namespace"
            for app in self.without_namespace
        ]
        if self.sidecar_removed:
            found.append(
                f"removed the plugin sidecar's files ({', '.join(self.sidecar_removed)} in "
                f"{out_dir}): they are written with --sidecar (or --sidecar-image IMAGE)"
            )
        for rel in self.report.removed:
            if rel in self.moved:
                found.append(
                    f"moved {os.path.join(out_dir, rel)} to "
                    f"{os.path.join(out_dir, self.moved[rel])}, so that `kubectl apply -f "
                    f"{out_dir}` applies only the Argo CD objects; update what reads it there"
                )
            elif rel in self.removed_applications:
                found.append(
                    f"warning: removed {os.path.join(out_dir, rel)}: deleting that Application "
                    "from Argo CD deletes its live objects (resources finalizer)"
                )
        found += self.dropped_sidecars
        found += self.report.kept_notes(out_dir)
        if self.report.written:
            # Argo CD v3.5.1 gitops-engine pkg/sync/sync_context.go:725-746: a sync past its
            # timeout terminates the running hooks, which are the jobs' training here.
            found.append(
                "note: a job's sync lasts as long as its training (it is a Sync hook): keep "
                "Argo CD's controller.sync.timeout.seconds at 0 or above your longest run"
            )
        return found
