"""The pod settings (spec.model.POD_FIELDS), spec-wide and per role, on every workload's pods."""

from __future__ import annotations

from typing import Any

import pytest

from tests import builders
from tests.helpers import POD_SETTINGS, ROLE_POD_SETTINGS

SETTINGS: dict[str, Any] = {
    **POD_SETTINGS,
    "podLabels": {**POD_SETTINGS["podLabels"], "team": "pods"},
}
OVERRIDES = ROLE_POD_SETTINGS
ROLES = {
    "job": {"worker": {}},
    "distributed-job": {"worker": {"replicas": 2}},
    "paddlejob": {"ps": {"replicas": 1}, "worker": {"replicas": 2}},
    "kubeflow-paddlejob": {"ps": {"replicas": 1}, "worker": {"replicas": 2}},
    "collective-job": {"worker": {"replicas": 2}},
}
WORKLOADS = tuple(ROLES)


def spec(workload: str, **extra: Any) -> dict[str, Any]:
    """``workload``'s spec with a data Job, its volume the distributed job's too."""
    own = {"distributed": {"volume": "data", "trainConfigDir": "qs"}}
    return builders.spec(
        workload,
        metadata={"namespace": "ml", "labels": {"team": "ads"}},
        volumes=[{"name": "data", "mountPath": "/data", "emptyDir": {}}],
        dataPrep={"volume": "data", "image": "r/data:v1"},
        **ROLES[workload],
        **(own if workload == "distributed-job" else {}),
        **extra,
    )


def render(data: dict[str, Any]) -> list[dict[str, Any]]:
    return list(builders.rendered_objects(data, argocd=False).values())


def training_pods(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """role -> pod template of the training object."""
    main = next(
        o for o in objects if o["metadata"]["name"] == "demo" and o["kind"] in ("Job", "PaddleJob")
    )
    body = main["spec"]
    if main["kind"] == "Job":
        return {"worker": body["template"]}
    if main["apiVersion"].startswith("kubeflow.org"):
        kinds = {"Master": "ps", "Worker": "worker"}
        return {kinds[k]: v["template"] for k, v in body["paddleReplicaSpecs"].items()}
    return {role: body[role]["template"] for role in ("ps", "worker", "heter") if role in body}


def data_pod(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (job,) = [o for o in objects if o["metadata"]["name"] == "demo-data"]
    template: dict[str, Any] = job["spec"]["template"]
    return template


def landed(template: dict[str, Any]) -> dict[str, Any]:
    """The pod settings as a template carries them, in the spec's terms."""
    pod, meta = template["spec"], template["metadata"]
    return {
        "imagePullSecrets": [s["name"] for s in pod.get("imagePullSecrets", [])],
        "serviceAccountName": pod.get("serviceAccountName"),
        "podLabels": meta["labels"],
        "podAnnotations": meta.get("annotations", {}),
        "priorityClassName": pod.get("priorityClassName"),
        "terminationGracePeriodSeconds": pod.get("terminationGracePeriodSeconds"),
        "runtimeClassName": pod.get("runtimeClassName"),
        "automountServiceAccountToken": pod.get("automountServiceAccountToken"),
        "dnsPolicy": pod.get("dnsPolicy"),
        "dnsConfig": pod.get("dnsConfig"),
        "topologySpreadConstraints": pod.get("topologySpreadConstraints", []),
    }


def expected(values: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    recommended = {
        "app.kubernetes.io/component": "training",
        "app.kubernetes.io/instance": "demo",
        "app.kubernetes.io/managed-by": "paddlegen",
        "app.kubernetes.io/name": "demo",
        "app.kubernetes.io/part-of": "paddlepaddle",
    }
    return {
        **values,
        # podLabels beside metadata.labels (which they override), the recommended ones win
        "podLabels": {"team": "ads", **values["podLabels"], **recommended},
        "podAnnotations": {**values["podAnnotations"], **(annotations or {})},
    }


def errors(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The errors on a spec: path, rule and message, sorted."""
    return sorted((d.path, d.rule, d.message) for d in builders.diagnostics(data) if d.is_error)


def assert_refused_spec_wide_and_per_role(field: str, value: Any, said: str) -> None:
    """A paddlejob's ``field`` set to ``value``, spec-wide, then the workers' own: an error
    says ``said``."""
    for where in ("spec", "worker"):
        data = spec("paddlejob")
        target = data["spec"] if where == "spec" else data["spec"]["worker"]
        target[field] = value
        messages = [message for _, _, message in errors(data)]
        assert any(said in m for m in messages), messages


@pytest.mark.parametrize("workload", WORKLOADS)
def test_spec_wide_settings_land_on_every_pod_and_the_data_job(workload):
    objects = render(spec(workload, **SETTINGS))
    pods = training_pods(objects)
    assert set(pods) == set(ROLES[workload])
    for template in pods.values():
        assert landed(template) == expected(SETTINGS)
    assert landed(data_pod(objects)) == expected(SETTINGS)


@pytest.mark.parametrize("workload", WORKLOADS)
def test_a_roles_own_settings_replace_the_spec_wide_ones_for_its_pods_only(workload):
    data = spec(workload, **SETTINGS)
    data["spec"]["worker"].update(OVERRIDES)
    objects = render(data)
    pods = training_pods(objects)
    assert landed(pods["worker"]) == expected(OVERRIDES)
    for role in set(pods) - {"worker"}:
        assert landed(pods[role]) == expected(SETTINGS)
    assert landed(data_pod(objects)) == expected(SETTINGS)  # the data Job takes the spec's


@pytest.mark.parametrize("workload", WORKLOADS)
def test_without_the_settings_nothing_changes(workload):
    objects = render(spec(workload))
    for template in [*training_pods(objects).values(), data_pod(objects)]:
        pod = template["spec"]
        for key in (
            "imagePullSecrets",
            "priorityClassName",
            "runtimeClassName",
            "terminationGracePeriodSeconds",
            "topologySpreadConstraints",
            "dnsPolicy",
            "dnsConfig",
        ):
            assert key not in pod
        assert "annotations" not in template["metadata"]


@pytest.mark.parametrize("workload", WORKLOADS)
def test_a_users_account_gets_no_api_token_except_for_distributed_peer_discovery(workload):
    objects = render(spec(workload, serviceAccountName="trainer"))
    for template in training_pods(objects).values():
        token = template["spec"]["automountServiceAccountToken"]
        assert token is (workload == "distributed-job")
    assert data_pod(objects)["spec"]["automountServiceAccountToken"] is False


@pytest.mark.parametrize("workload", WORKLOADS)
def test_the_users_token_choice_wins_where_the_workload_can_do_without(workload):
    objects = render(
        spec(workload, serviceAccountName="trainer", automountServiceAccountToken=True)
    )
    for template in [*training_pods(objects).values(), data_pod(objects)]:
        assert template["spec"]["automountServiceAccountToken"] is True
    data = spec(workload, serviceAccountName="trainer")
    data["spec"]["worker"]["automountServiceAccountToken"] = workload == "distributed-job"
    objects = render(data)
    assert training_pods(objects)["worker"]["spec"]["automountServiceAccountToken"] is (
        workload == "distributed-job"
    )
    assert data_pod(objects)["spec"]["automountServiceAccountToken"] is False


def test_a_host_network_paddlejob_keeps_cluster_dns_unless_the_spec_says_otherwise():
    host = {"intranet": "Host"}
    objects = render(spec("paddlejob", paddlejob=host))
    for template in training_pods(objects).values():
        assert template["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert "dnsPolicy" not in data_pod(objects)["spec"]  # on the pod network
    data = spec(
        "paddlejob", paddlejob=host, dnsPolicy="None", dnsConfig={"nameservers": ["10.96.0.10"]}
    )
    data["spec"]["worker"]["dnsPolicy"] = "Default"
    pods = training_pods(render(data))
    assert (pods["ps"]["spec"]["dnsPolicy"], pods["worker"]["spec"]["dnsPolicy"]) == (
        "None",
        "Default",
    )
    assert pods["worker"]["spec"]["dnsConfig"] == {"nameservers": ["10.96.0.10"]}


def test_distributed_binds_its_peer_discovery_role_to_the_users_account():
    objects = render(spec("distributed-job", serviceAccountName="trainer"))
    kinds = {o["kind"]: o for o in objects}
    assert "ServiceAccount" not in kinds  # the user's exists already
    assert kinds["Role"]["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}
    ]
    binding = kinds["RoleBinding"]
    assert binding["roleRef"]["name"] == "demo"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "trainer", "namespace": "ml"}]
    assert training_pods(objects)["worker"]["spec"]["serviceAccountName"] == "trainer"


def test_distributed_without_an_account_keeps_its_own():
    objects = render(spec("distributed-job"))
    kinds = {o["kind"]: o for o in objects}
    assert kinds["ServiceAccount"]["metadata"]["name"] == "demo"
    assert kinds["RoleBinding"]["subjects"][0]["name"] == "demo"
    pod = training_pods(objects)["worker"]["spec"]
    assert (pod["serviceAccountName"], pod["automountServiceAccountToken"]) == ("demo", True)


def test_the_recommended_labels_win_over_pod_labels():
    objects = render(spec("paddlejob", podLabels={"app.kubernetes.io/instance": "other"}))
    for template in training_pods(objects).values():
        assert template["metadata"]["labels"]["app.kubernetes.io/instance"] == "demo"


@pytest.mark.parametrize("workload", ["job", "distributed-job"])
def test_under_volcano_a_batch_jobs_pods_keep_a_priority_of_their_own(workload):
    """Theirs on the data Job's pod too; without it the gang's (tests/render/test_job.py)."""
    objects = render(spec(workload, scheduling={"scheduler": "volcano"}, priorityClassName="p"))
    assert training_pods(objects)["worker"]["spec"]["priorityClassName"] == "p"
    assert data_pod(objects)["spec"]["priorityClassName"] == "p"


@pytest.mark.parametrize("workload", ["paddlejob", "kubeflow-paddlejob"])
def test_an_operators_gang_keeps_its_priority_and_the_pods_have_their_own(workload):
    gang = {"scheduler": "volcano", "priorityClassName": "gang"}
    objects = render(spec(workload, scheduling=gang, priorityClassName="pods"))
    main = next(o for o in objects if o["kind"] == "PaddleJob")
    policy = main["spec"].get("schedulingPolicy") or main["spec"]["runPolicy"]["schedulingPolicy"]
    assert policy["priorityClass"] == "gang"
    for template in training_pods(objects).values():
        assert template["spec"]["priorityClassName"] == "pods"


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("podLabels", {"team": "not a label value"}, "is not a Kubernetes label value"),
        ("podLabels", {"bad key!": "x"}, "is not a Kubernetes qualified name"),
        ("podAnnotations", {"bad key!": "x"}, "is not a Kubernetes qualified name"),
        ("imagePullSecrets", ["Reg_Cred"], "is not a DNS-1123 subdomain"),
        ("serviceAccountName", "Trainer", "is not a DNS-1123 subdomain"),
        ("terminationGracePeriodSeconds", -1, "less than the minimum of 0"),
        ("automountServiceAccountToken", "yes", "is not of type 'boolean'"),
        ("dnsPolicy", "ClusterFirstWithHostnet", "is not one of"),
        ("dnsConfig", {"nameservers": ["1.1.1.1"] * 4}, "is too long"),
        ("dnsConfig", {"nameservers": ["dns.example.com"]}, "is not an IP address"),
        ("dnsConfig", {"searches": ["a"] * 33}, "is too long"),
        ("dnsConfig", {"searches": ["Corp.Example"]}, "is not a DNS search domain"),
        ("dnsConfig", {"searches": ["a" * 254]}, "is not a DNS search domain"),
        ("dnsConfig", {"options": [{"name": ""}]}, "should be non-empty"),
        ("dnsConfig", {"options": [{"value": "2"}]}, "missing required field 'name'"),
        ("dnsConfig", {"nameserver": ["1.1.1.1"]}, "unknown field"),
    ],
)
def test_pod_settings_are_checked_like_the_objects_own(field, value, said):
    assert_refused_spec_wide_and_per_role(field, value, said)


SPREAD = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}


@pytest.mark.parametrize(
    ("constraints", "said"),
    [
        ([{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}], "minimum"),
        ([{**SPREAD, "whenUnsatisfiable": "Never"}], "is not one of"),
        ([{"maxSkew": 1, "topologyKey": "zone"}], "missing required field 'whenUnsatisfiable'"),
        ([{**SPREAD, "topologyKey": "bad key!"}], "is not a Kubernetes qualified name"),
        ([{**SPREAD, "nodeTaintsPolicy": "honor"}], "is not one of"),
        ([{**SPREAD, "labelSelector": {"matchLabels": {"a": "b c"}}}], "label value"),
    ],
)
def test_topology_spread_constraints_are_checked_by_the_schema(constraints, said):
    assert_refused_spec_wide_and_per_role("topologySpreadConstraints", constraints, said)


def test_topology_spread_constraints_the_api_server_refuses_are_errors_where_they_go_wrong():
    data = spec("kubeflow-paddlejob")
    selector = {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "c", "operator": "In"}]}
    data["spec"]["topologySpreadConstraints"] = [
        SPREAD,
        {**SPREAD, "maxSkew": 2},
        {**SPREAD, "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2},
        {**SPREAD, "topologyKey": "rack", "matchLabelKeys": ["a"]},
        {**SPREAD, "topologyKey": "row", "labelSelector": selector, "matchLabelKeys": ["a", "d"]},
    ]
    data["spec"]["worker"]["topologySpreadConstraints"] = [
        {
            **SPREAD,
            "labelSelector": {
                "matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]
            },
        }
    ]
    found = [(d.path, d.rule, d.message) for d in builders.diagnostics(data) if d.is_error]
    where = "$.spec.topologySpreadConstraints"
    assert sorted(found) == [
        (
            f"{where}[1].topologyKey",
            "topology-spread",
            "topologyKey 'zone' with whenUnsatisfiable DoNotSchedule is already constrained at "
            f"{where}[0]",
        ),
        (
            f"{where}[2].minDomains",
            "topology-spread",
            "minDomains needs whenUnsatisfiable DoNotSchedule, not ScheduleAnyway: only "
            "DoNotSchedule counts domains",
        ),
        (
            f"{where}[3].matchLabelKeys",
            "topology-spread",
            "matchLabelKeys narrows labelSelector, and the constraint has none",
        ),
        (
            f"{where}[4].labelSelector.matchExpressions[0]",
            "topology-spread",
            "operator In needs at least one value",
        ),
        (
            f"{where}[4].matchLabelKeys[0]",
            "topology-spread",
            "'a' is in labelSelector too: the API server refuses a key in both",
        ),
        (
            "$.spec.worker.topologySpreadConstraints[0].labelSelector.matchExpressions[0].values",
            "topology-spread",
            "operator Exists looks at the key alone: no values",
        ),
    ]


NEWER_SPREAD = {
    **SPREAD,
    "minDomains": 2,
    "labelSelector": {"matchLabels": {"app.kubernetes.io/instance": "demo"}},
    "matchLabelKeys": ["batch.kubernetes.io/controller-uid"],
    "nodeAffinityPolicy": "Ignore",
    "nodeTaintsPolicy": "Honor",
}


@pytest.mark.parametrize("workload", ["job", "distributed-job", "kubeflow-paddlejob"])
def test_every_field_of_a_topology_spread_constraint_lands(workload):
    objects = render(spec(workload, topologySpreadConstraints=[NEWER_SPREAD]))
    for template in [*training_pods(objects).values(), data_pod(objects)]:
        assert template["spec"]["topologySpreadConstraints"] == [NEWER_SPREAD]


def test_fields_paddleflows_crd_would_drop_are_refused_for_paddlejob():
    data = spec("paddlejob")
    data["spec"]["worker"]["topologySpreadConstraints"] = [NEWER_SPREAD]
    found = sorted((d.path, d.rule) for d in builders.diagnostics(data) if d.is_error)
    where = "$.spec.worker.topologySpreadConstraints[0]"
    assert found == [
        (f"{where}.{key}", "topology-spread")
        for key in ("matchLabelKeys", "minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy")
    ]
