"""The rules on init containers and sidecars: where each finding points, and what passes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import diagnostics, spec, volumes

DATA = {"name": "data", "mountPath": "/data", "emptyDir": {}}


def findings(workload: str, **fields: Any) -> list[tuple[str, str, str]]:
    data = spec(workload, volumes=volumes(workload, DATA), **fields)
    return sorted((d.path, d.rule, d.message) for d in diagnostics(data) if d.is_error)


def test_a_roles_own_entry_that_clashes_with_the_spec_wide_list_is_where_the_finding_is():
    found = findings(
        "kubeflow-paddlejob",
        initContainers=[{"name": "fetch", "image": "b:1"}],
        ps={"replicas": 1},
        worker={"replicas": 2, "sidecars": [{"name": "fetch", "image": "s:1"}]},
    )
    assert found == [
        (
            "$.spec.worker.sidecars[0].name",
            "container-name",
            "name 'fetch' is already taken by $.spec.initContainers[0]: the containers of a pod "
            "have names of their own",
        )
    ]


def test_the_same_name_in_lists_that_never_share_a_pod_is_fine():
    # the workers run their own sidecar, the Master the spec's: no pod has both
    found = findings(
        "kubeflow-paddlejob",
        sidecars=[{"name": "agent", "image": "a:1"}],
        ps={"replicas": 1},
        worker={"replicas": 2, "sidecars": [{"name": "agent", "image": "a:2"}]},
    )
    assert found == []


@pytest.mark.parametrize(
    ("workload", "refused"), [("paddlejob", True), ("kubeflow-paddlejob", False), ("job", False)]
)
def test_only_paddleflow_reserves_its_coordinate_containers_name(workload, refused):
    found = findings(workload, initContainers=[{"name": "coord-paddle", "image": "b:1"}])
    assert [rule for _, rule, _ in found] == (["container-name"] if refused else [])


def test_a_sidecar_port_on_a_distributed_jobs_own_port_is_refused():
    found = findings(
        "distributed-job",
        distributed={"volume": "data", "trainConfigDir": "q", "hostPorts": False, "portsNum": 2},
        sidecars=[
            {"name": "a", "image": "a:1", "ports": [{"containerPort": 7165, "name": "jobport9"}]},
            # another protocol on the same number is another port
            {"name": "b", "image": "b:1", "ports": [{"containerPort": 7164, "protocol": "UDP"}]},
        ],
    )
    assert found == [
        (
            "$.spec.sidecars[0].ports[0].containerPort",
            "container-port",
            "port 7165/TCP is already the training container's port 'jobport1': the containers "
            "of a pod share its network",
        )
    ]


def test_probes_may_name_their_own_sidecars_port_or_give_a_number():
    probe = {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 1}
    sidecar = {"name": "s", "image": "s:1", "ports": [{"name": "http", "containerPort": 8080}]}
    ok = [{**sidecar, "startupProbe": probe, "livenessProbe": {"tcpSocket": {"port": 9999}}}]
    assert findings("job", sidecars=ok) == []
    other = [{**sidecar, "livenessProbe": {"tcpSocket": {"port": "metrics"}}}]
    assert findings("job", sidecars=other) == [
        (
            "$.spec.sidecars[0].livenessProbe.tcpSocket.port",
            "container-port",
            "port 'metrics' names no port of this sidecar, and the kubelet looks for it there: "
            "the probe would fail",
        )
    ]


def test_paddleflow_refuses_sidecars_where_they_are_set_and_keeps_init_containers():
    found = findings(
        "paddlejob",
        initContainers=[{"name": "fetch", "image": "b:1"}],
        sidecars=[{"name": "s", "image": "s:1"}],
        worker={"replicas": 2, "sidecars": [{"name": "w", "image": "w:1"}]},
        ps={"replicas": 1, "sidecars": []},  # none: nothing to refuse
    )
    assert [(path, rule) for path, rule, _ in found] == [
        ("$.spec.sidecars", "paddlejob-sidecar-pruned"),
        ("$.spec.worker.sidecars", "paddlejob-sidecar-pruned"),
    ]


def test_the_container_rules_of_the_training_container_hold_for_init_containers_and_sidecars():
    found = findings(
        "job",
        initContainers=[
            {
                "name": "i",
                "image": "b:1",
                "env": [{"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "spec.bogus"}}}],
                "resources": {"limits": {"memory": "1.5", "example.com/fpga": "500m"}},
            }
        ],
        sidecars=[
            {
                "name": "s",
                "image": "s:1",
                "env": [{"name": "K", "valueFrom": {"secretKeyRef": {"name": "s", "key": "a/b"}}}],
                "resources": {"requests": {"storage": "1Gi"}},
            }
        ],
    )
    assert [(path, rule) for path, rule, _ in found] == [
        ("$.spec.initContainers[0].env[0].valueFrom.fieldRef.fieldPath", "env-downward-api"),
        ("$.spec.initContainers[0].resources.limits.example.com/fpga", "resource-quantity"),
        ("$.spec.sidecars[0].env[0].valueFrom.secretKeyRef.key", "env-key-ref"),
        ("$.spec.sidecars[0].resources.requests.storage", "resource-name"),
    ]
