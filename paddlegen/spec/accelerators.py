"""The extended resources device plugins publish: the accelerators a spec's `gpus` may count
(spec.accelerator), the other devices paddlegen knows, and what tells them apart."""

from __future__ import annotations

from paddlegen.spec.model import GPU_RESOURCE

# The extended resources `gpus` may count (spec.accelerator), each as its device plugin
# registers it with the kubelet, and the device: NVIDIA's k8s-device-plugin; Ascend's
# (Ascend/ascend-device-plugin v5.0.0-RC3.2: pkg/server/server.go:140 registers "huawei.com/"
# + the device type, pkg/common/constants.go:148,179; an Ascend 910B is an Ascend910 too,
# pkg/server/manager.go:89-91); Kunlunxin's XPU plugin, whose name depends on its version:
# baidu.com/xpu (its public copy, leoatgithub/xpu-device-plugin@2961895 main.go:33-37) and
# kunlunxin.com/xpu for the P800 (what HAMi v2.10.0 reads from the node's capacity,
# pkg/device/kunlun/config.go:35, device.go:63-66). Each plugin gives a container only the
# devices it allocated, so Paddle's launcher counts those (docs/pods.md).
ACCELERATORS = {
    GPU_RESOURCE: "NVIDIA GPU",
    "huawei.com/Ascend910": "Ascend NPU",
    "kunlunxin.com/xpu": "Kunlunxin XPU",
    "baidu.com/xpu": "Kunlunxin XPU",
}

# Devices of other kinds that common device plugins publish, which `gpus` does not count:
# NVIDIA's time-sliced GPUs (k8s-device-plugin v0.20.0 api/config/v1/consts.go:25-26,
# "nvidia.com/" + "gpu" + ".shared"); AMD's (ROCm/k8s-device-plugin v1.31.0.10
# internal/pkg/plugin/plugin.go:407, cmd/k8s-device-plugin/main.go:63-69); Intel's GPUs
# (intel-device-plugins-for-kubernetes v0.36.0 cmd/gpu_plugin/gpu_plugin.go:53-56); Gaudi
# (HabanaAI/habanalabs-k8s-device-plugin v1.16.0 main.go:89, "habana.ai/" + the device type);
# Ascend's smaller NPUs (constants.go:150,210,212); AWS Trainium and Inferentia (the Neuron
# device plugin's three names) and Google's TPUs.
OTHER_ACCELERATORS = (
    "nvidia.com/gpu.shared",
    "amd.com/gpu",
    "gpu.intel.com/i915",
    "gpu.intel.com/xe",
    "habana.ai/gaudi",
    "huawei.com/Ascend310",
    "huawei.com/Ascend310P",
    "huawei.com/Ascend310B",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neuroncore",
    "aws.amazon.com/neurondevice",
    "google.com/tpu",
)
# Families of accelerators whose plugin adds to a prefix what it reads from the device:
# NVIDIA's MIG profiles ("mig-" + the profile, k8s-device-plugin internal/rm/rm.go:145), AMD's
# partitions (the compute and memory partition modes, lower case, ROCm amdgpu.go:173-180,
# 274-278: amd.com/cpx_nps4), Ascend's other types and virtual NPUs (huawei.com/Ascend910-4c),
# and the Kunlunxin plugin's model names (`--use-detail-resName`: baidu.com/<model>).
ACCELERATOR_PREFIXES = (
    "nvidia.com/mig-",
    *(f"amd.com/{mode}px_" for mode in "sdtqc"),
    "huawei.com/Ascend",
    "baidu.com/",
)

# What carries no rank: RDMA NICs and the shares of a GPU counted elsewhere. The RDMA shared
# device plugin publishes "rdma/" + the name its configuration gives
# (Mellanox/k8s-rdma-shared-dev-plugin v1.5.3 pkg/resources/resources_manager.go:43, its
# sample deployment/k8s/base/configmap.yaml:11: rdma/hca_shared_devices_a); NVIDIA's Network
# Operator names its SR-IOV and host devices nvidia.com/hostdev; AWS's EFA plugin
# vpc.amazonaws.com/efa; HAMi shares a GPU's memory and cores (HAMi v2.10.0
# charts/hami/values.yaml:25-29).
NETWORK_AND_SHARES = (
    "nvidia.com/hostdev",
    "vpc.amazonaws.com/efa",
    "nvidia.com/gpumem",
    "nvidia.com/gpumem-percentage",
    "nvidia.com/gpucores",
    "rdma/hca_shared_devices_a",
    "rdma/rdma_shared_device_a",
)
_NETWORK_PREFIXES = ("rdma/",)
# Those that give a pod an RDMA device (an HCA's verbs device), which NCCL's InfiniBand
# transport needs: the RDMA shared device plugin's pools and the Network Operator's host
# devices (EFA is reached through its own NCCL plugin, not NCCL's InfiniBand transport).
_RDMA_DEVICES = ("nvidia.com/hostdev",)

# Every name paddlegen knows, for the nearest one to an unknown name.
KNOWN_RESOURCES = (*ACCELERATORS, *OTHER_ACCELERATORS, *NETWORK_AND_SHARES)


def is_extended(name: str) -> bool:
    """An extended resource (nvidia.com/gpu): a domain of its own, neither Kubernetes' own
    (no domain, or a kubernetes.io one) nor a quota's 'requests.' name."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def is_network_or_share(name: str) -> bool:
    """A known resource that carries no rank: a NIC, or a share of a GPU."""
    return name in NETWORK_AND_SHARES or name.startswith(_NETWORK_PREFIXES)


def is_rdma_device(name: str) -> bool:
    """A resource that gives a pod an RDMA device."""
    return name in _RDMA_DEVICES or name.startswith(_NETWORK_PREFIXES)


def is_known(name: str) -> bool:
    """An extended resource a device plugin paddlegen knows publishes."""
    return (
        name in ACCELERATORS
        or name in OTHER_ACCELERATORS
        or name.startswith(ACCELERATOR_PREFIXES)
        or is_network_or_share(name)
    )
