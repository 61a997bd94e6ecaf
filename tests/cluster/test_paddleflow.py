"""The PaddleFlow operator (paddle-operator v0.3.5, built from its sources) runs every
`paddlejob` example on KWOK's fake nodes: the pods and Services it creates carry paddlegen's
container intact, the job reaches Running with its endpoints ConfigMap, then Completed when the
pods succeed, and cleanPodPolicy removes the pods or keeps them as the README says."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from paddlegen.spec.quantity import parse
from tests.cluster.conftest import Kube
from tests.conftest import example_specs

# The gang-scheduled one (paddlejob-volcano) too: Volcano runs beside the operator.
EXAMPLES = [p for p in example_specs() if "workload: paddlejob" in p.read_text()]
TIMEOUT = 60.0


def wait_for(what: str, probe, timeout: float = TIMEOUT) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.3)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")


def get(kube: Kube, namespace: str, *what: str) -> Any:
    """`kubectl get -n NAMESPACE WHAT -o json`: from the API server (Kube.read) for a resource,
    a name or a label selector, the rest by kubectl."""
    resource, *rest = what
    if not rest:
        return kube.read(namespace, resource)
    if len(rest) == 1 and not rest[0].startswith("-"):
        return kube.read(namespace, resource, name=rest[0])
    if len(rest) == 2 and rest[0] == "-l":
        return kube.read(namespace, resource, selector=rest[1])
    done = kube.run("get", "-n", namespace, *what, "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def paddlejob_spec(name: str, namespace: str, body: str) -> str:
    """A `paddlejob` spec of image img:1 with ``body`` (indented spec fields) after it."""
    return (
        "apiVersion: paddlegen/v1\nkind: TrainingJob\n"
        f"metadata: {{name: {name}, namespace: {namespace}}}\n"
        "spec:\n  workload: paddlejob\n  image: img:1\n" + body
    )


def test_there_are_paddlejob_examples() -> None:
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_the_operator_runs_and_finishes_the_job(operators: Kube, example: Path) -> None:
    kube = operators
    data = yaml.safe_load(example.read_text())
    namespace = f"pf-{example.stem}"[:63]
    data["metadata"]["namespace"] = namespace
    kube.run("create", "namespace", namespace)
    for key, value in data["spec"].get("nodeSelector", {}).items():  # the pool it asks for
        kube.run("label", "nodes", "--all", "--overwrite", f"{key}={value}")
    rendered = build.render_document(parse_spec(yaml.safe_dump(data).encode(), str(example)))
    kube.apply(build.manifest_stream([rendered]))
    (paddlejob,) = [m.obj for m in rendered.manifests if m.kind == "PaddleJob"]
    name = paddlejob["metadata"]["name"]
    roles = {
        role: paddlejob["spec"][role] for role in ("ps", "worker") if role in paddlejob["spec"]
    }
    total = sum(r["replicas"] for r in roles.values())

    def phase() -> str:
        job = get(kube, namespace, "paddlejobs.batch.paddlepaddle.org", name)
        return (job or {}).get("status", {}).get("phase", "")

    wait_for("phase Running", lambda: phase() == "Running")
    # The operator wrote the job back (its finalizer); the same render applied again, as a
    # GitOps sync does, meets no conflict: the operator took over no field of paddlegen's.
    kube.apply(build.manifest_stream([rendered]))
    pods = get(kube, namespace, "pods")["items"]
    assert sorted(p["metadata"]["name"] for p in pods) == sorted(
        f"{name}-{role}-{i}" for role, r in roles.items() for i in range(r["replicas"])
    )
    for pod in pods:
        role = pod["metadata"]["name"][len(name) + 1 :].rsplit("-", 1)[0]
        ours = roles[role]["template"]["spec"]["containers"][0]
        first = pod["spec"]["containers"][0]  # paddlegen's container comes first, intact
        assert first["name"] == ours["name"]
        assert first["image"] == ours["image"]
        assert_resources_kept(ours.get("resources", {}), first.get("resources", {}))
        assert [e for e in first.get("env", []) if e in ours.get("env", [])] == ours.get("env", [])
        for mount in ours.get("volumeMounts", []):
            assert mount in first.get("volumeMounts", []), mount
        assert pod["status"]["phase"] == "Running" and pod["status"].get("podIP")
    services = get(kube, namespace, "services")["items"]
    # ctrl:157-175: a headless Service per pod whatever `intranet` says (the check is commented out)
    assert sorted(s["metadata"]["name"] for s in services) == sorted(
        p["metadata"]["name"] for p in pods
    )
    endpoints = get(kube, namespace, "configmap", name)
    assert endpoints and endpoints["data"]["PADDLE_TRAINERS_NUM"] == str(
        roles["worker"]["replicas"]
    )

    for pod in pods:  # KWOK keeps them Running; the training "finishes" here
        kube.succeed(namespace, pod["metadata"]["name"])
    wait_for("phase Completed", lambda: phase() == "Completed")
    policy = paddlejob["spec"].get("cleanPodPolicy", "")
    left = lambda: len(get(kube, namespace, "pods")["items"])  # noqa: E731
    if policy in ("", "Always", "OnCompletion"):  # ctrl:194-199: one pod, then Service, a pass
        wait_for("the pods to be cleaned up", lambda: left() == 0)
        wait_for(
            "the Services to be cleaned up", lambda: not get(kube, namespace, "services")["items"]
        )
    else:
        time.sleep(2)
        assert left() == total, f"cleanPodPolicy {policy} removed pods"


def assert_resources_kept(ours: dict, pod: dict) -> None:
    """Every request and limit paddlegen set is on the pod, as a quantity (the server writes
    `0.5` as `500m` and fills requests from limits, which is fine)."""
    for kind, values in ours.items():
        for resource, value in values.items():
            assert parse(pod[kind][resource]) == parse(value), (kind, resource)


def test_host_network_pods_get_cluster_dns_and_a_node_each(operators: Kube) -> None:
    # paddle-operator sets hostNetwork for intranet Host and keeps paddlegen's dnsPolicy and
    # anti-affinity: with the node's resolver its init container could not resolve the job's
    # Services, and two pods on one node would bind the same port.
    kube = operators
    namespace = "pf-host-network"
    kube.run("create", "namespace", namespace)
    spec = """\
apiVersion: paddlegen/v1
kind: TrainingJob
metadata: {name: host-net, namespace: pf-host-network}
spec:
  workload: paddlejob
  image: img:1
  resources: {limits: {memory: 1Gi}}
  ps: {replicas: 2}
  worker: {replicas: 3}
  paddlejob: {intranet: Host}
"""
    rendered = build.render_document(parse_spec(spec.encode(), "host-net.yaml"))
    kube.apply(build.manifest_stream([rendered]))
    wait_for(
        "5 running pods",
        lambda: (
            [
                p
                for p in get(kube, namespace, "pods")["items"]
                if p["status"].get("phase") == "Running"
            ]
            if len(get(kube, namespace, "pods")["items"]) == 5
            else None
        ),
    )
    pods = get(kube, namespace, "pods")["items"]
    assert {p["spec"].get("hostNetwork") for p in pods} == {True}  # the operator's doing
    assert {p["spec"]["dnsPolicy"] for p in pods} == {"ClusterFirstWithHostNet"}
    assert len({p["spec"]["nodeName"] for p in pods}) == 5  # one node each
    for pod in pods:  # and by rule, not by the scheduler's spreading
        anti = pod["spec"]["affinity"]["podAntiAffinity"]
        (term,) = anti["requiredDuringSchedulingIgnoredDuringExecution"]
        assert term["topologyKey"] == "kubernetes.io/hostname"


def test_what_the_paddlejob_checks_rely_on_holds_for_the_real_operator(operators: Kube) -> None:
    """paddlejob-gloo, paddlejob-elastic and operator-env read the operator's sources; here the
    running operator confirms them. The objects are patched after rendering: paddlegen itself
    refuses the elastic and env cases."""
    kube = operators
    namespace = "pf-checks"
    kube.run("create", "namespace", namespace)
    base = paddlejob_spec("NAME", namespace, "  resources: {limits: {memory: 1Gi}}\n")

    def paddlejob(name: str, extra: str) -> dict[str, Any]:
        text = base.replace("NAME", name) + "  worker: {replicas: 2}\n" + extra
        rendered = build.render_document(parse_spec(text.encode(), f"{name}.yaml"))
        (obj,) = [m.obj for m in rendered.manifests if m.kind == "PaddleJob"]
        return obj

    # withGloo with intranet Service: the operator does set Gloo up (no warning is due)
    gloo = paddlejob(
        "gloo-svc", "  ps: {replicas: 1}\n  paddlejob: {withGloo: 1, intranet: Service}\n"
    )
    # elastic: 0 is elastic mode: the pods get no endpoints, and restartPolicy OnFailure
    elastic = paddlejob("elastic-zero", "")
    elastic["spec"]["elastic"] = 0
    # env the operator appends after the spec's replaces the spec's value
    env = paddlejob("env-clash", "")
    env["spec"]["worker"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "PADDLE_TRAINER_ID", "value": "mine"}
    ]
    kube.apply("".join(f"---\n{json.dumps(o)}\n" for o in (gloo, elastic, env)))

    def pods(job: str) -> list[dict[str, Any]]:
        found = get(kube, namespace, "pods", "-l", f"app.kubernetes.io/instance={job}")
        return found["items"] if found else []

    wait_for("the gloo job's ConfigMap", lambda: get(kube, namespace, "configmap", "gloo-svc"))
    assert get(kube, namespace, "configmap", "gloo-svc")["data"]["PADDLE_WITH_GLOO"] == "1"
    wait_for("the elastic job's pods", lambda: len(pods("elastic-zero")) == 2)
    for pod in pods("elastic-zero"):  # and no endpoints: the ConfigMap is not passed on
        assert pod["spec"]["restartPolicy"] == "OnFailure"
        assert "envFrom" not in pod["spec"]["containers"][0]
    wait_for("the env job's pods", lambda: len(pods("env-clash")) == 2)
    for pod in pods("env-clash"):
        values = [
            e.get("value")
            for e in pod["spec"]["containers"][0]["env"]
            if e["name"] == "PADDLE_TRAINER_ID"
        ]
        assert values[0] == "mine" and len(values) == 2  # the operator's comes last, and wins


def test_the_operator_owns_the_gang_and_nothing_outlives_the_job(operators: Kube) -> None:
    """PodGroup ownership (operators issue, item 2): paddlegen renders none for a PaddleJob;
    the operator (with --scheduling=volcano) builds it from the schedulingPolicy as the job's
    controller child, starts the pods once Volcano has admitted it (Inqueue; vc-scheduler
    then places them as one gang), and deletes it when the job ends. Applying the same render
    again, as Argo CD's self-heal does, brings none back."""
    kube = operators
    example = next(p for p in example_specs() if p.name == "paddlejob-volcano.yaml")
    data = yaml.safe_load(example.read_text())
    namespace = data["metadata"]["namespace"] = "pf-gang"
    kube.run("create", "namespace", namespace)
    rendered = build.render_document(parse_spec(yaml.safe_dump(data).encode(), str(example)))
    assert "PodGroup" not in [m.kind for m in rendered.manifests]
    stream = build.manifest_stream([rendered])
    kube.apply(stream)
    (paddlejob,) = [m.obj for m in rendered.manifests if m.kind == "PaddleJob"]
    name, policy = paddlejob["metadata"]["name"], paddlejob["spec"]["schedulingPolicy"]
    total = sum(paddlejob["spec"][role]["replicas"] for role in ("ps", "worker"))

    group = wait_for("the operator's PodGroup", lambda: get(kube, namespace, "podgroup", name))
    (owner,) = group["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("PaddleJob", name, True)
    assert group["spec"]["minMember"] == policy["minAvailable"]
    assert group["spec"]["queue"] == policy["queue"]
    assert {k: parse(v) for k, v in group["spec"]["minResources"].items()} == {
        k: parse(v) for k, v in policy["minResources"].items()
    }

    def running() -> list[dict[str, Any]]:
        pods = get(kube, namespace, "pods")["items"]
        return [p for p in pods if p["status"].get("phase") == "Running"]

    wait_for(f"{total} running pods", lambda: len(running()) == total)
    for pod in running():
        assert pod["spec"]["schedulerName"] == "volcano"
        assert pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == name
        kube.succeed(namespace, pod["metadata"]["name"])
    wait_for("the PodGroup to go with the job", lambda: not get(kube, namespace, "podgroup", name))
    job = get(kube, namespace, "paddlejobs.batch.paddlepaddle.org", name)
    assert job["status"]["phase"] == "Completed"
    kube.apply(stream)  # a self-heal after the job: nothing to recreate
    time.sleep(2)
    assert get(kube, namespace, "podgroup", name) is None
    assert (
        get(kube, namespace, "paddlejobs.batch.paddlepaddle.org", name)["status"]["phase"]
        == "Completed"
    )


def test_quantities_as_the_user_wrote_them_meet_no_conflict_with_the_operator(
    operators: Kube,
) -> None:
    """The operator writes its job back (finalizer) in the server's spelling of every quantity;
    paddlegen writes that spelling too, so a spec's `0.5` or `1024Mi` is no field the operator
    then owns, and the next apply (a GitOps sync) goes through."""
    kube = operators
    namespace = "pf-quantities"
    kube.run("create", "namespace", namespace)
    spec = paddlejob_spec(
        "quantities",
        namespace,
        "  resources: {requests: {cpu: 0.5}, limits: {memory: 1024Mi}}\n  shm: 0.5Gi\n",
    )
    rendered = build.render_document(parse_spec(spec.encode(), "quantities.yaml"))
    kube.apply(build.manifest_stream([rendered]))
    wait_for(
        "the operator's finalizer",
        lambda: (
            (get(kube, namespace, "paddlejobs.batch.paddlepaddle.org", "quantities") or {})
            .get("metadata", {})
            .get("finalizers")
        ),
    )
    kube.apply(build.manifest_stream([rendered]))  # fails on a conflict


def test_the_pods_run_the_specs_init_containers_then_the_operators(operators: Kube) -> None:
    """spec.initContainers reach every pod intact, a role's own for its pods, and the operator
    appends its coord-paddle after them (paddle-operator v0.3.5 paddlejob_controller.go:207-212),
    which is why a spec's may not take its name (rule container-name)."""
    kube = operators
    namespace = "pf-init-containers"
    kube.run("create", "namespace", namespace)
    body = """\
  resources: {limits: {memory: 1Gi}}
  volumes: [{name: scratch, mountPath: /scratch, emptyDir: {}}]
  initContainers:
    - name: fetch
      image: "busybox:1.36.1"
      command: [sh, -c, "echo ok > /cache/ok"]
      volumeMounts: [{name: scratch, mountPath: /cache}]
  ps: {replicas: 1}
  worker:
    replicas: 2
    initContainers:
      - {name: warm, image: "busybox:1.36.1", resources: {requests: {cpu: 10m, memory: 16Mi}}}
"""
    rendered = build.render_document(
        parse_spec(paddlejob_spec("inits", namespace, body).encode(), "inits.yaml")
    )
    kube.apply(build.manifest_stream([rendered]))
    (paddlejob,) = [m.obj for m in rendered.manifests if m.kind == "PaddleJob"]

    def running() -> list[dict[str, Any]]:
        pods = get(kube, namespace, "pods")["items"]
        return [p for p in pods if p["status"].get("phase") == "Running"]

    wait_for("3 running pods", lambda: len(running()) == 3)
    for pod in running():
        role = pod["metadata"]["name"][len("inits") + 1 :].rsplit("-", 1)[0]
        ours = paddlejob["spec"][role]["template"]["spec"]["initContainers"]
        theirs = pod["spec"]["initContainers"]
        assert [c["name"] for c in theirs] == [c["name"] for c in ours] + ["coord-paddle"]
        for mine, carried in zip(ours, theirs, strict=False):
            for key in ("image", "command", "volumeMounts", "securityContext"):
                assert carried.get(key) == mine.get(key), (pod["metadata"]["name"], key)
            assert_resources_kept(mine.get("resources", {}), carried.get("resources", {}))
        kube.succeed(namespace, pod["metadata"]["name"])
    wait_for(
        "phase Completed",
        lambda: (
            get(kube, namespace, "paddlejobs.batch.paddlepaddle.org", "inits")["status"]["phase"]
            == "Completed"
        ),
    )


def test_a_sidecar_does_not_survive_the_paddleflow_crd(operators: Kube) -> None:
    """What rule paddlejob-sidecar-pruned relies on: the PaddleJob CRD (v0.3.5) has no
    restartPolicy for init containers. A server-side apply is refused, with or without field
    validation (the typed patch needs every field in the schema), and so is a create under
    strict validation (kubectl's default); a create without it drops the field, and what was
    meant as a sidecar is an init container that never exits. The object is patched after
    rendering: paddlegen itself refuses the spec."""
    kube = operators
    namespace = "pf-sidecar"
    kube.run("create", "namespace", namespace)
    body = (
        "  resources: {limits: {memory: 1Gi}}\n"
        "  initContainers: [{name: agent, image: 'busybox:1.36.1', command: [sleep, infinity]}]\n"
    )
    rendered = build.render_document(
        parse_spec(paddlejob_spec("sidecar", namespace, body).encode(), "sidecar.yaml")
    )
    (paddlejob,) = [m.obj for m in rendered.manifests if m.kind == "PaddleJob"]
    paddlejob["spec"]["worker"]["template"]["spec"]["initContainers"][0]["restartPolicy"] = "Always"
    stream = f"---\n{json.dumps(paddlejob)}\n"
    apply = ["apply", "--server-side", "--field-manager=paddlegen", "-f", "-"]
    for how in ([*apply], [*apply, "--validate=false"], ["create", "-f", "-"]):
        refused = kube.run(*how, stdin=stream, check=False)
        assert refused.returncode != 0, how
        assert "initContainers[0].restartPolicy" in refused.stderr, refused.stderr
    kube.run("create", "--validate=false", "-f", "-", stdin=stream)
    stored = get(kube, namespace, "paddlejobs.batch.paddlepaddle.org", "sidecar")
    (agent,) = stored["spec"]["worker"]["template"]["spec"]["initContainers"]
    assert agent["name"] == "agent" and "restartPolicy" not in agent
    kube.run(
        "delete", "-n", namespace, "paddlejobs.batch.paddlepaddle.org", "sidecar", "--wait=false"
    )
