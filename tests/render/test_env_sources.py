"""envFrom and env valueFrom, spec-wide and per role, on training containers, not the data Job's."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import ENV_SOURCES, ROLE_ENV_SOURCES
from tests.render.test_pod_settings import (
    WORKLOADS,
    assert_refused_spec_wide_and_per_role,
    data_pod,
    errors,
    render,
    spec,
    training_pods,
)


def container(template: dict[str, Any]) -> dict[str, Any]:
    first: dict[str, Any] = template["spec"]["containers"][0]
    assert first["name"] == "paddle"  # the operators inject into the first container
    return first


def user_env(template: dict[str, Any], given: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The container's env entries the spec gave, as rendered (the workload's own come first)."""
    names = {e["name"] for e in given}
    return [e for e in container(template).get("env", []) if e["name"] in names]


# As rendered: a divisor is a quantity, written as the API server spells it.
RENDERED_ENV = [
    e
    if e["name"] != "MEMORY_MI"
    else {**e, "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}}
    for e in ENV_SOURCES["env"]
]


@pytest.mark.parametrize("workload", WORKLOADS)
def test_spec_wide_env_sources_land_on_every_training_container_not_the_data_job(workload):
    objects = render(spec(workload, **ENV_SOURCES))
    for template in training_pods(objects).values():
        assert container(template)["envFrom"] == ENV_SOURCES["envFrom"]
        assert user_env(template, ENV_SOURCES["env"]) == RENDERED_ENV
    data = container(data_pod(objects))
    assert "envFrom" not in data
    assert user_env(data_pod(objects), ENV_SOURCES["env"]) == []


@pytest.mark.parametrize("workload", WORKLOADS)
def test_a_roles_env_sources_replace_the_spec_wide_ones_for_its_pods_only(workload):
    data = spec(workload, **ENV_SOURCES)
    data["spec"]["worker"].update(ROLE_ENV_SOURCES)
    pods = training_pods(render(data))
    assert container(pods["worker"])["envFrom"] == ROLE_ENV_SOURCES["envFrom"]
    assert user_env(pods["worker"], ROLE_ENV_SOURCES["env"]) == ROLE_ENV_SOURCES["env"]
    assert user_env(pods["worker"], ENV_SOURCES["env"]) == []
    for role in set(pods) - {"worker"}:
        assert container(pods[role])["envFrom"] == ENV_SOURCES["envFrom"]


def test_a_workloads_own_env_comes_before_the_specs_and_wins_over_env_from():
    """distributed-job sets env of its own; env wins over every envFrom source (Kubernetes),
    so a key of the user's ConfigMap cannot replace it."""
    data = spec("distributed-job", **ENV_SOURCES)
    (template,) = training_pods(render(data)).values()
    names = [e["name"] for e in container(template)["env"]]
    assert names[0] == "JOB_NAME"
    assert names[-3:] == ["LEVEL", "POD_NAME", "MEMORY_MI"]


@pytest.mark.parametrize("workload", ["paddlejob", "kubeflow-paddlejob"])
def test_env_the_operator_sets_is_refused_from_a_value_from_too(workload):
    name = "POD_IP" if workload == "paddlejob" else "PADDLE_MASTER"
    entry = {"name": name, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
    data = spec(workload, env=[entry])
    data["spec"]["worker"]["env"] = [entry]
    found = errors(data)
    assert [(path, rule) for path, rule, _ in found] == [
        ("$.spec.env[0].name", "operator-env"),
        ("$.spec.worker.env[0].name", "operator-env"),
    ]
    assert f"env '{name}' is set by the operator" in found[0][2]


@pytest.mark.parametrize(
    ("env_from", "said"),
    [
        ({}, "exactly one of configMapRef and secretRef"),
        (
            {"configMapRef": {"name": "a"}, "secretRef": {"name": "b"}},
            "exactly one of configMapRef and secretRef",
        ),
        ({"prefix": "P_"}, "exactly one of configMapRef and secretRef"),
        ({"configMapRef": {"name": "Bad_Name"}}, "is not a DNS-1123 subdomain"),
        ({"secretRef": {"name": "s", "key": "k"}}, "unknown field"),
        ({"configMapRef": {"name": "a"}, "prefix": "1X"}, "environment variable name"),
        ({"configMapRef": {"name": "a", "optional": "yes"}}, "is not of type 'boolean'"),
    ],
)
def test_env_from_is_checked_by_the_schema(env_from, said):
    assert_refused_spec_wide_and_per_role("envFrom", [env_from], said)
