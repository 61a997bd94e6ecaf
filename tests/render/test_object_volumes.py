"""ConfigMap and Secret volumes: files in every training pod, no PV or PVC, never a data volume."""

from __future__ import annotations

from typing import Any

import pytest

from paddlegen.spec.loader import parse_spec
from paddlegen.yamlio import dump_yaml
from tests.render.test_pod_settings import WORKLOADS, data_pod, errors, render, spec, training_pods

CODE = {
    "name": "code",
    "mountPath": "/code",
    "configMap": {
        "name": "training-code",
        "items": [{"key": "train.py", "path": "train.py", "mode": 0o555}],
        "defaultMode": 0o444,
    },
}
CREDS = {
    "name": "creds",
    "mountPath": "/etc/creds",
    "readOnly": True,
    "secret": {"secretName": "hub-credentials", "defaultMode": 0o400, "optional": True},
}


def with_object_volumes(workload: str) -> dict[str, Any]:
    data = spec(workload)
    data["spec"]["volumes"] += [CODE, CREDS]
    return data


@pytest.mark.parametrize("workload", WORKLOADS)
def test_object_volumes_mount_into_every_training_pod_as_given(workload):
    objects = render(with_object_volumes(workload))
    for template in training_pods(objects).values():
        pod = template["spec"]
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert volumes["code"] == {"name": "code", "configMap": CODE["configMap"]}
        assert volumes["creds"] == {"name": "creds", "secret": CREDS["secret"]}
        mounts = {m["name"]: m for m in pod["containers"][0]["volumeMounts"]}
        assert mounts["code"] == {"name": "code", "mountPath": "/code"}
        assert mounts["creds"] == {"name": "creds", "mountPath": "/etc/creds", "readOnly": True}
    # no PV or PVC for them; the data Job mounts only the volume it writes to
    assert {o["kind"] for o in objects}.isdisjoint({"PersistentVolume", "PersistentVolumeClaim"})
    assert [v["name"] for v in data_pod(objects)["spec"]["volumes"]] == ["data"]


def test_modes_are_written_as_numbers_yaml_octal_reads_them():
    text = dump_yaml(with_object_volumes("job")).replace("defaultMode: 292", "defaultMode: 0444")
    doc = parse_spec(text, "case.yaml")
    (volume,) = [v for v in doc.data["spec"]["volumes"] if v["name"] == "code"]
    assert volume["configMap"]["defaultMode"] == 0o444 == 292


@pytest.mark.parametrize("section", ["dataPrep", "distributed"])
def test_a_data_volume_reference_to_an_object_volume_is_refused(section):
    data = with_object_volumes("distributed-job")
    data["spec"][section]["volume"] = "code"
    found = [f for f in errors(data) if f[1] == "volume-reference"]
    use = "the data Job writes" if section == "dataPrep" else "the trainers read"
    assert found == [
        (
            f"$.spec.{section}.volume",
            "volume-reference",
            "volume 'code' is a configMap: read-only files of one object (at most 1 MiB), not "
            f"a volume {use} the training data on",
        )
    ]


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ({"configMap": {}}, "missing required field 'name'"),
        ({"secret": {"name": "s"}}, "unknown field"),
        ({"configMap": {"name": "c", "defaultMode": 0o1777}}, "greater than the maximum of 511"),
        ({"configMap": {"name": "c", "items": [{"key": "a", "path": "/abs"}]}}, "relative path"),
        ({"configMap": {"name": "c", "items": [{"key": "a", "path": "x/../y"}]}}, "without '..'"),
        ({"configMap": {"name": "c", "items": [{"key": "a/b", "path": "a"}]}}, "is not a key"),
        ({"secret": {"secretName": "s", "items": [{"key": "..a", "path": "a"}]}}, "is not a key"),
        ({"secret": {"secretName": "s", "items": [{"key": "a"}]}}, "missing required field"),
        ({"configMap": {"name": "c"}, "emptyDir": {}}, "exactly one source"),
    ],
)
def test_object_volumes_are_checked(source, said):
    data = spec("paddlejob")
    data["spec"]["volumes"].append({"name": "code", "mountPath": "/code", **source})
    messages = [message for _, _, message in errors(data)]
    assert any(said in m for m in messages), messages


def test_item_paths_inside_the_mount_pass():
    data = with_object_volumes("job")
    data["spec"]["volumes"][1]["configMap"]["items"] = [
        {"key": "a.yaml", "path": "conf/a.yaml"},
        {"key": "b", "path": "..b"},  # a name starting with '..', not a step up
    ]
    assert errors(data) == []
