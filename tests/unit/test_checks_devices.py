"""Rule launcher-devices: what a pod pins against the devices it has (one rank per device)."""

from __future__ import annotations

import pytest

from paddlegen.pipeline import load
from paddlegen.spec.accelerators import ACCELERATORS
from paddlegen.spec.loader import parse_spec
from paddlegen.spec.model import build_job
from paddlegen.spec.schema import spec_schema
from paddlegen.workloads import workload_of
from tests.builders import DEMO, only
from tests.conftest import ROOT

SPEC = "spec:\n  workload: {workload}\n  image: img:1\n  shm: 8Gi\n"


def devices(body: str, workload: str = "collective-job") -> list[str]:
    """The rule's findings for ``body`` (2 workers unless it says), which starts at line 8."""
    spec = SPEC.format(workload=workload) + body
    if "worker:" not in body:
        spec += "  worker: {replicas: 2}\n"
    return only(spec, "launcher-devices")


def test_a_spec_that_pins_nothing_has_no_finding():
    assert devices("  gpus: 8\n  args: [train.py]\n") == []


def test_a_device_list_as_long_as_the_pods_gpus_is_fine():
    assert devices("  gpus: 4\n  args: [--devices, '0,1,2,3', train.py]\n") == []
    assert devices("  gpus: 2\n  env: [{name: CUDA_VISIBLE_DEVICES, value: '0,1'}]\n") == []


def test_fewer_devices_than_the_pod_has_leave_the_rest_idle():
    assert devices("  gpus: 8\n  env: [{name: CUDA_VISIBLE_DEVICES, value: '0,1,2,3'}]\n") == [
        "spec.yaml:9:45: warning: $.spec.env[0].value: CUDA_VISIBLE_DEVICES=0,1,2,3 leaves 4 "
        "device(s) of each pod idle: each pod has 8 NVIDIA GPUs, but the launcher starts 4 "
        "rank(s) in it (2 pods x 4 = 8 ranks, not 16) (remove it, and the launcher starts one "
        "rank per device; or set gpus: 4) [launcher-devices]"
    ]


def test_more_devices_than_the_pod_has_fail():
    assert devices("  gpus: 2\n  args: ['--gpus=0,1,2,3', train.py]\n") == [
        "spec.yaml:9:10: error: $.spec.args[0]: --gpus=0,1,2,3 pins 4 devices, but each pod "
        "has 2 NVIDIA GPUs and its container sees only those: the launcher or the ranks fail "
        "(remove it, and the launcher starts one rank per device; or set gpus: 4) "
        "[launcher-devices]"
    ]


def test_a_pod_without_gpus_has_no_device_to_pin():
    (found,) = devices("  args: [--devices, '0', train.py]\n")
    assert ": error: $.spec.args[0]: --devices=0 pins 1 device(s), but each pod has no " in found
    assert "(set gpus: 1, or remove the pin)" in found


def test_the_launchers_device_ids_number_the_pods_own_devices_from_0():
    """With 4 GPUs the launcher sees labels 0-3 (paddle 3.3.1 context/device.py:171-172) and
    looks each --devices entry up among them (:82-90)."""
    (found,) = devices("  gpus: 4\n  args: [--devices, '4,5,6,7', train.py]\n")
    assert "--devices=4,5,6,7 names device 4, but each pod has 4 NVIDIA GPUs, numbered 0" in found
    # CUDA_VISIBLE_DEVICES is the device plugin's business: only its length is checked
    assert devices("  gpus: 4\n  env: [{name: CUDA_VISIBLE_DEVICES, value: '4,5,6,7'}]\n") == []


def test_a_number_of_processes_is_checked_against_the_devices():
    (more,) = devices("  gpus: 4\n  env: [{name: PADDLE_NPROC_PER_NODE, value: '8'}]\n")
    assert "error: $.spec.env[0].value: PADDLE_NPROC_PER_NODE=8 starts 8 ranks per pod" in more
    (fewer,) = devices("  gpus: 4\n  args: [--nproc_per_node, '1', train.py]\n")
    assert "warning: $.spec.args[0]: --nproc_per_node=1 leaves 3 device(s)" in fewer
    # several processes on a CPU pod: gloo, no devices to compare
    assert devices("  args: [--nproc_per_node, '4', train.py]\n") == []


@pytest.mark.parametrize(
    "command",
    [
        "[sh, -c, 'CUDA_VISIBLE_DEVICES=0 python3 -m paddle.distributed.launch t.py']",
        "[bash, -c, 'export CUDA_VISIBLE_DEVICES=0; exec fleetrun t.py']",
        "[python3, -m, paddle.distributed.launch, --xpus, '0']",
        "[sh, -c, 'python3 -m paddle.distributed.launch --log_dir /l --npus 0 t.py']",
    ],
)
def test_a_pin_in_the_command_or_a_shell_script_counts(command):
    (found,) = devices(f"  gpus: 2\n  command: {command}\n  args: [t.py]\n")
    assert ": warning: $.spec.command[" in found


def test_flags_after_the_script_are_the_scripts():
    assert devices("  gpus: 8\n  args: [train.py, --devices, '0']\n") == []
    assert devices("  gpus: 8\n  command: [python3, train.py, --gpus, '0']\n") == []


def test_values_paddlegen_cannot_read_are_left_alone():
    assert devices("  gpus: 8\n  env: [{name: CUDA_VISIBLE_DEVICES, value: all}]\n") == []
    assert devices("  gpus: 8\n  command: [sh, -c, 'python3 -m paddle.distributed.launch "
                   "--devices $DEVS t.py']\n") == []  # fmt: skip


def test_each_role_is_checked_with_its_own_devices():
    body = (
        "  env: [{name: CUDA_VISIBLE_DEVICES, value: '0,1'}]\n"
        "  ps: {replicas: 1}\n  worker: {replicas: 2, gpus: 2}\n"
    )
    (found,) = devices(body, workload="paddlejob")
    assert "but each ps pod has no NVIDIA GPU (gpus)" in found


def test_an_accelerators_limit_counts_its_devices():
    eight = "  env: [{name: ASCEND_RT_VISIBLE_DEVICES, value: '0,1,2,3,4,5,6,7'}]\n"
    assert devices("  accelerator: huawei.com/Ascend910\n  gpus: 8\n" + eight) == []
    (found,) = devices(
        "  resources: {limits: {huawei.com/Ascend910: 4}}\n"
        "  env: [{name: NPU_VISIBLE_DEVICES, value: '0,1'}]\n"
    )
    assert "each pod has 4 Ascend NPUs" in found
    # a device paddlegen does not know: nothing to compare with
    assert devices("  resources: {limits: {amd.com/gpu: 1}}\n  args: [--gpus, '0,1', t.py]\n") == []


def test_gpus_write_the_accelerators_limit():
    doc = parse_spec(
        DEMO + "spec:\n  image: i:1\n  gpus: 8\n  accelerator: kunlunxin.com/xpu\n", "s.yaml"
    )
    limits = build_job(doc.data, workload_of(doc.data)).roles["worker"].resources["limits"]
    assert limits == {"kunlunxin.com/xpu": "8"}


def test_the_schema_allows_exactly_the_known_accelerators():
    allowed = spec_schema()["$defs"]["spec"]["properties"]["accelerator"]["enum"]
    assert allowed == list(ACCELERATORS)


def test_pins_that_match_the_devices_pass():
    path = ROOT / "tests" / "data" / "specs" / "valid" / "launcher-devices.yaml"
    assert load.validate_document(parse_spec(path.read_text(encoding="utf-8"), "v.yaml")) == []


# --- unknown-resource -----------------------------------------------------------------------


def unknown(limits: str) -> list[str]:
    spec = SPEC.format(workload="job") + f"  resources: {{limits: {{memory: 8Gi, {limits}}}}}\n"
    return only(spec, "unknown-resource")


def test_a_typo_of_a_device_names_the_nearest_known_one():
    assert unknown("nvidia.com/gpus: 1") == [
        "spec.yaml:8:37: warning: $.spec.resources.limits.nvidia.com/gpus: no device plugin "
        "paddlegen knows publishes 'nvidia.com/gpus': unless one of the cluster's does, the "
        "pods stay Pending (did you mean 'nvidia.com/gpu'?) [unknown-resource]"
    ]
    (amd,) = unknown("amd.com/gpus: 1")
    assert "(did you mean 'amd.com/gpu'?)" in amd
    (rdma,) = unknown("rmda/hca_shared_devices_a: 1")
    assert "(did you mean 'rdma/hca_shared_devices_a'?)" in rdma


def test_a_name_far_from_every_known_one_says_how_to_silence_it():
    (found,) = unknown("example.com/fpga: 1")
    assert "(if the cluster's device plugin publishes it, silence the rule for it)" in found


@pytest.mark.parametrize(
    "name",
    [
        *ACCELERATORS,
        "nvidia.com/mig-1g.5gb",
        "nvidia.com/gpu.shared",
        "amd.com/gpu",
        "amd.com/cpx_nps4",
        "gpu.intel.com/i915",
        "habana.ai/gaudi",
        "huawei.com/Ascend910-4c",
        "aws.amazon.com/neuroncore",
        "google.com/tpu",
        "rdma/hca_shared_devices_b",  # the RDMA plugin's names are its configuration's
        "nvidia.com/hostdev",
        "vpc.amazonaws.com/efa",
        "nvidia.com/gpumem",
    ],
)
def test_names_known_device_plugins_publish_pass(name):
    assert unknown(f"{name}: 1") == []


def test_kubernetes_own_resources_are_not_extended():
    assert unknown("hugepages-2Mi: 2Mi, ephemeral-storage: 1Gi, example.kubernetes.io/x: 1") == []


def test_requests_and_sidecars_are_checked_too():
    spec = (
        SPEC.format(workload="job")
        + "  resources: {requests: {nvidia.com/gpus: 1}, limits: {nvidia.com/gpus: 1}}\n"
        + "  sidecars: [{name: s, image: s:1, resources: {limits: {habana.ai/gaudis: 1}}}]\n"
    )
    assert [f.split(": ")[2] for f in only(spec, "unknown-resource")] == [
        "$.spec.resources.requests.nvidia.com/gpus",
        "$.spec.resources.limits.nvidia.com/gpus",
        "$.spec.sidecars[0].resources.limits.habana.ai/gaudis",
    ]


def test_the_launcher_rule_skips_what_may_be_a_device_and_checks_beside_a_nic():
    pin = "  env: [{name: CUDA_VISIBLE_DEVICES, value: '0,1'}]\n"
    # an unknown name, or another accelerator: the launcher may count it
    for limit in ("example.com/fpga: 2", "amd.com/gpu: 4"):
        assert devices(f"  resources: {{limits: {{{limit}, nvidia.com/gpu: 4}}}}\n" + pin) == []
    # a NIC beside the GPUs carries no rank: the pin is still held to the GPUs
    (idle,) = devices(
        "  resources: {limits: {rdma/hca_shared_devices_a: 1, nvidia.com/gpu: 4}}\n" + pin
    )
    assert "CUDA_VISIBLE_DEVICES=0,1 leaves 2 device(s) of each pod idle" in idle
