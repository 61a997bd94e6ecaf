"""spec.networks, spec.nccl and spec.security.capabilities: what they render and the rules
networks, nccl and pod-security (the API server's verdicts: tests/cluster)."""

from __future__ import annotations

from typing import Any

import pytest

from paddlegen.pipeline import load
from paddlegen.rules.pod_security import level_needed
from paddlegen.spec.loader import parse_spec
from paddlegen.workloads import WORKLOADS
from tests.builders import DEMO, Source, only, rendered_objects, spec, workers
from tests.helpers import pod_templates

BASE = "spec:\n  workload: {workload}\n  image: img:1\n  args: [t.py]\n"
JOB = BASE.format(workload="job")
RDMA: dict[str, Any] = {
    "networks": ["rdma-a", "infra/rdma-b@ib1"],
    "nccl": {
        "transport": "roce",
        "hca": ["mlx5_0", "mlx5_1:1"],
        "gidIndex": 3,
        "socketIfname": ["net1", "ib1"],
    },
    "security": {"capabilities": {"add": ["IPC_LOCK"]}, "podSecurity": "privileged"},
    "resources": {"limits": {"memory": "1Gi", "rdma/hca_shared_devices_a": 1}},
}
NCCL_ENV = [
    {"name": "NCCL_IB_DISABLE", "value": "0"},
    {"name": "NCCL_IB_GID_INDEX", "value": "3"},
    {"name": "NCCL_IB_HCA", "value": "=mlx5_0,mlx5_1:1"},
    {"name": "NCCL_NET", "value": "IB"},
    {"name": "NCCL_SOCKET_IFNAME", "value": "=net1,ib1"},
]


def templates_of(source: Source) -> list[dict]:
    """Every pod template a spec renders, in order (the data Job's first)."""
    return pod_templates(list(rendered_objects(source).values()))


@pytest.mark.parametrize("workload", WORKLOADS)
def test_every_training_pod_of_every_role_attaches_the_networks_and_adds_the_capabilities(
    workload,
):
    roles = {"ps": {"replicas": 1}} if "ps" in WORKLOADS[workload].roles else {}
    templates = templates_of(spec(workload, args=["t.py"], **RDMA, **roles, **workers(workload)))
    assert len(templates) >= 1 + len(roles)
    for template in templates:
        annotations = template["metadata"]["annotations"]
        assert annotations["k8s.v1.cni.cncf.io/networks"] == "rdma-a,infra/rdma-b@ib1"
        training, *others = template["spec"]["containers"]
        assert training["securityContext"]["capabilities"] == {
            "drop": ["ALL"],
            "add": ["IPC_LOCK"],
        }
        assert training["securityContext"]["allowPrivilegeEscalation"] is False
        if workload != "trainjob":  # a TrainJob's env is its trainer's, below
            env = training["env"]
            assert [e for e in env if e["name"].startswith("NCCL_")] == NCCL_ENV


def test_a_trainjob_gives_the_nccl_env_to_its_trainer():
    objects = rendered_objects(spec("trainjob", args=["t.py"], **RDMA), argocd=False)
    env = objects["TrainJob", "demo"]["spec"]["trainer"]["env"]
    assert [e for e in env if e["name"].startswith("NCCL_")] == NCCL_ENV


def test_init_containers_sidecars_and_the_data_job_get_neither():
    given = spec(
        "job",
        args=["t.py"],
        **RDMA,
        volumes=[{"name": "d", "mountPath": "/d", "emptyDir": {}}],
        dataPrep={"volume": "d", "image": "prep:1"},
        sidecars=[{"name": "shipper", "image": "s:1"}],
        initContainers=[{"name": "fetch", "image": "f:1"}],
    )
    data, training = templates_of(given)  # the data Job comes first
    for init in training["spec"]["initContainers"]:
        assert init["securityContext"]["capabilities"] == {"drop": ["ALL"]}
        assert "env" not in init
    assert "k8s.v1.cni.cncf.io/networks" not in data["metadata"].get("annotations", {})
    (container,) = data["spec"]["containers"]
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert not [e for e in container["env"] if e["name"].startswith("NCCL_")]


def test_env_wins_over_nccl_name_by_name_and_the_rule_says_so():
    body = (
        JOB
        + "  nccl: {transport: tcp, socketIfname: [eth0]}\n"
        + "  env: [{name: NCCL_NET, value: Socket}]\n"
        + "  worker: {env: [{name: NCCL_SOCKET_IFNAME, value: lo}]}\n"
    )
    (template,) = templates_of(DEMO + body)
    env = {e["name"]: e["value"] for e in template["spec"]["containers"][0]["env"]}
    # the role's env replaces the spec's; either wins over spec.nccl
    assert env == {"NCCL_IB_DISABLE": "1", "NCCL_NET": "Socket", "NCCL_SOCKET_IFNAME": "lo"}
    assert only(body, "env-override") == [
        "spec.yaml:9:16: warning: $.spec.env[0].name: env 'NCCL_NET' replaces the 'Socket' "
        "spec.nccl writes: env wins (keep one of them) [env-override]",
        "spec.yaml:10:25: warning: $.spec.worker.env[0].name: env 'NCCL_SOCKET_IFNAME' "
        "replaces the '=eth0' spec.nccl writes: env wins (keep one of them) [env-override]",
    ]


def test_transport_tcp_takes_no_hca_nor_gid_index():
    body = JOB + "  nccl: {transport: tcp, hca: [mlx5_0], gidIndex: 1}\n"
    assert only(body, "nccl") == [
        "spec.yaml:8:31: error: $.spec.nccl.hca: transport tcp turns InfiniBand off "
        "(NCCL_IB_DISABLE=1): hca does nothing (drop hca, or use transport ib or roce) [nccl]",
        "spec.yaml:8:51: error: $.spec.nccl.gidIndex: transport tcp turns InfiniBand off "
        "(NCCL_IB_DISABLE=1): gidIndex does nothing (drop gidIndex, or use transport ib or "
        "roce) [nccl]",
    ]


@pytest.mark.parametrize(
    ("networks", "interfaces", "unknown"),
    [
        ("[a, b]", "[net1, net2, eth0, lo]", []),
        ("[a@ib0, b]", "[ib0, net2]", []),
        ("[a@ib0]", "[net1]", ["net1"]),
        (None, "[net1]", ["net1"]),
    ],
)
def test_socket_interfaces_are_the_pods_own(networks, interfaces, unknown):
    given = f"  networks: {networks}\n" if networks else ""
    body = JOB + given + f"  nccl: {{socketIfname: {interfaces}}}\n"
    found = only(body, "nccl")
    assert [f.split("interface ", 1)[1].split(",")[0] for f in found] == unknown


def test_interfaces_are_unique_and_not_the_cluster_networks():
    body = JOB + "  networks: [a, b@net1, c@eth0]\n"
    assert only(body, "networks") == [
        "spec.yaml:8:17: error: $.spec.networks[1]: interface net1 is $.spec.networks[0]'s too: "
        "the pod would not start (give each attachment an interface of its own after '@') "
        "[networks]",
        "spec.yaml:8:25: error: $.spec.networks[2]: interface eth0 is the cluster network's in "
        "every pod (name another interface after '@', or none: Multus names it "
        "net<position>) [networks]",
    ]


@pytest.mark.parametrize(
    "where",
    [
        "  podAnnotations: {k8s.v1.cni.cncf.io/networks: x}\n",
        "  worker: {podAnnotations: {k8s.v1.cni.cncf.io/networks: x}}\n",
    ],
)
def test_the_multus_annotation_comes_from_one_place(where):
    body = JOB + "  networks: [rdma]\n" + where
    (found,) = only(body, "networks")
    assert "annotation k8s.v1.cni.cncf.io/networks is what spec.networks writes" in found
    # every object's annotations go on the pods too
    text = DEMO.replace(
        "{name: demo}", "{name: demo, annotations: {k8s.v1.cni.cncf.io/networks: x}}"
    )
    doc = parse_spec(text + JOB + "  networks: [rdma]\n", "spec.yaml")
    assert [d.path for d in load.validate_document(doc) if d.rule == "networks"] == [
        "$.metadata.annotations.k8s.v1.cni.cncf.io/networks"
    ]


@pytest.mark.parametrize(
    ("security", "workload", "needed"),
    [
        ({}, "job", "baseline"),
        ({"runAsNonRoot": True}, "job", "restricted"),
        (
            {"runAsNonRoot": True, "capabilities": {"add": ["NET_BIND_SERVICE"]}},
            "job",
            "restricted",
        ),
        ({"runAsNonRoot": True, "capabilities": {"add": ["SETUID"]}}, "job", "baseline"),
        ({"runAsNonRoot": True, "capabilities": {"add": ["IPC_LOCK"]}}, "job", "privileged"),
        ({"runAsNonRoot": True, "restricted": False}, "job", "baseline"),
        ({"runAsNonRoot": True, "runAsUser": 0}, "job", "baseline"),
        ({"runAsNonRoot": True}, "distributed-job", "privileged"),  # hostPorts by default
    ],
)
def test_the_level_needed(security, workload, needed):
    assert level_needed({"security": security}, workload) == needed


def test_capabilities_beyond_restricted_name_the_level_without_a_declared_one():
    body = JOB + "  security: {capabilities: {add: [CHOWN, IPC_LOCK]}}\n"
    (found,) = only(body, "pod-security")
    assert found == (
        "spec.yaml:8:34: warning: $.spec.security.capabilities.add: the training pods need Pod "
        "Security level privileged: capability IPC_LOCK, beyond baseline's list. The "
        "containers keep the rest of the restricted "
        "profile (drop: [ALL] but what is added, no privilege escalation, RuntimeDefault "
        "seccomp) (run the job in a namespace labelled pod-security.kubernetes.io/enforce="
        "privileged, where the API server admits the pods, and declare it as "
        "spec.security.podSecurity) [pod-security]"
    )
    # NET_BIND_SERVICE is restricted's own: nothing to say
    bind = JOB + "  security: {capabilities: {add: [NET_BIND_SERVICE]}}\n"
    assert not only(bind, "pod-security")


def test_a_declared_level_is_held_to_what_the_pods_need():
    body = JOB + "  security: {podSecurity: restricted, capabilities: {add: [CHOWN]}}\n"
    found = only(body, "pod-security")
    assert [f.split(": error: ", 1)[1].split(":", 1)[0] for f in found] == [
        "$.spec.security",  # runAsNonRoot unset
        "$.spec.security.capabilities.add[0]",
    ]
    assert "refuses the training pods: capability CHOWN" in found[1]
    assert "the API server takes the Job and then refuses every pod of it" in found[1]
    enough = body.replace("restricted,", "baseline,")
    assert not only(enough, "pod-security")
