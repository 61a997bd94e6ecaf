"""Rule pod-security against the API server's own Pod Security admission: the training pods
paddlegen renders (and those an operator makes of a PaddleFlow PaddleJob) are admitted in a
namespace enforcing each level exactly where the rule says, and a Job whose pods break the
level is itself taken (with a warning)."""

from __future__ import annotations

import copy
import json
import re
import time
from typing import Any

import pytest
import yaml

from paddlegen.pipeline import build, load
from paddlegen.rules.pod_security import ENFORCE_LABEL, LEVELS
from paddlegen.spec.loader import parse_spec
from tests.cluster.conftest import Kube
from tests.conftest import EXAMPLES

NONROOT = {"runAsNonRoot": True, "runAsUser": 1000}
LIMITS = {"limits": {"memory": "1Gi"}}
# name -> (the spec's spec section, the level the rule says its pods need)
CASES: dict[str, tuple[dict[str, Any], str]] = {
    "default": ({}, "baseline"),  # Paddle images run as root: no runAsNonRoot by default
    "nonroot": ({"security": NONROOT}, "restricted"),
    "bind": (
        {"security": {**NONROOT, "capabilities": {"add": ["NET_BIND_SERVICE"]}}},
        "restricted",
    ),
    "chown": ({"security": {**NONROOT, "capabilities": {"add": ["CHOWN"]}}}, "baseline"),
    "net-raw": ({"security": {**NONROOT, "capabilities": {"add": ["NET_RAW"]}}}, "privileged"),
    "ipc-lock": (
        {
            "security": {**NONROOT, "capabilities": {"add": ["IPC_LOCK"]}},
            # init containers and sidecars keep the profile without the capability
            "sidecars": [{"name": "shipper", "image": "s:1"}],
            "initContainers": [{"name": "fetch", "image": "f:1"}],
        },
        "privileged",
    ),
    "unrestricted": ({"security": {**NONROOT, "restricted": False}}, "baseline"),
    "root": ({"security": {"runAsNonRoot": True, "runAsUser": 0}}, "baseline"),
    "host-path": (
        {
            "security": NONROOT,
            "volumes": [{"name": "d", "mountPath": "/d", "hostPath": {"path": "/data"}}],
        },
        "privileged",
    ),
    "host-ports": (
        {
            "workload": "distributed-job",
            "security": NONROOT,
            "volumes": [{"name": "data", "mountPath": "/data", "emptyDir": {}}],
            "distributed": {"volume": "data", "trainConfigDir": "q"},
        },
        "privileged",
    ),
    "host-network": (
        {"workload": "paddlejob", "security": NONROOT, "paddlejob": {"intranet": "Host"}},
        "privileged",
    ),
}
NAMESPACES = {level: f"psa-{level}" for level in LEVELS}


def spec_text(name: str, body: dict[str, Any], namespace: str, declared: str | None) -> str:
    spec = {"workload": "job", "image": "img:1", "resources": LIMITS, **copy.deepcopy(body)}
    if declared:
        spec.setdefault("security", {})["podSecurity"] = declared
    data = {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
    return yaml.safe_dump(data, sort_keys=False)


def example_text(namespace: str, declared: str | None) -> str:
    """examples/collective-rdma.yaml in ``namespace``, declaring ``declared``."""
    data = yaml.safe_load((EXAMPLES / "collective-rdma.yaml").read_text(encoding="utf-8"))
    data["metadata"]["namespace"] = namespace
    data["spec"]["security"].pop("podSecurity")
    if declared:
        data["spec"]["security"]["podSecurity"] = declared
    return yaml.safe_dump(data, sort_keys=False)


def specs(namespace: str, declared: str | None = None) -> dict[str, str]:
    """Every case's spec text, and the RDMA example's, in ``namespace``."""
    out = {name: spec_text(name, body, namespace, declared) for name, (body, _) in CASES.items()}
    out["rdma"] = example_text(namespace, declared)
    return out


def training_objects(text: str) -> list[dict[str, Any]]:
    """The rendered batch Jobs that run the training pods (a PaddleFlow PaddleJob's workers as
    one, as its operator makes their pods), and any ServiceAccount they run as."""
    manifests = build.render_document(parse_spec(text, "spec.yaml"), argocd=False).manifests
    objects = [m.obj for m in manifests if m.obj["kind"] in ("Job", "ServiceAccount")]
    return objects + [operator_job(m.obj) for m in manifests if m.obj["kind"] == "PaddleJob"]


def operator_job(paddlejob: dict[str, Any]) -> dict[str, Any]:
    """A PaddleFlow PaddleJob's worker pods as paddle-operator v0.3.5 makes them, as far as
    Pod Security looks: with intranet Host on their nodes' network
    (controllers/paddlejob_helper.go:358-362)."""
    template = copy.deepcopy(paddlejob["spec"]["worker"]["template"])
    if paddlejob["spec"].get("intranet") == "Host":
        template["spec"]["hostNetwork"] = True
    return {"kind": "Job", "metadata": paddlejob["metadata"], "spec": {"template": template}}


def as_pod(job: dict[str, Any]) -> dict[str, Any]:
    template = job["spec"]["template"]
    meta = {"name": job["metadata"]["name"], "namespace": job["metadata"]["namespace"]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {**template.get("metadata", {}), **meta},
        "spec": template["spec"],
    }


@pytest.fixture(scope="module")
def namespaces(kube: Kube) -> dict[str, str]:
    for level, namespace in NAMESPACES.items():
        if kube.run("get", "namespace", namespace, check=False).returncode != 0:
            kube.run("create", "namespace", namespace)
        kube.run("label", "--overwrite", "namespace", namespace, f"{ENFORCE_LABEL}={level}")
        # the ServiceAccount admission of a pod wants the namespace's default account, which
        # the controller manager creates
        deadline = time.monotonic() + 60
        while kube.read(namespace, "serviceaccounts", "default") is None:
            assert time.monotonic() < deadline, f"no default ServiceAccount in {namespace}"
            time.sleep(0.5)
    return NAMESPACES


def dry_run_pods(kube: Kube, namespace: str) -> dict[str, bool]:
    """Each training pod's name -> whether the API server admits it (server-side dry run)."""
    pods, accounts = [], set()
    for text in specs(namespace).values():
        for obj in training_objects(text):
            if obj["kind"] == "ServiceAccount":
                accounts.add(obj["metadata"]["name"])
            elif not obj["metadata"]["name"].endswith("-data"):
                pods.append(as_pod(obj))
    for account in sorted(accounts):
        if kube.read(namespace, "serviceaccounts", account) is None:
            kube.run("create", "serviceaccount", "-n", namespace, account)
    stream = json.dumps({"apiVersion": "v1", "kind": "List", "items": pods})
    done = kube.run("create", "--dry-run=server", "-f", "-", stdin=stream, check=False)
    admitted = set(re.findall(r"^pod/(\S+) created", done.stdout, re.MULTILINE))
    refused = set(re.findall(r'pods "([^"]+)" is forbidden: violates PodSecurity', done.stderr))
    names = {pod["metadata"]["name"] for pod in pods}
    assert admitted | refused == names and not admitted & refused, done.stderr
    return {name: name in admitted for name in names}


def rule_refuses(namespace: str, declared: str) -> dict[str, bool]:
    """Each spec's name -> whether rule pod-security reports an error for ``declared``."""
    out = {}
    for name, text in specs(namespace, declared).items():
        found = load.validate_document(parse_spec(text, "spec.yaml"))
        assert not [d for d in found if d.is_error and d.rule != "pod-security"], found
        out[name] = any(d.is_error and d.rule == "pod-security" for d in found)
    return out


def spec_of(pod_name: str) -> str:
    """The spec a rendered pod came from: the example's Job is llm-finetune-ib."""
    return "rdma" if pod_name == "llm-finetune-ib" else pod_name


@pytest.mark.parametrize("level", LEVELS)
def test_the_api_server_admits_the_pods_exactly_where_the_rule_says(kube, namespaces, level):
    namespace = namespaces[level]
    admitted = dry_run_pods(kube, namespace)
    refused_by_rule = rule_refuses(namespace, level)
    assert {spec_of(pod): not ok for pod, ok in admitted.items()} == refused_by_rule
    # and the API server admits what each case was written for: neither side is trivial
    needed = {name: CASES[name][1] for name in CASES} | {"rdma": "privileged"}
    assert {spec_of(pod): ok for pod, ok in admitted.items()} == {
        name: LEVELS.index(level) >= LEVELS.index(need) for name, need in needed.items()
    }


def test_a_job_whose_pods_break_the_level_is_taken_with_a_warning(kube, namespaces):
    namespace = namespaces["baseline"]
    (job,) = [o for o in training_objects(example_text(namespace, None)) if o["kind"] == "Job"]
    done = kube.run("create", "--dry-run=server", "-f", "-", stdin=json.dumps(job), check=False)
    assert done.returncode == 0, done.stderr
    assert 'would violate PodSecurity "baseline:latest"' in done.stderr
    assert '"IPC_LOCK"' in done.stderr
