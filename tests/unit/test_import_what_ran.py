"""`paddlegen import` keeps what the input ran, or says what it changes and why, at the line
and column of the field: a Kubeflow replica's restartPolicy, the token of a pod template that
left it unset, an NFS export a pod mounted inline."""

from __future__ import annotations

import pytest

from paddlegen.authoring.explain import explain
from paddlegen.authoring.importer import import_manifests
from tests.conftest import DATA
from tests.unit.test_import import imported, render

IMPORT_DATA = DATA / "import"


def kubeflow(master: str | None, worker: str | None = "", pod: str = "") -> str:
    """A Kubeflow PaddleJob: a Master replica with restartPolicy ``master`` (None: no Master,
    "": unset), a Worker with ``worker``, each pod with ``pod`` in its spec."""

    def replica(kind: str, policy: str) -> str:
        given = f"      restartPolicy: {policy}\n" if policy else ""
        return (
            f"    {kind}:\n      replicas: 2\n{given}      template:\n        spec:\n{pod}"
            "          containers: [{name: paddle, image: r/a:v1}]\n"
        )

    return (
        "apiVersion: kubeflow.org/v1\nkind: PaddleJob\nmetadata: {name: kf, namespace: ml}\n"
        "spec:\n  paddleReplicaSpecs:\n"
        + ("" if master is None else replica("Master", master))
        + ("" if worker is None else replica("Worker", worker))
    )


def replica_policies(result) -> dict[str, str]:
    replicas = render(result)["PaddleJob"]["spec"]["paddleReplicaSpecs"]
    return {kind: replica["restartPolicy"] for kind, replica in replicas.items()}


@pytest.mark.parametrize(
    ("master", "worker", "ran"),
    [
        (None, "", {"Worker": "OnFailure"}),  # the operator's default, unset
        (None, "OnFailure", {"Worker": "OnFailure"}),
        (None, "Never", {"Worker": "Never"}),
        ("", "", {"Master": "OnFailure", "Worker": "OnFailure"}),
        ("Never", "Never", {"Master": "Never", "Worker": "Never"}),
    ],
)
def test_a_kubeflow_job_renders_the_restart_policy_it_ran_with(master, worker, ran):
    result = imported(kubeflow(master, worker))
    assert replica_policies(result) == ran
    assert not [n for n in result.notes if n.lossy and "restartPolicy" in n.message]


def test_the_operators_default_written_out_says_why_at_the_replica():
    result = imported(kubeflow(None, ""))
    assert result.spec["spec"]["run"]["restartPolicy"] == "OnFailure"
    (note,) = [n for n in result.notes if "restartPolicy" in n.message]
    assert note.kind == "cosmetic"
    assert (note.line, note.col) == (6, 5)  # the Worker replica, which left it unset
    assert "paddlegen renders Never for a job without parameter servers" in note.message
    # given, it is what the user wrote: kept without a word
    given = imported(kubeflow(None, "OnFailure"))
    assert not [n for n in given.notes if "restartPolicy" in n.message]


@pytest.mark.parametrize(
    ("master", "worker", "said"),
    [
        ("Never", "", "Worker restartPolicy OnFailure becomes Never"),
        ("ExitCode", "Never", "Master restartPolicy ExitCode becomes Never"),
        ("", "Always", "Worker restartPolicy Always becomes OnFailure"),
    ],
)
def test_a_restart_policy_the_spec_cannot_give_is_lossy_at_its_line(master, worker, said):
    result = imported(kubeflow(master, worker))
    (note,) = [n for n in result.notes if "restartPolicy" in n.message]
    assert note.lossy and note.message.startswith(said)
    line = kubeflow(master, worker).splitlines()[note.line - 1]
    assert line.strip().startswith(("restartPolicy:", "Master:", "Worker:")), line
    assert not [d for d in result.diagnostics if d.is_error]


def test_explain_says_what_an_unset_kubeflow_restart_policy_renders():
    text = explain("spec.run.restartPolicy").node["description"]
    assert "kubeflow-paddlejob renders the operator's default OnFailure for a job with ps" in text
    assert "Never for one without" in text
    # ... as the render does
    assert set(replica_policies(imported(kubeflow("Never", "Never")))) == {"Master", "Worker"}
    spec = imported(kubeflow(None, "Never"))
    assert "run" not in spec.spec["spec"]  # Never: what an unset policy renders without ps
    assert replica_policies(spec) == {"Worker": "Never"}


SA = "          serviceAccountName: trainer\n"
TOKEN_FALSE = "          automountServiceAccountToken: false\n"


def pod_tokens(result) -> set:
    replicas = render(result)["PaddleJob"]["spec"]["paddleReplicaSpecs"].values()
    return {r["template"]["spec"].get("automountServiceAccountToken") for r in replicas}


def test_an_unset_token_of_the_pods_own_account_is_kept_and_said():
    result = imported(kubeflow(None, "", pod=SA))
    assert result.spec["spec"]["automountServiceAccountToken"] is True
    assert pod_tokens(result) == {True}
    (note,) = [n for n in result.notes if "token" in n.message]
    assert note.kind == "cosmetic" and note.line == 1
    assert "so automountServiceAccountToken is true" in note.message


def test_an_unset_token_of_the_default_account_is_dropped_with_a_note_saying_why():
    result = imported(kubeflow(None, ""))
    assert "automountServiceAccountToken" not in result.spec["spec"]
    assert pod_tokens(result) == {False}
    (note,) = [n for n in result.notes if "token" in n.message]
    assert note.line == 1 and "default service account" in note.message
    assert "set automountServiceAccountToken: true if the program calls the API" in note.message


def test_a_token_the_pods_set_is_theirs_without_a_note():
    result = imported(kubeflow(None, "", pod=TOKEN_FALSE))
    assert pod_tokens(result) == {False}
    assert not [n for n in result.notes if "token" in n.message]


NFS_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: nfs, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      automountServiceAccountToken: false
      containers:
      - name: paddle
        image: r/a:v1
        volumeMounts: [{name: data, mountPath: /data}, {name: ro, mountPath: /ro}]
      volumes:
      - name: data
        nfs: {server: 10.0.0.1, path: /exports/data}
      - name: ro
        nfs: {server: nas.example.com, path: /ro, readOnly: true}
"""


def test_an_inline_nfs_volume_becomes_the_specs_nfs_volume_on_the_same_export():
    result = imported(NFS_JOB)
    data = {"server": "10.0.0.1", "path": "/exports/data"}
    assert result.spec["spec"]["volumes"] == [
        {"name": "data", "mountPath": "/data", "nfs": data, "capacity": "1Gi"},
        {"name": "ro", "mountPath": "/ro", "nfs": {"server": "nas.example.com", "path": "/ro"},
         "capacity": "1Gi", "readOnly": True},
    ]  # fmt: skip
    assert not [n for n in result.notes if n.lossy]
    notes = {(n.line, n.col) for n in result.notes if "becomes the spec's nfs volume" in n.message}
    assert notes == {(15, 9), (17, 9)}  # each at its nfs
    objects = render(result)
    assert objects["PersistentVolume"]["spec"]["nfs"]["server"] in ("10.0.0.1", "nas.example.com")
    assert not [d for d in result.diagnostics if d.is_error]


def test_an_inline_nfs_volume_the_spec_cannot_mount_alike_stays_a_lossy_note_at_it():
    text = NFS_JOB.replace("path: /ro, readOnly: true", "path: /ro, other: 1")
    (note,) = [n for n in imported(text).notes if n.lossy]
    assert "volume 'ro' (nfs) is not carried over" in note.message
    assert (note.line, note.col) == (16, 9)  # the volume


@pytest.mark.parametrize("name", sorted(p.name for p in IMPORT_DATA.glob("*.yaml")))
def test_every_note_of_a_sample_has_its_line_and_column(name):
    path = IMPORT_DATA / name
    result = import_manifests([(str(path), path.read_text("utf-8"))])
    assert result.notes
    assert all(n.line > 0 and n.col > 0 for n in result.notes), [
        str(n) for n in result.notes if not n.line
    ]


def test_an_operators_gang_resources_paddlegen_derives_otherwise_are_noted_at_them():
    text = (
        kubeflow("", "").replace(
            "  paddleReplicaSpecs:\n",
            "  runPolicy:\n    schedulingPolicy: {minResources: {cpu: '64'}}\n"
            "  paddleReplicaSpecs:\n",
        )
    ).replace("          containers:", "          schedulerName: volcano\n          containers:")
    result = imported(text)
    (note,) = [n for n in result.notes if "minResources" in n.message]
    assert (note.where, note.lossy) == ("PaddleJob/kf", True)
    assert text.splitlines()[note.line - 1].strip().startswith("schedulingPolicy:")
    assert note.col == 5 + len("schedulingPolicy: {")  # at minResources
