"""`distributed-job` on the real control plane and KWOK's fake nodes: the Job makes N pods with
the legacy image's env contract and host ports, one per node, whose ServiceAccount may list
the Job's pods (the image's peer discovery), and the data Job runs apart from the gang."""

from __future__ import annotations

import pytest
import yaml

from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from tests.cluster.conftest import Kube, with_extras
from tests.cluster.test_argocd_loop import kwok_paused
from tests.cluster.test_paddleflow import get, wait_for
from tests.cluster.test_volcano import scheduled_by
from tests.conftest import EXAMPLES

EXAMPLE = EXAMPLES / "distributed-hostpath.yaml"


@pytest.fixture(scope="module")
def nodes(kube: Kube) -> Kube:
    """KWOK's nodes and Volcano; no operator: a batch Job needs none, and one running before
    test_examples would change its PaddleJobs' status under that module's diff."""
    return with_extras(kube, ["kwok", "volcano"])


def render(namespace: str, scheduling: dict | None = None) -> build.Rendered:
    data = yaml.safe_load(EXAMPLE.read_text())
    data["metadata"]["namespace"] = namespace
    if scheduling:
        data["spec"]["scheduling"] = scheduling
    return build.render_document(parse_spec(yaml.safe_dump(data).encode(), str(EXAMPLE)))


def env(container: dict) -> dict[str, str]:
    return {
        e["name"]: e.get("value", e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath"))
        for e in container["env"]
    }


def job_pods(kube: Kube, namespace: str, job: str) -> list[dict]:
    return get(kube, namespace, "pods", "-l", f"job-name={job}")["items"]


def test_the_job_runs_a_pod_per_node_with_the_images_contract(nodes: Kube) -> None:
    kube, namespace = nodes, "dist-hostports"
    kube.run("create", "namespace", namespace)
    rendered = render(namespace)
    jobs = {m.name: m.obj for m in rendered.manifests if m.kind == "Job"}
    name = rendered.job.name
    ours = jobs[name]["spec"]["template"]["spec"]["containers"][0]
    replicas = jobs[name]["spec"]["parallelism"]

    def bound() -> list[dict] | None:
        pods = job_pods(kube, namespace, name)
        on_nodes = [p for p in pods if p["spec"].get("nodeName")]
        return on_nodes if len(pods) == len(on_nodes) == replicas else None

    # KWOK paused: no pod starts, so none completes by itself and frees its node's ports for
    # a pod placed later. KWOK's default stages complete a batch Job's pod as soon as it runs
    # (sigs.k8s.io/kwok v0.7.0 pkg/kwok/cmd/root.go:519-521, kustomize/stage/pod/fast/
    # pod-complete.yaml:17-20): CI's loaded runs twice saw 2 nodes for 3 pods.
    with kwok_paused(kube):
        kube.apply(build.manifest_stream([rendered]))
        # every pod bound (three pods with one still unbound are not yet "on nodes")
        pods = wait_for(f"{replicas} pods on nodes", bound)
        # host ports: one pod per node, each listening on every port the image opens
        assert len({p["spec"]["nodeName"] for p in pods}) == replicas
        for pod in pods:
            first = pod["spec"]["containers"][0]
            # JOB_NAME, JOB_PATH, CONF_PADDLE_* as rendered (the server adds fieldRef apiVersion)
            assert env(first) == env(ours)
            assert [(p["containerPort"], p["hostPort"]) for p in first["ports"]] == [
                (7164 + i, 7164 + i) for i in range(4)
            ]
            assert pod["spec"]["serviceAccountName"] == name
        # start_paddle.py lists the Job's pods through the API server with that ServiceAccount
        allowed = kube.run(
            "auth", "can-i", "list", "pods", "-n", namespace,
            f"--as=system:serviceaccount:{namespace}:{name}", check=False,
        )  # fmt: skip
        assert allowed.stdout.strip() == "yes", allowed.stderr
        # the data Job runs on its own, outside any gang
        (data,) = wait_for("the data pod", lambda: job_pods(kube, namespace, f"{name}-data"))
        assert "schedulerName" not in jobs[f"{name}-data"]["spec"]["template"]["spec"]
        assert data["spec"]["schedulerName"] == "default-scheduler"

        for pod in pods:  # the training "finishes"
            kube.succeed(namespace, pod["metadata"]["name"])
        wait_for(
            "the Job to complete",
            lambda: (
                (get(kube, namespace, "job", name) or {}).get("status", {}).get("succeeded")
                == replicas
            ),
        )


def test_under_volcano_the_pods_name_its_queue_and_no_podgroup_is_applied(
    nodes: Kube,
) -> None:
    kube, namespace = nodes, "dist-volcano"
    kube.run("create", "namespace", namespace)
    rendered = render(namespace, {"scheduler": "volcano", "queue": "default"})
    assert not [m for m in rendered.manifests if m.kind == "PodGroup"]
    kube.apply(build.manifest_stream([rendered]))
    name = rendered.job.name
    job = get(kube, namespace, "job", name)
    # what Volcano's podgroup controller sizes the Job's own PodGroup by, kept by the server
    assert job["metadata"]["annotations"]["scheduling.volcano.sh/group-min-member"] == "3"
    wait_for("3 pods", lambda: len(job_pods(kube, namespace, name)) == 3)
    for pod in job_pods(kube, namespace, name):
        assert pod["spec"]["schedulerName"] == "volcano"
        assert pod["metadata"]["annotations"]["scheduling.volcano.sh/queue-name"] == "default"

    # Volcano's podgroup controller makes the Job's PodGroup, owned by the Job and sized by
    # that annotation; vc-scheduler admits it and binds the three pods as one gang (which KWOK
    # then runs to completion by itself: a batch Job's pods finish at once).
    def group() -> dict | None:
        found = get(kube, namespace, "podgroups")["items"]
        done = [g for g in found if g.get("status", {}).get("phase") in ("Running", "Completed")]
        return done[0] if done else None

    podgroup = wait_for("the Job's PodGroup Running or Completed", group)
    (owner,) = podgroup["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("Job", name, job["metadata"]["uid"])
    assert podgroup["spec"]["minMember"] == 3
    assert podgroup["spec"]["queue"] == "default"
    pods = job_pods(kube, namespace, name)
    assert {p["metadata"]["annotations"]["scheduling.k8s.io/group-name"] for p in pods} == {
        podgroup["metadata"]["name"]
    }
    assert len({p["spec"]["nodeName"] for p in pods}) == 3  # host ports: a node each
    assert scheduled_by(kube, namespace) == {"volcano", "default-scheduler"}  # data Job: default

    # the job done, a sync applies the same render again: no second PodGroup, and the Job's
    # goes with the Job (garbage collection), so none is left to hold queue capacity
    kube.apply(build.manifest_stream([rendered]))
    assert len(get(kube, namespace, "podgroups")["items"]) == 1
    kube.run("delete", "job", "-n", namespace, name, "--cascade=foreground", "--wait=true")
    wait_for(
        "the PodGroup to go with the Job", lambda: not get(kube, namespace, "podgroups")["items"]
    )
