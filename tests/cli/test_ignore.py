"""Silencing rules: a spec's `ignore` entries and `--ignore RULE` on render, check, diff,
validate; and a reused job (the stamp) checked with the rules of the run that reuses it."""

from __future__ import annotations

import json

import pytest

from paddlegen.cli import cli
from paddlegen.rules import REQUIRED, RULES
from tests.builders import HEADER
from tests.cli.test_authoring import complete

LIMITS = "  resources: {limits: {memory: 1Gi}}\n"


def on(workload: str, more: str = "", image: str = "x:1", resources: str = LIMITS) -> str:
    """The lines under `spec:` of a ``workload`` with ``image`` and ``resources``, then ``more``."""
    return f"  workload: {workload}\n  image: {image}\n{resources}{more}"


JOB, PADDLEJOB, COLLECTIVE = on("job"), on("paddlejob"), on("collective-job")
SCRIPT = COLLECTIVE + "  args: [t.py]\n"  # a collective job's script: launched, no command
DISTRIBUTED = on("distributed-job", "  volumes: [{name: data, mountPath: /data, emptyDir: {}}]\n")
SETTINGS = "  distributed: {volume: data, trainConfigDir: q, hostPorts: false}\n"
NFS = "nfs: {server: s, path: /x}"


def volume(source: str) -> str:
    """A `volumes:` line with the volume a, mounted at /a, of ``source``."""
    return f"  volumes: [{{name: a, mountPath: /a, {source}}}]\n"


# For every rule: a spec (after `metadata` and `spec:`) that breaks it and, but for warnings,
# nothing else.
TRIGGERS = {
    "job-replicas": JOB + "  worker: {replicas: 2}\n",
    "image-required": "  workload: job\n" + LIMITS,
    "name-length": PADDLEJOB,  # with a long name: spec_text
    "volume-source": PADDLEJOB + volume("emptyDir: {}, hostPath: {path: /x}"),
    "volume-capacity": PADDLEJOB + volume(NFS),
    "volume-unique": PADDLEJOB
    + "  volumes: [{name: a, mountPath: /a, emptyDir: {}}, {name: a, mountPath: /b, "
    "emptyDir: {}}]\n",
    "volume-reference": DISTRIBUTED + SETTINGS + "  dataPrep: {volume: nope}\n",
    "cephfs-in-tree": PADDLEJOB
    + volume("cephfs: {inTree: true, monitors: ['m:6789']}, capacity: 1Gi"),
    # metadata has no namespace, so the Secret has none
    "cephfs-secret-namespace": PADDLEJOB
    + volume("cephfs: {clusterID: c, fsName: f, secretName: s}, capacity: 1Gi"),
    "env-unique": PADDLEJOB + "  env: [{name: A, value: '1'}, {name: A, value: '2'}]\n",
    "env-value": PADDLEJOB
    + "  env: [{name: A, value: '1', valueFrom: {fieldRef: {fieldPath: metadata.name}}}]\n",
    "secret-literal": PADDLEJOB
    + "  env: [{name: API_KEY, value: sk-live-4eC39HqLyjWDarjtT1zdp7dc}]\n",
    "image-tag": on("paddlejob", image="x"),
    "limits-missing": on("paddlejob", resources=""),
    "min-available": PADDLEJOB + "  scheduling: {minAvailable: 5}\n",
    "paddlejob-min-available": PADDLEJOB
    + "  worker: {replicas: 2}\n  scheduling: {scheduler: volcano, minAvailable: 1}\n",
    "paddlejob-heter": PADDLEJOB + "  heter: {replicas: 1}\n",
    "paddlejob-gloo": PADDLEJOB + "  paddlejob: {withGloo: 1}\n",
    "paddlejob-elastic": PADDLEJOB + "  paddlejob: {elastic: 0}\n",
    "paddlejob-clean-pod-policy": PADDLEJOB + "  paddlejob: {cleanPodPolicy: Never}\n",
    "operator-env": PADDLEJOB + "  env: [{name: PADDLE_PORT, value: '1'}]\n",
    "kubeflow-heter": on("kubeflow-paddlejob", "  ps: {replicas: 1}\n  heter: {replicas: 1}\n"),
    "workload-setting": PADDLEJOB + "  kubeflow: {port: 3000}\n",
    "distributed-roles": DISTRIBUTED + SETTINGS + "  ps: {replicas: 1}\n",
    "distributed-required": DISTRIBUTED,
    "distributed-ports": DISTRIBUTED + SETTINGS.replace("}", ", port: 65535, portsNum: 2}"),
    "distributed-command": DISTRIBUTED
    + "  command: [a]\n"
    + SETTINGS.replace("}", ", command: [b]}"),
    "distributed-env": DISTRIBUTED + SETTINGS + "  env: [{name: JOB_NAME, value: x}]\n",
    "hostport-nodes": DISTRIBUTED
    + "  distributed: {volume: data, trainConfigDir: q}\n  worker: {replicas: 2}\n",
    "collective-roles": SCRIPT + "  ps: {replicas: 1}\n",
    "collective-command": COLLECTIVE,
    "collective-restart": SCRIPT + "  run: {restartPolicy: OnFailure}\n",
    "collective-env": SCRIPT + "  env: [{name: PADDLE_NNODES, value: '2'}]\n",
    "collective-args": COLLECTIVE + "  args: [--nnodes, '2', t.py]\n",
    "workload-unsupported": on("trainjob", "  args: [t.py]\n  workingDir: /w\n"),
    "dataprep-layout": DISTRIBUTED + SETTINGS + "  dataPrep: {volume: data, splitCount: 3}\n",
    "volume-access-mode": PADDLEJOB
    + "  worker: {replicas: 2}\n"
    + volume("dynamic: {}, capacity: 1Gi, accessModes: [ReadWriteOnce]"),
    "deprecated": JOB + "  run: {recreateOnChange: true}\n",
    "control-character": PADDLEJOB + '  args: ["a\\x01b"]\n',
    "quantity-fractional-bytes": on(
        "paddlejob", resources="  resources: {limits: {memory: 500m}}\n"
    ),
    "resource-name": PADDLEJOB + "  worker: {resources: {limits: {memory: 1Gi, storage: 1Gi}}}\n",
    "resource-quantity": on(
        "paddlejob", resources="  resources: {limits: {memory: 1Gi, example.com/fpga: 500m}}\n"
    ),
    "gpus-override": on(
        "paddlejob",
        "  gpus: 2\n",
        resources="  resources: {limits: {memory: 1Gi, nvidia.com/gpu: 1}}\n",
    ),
    "gpu-shm": PADDLEJOB + "  gpus: 1\n",
    "implausible-size": PADDLEJOB + "  worker: {replicas: 1001}\n",
    "request-limit": on(
        "paddlejob", resources="  resources: {requests: {memory: 2Gi}, limits: {memory: 1Gi}}\n"
    ),
    "env-downward-api": PADDLEJOB
    + "  env: [{name: A, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 500m}}}]\n",
    "nfs-recycle": PADDLEJOB + volume(NFS + ", capacity: 1Gi, reclaimPolicy: Recycle"),
    # metadata has no namespace, so the PV has no claimRef
    "pv-binding": PADDLEJOB + volume(NFS + ", capacity: 1Gi, storageClassName: slow"),
    "toleration": PADDLEJOB + "  tolerations: [{operator: Equal}]\n",
    "env-key-ref": PADDLEJOB
    + "  env: [{name: A, valueFrom: {secretKeyRef: {name: s, key: a/b}}}]\n",
    "host-path": PADDLEJOB + "  volumes: [{name: a, mountPath: /a, hostPath: {path: /a/../b}}]\n",
    "image-whitespace": on("paddlejob", image="'x:1 '"),
    "topology-spread": PADDLEJOB
    + "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
    "DoNotSchedule, labelSelector: {matchLabels: {a: b}}, matchLabelKeys: [a]}]\n",
    "priority-class": JOB
    + "  priorityClassName: a\n  scheduling: {scheduler: volcano, priorityClassName: b}\n",
    "container-name": PADDLEJOB + "  initContainers: [{name: paddle, image: b:1}]\n",
    "container-port": JOB
    + "  sidecars: [{name: s, image: b:1, ports: [{containerPort: 80}, {containerPort: 80}]}]\n",
    "paddlejob-sidecar-pruned": PADDLEJOB + "  sidecars: [{name: s, image: b:1}]\n",
    "kueue-workload": PADDLEJOB + "  scheduling: {kueue: {queue: q}}\n",
    "kueue-labels": PADDLEJOB + "  podLabels: {kueue.x-k8s.io/queue-name: q}\n",
    "kueue-data-prep": on(
        "kubeflow-paddlejob",
        "  volumes: [{name: d, mountPath: /d, emptyDir: {}}]\n  dataPrep: {volume: d}\n"
        "  scheduling: {kueue: {queue: default}}\n",
    ),
    "kueue-requests": JOB + "  scheduling: {kueue: {queue: q}}\n",
    "kueue-runtime": on(
        "trainjob",
        "  args: [t.py]\n  trainjob: {runtime: team-paddle}\n  scheduling: {kueue: {queue: q}}\n",
    ),
    "collective-launcher": COLLECTIVE + "  command: [python3, t.py]\n  worker: {replicas: 2}\n",
    "paddlejob-intranet": PADDLEJOB + "  worker: {replicas: 2}\n  paddlejob: {intranet: Service}\n",
    "collective-deadline": SCRIPT + "  worker: {replicas: 2}\n  scheduling: {kueue: {queue: q}}\n",
    "group-restarts": PADDLEJOB + "  run: {restarts: 2}\n",
    "ps-end": on(
        "paddlejob",
        "  ps: {replicas: 1}\n  run: {activeDeadlineSeconds: 60}\n",
        "paddlepaddle/paddle:3.3.1",
    ),
    "checkpoint-volume": PADDLEJOB
    + "  volumes: [{name: a, mountPath: /a, emptyDir: {}}]\n  checkpoint: {volume: a}\n",
    "launcher-devices": COLLECTIVE + "  args: [--devices, '0', t.py]\n",
    "networks": JOB + "  networks: [a@eth0]\n",
    "nccl": JOB + "  nccl: {transport: tcp, gidIndex: 3}\n",
    "pod-security": JOB + "  security: {capabilities: {add: [IPC_LOCK]}, podSecurity: baseline}\n",
    "topology-unhonoured": SCRIPT + "  scheduling: {topology: {required: rack}}\n",
    "topology-tier": SCRIPT + "  scheduling: {scheduler: volcano, topology: {required: rack}}\n",
    "unknown-resource": on(
        "job", resources="  resources: {limits: {memory: 1Gi, nvidia.com/gpus: 1}}\n"
    ),
    "shm-memory": JOB + "  shm: 1Gi\n",
    "rwx-storage-class": PADDLEJOB
    + "  worker: {replicas: 2}\n"
    + volume("dynamic: {}, capacity: 1Gi"),
    "service-account-token": on(
        "distributed-job",
        "  automountServiceAccountToken: false\n"
        + volume("emptyDir: {}")
        + "  distributed: {volume: a, trainConfigDir: q}\n",
    ),
    "default-account-token": JOB + "  automountServiceAccountToken: true\n",
    "dns-config": JOB + "  dnsPolicy: None\n",
    "dns-policy": SCRIPT + "  dnsPolicy: Default\n",
    "env-override": JOB + "  nccl: {transport: ib}\n  env: [{name: NCCL_NET, value: Socket}]\n",
    "llm-checkpoint": COLLECTIVE + "  command: [erniekit, train, --config, c.yaml]\n"
    "  volumes: [{name: c, mountPath: /c, claim: {name: c}}]\n  checkpoint: {volume: c}\n",
    "ipc-lock-non-root": SCRIPT
    + "  security: {runAsNonRoot: true, capabilities: {add: [IPC_LOCK]}}\n",
    "rdma": SCRIPT + "  nccl: {transport: roce}\n",
    "nccl-accelerator": SCRIPT
    + "  accelerator: kunlunxin.com/xpu\n  env: [{name: NCCL_DEBUG, value: INFO}]\n",
    "root-volume-owner": SCRIPT
    + "  volumes: [{name: c, mountPath: /c, claim: {name: c}}]\n  checkpoint: {volume: c}\n",
    "launcher-port": SCRIPT + "  collective: {port: 37777}\n",
}
SILENCEABLE = [rule for rule in RULES if rule not in REQUIRED]


def spec_text(rule: str, extra: str = "") -> str:
    name = "n" * 60 if rule == "name-length" else "demo"
    return f"{HEADER}metadata: {{name: {name}}}\nspec:\n{TRIGGERS[rule]}{extra}"


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


ENV = PADDLEJOB + (
    "  env:\n"
    "    - {name: API_KEY, value: sk-live-4eC39HqLyjWDarjtT1zdp7dc}\n"
    "    - {name: STRIPE_KEY, value: sk-live-4eC39HqLyjWDarjtT1zdp7dc}\n"
    "  worker:\n    env: [{name: HF_TOKEN, value: hf_4eC39HqLyjWDarjtT1zdp7dc}]\n"
)
SECRETS = [
    f"{path} [secret-literal]"
    for path in ("$.spec.env[0].value", "$.spec.env[1].value", "$.spec.worker.env[0].value")
]
STALE = [*SECRETS, "$.ignore[0] [ignore-unused]"]  # nothing silenced, and the entry says so


@pytest.mark.parametrize(
    ("entry", "code", "found"),
    [
        ("{rule: secret-literal, path: '$.spec.env[1].value'}", 1, [SECRETS[0], SECRETS[2]]),
        ("{rule: secret-literal, path: '$.spec.env'}", 1, SECRETS[2:]),
        # `$.spec.e` is not a field above `$.spec.env`, though it shares its prefix
        ("{rule: secret-literal, path: '$.spec.e'}", 1, STALE),
        ("{rule: secret-literal, reason: test keys}", 0, []),
        # Every check ran (the environments too, errors or not), so the entry is known stale.
        ("{rule: image-tag, path: '$.spec.env'}", 1, STALE),
    ],
    ids=["that-field", "under-a-path", "not-a-prefix", "whole-spec", "its-own-rule-only"],
)
def test_an_entry_silences_its_rule_at_and_under_its_path(runner, tmp_path, entry, code, found):
    spec = write(tmp_path, f"{HEADER}metadata: {{name: demo}}\nspec:\n{ENV}ignore:\n  - {entry}\n")
    result = runner.invoke(cli, ["validate", "--format", "json", spec])
    reported = [f"{d['path']} [{d['rule']}]" for d in json.loads(result.stdout)]
    assert (result.exit_code, reported) == (code, found)


def test_an_entry_that_silences_nothing_is_a_positioned_warning(runner, tmp_path):
    spec = write(
        tmp_path,
        f"{HEADER}metadata: {{name: demo}}\nspec:\n{PADDLEJOB}ignore:\n"
        "  - {rule: secret-literal, path: '$.spec.env[2].value'}\n"
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
    f"{HEADER}metadata: {{name: demo}}\nspec:\n{PADDLEJOB}overlays:\n  prod:\n    spec:\n"
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
