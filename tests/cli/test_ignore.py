"""Silencing rules: a spec's `ignore` entries and `--ignore RULE` on render, check, diff, validate.

A silenced finding is not printed and a silenced error does not fail the run; an entry that
silences nothing is a warning; the entries are never rendered; a reused job (the stamp) can
neither skip past an error another run silenced nor replay a warning this run silences.
"""

from __future__ import annotations

import json

import pytest

from paddlegen.cli import cli
from paddlegen.rules import REQUIRED, RULES
from tests.builders import HEADER
from tests.cli.test_authoring import complete

LIMITS = "  resources: {limits: {memory: 1Gi}}\n"
DISTRIBUTED = (
    "  workload: distributed-job\n  image: x:1\n" + LIMITS + "  volumes: [{name: data, "
    "mountPath: /data, emptyDir: {}}]\n"
)
SETTINGS = "  distributed: {volume: data, trainConfigDir: q, hostPorts: false}\n"
COLLECTIVE = "  workload: collective-job\n  image: x:1\n" + LIMITS
# For every rule: a spec (after `metadata`) that breaks it and, but for warnings, nothing else.
TRIGGERS = {
    "job-replicas": "spec:\n  workload: job\n  image: x:1\n" + LIMITS + "  worker: {replicas: 2}\n",
    "image-required": "spec:\n  workload: job\n" + LIMITS,
    "name-length": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS,  # with a long name, below
    "volume-source": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  volumes: [{name: a, mountPath: /a, "
    "emptyDir: {}, hostPath: {path: /x}}]\n",
    "volume-capacity": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  volumes: [{name: a, mountPath: /a, "
    "nfs: {server: s, path: /x}}]\n",
    "volume-unique": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  volumes: [{name: a, mountPath: /a, "
    "emptyDir: {}}, {name: a, mountPath: /b, emptyDir: {}}]\n",
    "volume-reference": "spec:\n" + DISTRIBUTED + SETTINGS + "  dataPrep: {volume: nope}\n",
    "cephfs-in-tree": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  volumes: [{name: a, mountPath: /a, "
    "cephfs: {inTree: true, monitors: ['m:6789']}, capacity: 1Gi}]\n",
    # metadata has no namespace, so the Secret has none
    "cephfs-secret-namespace": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  volumes: [{name: a, "
    "mountPath: /a, cephfs: {clusterID: c, fsName: f, secretName: s}, capacity: 1Gi}]\n",
    "env-unique": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  env: [{name: A, value: '1'}, "
    "{name: A, value: '2'}]\n",
    "env-value": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  env: [{name: A, value: '1', "
    "valueFrom: {fieldRef: {fieldPath: metadata.name}}}]\n",
    "secret-literal": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  env: [{name: API_KEY, "
    "value: sk-live-4eC39HqLyjWDarjtT1zdp7dc}]\n",
    "image-tag": "spec:\n  workload: paddlejob\n  image: x\n" + LIMITS,
    "limits-missing": "spec:\n  workload: paddlejob\n  image: x:1\n",
    "min-available": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  scheduling: {minAvailable: 5}\n",
    "paddlejob-min-available": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  worker: {replicas: 2}\n"
    "  scheduling: {scheduler: volcano, minAvailable: 1}\n",
    "paddlejob-heter": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  heter: {replicas: 1}\n",
    "paddlejob-gloo": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  paddlejob: {withGloo: 1}\n",
    "paddlejob-elastic": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  paddlejob: {elastic: 0}\n",
    "paddlejob-clean-pod-policy": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  paddlejob: {cleanPodPolicy: Never}\n",
    "operator-env": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  env: [{name: PADDLE_PORT, value: '1'}]\n",
    "kubeflow-heter": "spec:\n  workload: kubeflow-paddlejob\n  image: x:1\n"
    + LIMITS
    + "  ps: {replicas: 1}\n  heter: {replicas: 1}\n",
    "workload-setting": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  kubeflow: {port: 3000}\n",
    "distributed-roles": "spec:\n" + DISTRIBUTED + SETTINGS + "  ps: {replicas: 1}\n",
    "distributed-required": "spec:\n" + DISTRIBUTED,
    "distributed-ports": "spec:\n" + DISTRIBUTED + "  distributed: {volume: data, "
    "trainConfigDir: q, hostPorts: false, port: 65535, portsNum: 2}\n",
    "distributed-command": "spec:\n" + DISTRIBUTED + "  command: [a]\n  distributed: {volume: "
    "data, trainConfigDir: q, hostPorts: false, command: [b]}\n",
    "distributed-env": "spec:\n" + DISTRIBUTED + SETTINGS + "  env: [{name: JOB_NAME, value: x}]\n",
    "hostport-nodes": "spec:\n" + DISTRIBUTED + "  distributed: {volume: data, "
    "trainConfigDir: q}\n  worker: {replicas: 2}\n",
    "collective-roles": "spec:\n" + COLLECTIVE + "  args: [t.py]\n  ps: {replicas: 1}\n",
    "collective-command": "spec:\n" + COLLECTIVE,
    "collective-restart": "spec:\n" + COLLECTIVE + "  args: [t.py]\n"
    "  run: {restartPolicy: OnFailure}\n",
    "collective-env": "spec:\n" + COLLECTIVE + "  args: [t.py]\n"
    "  env: [{name: PADDLE_NNODES, value: '2'}]\n",
    "collective-args": "spec:\n" + COLLECTIVE + "  args: [--nnodes, '2', t.py]\n",
    "workload-unsupported": "spec:\n"
    + COLLECTIVE.replace("collective-job", "trainjob")
    + "  args: [t.py]\n  workingDir: /w\n",
    "dataprep-layout": "spec:\n" + DISTRIBUTED + SETTINGS + "  dataPrep: {volume: data, "
    "splitCount: 3}\n",
    "volume-access-mode": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  worker: {replicas: 2}\n"
    "  volumes: [{name: a, mountPath: /a, dynamic: {}, capacity: 1Gi, "
    "accessModes: [ReadWriteOnce]}]\n",
    "deprecated": "spec:\n  workload: job\n  image: x:1\n"
    + LIMITS
    + "  run: {recreateOnChange: true}\n",
    "control-character": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + '  args: ["a\\x01b"]\n',
    "quantity-fractional-bytes": "spec:\n  workload: paddlejob\n  image: x:1\n"
    "  resources: {limits: {memory: 500m}}\n",
    "resource-name": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  worker: {resources: {limits: "
    "{memory: 1Gi, storage: 1Gi}}}\n",
    "resource-quantity": "spec:\n  workload: paddlejob\n  image: x:1\n"
    "  resources: {limits: {memory: 1Gi, "
    "example.com/fpga: 500m}}\n",
    "gpus-override": "spec:\n  workload: paddlejob\n  image: x:1\n  gpus: 2\n"
    "  resources: {limits: {memory: 1Gi, "
    "nvidia.com/gpu: 1}}\n",
    "gpu-shm": "spec:\n  workload: paddlejob\n  image: x:1\n" + LIMITS + "  gpus: 1\n",
    "implausible-size": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  worker: {replicas: 1001}\n",
    "request-limit": "spec:\n  workload: paddlejob\n  image: x:1\n"
    "  resources: {requests: {memory: 2Gi}, limits: "
    "{memory: 1Gi}}\n",
    "env-downward-api": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  env: [{name: A, valueFrom: "
    "{resourceFieldRef: {resource: limits.cpu, divisor: 500m}}}]\n",
    "nfs-recycle": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  volumes: [{name: a, mountPath: /a, "
    "nfs: {server: s, path: /x}, capacity: 1Gi, reclaimPolicy: Recycle}]\n",
    # metadata has no namespace, so the PV has no claimRef
    "pv-binding": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  volumes: [{name: a, mountPath: /a, "
    "nfs: {server: s, path: /x}, capacity: 1Gi, storageClassName: slow}]\n",
    "toleration": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  tolerations: [{operator: Equal}]\n",
    "env-key-ref": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  env: [{name: A, valueFrom: "
    "{secretKeyRef: {name: s, key: a/b}}}]\n",
    "host-path": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  volumes: [{name: a, mountPath: /a, "
    "hostPath: {path: /a/../b}}]\n",
    "image-whitespace": "spec:\n  workload: paddlejob\n  image: 'x:1 '\n" + LIMITS,
    "topology-spread": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  topologySpreadConstraints: [{maxSkew: "
    "1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {a: "
    "b}}, matchLabelKeys: [a]}]\n",
    "priority-class": "spec:\n  workload: job\n  image: x:1\n"
    + LIMITS
    + "  priorityClassName: a\n  scheduling: {scheduler: volcano, priorityClassName: b}\n",
    "container-name": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  initContainers: [{name: paddle, "
    "image: b:1}]\n",
    "container-port": "spec:\n  workload: job\n  image: x:1\n"
    + LIMITS
    + "  sidecars: [{name: s, image: b:1, ports: [{containerPort: 80}, {containerPort: 80}]}]\n",
    "paddlejob-sidecar-pruned": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  sidecars: [{name: s, "
    "image: b:1}]\n",
    "kueue-workload": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  scheduling: {kueue: {queue: q}}\n",
    "kueue-labels": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  podLabels: {kueue.x-k8s.io/queue-name: q}\n",
    "kueue-data-prep": "spec:\n  workload: kubeflow-paddlejob\n  image: x:1\n"
    + LIMITS
    + "  volumes: [{name: d, mountPath: /d, emptyDir: {}}]\n  dataPrep: {volume: d}\n"
    "  scheduling: {kueue: {queue: default}}\n",
    "kueue-requests": "spec:\n  workload: job\n  image: x:1\n"
    + LIMITS
    + "  scheduling: {kueue: {queue: q}}\n",
    "kueue-runtime": "spec:\n  workload: trainjob\n  image: x:1\n  args: [t.py]\n"
    + LIMITS
    + "  trainjob: {runtime: team-paddle}\n  scheduling: {kueue: {queue: q}}\n",
    "collective-launcher": "spec:\n  workload: collective-job\n  image: x:1\n"
    + LIMITS
    + "  command: [python3, t.py]\n  worker: {replicas: 2}\n",
    "paddlejob-intranet": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  worker: {replicas: 2}\n  paddlejob: {intranet: Service}\n",
    "collective-deadline": "spec:\n  workload: collective-job\n  image: x:1\n  args: [t.py]\n"
    + LIMITS
    + "  worker: {replicas: 2}\n  scheduling: {kueue: {queue: q}}\n",
    "group-restarts": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  run: {restarts: 2}\n",
    "ps-end": "spec:\n  workload: paddlejob\n  image: paddlepaddle/paddle:3.3.1\n"
    + LIMITS
    + "  ps: {replicas: 1}\n  run: {activeDeadlineSeconds: 60}\n",
    "checkpoint-volume": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  volumes: [{name: a, mountPath: /a, emptyDir: {}}]\n  checkpoint: {volume: a}\n",
    "launcher-devices": "spec:\n  workload: collective-job\n  image: x:1\n"
    + LIMITS
    + "  args: [--devices, '0', t.py]\n",
    "networks": "spec:\n  workload: job\n  image: x:1\n" + LIMITS + "  networks: [a@eth0]\n",
    "nccl": "spec:\n  workload: job\n  image: x:1\n"
    + LIMITS
    + "  nccl: {transport: tcp, gidIndex: 3}\n",
    "pod-security": "spec:\n  workload: job\n  image: x:1\n"
    + LIMITS
    + "  security: {capabilities: {add: [IPC_LOCK]}, podSecurity: baseline}\n",
    "topology-unhonoured": "spec:\n  workload: collective-job\n  image: x:1\n  args: [t.py]\n"
    + LIMITS
    + "  scheduling: {topology: {required: rack}}\n",
    "topology-tier": "spec:\n  workload: collective-job\n  image: x:1\n  args: [t.py]\n"
    + LIMITS
    + "  scheduling: {scheduler: volcano, topology: {required: rack}}\n",
    "unknown-resource": "spec:\n  workload: job\n  image: x:1\n"
    "  resources: {limits: {memory: 1Gi, nvidia.com/gpus: 1}}\n",
    "shm-memory": "spec:\n  workload: job\n  image: x:1\n" + LIMITS + "  shm: 1Gi\n",
    "rwx-storage-class": "spec:\n  workload: paddlejob\n  image: x:1\n"
    + LIMITS
    + "  worker: {replicas: 2}\n"
    "  volumes: [{name: d, mountPath: /d, dynamic: {}, capacity: 1Gi}]\n",
    "service-account-token": "spec:\n  workload: distributed-job\n  image: x:1\n"
    + LIMITS
    + "  automountServiceAccountToken: false\n"
    "  volumes: [{name: d, mountPath: /d, emptyDir: {}}]\n"
    "  distributed: {volume: d, trainConfigDir: q}\n",
    "default-account-token": "spec:\n  workload: job\n  image: x:1\n"
    + LIMITS
    + "  automountServiceAccountToken: true\n",
    "dns-config": "spec:\n  workload: job\n  image: x:1\n" + LIMITS + "  dnsPolicy: None\n",
    "dns-policy": "spec:\n  workload: collective-job\n  image: x:1\n  args: [t.py]\n"
    + LIMITS
    + "  dnsPolicy: Default\n",
    "env-override": "spec:\n  workload: job\n  image: x:1\n"
    + LIMITS
    + "  nccl: {transport: ib}\n  env: [{name: NCCL_NET, value: Socket}]\n",
    "llm-checkpoint": "spec:\n  workload: collective-job\n  image: x:1\n"
    + LIMITS
    + "  command: [erniekit, train, --config, c.yaml]\n"
    "  volumes: [{name: c, mountPath: /c, claim: {name: c}}]\n  checkpoint: {volume: c}\n",
    "ipc-lock-non-root": "spec:\n"
    + COLLECTIVE
    + "  args: [t.py]\n  security: {runAsNonRoot: true, capabilities: {add: [IPC_LOCK]}}\n",
    "rdma": "spec:\n" + COLLECTIVE + "  args: [t.py]\n  nccl: {transport: roce}\n",
    "nccl-accelerator": "spec:\n"
    + COLLECTIVE
    + "  args: [t.py]\n  accelerator: kunlunxin.com/xpu\n"
    "  env: [{name: NCCL_DEBUG, value: INFO}]\n",
    "root-volume-owner": "spec:\n"
    + COLLECTIVE
    + "  args: [t.py]\n  volumes: [{name: c, mountPath: /c, claim: {name: c}}]\n"
    "  checkpoint: {volume: c}\n",
    "launcher-port": "spec:\n" + COLLECTIVE + "  args: [t.py]\n  collective: {port: 37777}\n",
}
SILENCEABLE = [rule for rule in RULES if rule not in REQUIRED]


def spec_text(rule: str, extra: str = "") -> str:
    name = "n" * 60 if rule == "name-length" else "demo"
    return f"{HEADER}metadata: {{name: {name}}}\n{TRIGGERS[rule]}{extra}"


def write(tmp_path, text: str, name: str = "demo.yaml") -> str:
    jobs = tmp_path / "jobs"
    jobs.mkdir(exist_ok=True)
    (jobs / name).write_text(text)
    return str(jobs / name)


def rules_of(runner, *args: str) -> tuple[int, set[str]]:
    """The exit code of `validate --no-manifests --format json` and the rules it reports (the
    spec's findings: a silenced rule may still leave a manifest the API refuses, see below)."""
    result = runner.invoke(cli, ["validate", "--no-manifests", "--format", "json", *args])
    assert "Traceback" not in result.stderr, result.stderr
    return result.exit_code, {d["rule"] for d in json.loads(result.stdout)}


def test_every_rule_has_a_trigger():
    assert sorted(TRIGGERS) == sorted(RULES)


@pytest.mark.parametrize("rule", RULES)
def test_each_trigger_breaks_its_rule_and_no_other_rule_is_an_error(runner, tmp_path, rule):
    result = runner.invoke(cli, ["validate", "--format", "json", write(tmp_path, spec_text(rule))])
    found = json.loads(result.stdout)
    assert rule in {d["rule"] for d in found}
    assert {d["rule"] for d in found if d["severity"] == "error"} <= {rule}


@pytest.mark.parametrize("rule", SILENCEABLE)
def test_every_rule_but_the_required_can_be_silenced_in_the_spec(runner, tmp_path, rule):
    spec = write(tmp_path, spec_text(rule, f"ignore: [{{rule: {rule}}}]\n"))
    code, found = rules_of(runner, spec)
    assert code == 0
    assert rule not in found and "ignore-unused" not in found
    # and the job renders, even with an error silenced: what the spec says, no traceback
    result = runner.invoke(cli, ["render", spec, "-o", str(tmp_path / "deploy")])
    assert result.exit_code == 0, result.output
    assert f"[{rule}]" not in result.stderr


@pytest.mark.parametrize("rule", SILENCEABLE)
def test_every_rule_but_the_required_can_be_silenced_for_a_run(runner, tmp_path, rule):
    spec = write(tmp_path, spec_text(rule))
    code, found = rules_of(runner, spec, "--ignore", rule)
    assert code == 0 and rule not in found
    for command in ("render", "check", "diff"):
        result = runner.invoke(
            cli, [command, spec, "-o", str(tmp_path / "deploy"), "--ignore", rule]
        )
        assert result.exit_code == 0, (command, result.output)
        assert f"[{rule}]" not in result.stderr


def test_a_silenced_rule_whose_manifest_is_invalid_is_still_caught_by_the_manifests(
    runner, tmp_path
):
    """Silencing volume-capacity renders a PV without a capacity: the default validation of
    the rendered manifests refuses it, so a silenced finding cannot sneak past validate."""
    spec = write(tmp_path, spec_text("volume-capacity", "ignore: [{rule: volume-capacity}]\n"))
    result = runner.invoke(cli, ["validate", spec])
    assert result.exit_code == 1
    assert "[volume-capacity]" not in result.stderr
    assert "PersistentVolume/" in result.stderr and "[in-process]" in result.stderr


@pytest.mark.parametrize("rule", REQUIRED)
def test_a_required_rule_cannot_be_silenced(runner, tmp_path, rule):
    spec = write(tmp_path, spec_text(rule))
    for command in ("validate", "render", "check", "diff"):
        result = runner.invoke(cli, [command, spec, "--ignore", rule])
        assert result.exit_code == 2, result.output
        assert f"rule '{rule}' cannot be silenced" in result.stderr
    code, found = rules_of(
        runner, write(tmp_path, spec_text(rule, f"ignore: [{{rule: {rule}}}]\n"))
    )
    assert code == 1 and {rule, "ignore-required"} <= found


def test_an_unknown_rule_is_a_usage_error_with_the_closest_rule(runner, tmp_path):
    spec = write(tmp_path, spec_text("image-tag"))
    for command in ("validate", "render", "check", "diff"):
        result = runner.invoke(cli, [command, spec, "--ignore", "secret-literl"])
        assert result.exit_code == 2, result.output
        assert "unknown rule 'secret-literl' (did you mean 'secret-literal'?)" in result.stderr
        assert not (tmp_path / "deploy").exists()


def test_a_run_ignores_every_rule_it_is_given(runner, tmp_path):
    spec = write(tmp_path, spec_text("secret-literal").replace("x:1", "x"))
    assert rules_of(runner, spec) == (1, {"secret-literal", "image-tag"})
    assert rules_of(runner, spec, "--ignore", "secret-literal") == (0, {"image-tag"})
    both = rules_of(runner, spec, "--ignore", "secret-literal", "--ignore", "image-tag")
    assert both == (0, set())


ENV = (
    "spec:\n  workload: paddlejob\n  image: x:1\n" + LIMITS + "  env:\n"
    "    - {name: API_KEY, value: sk-live-4eC39HqLyjWDarjtT1zdp7dc}\n"
    "    - {name: STRIPE_KEY, value: sk-live-4eC39HqLyjWDarjtT1zdp7dc}\n"
    "  worker:\n    env: [{name: HF_TOKEN, value: hf_4eC39HqLyjWDarjtT1zdp7dc}]\n"
)


def env_findings(runner, tmp_path, ignore: str) -> tuple[int, list[str]]:
    spec = write(tmp_path, f"{HEADER}metadata: {{name: demo}}\n{ENV}ignore:\n{ignore}")
    result = runner.invoke(cli, ["validate", "--format", "json", spec])
    return result.exit_code, [f"{d['path']} [{d['rule']}]" for d in json.loads(result.stdout)]


def test_a_path_silences_that_field_only(runner, tmp_path):
    code, found = env_findings(
        runner, tmp_path, "  - {rule: secret-literal, path: '$.spec.env[1].value'}\n"
    )
    assert code == 1
    assert found == [
        "$.spec.env[0].value [secret-literal]",
        "$.spec.worker.env[0].value [secret-literal]",
    ]


def test_a_path_silences_everything_under_it_but_not_a_sibling_that_shares_its_prefix(
    runner, tmp_path
):
    code, found = env_findings(runner, tmp_path, "  - {rule: secret-literal, path: '$.spec.env'}\n")
    assert (code, found) == (1, ["$.spec.worker.env[0].value [secret-literal]"])
    # `$.spec.e` is not a field above `$.spec.env`: nothing silenced, and the entry is stale
    code, found = env_findings(runner, tmp_path, "  - {rule: secret-literal, path: '$.spec.e'}\n")
    assert code == 1 and len(found) == 4 and found[-1] == "$.ignore[0] [ignore-unused]"


def test_an_entry_without_a_path_silences_its_rule_in_the_whole_spec(runner, tmp_path):
    code, found = env_findings(runner, tmp_path, "  - {rule: secret-literal, reason: test keys}\n")
    assert (code, found) == (0, [])


def test_an_entry_only_silences_its_own_rule(runner, tmp_path):
    code, found = env_findings(runner, tmp_path, "  - {rule: image-tag, path: '$.spec.env'}\n")
    # Every check ran (the environments too, errors or not), so the entry is known to be stale.
    assert code == 1 and len(found) == 4 and found[-1] == "$.ignore[0] [ignore-unused]"


def test_an_entry_that_silences_nothing_is_a_positioned_warning(runner, tmp_path):
    spec = write(
        tmp_path,
        f"{HEADER}metadata: {{name: demo}}\nspec:\n  workload: paddlejob\n  image: x:1\n{LIMITS}"
        "ignore:\n  - {rule: secret-literal, path: '$.spec.env[2].value'}\n"
        "  - {rule: image-tag}\n",
    )
    result = runner.invoke(cli, ["validate", spec])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[:2] == [
        f"{spec}:9:5: warning: $.ignore[0]: this entry silences nothing: no 'secret-literal' "
        "finding at or under $.spec.env[2].value (remove it, or correct its rule or path) "
        "[ignore-unused]",
        f"{spec}:10:5: warning: $.ignore[1]: this entry silences nothing: no 'image-tag' "
        "finding in this spec (remove it, or correct its rule or path) [ignore-unused]",
    ]


def test_a_run_rule_does_not_make_the_spec_entry_for_it_stale(runner, tmp_path):
    spec = write(tmp_path, spec_text("image-tag", "ignore: [{rule: image-tag}]\n"))
    assert rules_of(runner, spec, "--ignore", "image-tag") == (0, set())


OVERLAY = (
    f"{HEADER}metadata: {{name: demo}}\nspec:\n  workload: paddlejob\n  image: x:1\n{LIMITS}"
    "overlays:\n  prod:\n    spec:\n"
    "      env: [{name: API_KEY, value: sk-live-4eC39HqLyjWDarjtT1zdp7dc}]\n"
)


def test_an_overlay_finding_is_silenced_by_its_overlay_path(runner, tmp_path):
    spec = write(tmp_path, OVERLAY)
    assert rules_of(runner, spec) == (1, {"secret-literal"})
    result = runner.invoke(cli, ["validate", spec])
    assert "$.overlays.prod.spec.env[0].value:" in result.stderr
    silenced = OVERLAY + "ignore: [{rule: secret-literal, path: '$.overlays.prod.spec.env'}]\n"
    assert rules_of(runner, write(tmp_path, silenced)) == (0, set())
    # the base's path does not reach into the overlay
    base_only = OVERLAY + "ignore: [{rule: secret-literal, path: '$.spec.env'}]\n"
    assert rules_of(runner, write(tmp_path, base_only)) == (1, {"secret-literal", "ignore-unused"})


def test_a_silenced_base_finding_stays_silenced_in_every_environment(runner, tmp_path):
    text = spec_text("image-tag", "overlays:\n  prod: {spec: {worker: {replicas: 3}}}\n")
    spec = write(tmp_path, text + "ignore: [{rule: image-tag, path: '$.spec.image'}]\n")
    assert rules_of(runner, spec) == (0, set())


def test_the_entries_are_never_rendered(runner, tmp_path):
    plain = write(tmp_path, spec_text("secret-literal"), "plain.yaml")
    entry = "ignore: [{rule: secret-literal, path: '$.spec.env[0].value', reason: a test key}]\n"
    with_entry = write(tmp_path, spec_text("secret-literal", entry), "silenced.yaml")
    first = runner.invoke(cli, ["render", plain, "--stdout", "--ignore", "secret-literal"])
    second = runner.invoke(cli, ["render", with_entry, "--stdout"])
    assert first.exit_code == second.exit_code == 0
    assert first.stdout == second.stdout
    assert "ignore" not in second.stdout and "a test key" not in second.stdout


def test_json_lists_only_what_is_reported(runner, tmp_path):
    spec = write(tmp_path, spec_text("image-tag"))
    result = runner.invoke(cli, ["validate", "--format", "json", "--ignore", "image-tag", spec])
    assert result.exit_code == 0 and json.loads(result.stdout) == []


# --- the stamp: a reused job is checked with the same rules ---------------------------------


def render(runner, spec, deploy, *args):
    return runner.invoke(cli, ["render", spec, "-o", str(deploy), *args])


def test_a_reused_job_cannot_skip_past_an_error_another_run_silenced(runner, tmp_path):
    spec = write(tmp_path, spec_text("secret-literal"))
    deploy = tmp_path / "deploy"
    first = render(runner, spec, deploy, "--ignore", "secret-literal")
    assert first.exit_code == 0, first.output
    for command in ("render", "check", "diff"):
        again = runner.invoke(cli, [command, spec, "-o", str(deploy)])
        assert again.exit_code == 1, (command, again.output)
        assert "[secret-literal]" in again.stderr
    # with the same rules the job is reused
    same = render(runner, spec, deploy, "--ignore", "secret-literal")
    assert same.exit_code == 0 and same.stderr.endswith("0 written, 3 unchanged, 0 removed\n")


def test_a_reused_job_replays_the_warnings_of_this_run_only(runner, tmp_path):
    spec = write(tmp_path, spec_text("image-tag"))
    deploy = tmp_path / "deploy"
    shown = render(runner, spec, deploy)
    assert "[image-tag]" in shown.stderr
    silenced = render(runner, spec, deploy, "--ignore", "image-tag")
    assert silenced.exit_code == 0 and "[image-tag]" not in silenced.stderr
    stamp = json.loads((deploy / "demo" / ".paddlegen-stamp").read_text().split("\n", 1)[1])
    assert stamp["warnings"] == []
    again = render(runner, spec, deploy)
    assert again.exit_code == 0 and "[image-tag]" in again.stderr
    # a second run with the same rules reuses the job and replays its (silenced: no) warnings
    reused = render(runner, spec, deploy, "--ignore", "image-tag")
    assert "[image-tag]" not in reused.stderr
    assert reused.stderr.endswith("0 written, 3 unchanged, 0 removed\n")


def test_ignore_completes_the_rules_that_can_be_silenced(runner):
    assert complete(runner, "paddlegen render --ignore secret") == ["secret-literal"]
    assert complete(runner, "paddlegen validate --ignore volume-") == [
        "volume-capacity",
        "volume-unique",
        "volume-access-mode",
    ]
