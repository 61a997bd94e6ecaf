"""`collective-job` (#26) on the real control plane and KWOK's fake nodes: the real Job
controller makes one pod per rank with the hostname, subdomain, index and env the launcher's
contract needs, the headless Service gives each its name (the EndpointSlice CoreDNS serves),
one failed or evicted rank fails the whole Job at once, the API server's read-back imports
without a lossy note (under Argo CD: test_argocd_collective.py).

KWOK completes a batch Job's pods as soon as they run, so these tests pause it (SIGSTOP) and
set the pods' status themselves, as a kubelet would: an IP and Running, a container's exit
code, Failed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from paddlegen.authoring.importer import import_manifests
from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from tests import builders
from tests.cluster.conftest import Kube, with_extras
from tests.cluster.test_argocd_loop import kwok_paused
from tests.cluster.test_paddleflow import get, wait_for

INDEX = "batch.kubernetes.io/job-completion-index"


@pytest.fixture(scope="module")
def nodes(kube: Kube) -> Kube:
    """KWOK's nodes; no operator: a batch Job needs none."""
    return with_extras(kube, ["kwok"])


def spec(name: str, namespace: str, replicas: int, **extra: Any) -> dict[str, Any]:
    return builders.spec(
        "collective-job",
        metadata={"name": name, "namespace": namespace},
        image="registry.example.com/resnet:v1",
        worker={"replicas": replicas},
        **extra,
    )


def render(data: dict[str, Any]) -> build.Rendered:
    return builders.rendered(data)


def apply(kube: Kube, data: dict[str, Any]) -> build.Rendered:
    kube.run("create", "namespace", data["metadata"]["namespace"])
    rendered = render(data)
    kube.apply(build.manifest_stream([rendered]))
    return rendered


def job_pods(kube: Kube, namespace: str, job: str) -> list[dict[str, Any]]:
    """The Job's pods, by completion index."""
    found = get(kube, namespace, "pods", "-l", f"batch.kubernetes.io/job-name={job}")["items"]
    return sorted(found, key=lambda p: int(p["metadata"]["annotations"][INDEX]))


def wait_pods(kube: Kube, namespace: str, job: str, count: int) -> list[dict[str, Any]]:
    def made() -> list[dict[str, Any]] | None:
        found = job_pods(kube, namespace, job)
        return found if len(found) == count else None

    return wait_for(f"{count} pods of {job}", made)


def set_status(kube: Kube, namespace: str, pod: str, status: dict[str, Any]) -> None:
    kube.run(
        "patch", "pod", "-n", namespace, pod, "--subresource=status", "--type=merge",
        "-p", json.dumps({"status": status}),
    )  # fmt: skip


def run_on(kube: Kube, namespace: str, pod: dict[str, Any], ip: str) -> None:
    """What a kubelet reports for a started pod: an IP, Running."""
    set_status(
        kube, namespace, pod["metadata"]["name"],
        {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}]},
    )  # fmt: skip


def fail(kube: Kube, namespace: str, pod: dict[str, Any], exit_code: int = 1) -> None:
    """What a kubelet reports when the training container (the pod's first) exits with
    ``exit_code``."""
    container = pod["spec"]["containers"][0]
    set_status(
        kube, namespace, pod["metadata"]["name"],
        {
            "phase": "Failed",
            "containerStatuses": [
                {
                    "name": container["name"], "image": container["image"],
                    "imageID": "", "ready": False, "restartCount": 0,
                    "state": {"terminated": {"exitCode": exit_code, "reason": "Error"}},
                }
            ],
        },
    )  # fmt: skip


def condition(
    kube: Kube, namespace: str, job: str, kind: str, resource: str = "job"
) -> dict[str, Any] | None:
    """The condition ``kind`` of the ``resource`` (a Job, or a TrainJob) ``job``, if true."""
    found = (get(kube, namespace, resource, job) or {}).get("status", {}).get("conditions", [])
    return next((c for c in found if c["type"] == kind and c["status"] == "True"), None)


def env(container: dict[str, Any]) -> list[tuple[str, Any]]:
    """(name, value or fieldPath) in order: the server adds apiVersion to a fieldRef."""
    return [
        (e["name"], e.get("value", e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")))
        for e in container["env"]
    ]


def test_the_job_controller_makes_every_rank_and_the_service_names_each(nodes: Kube) -> None:
    kube, namespace, name = nodes, "coll-ranks", "coll"
    with kwok_paused(kube):
        rendered = apply(kube, spec(name, namespace, 3))
        pods = wait_pods(kube, namespace, name, 3)
        (ours,) = [m.obj for m in rendered.manifests if m.kind == "Job"]
        rendered_env = env(ours["spec"]["template"]["spec"]["containers"][0])
        for i, pod in enumerate(pods):
            assert pod["spec"]["hostname"] == f"{name}-{i}"
            assert pod["spec"]["subdomain"] == name
            assert pod["metadata"]["labels"][INDEX] == str(i)
            # paddlegen's contract first; the controller appends JOB_COMPLETION_INDEX after
            # it, out of reach of a $(JOB_COMPLETION_INDEX) in the entries before
            assert env(pod["spec"]["containers"][0]) == [
                *rendered_env,
                ("JOB_COMPLETION_INDEX", f"metadata.labels['{INDEX}']"),
            ]
            assert ("PADDLE_MASTER", f"{name}-0.{name}:6768") in rendered_env
        # Started, each pod gets its name in the Service's EndpointSlice (which CoreDNS
        # serves as <hostname>.<service>), ready or not.
        ips = {f"{name}-{i}": f"10.250.7.{10 + i}" for i in range(3)}
        for i, pod in enumerate(pods):
            run_on(kube, namespace, pod, ips[f"{name}-{i}"])

        def named() -> dict[str, str] | None:
            slices = get(
                kube, namespace, "endpointslices", "-l", f"kubernetes.io/service-name={name}"
            )["items"]
            found = {
                e.get("hostname"): e["addresses"][0]
                for s in slices
                for e in s.get("endpoints") or []
            }
            return found if found == ips else None

        wait_for("every rank's name in the Service", named)
    # KWOK running again completes the pods, and the Job with them.
    wait_for("the Job Complete", lambda: condition(kube, namespace, name, "Complete"))


def test_one_failed_rank_fails_the_whole_job_at_once(nodes: Kube) -> None:
    kube, namespace, name = nodes, "coll-fail", "coll"
    with kwok_paused(kube):
        apply(kube, spec(name, namespace, 3))
        pods = wait_pods(kube, namespace, name, 3)
        fail(kube, namespace, pods[1])
        target = wait_for(
            "the pod failure policy", lambda: condition(kube, namespace, name, "FailureTarget")
        )
        assert target["reason"] == "PodFailurePolicy"
        assert target["message"] == (
            f"Container paddle for pod {namespace}/{pods[1]['metadata']['name']} failed with "
            "exit code 1 matching FailJob rule at index 1"
        )
        # the other ranks are stopped at once, and no rank is made again

        def stopping() -> bool:
            found = job_pods(kube, namespace, name)
            others = [p for p in found if p["status"]["phase"] != "Failed"]
            return len(found) == 3 and all(p["metadata"].get("deletionTimestamp") for p in others)

        wait_for("the other ranks stopped", stopping)
    wait_for("the Job Failed", lambda: condition(kube, namespace, name, "Failed"))
    failed = [pods[1]["metadata"]["name"]]
    wait_for(
        "only the failed rank left",
        lambda: [p["metadata"]["name"] for p in job_pods(kube, namespace, name)] == failed,
    )
    assert get(kube, namespace, "job", name)["status"].get("active", 0) == 0


def test_an_evicted_rank_fails_the_whole_job_and_says_so(nodes: Kube) -> None:
    """A node drain evicts through the Eviction API, which marks the pod DisruptionTarget."""
    kube, namespace, name = nodes, "coll-evict", "coll"
    with kwok_paused(kube):
        apply(kube, spec(name, namespace, 2))
        pods = wait_pods(kube, namespace, name, 2)
        victim = pods[0]["metadata"]["name"]
        eviction = {"apiVersion": "policy/v1", "kind": "Eviction",
                    "metadata": {"name": victim, "namespace": namespace}}  # fmt: skip
        kube.run(
            "create", "--raw", f"/api/v1/namespaces/{namespace}/pods/{victim}/eviction",
            "-f", "-", stdin=json.dumps(eviction),
        )  # fmt: skip
        evicted = get(kube, namespace, "pod", victim)  # kept by the Job's tracking finalizer
        assert evicted["metadata"]["deletionTimestamp"]
        true = {c["type"] for c in evicted["status"]["conditions"] if c["status"] == "True"}
        assert "DisruptionTarget" in true
        fail(kube, namespace, evicted, exit_code=143)  # the kubelet stopped it: SIGTERM
        target = wait_for(
            "the pod failure policy", lambda: condition(kube, namespace, name, "FailureTarget")
        )
        assert target["message"] == (
            f"Pod {namespace}/{victim} has condition DisruptionTarget matching FailJob rule at "
            "index 0"
        )
    wait_for("the Job Failed", lambda: condition(kube, namespace, name, "Failed"))


def test_the_api_servers_read_back_imports_without_a_lossy_note(nodes: Kube) -> None:
    kube, namespace, name = nodes, "coll-import", "coll"
    data = spec(name, namespace, 2, collective={"port": 8090})
    with kwok_paused(kube):
        rendered = apply(kube, data)
        back = kube.run("get", "-n", namespace, "job,service", name, "-o", "yaml").stdout
    imported = import_manifests([("read-back.yaml", back)])
    assert [str(n) for n in imported.lossy] == []
    assert not [d for d in imported.diagnostics if d.is_error]
    again = build.render_document(parse_spec(imported.text, "imported.yaml")).manifests
    kinds = {m.kind: m.obj for m in again}
    ours = {m.kind: m.obj for m in rendered.manifests}
    assert kinds["Service"]["spec"] == ours["Service"]["spec"]
    for key in ("completionMode", "parallelism", "completions", "podFailurePolicy"):
        assert kinds["Job"]["spec"][key] == ours["Job"]["spec"][key]
    # the contract, the wrapper and the subdomain as rendered (the server's defaults, such as
    # imagePullPolicy, come back explicit: the same pods)
    theirs, mine = (k["Job"]["spec"]["template"]["spec"] for k in (kinds, ours))
    assert theirs["subdomain"] == mine["subdomain"] == name
    for key in ("command", "args", "env", "ports"):
        assert theirs["containers"][0][key] == mine["containers"][0][key], key
