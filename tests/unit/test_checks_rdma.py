"""What the pods' networks need of a spec: IPC_LOCK that takes effect
(ipc-lock-non-root), a device and locked memory for NCCL's InfiniBand transport (rdma), no
NCCL settings where NCCL is not used (nccl-accelerator), and the host network of PaddleFlow's
intranet Host under Pod Security (pod-security), a rendezvous port the launcher does not
draw for itself (launcher-port)."""

from __future__ import annotations

import pytest

from paddlegen.rules.pod_security import level_needed
from paddlegen.spec.model import COLLECTIVE_PORT, LAUNCHER_PORTS
from paddlegen.workloads.kubeflow_paddlejob.settings import KubeflowSettings
from tests.builders import only

BASE = "spec:\n  workload: collective-job\n  image: img:1\n  args: [t.py]\n"
DEVICE = "  resources: {limits: {memory: 1Gi, rdma/hca_shared_devices_a: 1}}\n"
IPC_LOCK = "  security: {capabilities: {add: [IPC_LOCK]}}\n"


@pytest.mark.parametrize(
    ("security", "who"),
    [
        ("{runAsNonRoot: true, capabilities: {add: [IPC_LOCK]}}", "runAsNonRoot"),
        ("{runAsUser: 1000, capabilities: {add: [CHOWN, IPC_LOCK]}}", "runAsUser 1000"),
    ],
)
def test_ipc_lock_for_a_non_root_container_does_nothing(security, who):
    (found,) = only(BASE + DEVICE + f"  security: {security}\n", "ipc-lock-non-root")
    assert f": warning: $.spec.security.capabilities.add[{int('CHOWN' in security)}]: " in found
    assert f"IPC_LOCK does nothing for a non-root container ({who}): " in found
    assert "(run the training container as root to use IPC_LOCK" in found
    assert "LimitMEMLOCK=infinity in containerd's systemd unit" in found


@pytest.mark.parametrize(
    "security",
    [
        "{capabilities: {add: [IPC_LOCK]}}",  # the image's user: root in Paddle's images
        "{runAsUser: 0, capabilities: {add: [IPC_LOCK]}}",
        "{runAsNonRoot: true}",
    ],
)
def test_ipc_lock_for_root_or_no_ipc_lock_is_fine(security):
    assert only(BASE + DEVICE + f"  security: {security}\n", "ipc-lock-non-root") == []


def test_an_infiniband_transport_wants_a_device_and_ipc_lock():
    body = BASE + "  nccl: {transport: ib}\n"
    device, lock = only(body, "rdma")
    assert device == (
        "spec.yaml:8:21: warning: $.spec.nccl.transport: transport ib makes NCCL use "
        "InfiniBand verbs alone (NCCL_NET=IB), and the workers ask for no RDMA device: where a "
        "pod has none, NCCL fails at start (request the RDMA resource your device plugin "
        "publishes in resources.limits: rdma/<pool> of the RDMA shared device plugin, "
        "nvidia.com/hostdev of an SR-IOV setup; or leave transport out for NCCL to choose) [rdma]"
    )
    assert "the training container may not lock memory beyond the node's RLIMIT_MEMLOCK" in lock
    assert only(body + DEVICE, "rdma") == [lock]
    assert only(body + IPC_LOCK, "rdma") == [device]
    assert only(body + DEVICE + IPC_LOCK, "rdma") == []


@pytest.mark.parametrize(
    "resources",
    [
        "{limits: {nvidia.com/hostdev: 1}}",
        "{requests: {rdma/ib_a: 1}, limits: {rdma/ib_a: 1}}",
    ],
)
def test_any_rdma_device_of_the_workers_counts(resources):
    body = BASE + "  nccl: {transport: roce}\n" + IPC_LOCK
    assert only(body + f"  worker: {{resources: {resources}}}\n", "rdma") == []
    # a worker's own resources replace the spec's
    assert only(body + DEVICE + "  worker: {resources: {limits: {cpu: 1}}}\n", "rdma") != []


@pytest.mark.parametrize("transport", [None, "tcp"])
def test_other_transports_need_no_rdma(transport):
    nccl = f"  nccl: {{transport: {transport}}}\n" if transport else "  nccl: {hca: [mlx5_0]}\n"
    assert only(BASE + nccl, "rdma") == []


@pytest.mark.parametrize(
    ("accelerator", "library"),
    [
        ("huawei.com/Ascend910", "HCCL"),
        ("kunlunxin.com/xpu", "BKCL"),
        ("baidu.com/xpu", "BKCL"),
    ],
)
def test_nccl_settings_on_npu_or_xpu_pods_do_nothing(accelerator, library):
    body = (
        BASE
        + f"  accelerator: {accelerator}\n  gpus: 8\n"
        + "  nccl: {socketIfname: [eth0]}\n"
        + "  env: [{name: NCCL_DEBUG, value: INFO}, {name: FLAGS_x, value: '1'}]\n"
        + "  worker: {env: [{name: NCCL_IB_HCA, value: mlx5}]}\n"
    )
    device = "Ascend NPU" if library == "HCCL" else "Kunlunxin XPU"
    fix = f"(remove it; set {library}'s own variables in env for the network) [nccl-accelerator]"
    why = f"{device}s talk through {library}, not NCCL, so it does nothing"
    assert only(body, "nccl-accelerator") == [
        f"spec.yaml:10:3: warning: $.spec.nccl: spec.nccl writes NCCL's env: {why} {fix}",
        f"spec.yaml:11:16: warning: $.spec.env[0].name: env NCCL_DEBUG is NCCL's: {why} {fix}",
        f"spec.yaml:12:25: warning: $.spec.worker.env[0].name: env NCCL_IB_HCA is NCCL's: "
        f"{why} {fix}",
    ]


def test_nccl_settings_on_gpu_pods_are_nccls():
    body = BASE + "  gpus: 8\n  nccl: {socketIfname: [eth0]}\n"
    assert only(body, "nccl-accelerator") == []
    explicit = BASE + "  accelerator: nvidia.com/gpu\n  env: [{name: NCCL_DEBUG, value: INFO}]\n"
    assert only(explicit, "nccl-accelerator") == []


PADDLEJOB = (
    "spec:\n  workload: paddlejob\n  image: img:1\n  args: [t.py]\n"
    "  resources: {limits: {memory: 1Gi}}\n  worker: {replicas: 2}\n"
)


@pytest.mark.parametrize(("intranet", "needed"), [("Host", "privileged"), ("PodIP", "restricted")])
def test_intranet_host_puts_the_pods_on_the_host_network(intranet, needed):
    spec = {"security": {"runAsNonRoot": True}, "paddlejob": {"intranet": intranet}}
    assert level_needed(spec, "paddlejob") == needed


@pytest.mark.parametrize("declared", ["restricted", "baseline"])
def test_a_declared_level_below_privileged_refuses_intranet_host(declared):
    body = (
        PADDLEJOB
        + f"  security: {{runAsNonRoot: true, podSecurity: {declared}}}\n"
        + "  paddlejob: {intranet: Host}\n"
    )
    (found,) = only(body, "pod-security")
    assert found == (
        f"spec.yaml:11:25: error: $.spec.paddlejob.intranet: a namespace enforcing Pod Security "
        f"level {declared} refuses the training pods: with intranet Host the operator puts the "
        "pods on their nodes' network (hostNetwork), needs privileged; the API server takes the "
        "PaddleFlow PaddleJob and then refuses every pod of it (run the job where "
        "pod-security.kubernetes.io/enforce=privileged and declare that level, or drop what "
        "needs more) [pod-security]"
    )
    assert only(body.replace(declared, "privileged"), "pod-security") == []


@pytest.mark.parametrize(
    ("workload", "section", "port", "warned"),
    [
        ("collective-job", "collective", 35099, False),
        ("collective-job", "collective", 35100, True),
        ("collective-job", "collective", 64000, True),
        ("collective-job", "collective", 64001, False),
        ("kubeflow-paddlejob", "kubeflow", 36543, True),
        ("kubeflow-paddlejob", "kubeflow", 8090, False),
    ],
)
def test_a_rendezvous_port_among_the_launchers_own_is_a_warning(workload, section, port, warned):
    body = BASE.replace("collective-job", workload) + f"  {section}: {{port: {port}}}\n"
    said = (
        f"spec.yaml:8:{len(section) + 12}: warning: $.spec.{section}.port: port {port} lies in "
        "35100-64000, where Paddle's launcher draws the ports of its own processes "
        "(PORT_RANGE): rank 0's launcher draws them before it serves the rendezvous on this "
        "port, so one of its trainers may be given it and fail to bind it (use a port below "
        "35100, such as the default 6768) [launcher-port]"
    )
    assert only(body, "launcher-port") == ([said] if warned else [])


def test_the_defaults_lie_below_the_launchers_ports():
    assert KubeflowSettings().port == COLLECTIVE_PORT < LAUNCHER_PORTS[0]
    for workload in ("collective-job", "kubeflow-paddlejob"):
        assert only(BASE.replace("collective-job", workload), "launcher-port") == []
