"""The accelerators a spec's `gpus` may count (spec.accelerator), by their device plugins'
resource names."""

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
