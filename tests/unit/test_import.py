"""paddlegen.importer on small inputs: what it maps, what it lists, what it refuses."""

from __future__ import annotations

import pytest

from paddlegen.authoring.importer import import_manifests
from paddlegen.errors import InputError

POD = """\
    spec:
      containers:
      - name: paddle
        image: {image}
        volumeMounts: [{{name: data, mountPath: /data}}]
      volumes: [{{name: data, persistentVolumeClaim: {{claimName: {claim}}}}}]
"""


def kubeflow(master_image="r/a:v1", worker_image="r/a:v1", claim="data") -> str:
    def replicas(kind: str, image: str) -> str:
        pod = "\n".join("    " + line for line in POD.format(image=image, claim=claim).splitlines())
        return f"    {kind}:\n      replicas: 2\n      template:\n{pod}\n"

    return (
        "apiVersion: kubeflow.org/v1\nkind: PaddleJob\nmetadata: {name: kf, namespace: ml}\n"
        "spec:\n  runPolicy:\n    cleanPodPolicy: All\n    backoffLimit: 3\n"
        "    schedulingPolicy: {minAvailable: 3, queue: q1}\n  paddleReplicaSpecs:\n"
        + replicas("Master", master_image)
        + replicas("Worker", worker_image)
    )


def imported(*texts: str):
    return import_manifests([(f"in{i}.yaml", t) for i, t in enumerate(texts)])


def test_shared_values_move_to_the_spec_and_different_ones_stay_on_roles():
    spec = imported(kubeflow(worker_image="r/b:v1")).spec["spec"]
    assert "image" not in spec
    assert (spec["ps"]["image"], spec["worker"]["image"]) == ("r/a:v1", "r/b:v1")
    assert spec["kubeflow"] == {"cleanPodPolicy": "All"}
    assert spec["run"] == {"backoffLimit": 3}
    assert spec["scheduling"] == {"scheduler": "volcano", "minAvailable": 3, "queue": "q1"}


def test_a_claim_outside_the_input_stays_a_claim_and_one_without_a_pv_is_dynamic():
    assert imported(kubeflow()).spec["spec"]["volumes"][0]["claim"] == {"name": "data"}
    pvc = (
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: ml}\n"
        "spec: {storageClassName: fast, accessModes: [ReadWriteMany],"
        " resources: {requests: {storage: 5Gi}}}\n"
    )
    result = imported(kubeflow(), pvc)
    (volume,) = result.spec["spec"]["volumes"]
    assert volume == {
        "name": "data",
        "mountPath": "/data",
        "dynamic": {"storageClassName": "fast"},
        "capacity": "5Gi",
        "accessModes": ["ReadWriteMany"],
    }
    assert (
        "PersistentVolumeClaim/data: renamed kf-data (paddlegen derives the name)"
        in result.unmapped
    )


def test_objects_without_a_spec_counterpart_and_server_fields_are_listed():
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n"
    job = kubeflow().replace(
        "metadata: {name: kf, namespace: ml}",
        "metadata: {name: kf, namespace: ml, uid: x1, generation: 2}",
    )
    result = imported(job + "status: {conditions: []}\n", cm)
    assert "ConfigMap/cfg: no spec counterpart; not imported" in result.unmapped
    assert "PaddleJob/kf: server-set uid, generation, status ignored" in result.unmapped


def test_a_list_of_objects_is_read_item_by_item():
    items = "\n".join("  " + line for line in kubeflow().splitlines())
    result = imported(f"apiVersion: v1\nkind: List\nitems:\n-{items[1:]}\n")
    assert result.spec["spec"]["workload"] == "kubeflow-paddlejob"


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        ((kubeflow(), kubeflow()), "several training objects"),
        (("- just\n- a list\n",), "not a Kubernetes object"),
        (("kind: Job\nmetadata: {name: [x\n",), r"in0.yaml:3:\d+: not valid YAML"),
        (("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n",), "no training object"),
    ],
)
def test_what_cannot_become_one_spec_is_refused(texts, message):
    with pytest.raises(InputError, match=message):
        imported(*texts)
