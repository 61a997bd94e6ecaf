"""Semantic checks of the operator workloads (paddlejob, kubeflow-paddlejob): position and rule."""

from __future__ import annotations

import pytest

from paddlegen.spec.loader import Document, parse_spec
from tests import builders
from tests.builders import COMMON_WARNINGS, DEMO, job_spec, report_of

# Besides the warnings every small spec gets, the unbounded parameter servers' (covered by
# tests/unit/test_checks_ps_end.py).
QUIET = (*COMMON_WARNINGS, "ps-end")


def findings_of(doc: Document, workload: str | None = None) -> list[str]:
    return report_of(doc, workload, QUIET)


def findings(body: str, workload: str | None = None) -> list[str]:
    return builders.findings(body, workload, QUIET)


PADDLEJOB = "spec:\n  workload: paddlejob\n  image: img:1\n"
KUBEFLOW = PADDLEJOB.replace("paddlejob", "kubeflow-paddlejob")
HETER = "  ps: {replicas: 1}\n  heter: {replicas: 1}\n"


def test_with_gloo_needs_ps():
    assert findings(PADDLEJOB + "  worker: {replicas: 2}\n  paddlejob:\n    withGloo: 1\n") == [
        "spec.yaml:9:15: error: $.spec.paddlejob.withGloo: withGloo 1 needs ps: the operator "
        "only starts Gloo in PS mode (add spec.ps, or remove withGloo) [paddlejob-gloo]"
    ]


@pytest.mark.parametrize(
    "body",
    [
        "  paddlejob: {withGloo: 0}\n",
        # paddle-operator sets Gloo up whenever ps exists (paddlejob_helper.go:268-275); its
        # own deploy/examples/wide_and_deep_service.yaml combines the two.
        "  ps: {replicas: 1}\n  paddlejob: {withGloo: 2, intranet: Service}\n",
    ],
    ids=["off-without-ps", "with-ps-on-service-intranet"],
)
def test_with_gloo_off_or_with_ps_is_fine(body):
    assert findings(PADDLEJOB + body) == []


def test_a_paddleflow_collective_job_on_service_intranet_would_hang():
    body = PADDLEJOB + "  worker: {replicas: 2}\n"
    assert findings(body + "  paddlejob: {intranet: Service}\n") == [
        "spec.yaml:8:25: error: $.spec.paddlejob.intranet: a PaddleFlow Collective job with "
        "intranet Service hangs for ever: the operator names the master by its Service, and "
        "Paddle's launcher starts the master only where that name is the pod's own IP, so no "
        "rank serves it (leave intranet out (PodIP) or set Host; or use workload "
        "collective-job) [paddlejob-intranet]"
    ]
    for fine in ("{intranet: Host}", "{intranet: PodIP}"):
        assert findings(body + f"  paddlejob: {fine}\n") == []
    assert (
        findings(PADDLEJOB + "  paddlejob: {intranet: Service}\n") == []
    )  # Single mode: one worker, no rendezvous


def test_elastic_mode_is_on_whenever_the_field_is_there():
    body = (
        "spec:\n  image: img:1\n  ps: {replicas: 1}\n  run: {restartPolicy: Never}\n"
        "  paddlejob: {elastic: 0}\n  workload: paddlejob\n"
    )
    assert findings(body) == [
        "spec.yaml:7:24: warning: $.spec.run.restartPolicy: elastic mode runs every pod with "
        "restartPolicy OnFailure; Never is overridden (remove run.restartPolicy) "
        "[paddlejob-elastic]",
        "spec.yaml:8:24: error: $.spec.paddlejob.elastic: elastic mode has no PS mode: the "
        "operator then gives the pods no endpoints (its ConfigMap is not passed on), which ps "
        "and worker pods need to find each other (remove spec.ps (collective training), or "
        "remove elastic) [paddlejob-elastic]",
        "spec.yaml:8:24: warning: $.spec.paddlejob.elastic: elastic: 0 turns elastic mode on: "
        "the operator only checks that the field is there (remove paddlejob.elastic to turn it "
        "off) [paddlejob-elastic]",
    ]
    assert findings(PADDLEJOB + "  worker: {replicas: 2}\n  paddlejob: {elastic: 1}\n") == []


@pytest.mark.parametrize(
    ("workload", "name", "how"),
    [
        ("paddlejob", "PADDLE_TRAINERS_NUM", "the operator's ConfigMap (yours would override"),
        ("paddlejob", "PADDLE_TRAINER_ID", "the operator, after the spec's env (it would replace"),
        ("kubeflow-paddlejob", "PADDLE_MASTER", "the operator, after the spec's env"),
    ],
)
def test_env_the_operator_sets_is_an_error(workload, name, how):
    env = f"env: [{{name: {name}, value: '1'}}]"
    (line,) = findings(
        f"spec: {{workload: {workload}, image: img:1, worker: {{replicas: 2, {env}}}}}\n"
    )
    assert f"error: $.spec.worker.env[0].name: env '{name}' is set by {how}" in line
    assert line.endswith("[operator-env]")
    # the other operator does not set it: no finding there
    other = "kubeflow-paddlejob" if workload == "paddlejob" else "paddlejob"
    assert findings(f"spec: {{workload: {other}, image: img:1, {env}}}\n") == []


def test_a_paddleflow_gang_smaller_than_the_job_can_deadlock():
    body = "  worker: {replicas: 4}\n  scheduling: {scheduler: volcano, minAvailable: 3}\n"
    (line,) = findings(PADDLEJOB + body)
    assert line.startswith(
        "spec.yaml:8:50: warning: $.spec.scheduling.minAvailable: minAvailable 3 of 4 pods can "
        "deadlock"
    )
    assert line.endswith(
        "(leave minAvailable out (all pods start together)) [paddlejob-min-available]"
    )
    assert findings(PADDLEJOB + body.replace("minAvailable: 3", "minAvailable: 4")) == []
    # training-operator gives its pods their env without waiting for every pod
    assert findings(KUBEFLOW + body) == []
    # elastic pods take no endpoints ConfigMap
    assert findings(PADDLEJOB + body + "  paddlejob: {elastic: 1}\n") == []


def test_heter_needs_ps():
    assert findings(PADDLEJOB + "  heter: {replicas: 1}\n") == [
        "spec.yaml:7:3: error: $.spec.heter: the heter role needs ps: heterogeneous training "
        "is a form of PS mode (add spec.ps, or remove spec.heter) [paddlejob-heter]"
    ]


def test_heter_with_ps_is_a_warning_that_the_pods_fail():
    (finding,) = findings(PADDLEJOB + HETER)
    assert finding.startswith("spec.yaml:8:3: warning: $.spec.heter: the operator (v0.3.5) ")
    assert "TRAINING_ROLE=HETER, which Paddle's role maker refuses" in finding
    assert finding.endswith("[paddlejob-heter]")


def test_kubeflow_has_no_heter():
    assert findings(KUBEFLOW + HETER) == [
        "spec.yaml:8:3: error: $.spec.heter: workload 'kubeflow-paddlejob' has no heter role: "
        "the Kubeflow PaddleJob knows only Master (from ps) and Worker (use workload "
        "'paddlejob' for heterogeneous training) [kubeflow-heter]"
    ]


def test_the_workload_override_is_checked_too():
    body = PADDLEJOB + HETER
    # paddlejob has heter (whose pods need the user's own mapping)
    assert [line.rsplit(" ", 1)[-1] for line in findings(body)] == ["[paddlejob-heter]"]
    assert [line.rsplit(" ", 1)[-1] for line in findings(body, "kubeflow-paddlejob")] == [
        "[kubeflow-heter]"
    ]


@pytest.mark.parametrize(
    ("workload", "role", "suffix"),
    [
        ("paddlejob", "worker", "worker-11"),
        ("paddlejob", "ps", "ps-11"),
        # the operator names Master pods <name>-master-<i>
        ("kubeflow-paddlejob", "ps", "master-11"),
    ],
)
def test_pod_names_must_stay_dns_labels(workload, role, suffix):
    name = "n" * (63 - len(suffix))  # one character too long for the last pod's name
    text = job_spec(name, extra=f"  {role}: {{replicas: 12}}\n")
    doc = parse_spec(text.replace("workload: job", f"workload: {workload}"), "spec.yaml")
    derived = f"{name}-{suffix}"
    assert findings_of(doc) == [
        f"spec.yaml:4:9: error: $.metadata.name: '{name}' is too long for workload "
        f"'{workload}': the derived name '{derived}' has 64 characters, more than 63 (shorten "
        "the name by 1 characters) [name-length]"
    ]


def test_the_longest_name_that_fits():
    name = "n" * 54  # name-worker-9 is exactly 63 characters
    body = "spec: {image: x, worker: {replicas: 10}, workload: paddlejob}\n"
    assert findings_of(parse_spec(DEMO.replace("demo", name) + body, "spec.yaml")) == []


def test_settings_of_another_workload_are_reported():
    assert findings(KUBEFLOW + "  paddlejob: {cleanPodPolicy: Never}\n") == [
        "spec.yaml:7:3: warning: $.spec.paddlejob: spec.paddlejob only applies to workload "
        "'paddlejob'; workload 'kubeflow-paddlejob' ignores it [workload-setting]"
    ]
    assert findings("spec: {image: img:1, kubeflow: {port: 1234}, workload: paddlejob}\n") == [
        "spec.yaml:4:22: warning: $.spec.kubeflow: spec.kubeflow only applies to workload "
        "'kubeflow-paddlejob'; workload 'paddlejob' ignores it [workload-setting]"
    ]


def test_run_fields_the_paddleflow_crd_lacks_are_reported():
    assert findings(
        "spec: {image: img:1, run: {restartPolicy: Never, backoffLimit: 3}, workload: paddlejob}\n"
    ) == [
        "spec.yaml:4:50: warning: $.spec.run.backoffLimit: the PaddleFlow PaddleJob has no "
        "backoffLimit; workload 'paddlejob' ignores it (workload 'kubeflow-paddlejob' supports "
        "it (runPolicy)) [workload-setting]"
    ]


def test_recreate_on_change_is_deprecated_for_every_workload():
    """Every change runs the job anew under Argo CD now (its objects are Sync hooks)."""
    for workload in ("paddlejob", "job"):
        assert findings(
            f"spec: {{workload: {workload}, image: img:1, run: {{recreateOnChange: true}}}}\n"
        ) == [
            f"spec.yaml:4:{40 + len(workload)}: warning: $.spec.run.recreateOnChange: "
            "run.recreateOnChange no longer does anything: under Argo CD every change to a "
            "job's objects deletes the last run and starts a new one (they are Sync hooks) "
            "(remove it) [deprecated]"
        ]


@pytest.mark.parametrize("policy", ["Never", "OnFailure"])
def test_a_clean_pod_policy_that_keeps_pods_is_reported(policy):
    """paddle-operator v0.3.5 creates a missing pod of a completed PaddleJob again unless its
    policy cleaned them; verified live in tests/cluster/test_argocd_runtime_safety.py."""
    (line,) = findings(
        f"spec: {{image: img:1, paddlejob: {{cleanPodPolicy: {policy}}}, workload: paddlejob}}\n"
    )
    assert line.startswith("spec.yaml:4:50: warning: $.spec.paddlejob.cleanPodPolicy: ")
    assert "trains again, with the first run's endpoints" in line
    assert line.endswith("[paddlejob-clean-pod-policy]")
    for safe in ("OnCompletion", "Always"):
        assert not findings(
            f"spec: {{image: img:1, paddlejob: {{cleanPodPolicy: {safe}}}, workload: paddlejob}}\n"
        )
