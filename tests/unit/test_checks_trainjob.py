"""Checks of trainjob (#26): what a TrainJob cannot carry, the launcher contract's rules;
message, position and rule (its JobSet's pod names: test_jobset_names.py)."""

from __future__ import annotations

import pytest

from paddlegen.workloads.trainjob.carried import UNSUPPORTED
from tests.builders import findings, rules

TRAINJOB = "spec:\n  workload: trainjob\n  image: img:1\n  args: [train.py]\n"


def test_a_spec_with_the_settings_a_trainjob_carries_has_no_findings():
    assert (
        findings(
            TRAINJOB + "  shm: 1Gi\n  nodeSelector: {a: b}\n  serviceAccountName: sa\n"
            "  worker: {replicas: 4, podLabels: {x: y}}\n"
            "  scheduling: {scheduler: volcano, queue: q, minAvailable: 4}\n"
            "  run: {activeDeadlineSeconds: 60}\n"
        )
        == []
    )


def test_nothing_to_run_is_refused_as_for_collective_job():
    assert rules("spec:\n  workload: trainjob\n  image: img:1\n") == ["collective-command"]


@pytest.mark.parametrize("key", sorted(UNSUPPORTED))
def test_a_setting_the_trainjob_cannot_carry_is_refused_where_it_is(key):
    value = {
        "imagePullPolicy": "Always",
        "priorityClassName": "high",
        "runtimeClassName": "nvidia",
        "topologySpreadConstraints": "[{maxSkew: 1, topologyKey: z, "
        "whenUnsatisfiable: DoNotSchedule}]",
        "initContainers": "[{name: a, image: 'b:1'}]",
        "sidecars": "[{name: a, image: 'b:1'}]",
        "envFrom": "[{configMapRef: {name: c}}]",
        "workingDir": "/w",
    }[key]
    (line,) = findings(TRAINJOB + f"  worker:\n    {key}: {value}\n")
    severity = UNSUPPORTED[key][0]
    assert line.startswith(f"spec.yaml:9:5: {severity}: $.spec.worker.{key}: a TrainJob ")
    assert line.endswith("[workload-unsupported]")


def test_under_volcano_the_gang_has_every_pod_and_no_priority_of_its_own():
    found = findings(
        TRAINJOB + "  worker: {replicas: 3}\n"
        "  scheduling: {scheduler: volcano, minAvailable: 2, priorityClassName: high}\n"
    )
    assert found == [
        "spec.yaml:9:36: warning: $.spec.scheduling.minAvailable: Trainer's PodGroup waits for "
        "every one of the 3 pods, not 2: a TrainJob (Trainer v2.3.0) carries no gang size "
        "(remove minAvailable: a rank that starts alone waits for the others anyway) "
        "[workload-unsupported]",
        "spec.yaml:9:53: error: $.spec.scheduling.priorityClassName: a TrainJob (Trainer v2.3.0) "
        "cannot give its gang a priority: Trainer's PodGroup takes the priority class of the "
        "runtime's pods (remove it, or install a copy of paddlegen's Volcano runtime with a "
        "priorityClassName in its pod template and name it in trainjob.runtime) "
        "[workload-unsupported]",
    ]
    # Without Volcano there is no gang to speak of.
    assert rules(TRAINJOB + "  scheduling: {priorityClassName: high, minAvailable: 1}\n") == []


def test_the_contract_env_is_the_runtimes():
    (line,) = findings(TRAINJOB + "  env: [{name: PADDLE_JOB_ID, value: x}]\n")
    assert line == (
        "spec.yaml:8:16: error: $.spec.env[0].name: env 'PADDLE_JOB_ID' is set by workload "
        "'trainjob' from the JobSet's name (metadata.name) (remove it here) [collective-env]"
    )


def test_no_sidecar_hint_sends_anyone_to_trainjob():
    (line,) = findings(
        "spec:\n  workload: paddlejob\n  image: img:1\n  sidecars: [{name: s, image: 'b:1'}]\n"
    )
    assert "trainjob" not in line and "collective-job" in line
