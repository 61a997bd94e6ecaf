"""Environments, self-heal, prune and the plugin sidecar, in Argo CD v3.5.1 (`hack/local-cluster
--with argocd`, with KWOK, Volcano and the PaddleFlow operator), on a `file://` Git repository.

Two jobs with overlays `dev` and `prod`, each its own namespace: `paddlegen argocd --env dev`
and `--env prod` write an ApplicationSet each, installed by `hack/local-cluster install`, and
each environment syncs into its namespace. The gang (Volcano) finishes: the operator deletes
its PodGroup and nothing brings it back; with self-heal on, the Applications stay Synced, no
sync starts and nobody writes the job again. A spec deleted from the repository takes its
Application and its objects with it, but not its claim; a volume dropped from a spec is pruned.
And the plugin (`paddlegen render . --stdout`, in the real `argocd-cmp-server`) renders what the
committed tree holds: the Application it synced compares Synced with that tree."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from paddlegen.gitops import argocd_sidecar as argo
from tests.cluster.conftest import Kube, local_cluster
from tests.cluster.test_argocd import (
    Loop,
    application,
    compared_with_tree,
    git,
    init_repo,
    paddlegen,
    refresh,
    render_and_commit,
    wait_running,
    wait_synced,
)
from tests.cluster.test_paddleflow import get, wait_for
from tests.conftest import EXAMPLES

ENVS = {"dev": "acd-dev", "prod": "acd-prod"}  # environment -> its namespace
GANG = "wide-ande-deep-volcano"  # examples/paddlejob-volcano.yaml: 2 ps + 2 workers, a gang
NFS = "paddlejob-demo-1"  # examples/paddlejob-nfs.yaml: on an NFS PV and PVC
PADDLEJOBS = "paddlejobs.batch.paddlepaddle.org"


def with_environments(example: str) -> dict[str, Any]:
    """The example with an overlay per environment that moves it into its namespace (and
    gives prod a third worker)."""
    spec = yaml.safe_load((EXAMPLES / example).read_text())
    spec["overlays"] = {env: {"metadata": {"namespace": ns}} for env, ns in ENVS.items()}
    spec["overlays"]["prod"]["spec"] = {"worker": {"replicas": 3}}
    return spec


@pytest.fixture(scope="module")
def repo(argocd: Kube, tmp_path_factory: pytest.TempPathFactory) -> Loop:
    path = init_repo(tmp_path_factory.mktemp("envs") / "jobs-repo")
    specs = {
        "paddlejob-volcano.yaml": with_environments("paddlejob-volcano.yaml"),
        "paddlejob-nfs.yaml": with_environments("paddlejob-nfs.yaml"),
    }
    for namespace in ENVS.values():  # two Applications per namespace: see test_argocd_loop
        argocd.run("create", "namespace", namespace)
    return Loop(argocd, path, specs)


def app_name(job: str, env: str) -> str:
    return f"{job}-{env}"


def refresh_appsets(kube: Kube) -> None:
    """Make the ApplicationSets read Git now (their generator polls every 3 minutes)."""
    for env in ENVS:
        kube.run(
            "-n", "argocd", "annotate", "applicationset", f"paddlegen-jobs-{env}",
            "argocd.argoproj.io/application-set-refresh=true", "--overwrite",
        )  # fmt: skip


def pods(kube: Kube, namespace: str, job: str) -> list[dict[str, Any]]:
    selector = f"app.kubernetes.io/instance={job}"
    return (get(kube, namespace, "pods", "-l", selector) or {}).get("items", [])


def test_each_environment_syncs_into_its_own_namespace(repo: Loop) -> None:
    kube = repo.kube
    revision = repo.commit("two jobs, two environments")
    for env in ENVS:
        paddlegen(
            "argocd", "--env", env, "--deploy", str(repo.repo / "deploy"),
            "-o", str(repo.repo / "argocd" / env), "--repo-url", f"file://{repo.repo}",
            "--revision", "main", "--dest-server", kube.server,
        )  # fmt: skip
        installed = local_cluster().install(repo.repo / "argocd" / env, kube.state)
        assert [p.name for p in installed] == ["argocd-cm-health.yaml", "applicationset.yaml"]
    for env, namespace in ENVS.items():
        for job in (GANG, NFS):
            # Synced (the run record), the sync running while the job runs.
            wait_running(kube, app_name(job, env), f"batch.paddlepaddle.org/PaddleJob/{job}")
            status = application(kube, app_name(job, env))["status"]
            assert (status["sync"]["status"], status["sync"]["revision"]) == ("Synced", revision)
            # The plugin sidecar runs too; an Application that does not name its plugin never
            # renders with it.
            assert status["sourceType"] == "Kustomize"
        workers = 3 if env == "prod" else 2
        for job in (GANG, NFS):
            live = get(kube, namespace, PADDLEJOBS, job)
            assert live["spec"]["worker"]["replicas"] == workers, (env, job)
            tracking = live["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"]
            assert tracking.startswith(f"{app_name(job, env)}:"), tracking
        claim = get(kube, namespace, "pvc", f"{NFS}-data")
        assert claim["spec"]["volumeName"] == f"{namespace}-{NFS}-data"
        wait_for(f"{namespace}: the claim bound", lambda ns=namespace: bound(kube, ns))


def bound(kube: Kube, namespace: str) -> bool:
    claim = get(kube, namespace, "pvc", f"{NFS}-data") or {}
    return claim.get("status", {}).get("phase") == "Bound"


def test_a_finished_gang_stays_synced_with_self_heal_and_no_podgroup(repo: Loop) -> None:
    kube = repo.kube
    for env, namespace in ENVS.items():
        app = app_name(GANG, env)
        assert application(kube, app)["spec"]["syncPolicy"]["automated"]["selfHeal"] is True
        # The operator's PodGroup (paddlegen renders none), the gang run and finished.
        group = wait_for(f"{namespace}: the PodGroup", lambda ns=namespace: podgroup(kube, ns))
        assert group["metadata"]["ownerReferences"][0]["kind"] == "PaddleJob"
        total = 5 if env == "prod" else 4
        wait_for(
            f"{namespace}: {total} pods running",
            lambda ns=namespace, n=total: len(running(kube, ns)) == n,
        )
        for pod in running(kube, namespace):
            kube.succeed(namespace, pod["metadata"]["name"])
        wait_for(f"{namespace}: the job Completed", lambda ns=namespace: completed(kube, ns))
        wait_for(f"{namespace}: its PodGroup deleted", lambda ns=namespace: not podgroup(kube, ns))
        wait_synced(kube, app, head(repo))
        # The NFS job too, so that later commits are not held by its running sync.
        finish_nfs(kube, env, head(repo))

    # Then, for every environment, two more comparisons of Git with the cluster: the operator
    # has written the job back (its finalizer, its status) and deleted its PodGroup, yet the
    # Application is Synced, no sync starts (self-heal would start one on any difference) and
    # the job's spec is not written again.
    before = {env: settled(kube, env) for env in ENVS}
    for env in ENVS:
        assert get(kube, ENVS[env], PADDLEJOBS, GANG)["metadata"]["finalizers"], env
    for _ in range(2):
        for env in ENVS:
            reconcile(kube, app_name(GANG, env))
    assert {env: settled(kube, env) for env in ENVS} == before
    for namespace in ENVS.values():
        assert podgroup(kube, namespace) is None


def head(repo: Loop) -> str:
    return git(repo.repo, "rev-parse", "HEAD")


def finish_nfs(kube: Kube, env: str, revision: str) -> None:
    """Succeed the NFS job's pods in ``env`` once they run; its sync then succeeds."""
    namespace, total = ENVS[env], 5 if env == "prod" else 4  # prod has a third worker
    wait_for(
        f"{namespace}: {total} pods of {NFS} running",
        lambda: len(running_pods(kube, namespace, NFS)) == total,
    )
    for pod in running_pods(kube, namespace, NFS):
        kube.succeed(namespace, pod["metadata"]["name"])
    wait_synced(kube, app_name(NFS, env), revision)


def running_pods(kube: Kube, namespace: str, job: str) -> list[dict[str, Any]]:
    return [p for p in pods(kube, namespace, job) if p["status"].get("phase") == "Running"]


def podgroup(kube: Kube, namespace: str) -> dict[str, Any] | None:
    return get(kube, namespace, "podgroups.scheduling.volcano.sh", GANG)


def running(kube: Kube, namespace: str) -> list[dict[str, Any]]:
    return running_pods(kube, namespace, GANG)


def completed(kube: Kube, namespace: str) -> bool:
    job = get(kube, namespace, PADDLEJOBS, GANG) or {}
    return job.get("status", {}).get("phase") == "Completed"


def settled(kube: Kube, env: str) -> tuple[str, str, int, int]:
    """What changes if Argo CD syncs the gang's Application again or writes its job: the sync
    status, the last operation's start, the number of syncs and the job's generation."""
    status = application(kube, app_name(GANG, env))["status"]
    job = get(kube, ENVS[env], PADDLEJOBS, GANG)
    return (
        status["sync"]["status"],
        status["operationState"]["startedAt"],
        len(status.get("history", [])),
        job["metadata"]["generation"],
    )


def reconcile(kube: Kube, app: str) -> None:
    """A hard refresh of ``app``, waited for: the controller compared Git with the cluster
    again (reconciledAt moves; it counts seconds) and the sync status is Synced."""
    last = application(kube, app)["status"]["reconciledAt"]
    time.sleep(1.1)
    refresh(kube, app)

    def compared() -> bool:
        status = application(kube, app)["status"]
        return status["reconciledAt"] != last and status["sync"]["status"] == "Synced"

    wait_for(f"{app} compared again and Synced", compared)


def test_deleted_specs_and_dropped_volumes_are_pruned(repo: Loop) -> None:
    kube = repo.kube
    # A volume dropped from a spec: its PV and PVC leave the render, and automated sync prunes
    # them (their Delete=false keeps them only when the Application is deleted).
    spec = repo.specs["paddlejob-nfs.yaml"]["spec"]
    volumes, command = spec.pop("volumes"), (spec["command"], spec["args"])
    spec["command"], spec["args"] = ["sleep"], ["60"]  # its training read /nas
    nfs_apps = [app_name(NFS, env) for env in ENVS]
    revision = repo.commit("no data volume", *nfs_apps)
    # The changed job runs anew (its finished pods were cleaned: OnCompletion) without them.
    for env, namespace in ENVS.items():
        finish_nfs(kube, env, revision)
        assert get(kube, namespace, "pvc", f"{NFS}-data") is None, namespace
        wait_for(f"{namespace}: the PV pruned", lambda ns=namespace: not volume_of(kube, ns))

    # The volume back: a new PV and claim, bound.
    spec["volumes"], (spec["command"], spec["args"]) = volumes, command
    revision = repo.commit("the data volume back", *nfs_apps)
    for env, namespace in ENVS.items():
        finish_nfs(kube, env, revision)
        wait_for(f"{namespace}: the claim bound", lambda ns=namespace: bound(kube, ns))

    # A deleted spec: its folder leaves deploy/, the ApplicationSets drop its Applications and
    # their resources finalizer deletes what they deployed, but for the PV and PVC
    # (Delete=false).
    (repo.repo / "jobs" / "paddlejob-nfs.yaml").unlink()
    del repo.specs["paddlejob-nfs.yaml"]
    repo.commit("no NFS job")
    assert not (repo.repo / "deploy" / NFS).exists()
    refresh_appsets(kube)
    for env, namespace in ENVS.items():
        app = app_name(NFS, env)
        wait_deleted(kube, app)
        assert get(kube, namespace, PADDLEJOBS, NFS) is None, namespace
        # The claim and its volume kept, still bound: re-adding the spec adopts them.
        assert bound(kube, namespace), namespace
        assert "deletionTimestamp" not in volume_of(kube, namespace)["metadata"], namespace
        assert get(kube, namespace, PADDLEJOBS, GANG) is not None, namespace
        assert application(kube, app_name(GANG, env))["status"]["sync"]["status"] == "Synced"


def wait_deleted(kube: Kube, app: str, timeout: float = 60.0) -> None:
    """Wait until ``app`` is gone (its resources finalizer done); on a timeout, say which of
    its objects are still there, and what holds them (deletionTimestamp, finalizers)."""
    deadline = time.monotonic() + timeout
    while found := application(kube, app):
        if time.monotonic() > deadline:
            held = {}
            for r in found.get("status", {}).get("resources", []):
                kind = ".".join(filter(None, [r["kind"].lower(), r.get("group")]))
                live = get(kube, r.get("namespace") or "default", kind, r["name"])
                if live:
                    meta = live["metadata"]
                    held[f"{kind}/{r['name']}"] = (
                        meta.get("deletionTimestamp"),
                        meta.get("finalizers"),
                    )
            pytest.fail(f"{app} not deleted in {timeout:.0f} s; still there: {held}")
        time.sleep(0.3)


def volume_of(kube: Kube, namespace: str) -> dict[str, Any] | None:
    return get(kube, namespace, "pv", f"{namespace}-{NFS}-data")  # cluster-scoped


def test_the_plugin_sidecar_renders_what_the_committed_tree_holds(
    argocd: Kube, tmp_path: Path
) -> None:
    """The Application the sidecar/plugin.yaml header describes (specs at its path, the plugin
    named with its version, the environment in plugin.env) syncs through the real
    argocd-cmp-server. Then its source is switched to the committed overlay and automated sync
    turned off: Argo CD's own comparison (a three-way diff with what the plugin applied) finds
    the cluster Synced with the tree, object for object."""
    kube = argocd
    path = init_repo(tmp_path / "jobs-repo")
    spec = with_environments("paddlejob-nfs.yaml")
    spec["metadata"]["name"] = job = "plugin-rendered"
    spec["overlays"]["prod"]["metadata"]["namespace"] = namespace = "acd-plugin"
    revision = render_and_commit(path, {"plugin.yaml": spec}, "a job, rendered and not")
    source = {"repoURL": f"file://{path}", "targetRevision": "main", "path": "jobs"}
    plugin = {"name": argo.plugin_name(), "env": [{"name": "PADDLEGEN_ENV", "value": "prod"}]}
    app = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": job, "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {**source, "plugin": plugin},
            "destination": {"server": kube.server, "namespace": namespace},
            "syncPolicy": {"automated": {}, "syncOptions": ["CreateNamespace=true"]},
        },
    }
    kube.run("apply", "-f", "-", stdin=json.dumps(app))
    wait_running(kube, job, f"batch.paddlepaddle.org/PaddleJob/{job}")
    wait_for(f"{job}: 5 pods running", lambda: len(running_pods(kube, namespace, job)) == 5)
    for pod in running_pods(kube, namespace, job):
        kube.succeed(namespace, pod["metadata"]["name"])
    wait_synced(kube, job, revision)
    status = application(kube, job)["status"]
    assert status.get("sourceType") == "Plugin", status.get("conditions")
    objects = resources(status)
    assert ("ConfigMap", namespace, f"{job}-run") in objects
    assert ("PersistentVolume", "", f"{namespace}-{job}-data") in objects
    assert get(kube, namespace, PADDLEJOBS, job)["spec"]["worker"]["replicas"] == 3

    status = compared_with_tree(kube, job, source, f"deploy/{job}/overlays/prod")
    assert status.get("sourceType") == "Kustomize", status.get("conditions")
    assert status["sync"]["status"] == "Synced", status["resources"]
    assert resources(status) == objects
    assert {r["status"] for r in status["resources"] if not r.get("hook")} == {"Synced"}
    assert status["operationState"]["syncResult"]["revision"] == revision  # no sync since


def resources(status: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The objects Argo CD compares (hooks, the training object, are not compared)."""
    return sorted(
        (r["kind"], r.get("namespace", ""), r["name"])
        for r in status["resources"]
        if not r.get("hook")
    )
