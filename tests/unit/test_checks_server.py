"""Checks of what the API server refuses or warns about in the rendered objects (issue 14):
message, position and rule, no cluster needed. tests/cluster/test_server_property.py holds them
to the real API server."""

from __future__ import annotations

import pytest

from paddlegen import report
from paddlegen.pipeline import load
from paddlegen.spec.loader import parse_spec
from paddlegen.spec.quantity import canonical, server_value
from tests.builders import DEMO, diagnostics, findings, only

JOB = "spec:\n  workload: job\n  image: img:1\n"  # the spec body starts on line 4


# --- control-character ------------------------------------------------------------------------

SAYS = (
    "which the API server refuses: a server-side apply sends YAML, which cannot hold it "
    "(remove it: a manifest may hold tabs, line breaks and printable characters only) "
    "[control-character]"
)


@pytest.mark.parametrize(
    ("escaped", "named"),
    [
        ("\\x01", "U+0001 (a C0 control character)"),
        ("\\e", "U+001B (a C0 control character)"),
        ("\\x7f", "U+007F (the control character DEL)"),
        ("\\x80", "U+0080 (a C1 control character)"),
        ("\\x9f", "U+009F (a C1 control character)"),
        ("\\ufffe", "U+FFFE (a noncharacter)"),
        ("\\uffff", "U+FFFF (a noncharacter)"),
    ],
)
def test_a_character_yaml_cannot_hold_is_an_error_at_the_value(escaped, named):
    body = JOB + f'  args: [ok, "a{escaped}b"]\n'
    assert findings(body) == [
        f"spec.yaml:7:14: error: $.spec.args[1]: the value holds {named}, {SAYS}"
    ]


@pytest.mark.parametrize("escaped", ["\\t", "\\n", "\\r", "\\N", "\\_", "\\L", "\\P", "\\ufffd"])
def test_tabs_line_breaks_and_printable_unicode_pass(escaped):
    assert findings(JOB + f'  args: ["a{escaped}b"]\n') == []


def test_every_string_that_reaches_a_manifest_is_checked_and_the_count_is_given():
    body = (
        JOB
        + '  env: [{name: A, value: "\\x01\\x02\\x03"}]\n'
        + '  affinity: {nodeAffinity: {"k\\x7f": v}}\n'
        + "  worker:\n"
        + '    command: ["x\\x85", "y\\x9b"]\n'
    )
    doc = parse_spec(
        DEMO.replace("{name: demo}", '{name: demo, annotations: {a: "\\x10"}}') + body,
        "spec.yaml",
    )
    lines = report.text(load.validate_document(doc)).splitlines()
    assert [line for line in lines if "[control-character]" in line] == [
        f"spec.yaml:3:41: error: $.metadata.annotations.a: the value holds U+0010 (a C0 control "
        f"character), {SAYS}",
        "spec.yaml:7:26: error: $.spec.env[0].value: the value holds U+0001 (a C0 control "
        f"character) and 2 more such characters, {SAYS}",
        f"spec.yaml:8:29: error: $.spec.affinity.nodeAffinity.k\\x7f: the key holds U+007F (the "
        f"control character DEL), {SAYS}",
        "spec.yaml:10:24: error: $.spec.worker.command[1]: the value holds U+009B (a C1 control "
        f"character), {SAYS}",
    ]


def test_the_image_build_settings_are_not_rendered_and_not_checked():
    body = JOB + '  build: {base: "img:1", pip: ["a\\x01"]}\n'
    assert only(body, "control-character") == []


def test_an_overlay_value_is_reported_in_the_overlay():
    body = JOB + 'overlays:\n  prod:\n    spec:\n      args: ["\\x01"]\n'
    assert findings(body) == [
        "spec.yaml:10:14: error: $.overlays.prod.spec.args[0]: the value holds U+0001 (a C0 "
        f"control character), {SAYS}"
    ]


# --- quantity-fractional-bytes ----------------------------------------------------------------


def test_fractional_bytes_warn_wherever_bytes_are_given():
    body = (
        JOB
        + "  resources:\n"
        + "    requests: {memory: 500m, cpu: 500m, ephemeral-storage: 1.5}\n"
        + "    limits: {memory: 1E-3, hugepages-2Mi: 0.5}\n"
        + "  shm: 100n\n"
        + "  volumes:\n"
        + "    - {name: a, mountPath: /a, dynamic: {}, capacity: 0.5Ki}\n"
        + "    - {name: b, mountPath: /b, emptyDir: {sizeLimit: 1.1}}\n"
        + "    - {name: c, mountPath: /c, hostPath: {path: /c}, capacity: 0.5}\n"
    )
    thousandths = "('m' means thousandths, not mega: write whole bytes, e.g. 512Mi or 2G)"

    def rounded(at: str, path: str, value: str, up_to: int, hint: str = "") -> str:
        field = path.rsplit(".", 1)[-1]
        return (
            f"spec.yaml:{at}: warning: $.spec.{path}: {field} '{value}' is not a whole number of "
            f"bytes: the API server warns, and Kubernetes rounds it up to {up_to} "
            f"{hint or '(write whole bytes, e.g. 512Mi or 2G)'} [quantity-fractional-bytes]"
        )

    assert only(body, "quantity-fractional-bytes") == [
        rounded("8:24", "resources.requests.memory", "500m", 1, thousandths),
        rounded("8:60", "resources.requests.ephemeral-storage", "1.5", 2),
        rounded("9:22", "resources.limits.memory", "1E-3", 1),
        rounded("9:43", "resources.limits.hugepages-2Mi", "0.5", 1),
        rounded("10:8", "shm", "100n", 1),
        rounded("13:54", "volumes[1].emptyDir.sizeLimit", "1.1", 2),
    ]  # 0.5Ki is 512 bytes; a hostPath has no capacity to render


def test_bytes_past_what_the_api_server_counts_in_thousandths_warn():
    body = JOB + "  resources: {limits: {memory: 1e16}}\n"
    assert only(body, "quantity-fractional-bytes") == [
        "spec.yaml:7:32: warning: $.spec.resources.limits.memory: memory '1e16' is more bytes "
        "than the API server counts exactly (at most 9223372036854775, about 8 PiB): past that "
        "its thousandths overflow, and it may call the value fractional (use a size the cluster "
        "can hold) [quantity-fractional-bytes]"
    ]
    fits = JOB + "  resources: {limits: {memory: 9223372036854775}}\n"
    assert only(fits, "quantity-fractional-bytes") == []


# --- resource-name, resource-quantity ---------------------------------------------------------


def test_a_container_asks_only_for_container_resources():
    body = (
        JOB
        + "  resources:\n"
        + "    limits: {storage: 1Gi, pods: 1, requests.nvidia.com/gpu: 1, cpu: 1,"
        + " hugepages-1Gi: 1Gi, example.kubernetes.io/x: 1.5, nvidia.com/gpu: 1}\n"
    )
    can_ask = (
        "is not a resource a container can ask for (use cpu, memory, ephemeral-storage, "
        "hugepages-<page size>, or a resource with a domain such as nvidia.com/gpu) [resource-name]"
    )
    assert only(body, "resource-name") == [
        f"spec.yaml:8:14: error: $.spec.resources.limits.storage: 'storage' {can_ask}",
        f"spec.yaml:8:28: error: $.spec.resources.limits.pods: 'pods' {can_ask}",
        "spec.yaml:8:37: error: $.spec.resources.limits.requests.nvidia.com/gpu: "
        "'requests.nvidia.com/gpu' is a quota's name for a resource, not the resource itself "
        "(use 'nvidia.com/gpu') [resource-name]",
    ]


@pytest.mark.parametrize("count", ["1", "8", "+2", "1e1", "2k", "1000m", 4])
def test_whole_device_counts_pass(count):
    body = (
        JOB + f"  resources: {{limits: {{nvidia.com/gpu: {count}, example.com/fpga: {count}}}}}\n"
    )
    assert only(body, "resource-quantity") == []


def test_an_extended_resource_counts_whole_devices():
    body = JOB + "  resources: {limits: {example.com/fpga: 500m, nvidia.com/gpu: 1e16}}\n"
    assert only(body, "resource-quantity") == [
        "spec.yaml:7:42: error: $.spec.resources.limits.example.com/fpga: example.com/fpga "
        "'500m' is not a whole number: an extended resource counts devices (use a whole number "
        "such as 1 or 8) [resource-quantity]",
        "spec.yaml:7:64: error: $.spec.resources.limits.nvidia.com/gpu: nvidia.com/gpu '1e16' "
        "is more than the API server counts exactly (at most 9223372036854775): past that its "
        "thousandths overflow, and it may refuse the value as not a whole number (use a whole "
        "number such as 1 or 8) [resource-quantity]",
    ]


def test_hugepages_come_in_whole_pages_of_a_named_size():
    body = (
        JOB
        + "  resources:\n"
        + "    limits: {memory: 1Gi, hugepages-2Mi: 3Mi, hugepages-1Gi: 2Gi, hugepages-big: 1}\n"
    )
    assert only(body, "resource-quantity") == [
        "spec.yaml:8:42: error: $.spec.resources.limits.hugepages-2Mi: hugepages-2Mi '3Mi' is "
        "not a whole number of 2Mi pages (use a multiple of 2Mi) [resource-quantity]",
        "spec.yaml:8:67: error: $.spec.resources.limits.hugepages-big: 'hugepages-big' names no "
        "page size: 'big' is not a whole, positive quantity (name the node's page size, e.g. "
        "hugepages-2Mi or hugepages-1Gi) [resource-quantity]",
    ]


# --- request-limit, gpus-override -------------------------------------------------------------


def test_a_request_above_its_limit_is_an_error_at_the_request():
    body = (
        JOB
        + "  resources:\n"
        + "    requests: {cpu: 4, memory: 1Gi, ephemeral-storage: 1001M}\n"
        + "    limits: {cpu: '2', memory: 1Gi, ephemeral-storage: 1G}\n"
    )
    assert findings(body) == [
        "spec.yaml:8:21: error: $.spec.resources.requests.cpu: the cpu request '4' is more than "
        "its limit '2' (lower the request or raise the limit) [request-limit]",
        "spec.yaml:8:56: error: $.spec.resources.requests.ephemeral-storage: the "
        "ephemeral-storage request '1001M' is more than its limit '1G' (lower the request or "
        "raise the limit) [request-limit]",
    ]


def test_values_the_api_server_rounds_to_one_nano_are_equal():
    body = JOB + "  resources: {requests: {cpu: 2e-10}, limits: {cpu: 1n}}\n"
    assert findings(body) == []


def test_extended_resources_need_a_limit_equal_to_the_request():
    body = (
        JOB
        + "  resources:\n"
        + "    requests: {example.com/fpga: 1, example.com/nic: 2, hugepages-2Mi: 2Mi}\n"
        + "    limits: {example.com/nic: 4, memory: 1Gi}\n"
    )
    assert only(body, "request-limit") == [
        "spec.yaml:8:34: error: $.spec.resources.requests.example.com/fpga: example.com/fpga has "
        "a request but no limit: it cannot be overcommitted, so its limit must be set (equal to "
        "the request) (set limits['example.com/fpga'] instead: the request defaults to the "
        "limit) [request-limit]",
        "spec.yaml:8:54: error: $.spec.resources.requests.example.com/nic: the example.com/nic "
        "request '2' differs from its limit '4': example.com/nic cannot be overcommitted, so the "
        "two must be equal (set only the limit: the request defaults to it) [request-limit]",
        "spec.yaml:8:72: error: $.spec.resources.requests.hugepages-2Mi: hugepages-2Mi has a "
        "request but no limit: it cannot be overcommitted, so its limit must be set (equal to "
        "the request) (set limits['hugepages-2Mi'] instead: the request defaults to the limit) "
        "[request-limit]",
    ]


def test_gpus_are_the_gpu_limit_a_request_must_equal_wherever_each_is_set():
    body = (
        "spec:\n  workload: paddlejob\n  image: img:1\n"
        + "  gpus: 8\n"
        + "  resources: {requests: {nvidia.com/gpu: 4}, limits: {memory: 1Gi}}\n"
        + "  worker: {replicas: 2, gpus: 2}\n"
        + "  ps: {replicas: 1, gpus: 4}\n"
    )
    assert only(body, "request-limit") == [
        "spec.yaml:8:42: error: $.spec.resources.requests.nvidia.com/gpu: the nvidia.com/gpu "
        "request '4' differs from its limit '2' (from spec.worker.gpus): nvidia.com/gpu cannot "
        "be overcommitted, so the two must be equal (set only the limit: the request defaults to "
        "it) [request-limit]",
    ]  # ps: its gpus are 4, as requested


def test_a_role_s_own_resources_replace_the_spec_s():
    body = (
        "spec:\n  workload: paddlejob\n  image: img:1\n"
        + "  resources: {requests: {cpu: 4}, limits: {memory: 1Gi}}\n"
        + "  worker: {replicas: 2, resources: {limits: {cpu: 8, memory: 1Gi}}}\n"
        + "  ps: {replicas: 1, resources: {requests: {cpu: 4}, limits: {cpu: 1, memory: 1Gi}}}\n"
    )
    assert findings(body) == [
        "spec.yaml:9:49: error: $.spec.ps.resources.requests.cpu: the cpu request '4' is more "
        "than its limit '1' (lower the request or raise the limit) [request-limit]",
    ]  # the spec-wide request of 4 reaches no pod: each role has resources of its own


def test_gpus_replacing_a_different_gpu_limit_warn():
    body = JOB + "  gpus: 2\n  resources: {limits: {memory: 16Gi, nvidia.com/gpu: 1}}\n  shm: 8Gi\n"
    assert findings(body) == [
        "spec.yaml:8:54: warning: $.spec.resources.limits.nvidia.com/gpu: this limit is replaced "
        "by spec.gpus: 2, which sets the nvidia.com/gpu limit (set the number of GPUs in one "
        "place) [gpus-override]"
    ]
    assert findings(body.replace("nvidia.com/gpu: 1}", "nvidia.com/gpu: '2'}")) == []


# --- shm-memory ---------------------------------------------------------------------------------


def test_shm_as_large_as_the_memory_limit_warns_at_shm():
    body = JOB + "  shm: 32Gi\n  resources: {limits: {memory: 16Gi}}\n"
    assert only(body, "shm-memory") == [
        "spec.yaml:7:8: warning: $.spec.shm: shm '32Gi' is not below the pods' memory limit "
        "'16Gi' ($.spec.resources.limits.memory): /dev/shm's pages count against that limit, so "
        "the trainer is OOM-killed before /dev/shm fills (keep shm well below limits.memory, "
        "which it shares with the processes, or raise limits.memory) [shm-memory]"
    ]
    assert len(only(JOB + "  shm: 16Gi\n  resources: {limits: {memory: 16Gi}}\n", "shm-memory"))


def test_shm_below_the_limit_or_without_a_limit_passes():
    assert only(JOB + "  shm: 8Gi\n  resources: {limits: {memory: 16Gi}}\n", "shm-memory") == []
    assert only(JOB + "  shm: 8Gi\n", "shm-memory") == []


def test_shm_memory_names_each_role_whose_own_limit_is_too_small():
    body = (
        "spec:\n  workload: paddlejob\n  image: img:1\n  shm: 16Gi\n"
        "  resources: {limits: {memory: 64Gi}}\n"
        "  ps: {replicas: 1, resources: {limits: {memory: 8Gi}}}\n  worker: {replicas: 2}\n"
    )
    (found,) = only(body, "shm-memory")
    assert "the ps pods' memory limit '8Gi' ($.spec.ps.resources.limits.memory)" in found


# --- gpu-shm ------------------------------------------------------------------------------------

GPU_SHM_HINT = (
    "NCCL and data loader workers outgrow it (a bus error, or 'No space left on device') (set "
    "spec.shm, e.g. shm: {shm} (4Gi per GPU; its pages count against the memory limit)) [gpu-shm]"
)


def test_gpu_pods_without_shm_warn_at_their_gpus():
    assert findings(JOB + "  gpus: 8\n") == [
        "spec.yaml:7:9: warning: $.spec.gpus: pods with 8 GPUs and no /dev/shm but the container "
        "runtime's 64 MiB: " + GPU_SHM_HINT.format(shm="32Gi")
    ]


def test_gpu_shm_names_the_accelerator_the_pods_count():
    (line,) = findings(JOB + "  gpus: 1\n  accelerator: huawei.com/Ascend910\n")
    assert (
        "pods with 1 NPU and no /dev/shm but the container runtime's 64 MiB: data loader " in line
    )
    assert "(4Gi per NPU;" in line and "NCCL" not in line


def test_gpu_shm_is_reported_per_role_that_sets_its_own_gpus():
    body = (
        "spec:\n  image: img:1\n  gpus: 1\n  ps: {replicas: 1, gpus: 0}\n"
        "  worker: {gpus: 2}\n  workload: paddlejob\n"
    )
    assert [line.split(": pods with")[0] for line in findings(body)] == [
        "spec.yaml:8:18: warning: $.spec.worker.gpus",  # spec.gpus: 1 reaches no pod
    ]
    body = (
        "spec:\n  image: img:1\n  gpus: 1\n  ps: {replicas: 1}\n  worker: {gpus: 2}\n"
        "  workload: paddlejob\n"
    )
    assert [line.split(": pods with")[0] for line in findings(body)] == [
        "spec.yaml:6:9: warning: $.spec.gpus",  # the parameter servers'
        "spec.yaml:8:18: warning: $.spec.worker.gpus",
    ]


@pytest.mark.parametrize(
    "shm",
    [
        "  gpus: 8\n  shm: 8Gi\n",
        "  gpus: 8\n  volumes: [{name: dshm, mountPath: /dev/shm, emptyDir: {medium: Memory}}]\n",
        "  gpus: 8\n  volumes: [{name: host, mountPath: /dev/shm/, hostPath: {path: /dev/shm}}]\n",
        "  gpus: 0\n",
        "",
    ],
)
def test_a_shm_of_the_specs_own_or_no_gpus_is_no_finding(shm):
    assert findings(JOB + shm) == []


def test_an_overlay_that_adds_gpus_warns_in_that_environment():
    body = JOB + "overlays:\n  gpu:\n    spec: {gpus: 2}\n"
    (line,) = findings(body)
    assert line.startswith("spec.yaml:9:18: warning: $.overlays.gpu.spec.gpus: pods with 2 GPUs")


# --- implausible-size ---------------------------------------------------------------------------


TOO_MANY = (
    "more than 1000, beyond the largest training jobs on Kubernetes (check the number; if it is "
    "meant, silence the rule for this field) [implausible-size]"
)


def test_absurd_sizes_warn_at_each_field():
    body = (
        "spec:\n  image: img:1\n  gpus: 64\n  shm: 1Gi\n  ps: {replicas: 10000}\n"
        "  worker: {replicas: 10000}\n  workload: paddlejob\n"
    )
    assert findings(body) == [
        "spec.yaml:6:9: warning: $.spec.gpus: 64 GPUs per pod: more than 16, the most the "
        "largest GPU nodes have (8 is common): the pods would stay Pending (check the number; "
        "a pod runs on one node, so spread GPUs over more replicas) [implausible-size]",
        f"spec.yaml:8:18: warning: $.spec.ps.replicas: 10000 ps pods: {TOO_MANY}",
        f"spec.yaml:9:22: warning: $.spec.worker.replicas: 10000 worker pods: {TOO_MANY}",
    ]


def test_sizes_up_to_the_bounds_are_no_finding():
    body = "spec:\n  image: img:1\n  shm: 1Gi\n  ps: {replicas: 1000}\n"
    assert findings(body + "  worker: {replicas: 1000, gpus: 16}\n  workload: paddlejob\n") == []
    (line,) = findings(body + "  worker: {replicas: 1, gpus: 17}\n  workload: paddlejob\n")
    assert line.startswith("spec.yaml:8:31: warning: $.spec.worker.gpus: 17 GPUs per pod")
    assert line.endswith("[implausible-size]")


def test_an_overlay_that_scales_up_warns_in_that_environment():
    body = JOB + "overlays:\n  big:\n    spec: {worker: {replicas: 5000}}\n"
    assert only(body, "implausible-size") == [
        "spec.yaml:9:31: warning: $.overlays.big.spec.worker.replicas: 5000 worker pods: "
        + TOO_MANY
    ]


def test_an_overlay_limit_below_the_base_request_is_reported_at_the_base_request():
    body = (
        JOB
        + "  resources: {requests: {cpu: 4}, limits: {memory: 1Gi}}\n"
        + "overlays:\n  dev:\n    spec: {resources: {limits: {cpu: 1}}}\n"
    )
    assert findings(body) == [
        "spec.yaml:7:31: error: $.spec.resources.requests.cpu: the cpu request '4' is more than "
        "its limit '1' (lower the request or raise the limit) [request-limit]",
    ]


# --- env-downward-api -------------------------------------------------------------------------


def _env(ref: str) -> str:
    return JOB + f"  env: [{{name: A, valueFrom: {ref}}}]\n"


@pytest.mark.parametrize(
    ("resource", "divisor"),
    [
        ("limits.cpu", "1m"),
        ("limits.cpu", "1"),
        ("requests.cpu", "1000m"),
        ("limits.cpu", "0.001"),
        ("limits.cpu", "0"),  # an unset divisor
        ("limits.memory", "1Mi"),
        ("limits.memory", "1024Ki"),  # the API server spells it 1Mi
        ("requests.ephemeral-storage", "1000"),  # 1k
        ("limits.hugepages-2Mi", "1Gi"),
    ],
)
def test_divisors_the_api_server_accepts_pass(resource, divisor):
    ref = f"{{resourceFieldRef: {{resource: {resource}, divisor: {divisor}}}}}"
    assert findings(_env(ref)) == []


CPU = "1m, 1, the divisors of cpu"
MEMORY = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei, the divisors of memory"


@pytest.mark.parametrize(
    ("resource", "divisor", "said"),
    [
        ("limits.cpu", "500m", f"'500m' is not one of {CPU}"),
        ("limits.cpu", "1e-3", f"'1e-3' is not one of {CPU}"),
        ("limits.cpu", "+1", f"'+1' is not one of {CPU}"),  # kept as written
        ("limits.memory", "1024", f"'1024' is not one of {MEMORY}"),
        (
            "requests.memory",
            "2048Ki",
            f"'2048Ki' (the API server reads it as '2Mi') is not one of {MEMORY}",
        ),
    ],
)
def test_other_divisors_are_errors_at_the_divisor(resource, divisor, said):
    body = _env(f"{{resourceFieldRef: {{resource: {resource}, divisor: '{divisor}'}}}}")
    column = body.splitlines()[3].index("'") + 1
    assert findings(body) == [
        f"spec.yaml:7:{column}: error: $.spec.env[0].valueFrom.resourceFieldRef.divisor: "
        f"divisor {said} (leave divisor out for 1) [env-downward-api]"
    ]


def test_a_resource_env_cannot_read_is_an_error():
    body = _env("{resourceFieldRef: {resource: limits.nvidia.com/gpu}}")
    assert findings(body) == [
        "spec.yaml:7:60: error: $.spec.env[0].valueFrom.resourceFieldRef.resource: "
        "'limits.nvidia.com/gpu' is not a resource env can read (one of limits.cpu, "
        "limits.memory, limits.ephemeral-storage, requests.cpu, requests.memory, "
        "requests.ephemeral-storage or limits.hugepages-<size>, requests.hugepages-<size>) "
        "[env-downward-api]"
    ]


FIELDS = (
    "one of metadata.name, metadata.namespace, metadata.uid, spec.nodeName, "
    "spec.serviceAccountName, status.hostIP, status.hostIPs, status.podIP, status.podIPs, "
    "metadata.labels['KEY'] or metadata.annotations['KEY']"
)


@pytest.mark.parametrize(
    "path",
    [
        "metadata.name",
        "status.podIPs",
        "spec.host",
        "metadata.labels['app.kubernetes.io/name']",
        "metadata.annotations['Example.com/Note']",
    ],
)
def test_pod_fields_env_may_read_pass(path):
    assert findings(_env(f'{{fieldRef: {{fieldPath: "{path}"}}}}')) == []


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("status.phase", "'status.phase' is not a pod field env can read"),
        ("metadata.labels", "'metadata.labels' is not a pod field env can read"),
        (
            "spec.nodeName['x']",
            "'spec.nodeName' takes no ['key'] (only metadata.labels and metadata.annotations do)",
        ),
        ("metadata.labels['a b']", "'a b' is not a label or annotation key"),
    ],
)
def test_other_pod_fields_are_errors_at_the_field_path(path, said):
    assert findings(_env(f'{{fieldRef: {{fieldPath: "{path}"}}}}')) == [
        f"spec.yaml:7:53: error: $.spec.env[0].valueFrom.fieldRef.fieldPath: {said} ({FIELDS}) "
        "[env-downward-api]"
    ]


def test_a_field_ref_api_version_other_than_v1_is_an_error():
    assert findings(_env("{fieldRef: {fieldPath: metadata.name, apiVersion: v2}}")) == [
        "spec.yaml:7:80: error: $.spec.env[0].valueFrom.fieldRef.apiVersion: fieldRef "
        "apiVersion 'v2' is not v1, the only version of pods (leave apiVersion out) "
        "[env-downward-api]"
    ]
    assert findings(_env("{fieldRef: {fieldPath: metadata.name, apiVersion: ''}}")) == []


# --- volume-access-mode, volume-capacity, nfs-recycle -----------------------------------------

NFS = "{name: a, mountPath: /a, nfs: {server: s, path: /x}, capacity: 1Gi"


def test_read_write_once_pod_with_another_mode_is_an_error():
    body = (
        JOB
        + "  volumes:\n"
        + f"    - {NFS}, accessModes: [ReadWriteOncePod, ReadWriteMany]}}\n"
        + "    - {name: b, mountPath: /b, dynamic: {}, capacity: 1Gi,"
        + " accessModes: [ReadOnlyMany, ReadWriteOncePod]}\n"
        + "    - {name: c, mountPath: /c, dynamic: {}, capacity: 1Gi,"
        + " accessModes: [ReadWriteOncePod]}\n"
    )
    assert findings(body) == [
        "spec.yaml:8:88: error: $.spec.volumes[0].accessModes: ReadWriteOncePod cannot be "
        "combined with other access modes: the API server refuses the claim and the "
        "PersistentVolume (keep ReadWriteOncePod alone, or drop it) [volume-access-mode]",
        "spec.yaml:9:73: error: $.spec.volumes[1].accessModes: ReadWriteOncePod cannot be "
        "combined with other access modes: the API server refuses the claim (keep "
        "ReadWriteOncePod alone, or drop it) [volume-access-mode]",
    ]


@pytest.mark.parametrize("capacity", ["0", "0.0", "0Gi", "0e3", "+0"])
def test_a_zero_capacity_is_an_error(capacity):
    body = JOB + f"  volumes: [{NFS.replace('1Gi', repr(capacity))}}}]\n"
    assert findings(body) == [
        f"spec.yaml:7:76: error: $.spec.volumes[0].capacity: capacity '{capacity}' is zero: the "
        "API server wants a claim's storage request (and a PersistentVolume's capacity) greater "
        "than zero (for example capacity: 10Gi) [volume-capacity]"
    ]


def test_a_capacity_past_2_63_bytes_is_an_error_and_8_ei_is_not():
    body = JOB + f"  volumes: [{NFS.replace('1Gi', '1e19')}}}]\n"
    assert findings(body) == [
        "spec.yaml:7:76: error: $.spec.volumes[0].capacity: capacity '1e19' is more bytes than "
        "Kubernetes can hold (at most 9223372036854775807, 8 EiB) (for example capacity: 10Gi) "
        "[volume-capacity]"
    ]
    # binary quantities are capped at 2^63-1 by the API server itself
    assert only(JOB + f"  volumes: [{NFS.replace('1Gi', '100Ei')}}}]\n", "volume-capacity") == []


RECYCLED = (
    "reclaimPolicy Recycle is deprecated (the API server warns about it): it empties the volume "
    "with rm -rf for the next claim{} (use Retain and clean up yourself, or a dynamic volume, "
    "which its StorageClass deletes) [nfs-recycle]"
)
CANNOT = (
    ", and Kubernetes recycles only NFS and hostPath volumes: the released cephfs volume would "
    "fail to recycle"
)


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("nfs: {server: s, path: /x}", ""),
        ("efs: {fileSystemId: fs-1, region: us-west-2, nfs: true}", ""),
        ("cephfs: {clusterID: c1, fsName: fs, secretName: s, secretNamespace: ceph}", CANNOT),
        ("cephfs: {monitors: ['m:1'], inTree: true}", CANNOT),
        ("dynamic: {}", None),  # no PersistentVolume to recycle: nothing to say
    ],
)
def test_recycle_warns_on_a_persistent_volume_and_on_cephfs_that_it_cannot(source, said):
    volume = f"{{name: a, mountPath: /a, {source}, capacity: 1Gi, reclaimPolicy: Recycle}}"
    body = JOB + f"  volumes: [{volume}]\n"
    at = f"spec.yaml:7:{body.splitlines()[3].index('Recycle}') + 1}"
    recycled = f"{at}: warning: $.spec.volumes[0].reclaimPolicy: {RECYCLED.format(said)}"
    assert only(body, "nfs-recycle") == ([] if said is None else [recycled])


# --- pv-binding -----------------------------------------------------------------------------


@pytest.mark.parametrize("named", ["slow", "''"])
def test_a_pv_without_a_namespace_and_with_a_class_of_the_specs_warns(named):
    body = JOB + f"  volumes: [{NFS}, storageClassName: {named}}}]\n"
    shown = "'slow'" if named == "slow" else "'' (no class)"
    assert only(body, "pv-binding") == [
        f"spec.yaml:7:{body.splitlines()[3].index(named) + 1}: warning: "
        "$.spec.volumes[0].storageClassName: without a namespace the PersistentVolume is not "
        "pre-bound to its claim (claimRef needs one), so any claim that requests "
        f"storageClassName {shown} may bind it first (set metadata.namespace, and the PV is "
        "pre-bound; or leave storageClassName out, and the PV gets a class of its own that "
        "only its claim requests) [pv-binding]"
    ]


@pytest.mark.parametrize(
    "body",
    [
        JOB + f"  volumes: [{NFS}}}]\n",  # a class of its own
        JOB + "  volumes: [{name: a, mountPath: /a, dynamic: {storageClassName: x}, "
        "capacity: 1Gi, storageClassName: slow}]\n",  # no PV of paddlegen's
    ],
)
def test_a_pv_with_a_class_of_its_own_or_no_pv_says_nothing(body):
    assert only(body, "pv-binding") == []


def test_a_pv_with_a_namespace_is_pre_bound_whatever_its_class():
    namespaced = DEMO.replace("metadata: {name: demo}", "metadata: {name: demo, namespace: ml}")
    text = namespaced + JOB + f"  volumes: [{NFS}, storageClassName: slow}}]\n"
    assert [d for d in diagnostics(text) if d.rule == "pv-binding"] == []


# --- the quantities as the API server holds and spells them -----------------------------------
# Each pair was checked against k8s.io/apimachinery v0.37.2's resource.ParseQuantity and String.


@pytest.mark.parametrize(
    ("given", "spelled"),
    [
        ("1000m", "1"),
        ("0.001", "1m"),
        ("1e3", "1e3"),
        ("1e2", "100"),
        ("1E-3", "1E-3"),
        ("1024", "1024"),
        ("1024Ki", "1Mi"),
        ("2048Ki", "2Mi"),
        ("1025Ki", "1025Ki"),
        ("0.5Ki", "512"),
        ("0.1Ki", "102400m"),
        ("+1", "+1"),
        ("01", "01"),
        ("1.", "1."),
        ("1.0", "1"),
        ("1500", "1500"),
        ("2k", "2k"),
        ("2000", "2k"),
        ("1e-10", "1e-9"),
        ("100Ei", "9223372036854775807"),
        ("0", "0"),
        ("0.0", "0"),
        (0.5, "500m"),
        (1024, "1024"),
    ],
)
def test_canonical_is_the_api_servers_spelling(given, spelled):
    assert canonical(given) == spelled


def test_server_value_rounds_up_to_nanos_and_caps_binary_quantities():
    assert server_value("1e-10") == server_value("1n") == server_value("0.9n")
    assert server_value("100Ei") == 2**63 - 1
    assert server_value("1e19") == 10**19


# --- toleration, env-key-ref, host-path, image-whitespace --------------------------------------


@pytest.mark.parametrize(
    "toleration",
    [
        "{operator: Exists}",
        "{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}",
        "{key: dedicated, value: ml-team}",
        "{key: dedicated, operator: Equal, value: ''}",
        "{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, "
        "tolerationSeconds: 60}",
    ],
)
def test_tolerations_the_api_server_takes_pass(toleration):
    assert findings(JOB + f"  tolerations: [{toleration}]\n") == []


def test_tolerations_the_api_server_refuses_are_errors_where_they_go_wrong():
    body = (
        JOB
        + "  tolerations:\n"
        + "    - {key: 'a b', operator: Exists}\n"
        + "    - {value: x}\n"
        + "    - {key: a, operator: Exists, value: x}\n"
        + "    - {key: a, value: 'a b'}\n"
        + "    - {key: a, operator: Exists, effect: NoSchedule, tolerationSeconds: 5}\n"
        + "  worker: {tolerations: [{operator: Equal}]}\n"
    )
    keyless = (
        "a toleration without a key matches every taint, so its operator must be Exists, not "
        "Equal (set operator: Exists, or name the taint's key) [toleration]"
    )
    assert findings(body) == [
        "spec.yaml:8:13: error: $.spec.tolerations[0].key: toleration key 'a b' is not a taint "
        "key ([prefix/]name: letters, digits, '-', '_' and '.', starting and ending with a "
        "letter or digit) [toleration]",
        f"spec.yaml:9:7: error: $.spec.tolerations[1]: {keyless}",
        "spec.yaml:10:41: error: $.spec.tolerations[2].value: operator Exists matches any "
        "value: the value 'x' must be left out [toleration]",
        "spec.yaml:11:23: error: $.spec.tolerations[3].value: toleration value 'a b' is not a "
        "taint value (at most 63 letters, digits, '-', '_' and '.', starting and ending with a "
        "letter or digit) [toleration]",
        "spec.yaml:12:73: error: $.spec.tolerations[4].tolerationSeconds: tolerationSeconds "
        "needs effect NoExecute: only a NoExecute taint evicts after a while (set effect: "
        "NoExecute, or drop tolerationSeconds) [toleration]",
        f"spec.yaml:13:37: error: $.spec.worker.tolerations[0].operator: {keyless}",
    ]


HOLDS = "holds only letters, digits, '-', '_' and '.' (at most 253 characters)"


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("a/b", HOLDS),
        ("a b", HOLDS),
        ("..a", "does not start with '..'"),
        ("..", "does not start with '..'"),
        (".", "is not '.'"),
    ],
)
def test_a_key_no_secret_or_config_map_can_hold_is_an_error(key, problem):
    body = (
        JOB + f"  env: [{{name: A, valueFrom: {{configMapKeyRef: {{name: c, key: '{key}'}}}}}}]\n"
    )
    assert findings(body) == [
        "spec.yaml:7:63: error: $.spec.env[0].valueFrom.configMapKeyRef.key: "
        f"'{key}' is not a key a Secret or ConfigMap can hold: a key {problem} [env-key-ref]"
    ]
    assert findings(body.replace(f"'{key}'", "'.a-b_C.9'")) == []


def test_a_host_path_stepping_up_is_an_error():
    body = JOB + "  volumes: [{name: a, mountPath: /a, hostPath: {path: /data/../etc}}]\n"
    assert findings(body) == [
        "spec.yaml:7:55: error: $.spec.volumes[0].hostPath.path: hostPath '/data/../etc' steps "
        "up with '..', which the API server refuses (write the directory without '..') "
        "[host-path]"
    ]
    assert findings(body.replace("/data/../etc", "/data/..etc/x..")) == []


def test_an_image_with_surrounding_whitespace_is_an_error_wherever_it_is_set():
    body = (
        "spec:\n  workload: job\n  image: 'img:1 '\n"
        + "  worker: {image: ' img:2'}\n"
        + "  volumes: [{name: d, mountPath: /d, emptyDir: {}}]\n"
        + '  dataPrep: {volume: d, image: "img:3\\t"}\n'
    )
    refused = (
        "has leading or trailing whitespace: the API server refuses the pods (remove the "
        "whitespace) [image-whitespace]"
    )
    assert only(body, "image-whitespace") == [
        f"spec.yaml:6:10: error: $.spec.image: image 'img:1 ' {refused}",
        f"spec.yaml:7:19: error: $.spec.worker.image: image ' img:2' {refused}",
        f"spec.yaml:9:32: error: $.spec.dataPrep.image: image 'img:3\\t' {refused}",
    ]


def test_a_batch_jobs_pod_priority_other_than_the_gangs_is_an_error():
    gang = "  scheduling: {scheduler: volcano, priorityClassName: gang}\n"
    body = JOB + gang + "  priorityClassName: gang\n  worker: {priorityClassName: own}\n"
    assert only(body, "priority-class") == [
        "spec.yaml:9:31: error: $.spec.worker.priorityClassName: priorityClassName 'own' "
        "differs from the gang's 'gang': a job's pods give Volcano's group for them its "
        "priority, so the gang's would be lost (leave the pods' priorityClassName out (they "
        "carry the gang's), or set the same) [priority-class]"
    ]
    operator = body.replace("workload: job", "workload: paddlejob")
    assert only(operator, "priority-class") == []  # the operator's PodGroup has the gang's
