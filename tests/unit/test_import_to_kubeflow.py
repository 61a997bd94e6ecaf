"""`paddlegen import --to kubeflow-paddlejob`, and the Gloo endpoint an imported PaddleFlow
PS job gains: what the rendered job does otherwise than the input is a note."""

from __future__ import annotations

import pytest

from paddlegen.authoring.importer import import_jobs
from paddlegen.errors import InputError
from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from tests.unit.test_import_convert import KUBEFLOW, PADDLEFLOW_COLLECTIVE, PADDLEFLOW_PS

GLOO = "the rendered pods gain env PADDLE_GLOO_HTTP_ENDPOINT=wide-and-deep-ps-0:35999"


def imported(text: str, to: str | None = None):
    (job,) = import_jobs([("in.yaml", text)], lambda _: "spec.yaml", to).jobs
    return job


def messages(job, kind: str | None = None) -> list[str]:
    return [n.message for n in job.notes if kind is None or n.kind == kind]


def rendered_env(job) -> dict[str, list[str]]:
    """The env names of each rendered role's container."""
    result = build.render_document(parse_spec(job.text, "spec.yaml"))
    (obj,) = [m.obj for m in result.manifests if m.kind == "PaddleJob"]
    roles = obj["spec"].get("paddleReplicaSpecs") or {
        r: obj["spec"][r] for r in ("ps", "worker") if r in obj["spec"]
    }
    return {
        role: [e["name"] for e in body["template"]["spec"]["containers"][0].get("env", [])]
        for role, body in roles.items()
    }


def test_an_imported_ps_gloo_job_is_told_of_the_endpoint_its_pods_gain():
    job = imported(PADDLEFLOW_PS)
    (note,) = [n for n in job.notes if n.message.startswith(GLOO)]
    assert note.lossy  # intranet PodIP: the operator's endpoint lands on a server's own port
    assert (note.line, note.col) == (6, 3)  # at withGloo
    assert all("PADDLE_GLOO_HTTP_ENDPOINT" in env for env in rendered_env(job).values())


def test_under_intranet_service_the_endpoint_is_the_same_rendezvous():
    job = imported(PADDLEFLOW_PS.replace("intranet: PodIP", "intranet: Service"))
    (note,) = [n for n in job.notes if n.message.startswith(GLOO)]
    assert not note.lossy


def test_paddlegens_own_render_reads_back_without_the_note():
    first = imported(PADDLEFLOW_PS)
    result = build.render_document(parse_spec(first.text, "spec.yaml"))
    text = next(m.text() for m in result.manifests if m.kind == "PaddleJob")
    assert not [m for m in messages(imported(text)) if m.startswith(GLOO)]


def test_a_conversion_says_what_becomes_of_gloo_instead():
    for to in ("collective-job", "kubeflow-paddlejob"):
        said = messages(imported(PADDLEFLOW_PS, to))
        assert not [m for m in said if m.startswith(GLOO)], to
        assert [m for m in said if m.startswith("withGloo 1 not carried over")], to


def test_parameter_servers_become_the_master_replicas_and_say_so():
    job = imported(PADDLEFLOW_PS, "kubeflow-paddlejob")
    spec = job.spec["spec"]
    assert spec["workload"] == "kubeflow-paddlejob"
    assert spec["ps"] == {"replicas": 2} and spec["worker"] == {"replicas": 3}
    assert "paddlejob" not in spec
    (ps,) = [n for n in job.notes if n.message.startswith("the 2 parameter servers (ps)")]
    assert ps.lossy and (ps.line, ps.col) == (8, 3)
    assert "become the Master replica type (2 pods)" in ps.message
    assert "PADDLE_SERVER_NUM=1" in ps.message and "must start the launcher" in ps.message
    (env,) = [m for m in messages(job, "lossy") if m.startswith("PaddleFlow's env")]
    assert "TRAINING_ROLE" in env and "PADDLE_MASTER" in env
    assert [d for d in job.diagnostics if d.is_error] == []
    assert sorted(rendered_env(job)) == ["Master", "Worker"]


def test_pods_under_the_launcher_convert_without_a_lossy_note():
    launched = PADDLEFLOW_PS.replace(
        "command: [python3, train.py]", "command: [python3, -m, paddle.distributed.launch, t.py]"
    ).replace("  intranet: PodIP\n", "  intranet: Service\n")
    job = imported(launched, "kubeflow-paddlejob")
    assert job.lossy == []
    assert [m for m in messages(job, "cosmetic") if m.startswith("the 2 parameter servers")]


@pytest.mark.parametrize(("theirs", "ours"), [("Always", "All"), ("Never", "None")])
def test_a_clean_pod_policy_with_a_kubeflow_twin_carries_over(theirs, ours):
    text = PADDLEFLOW_COLLECTIVE.replace("OnCompletion", theirs)
    job = imported(text, "kubeflow-paddlejob")
    assert job.spec["spec"]["kubeflow"] == {"cleanPodPolicy": ours}


@pytest.mark.parametrize(
    ("to", "said"),
    [
        (
            "collective-job",
            [
                "dropped 1 heter pod: heterogeneous training is a form of PS mode, which "
                "collective-job has not",
                "intranet HostNetwork not carried over: the pods ran on their nodes' network; "
                "collective-job's pods use the pod network and find rank 0 by the headless Service",
                "elastic 1 not carried over: collective-job runs a fixed number of ranks "
                "(worker.replicas), and one failed rank fails the job",
            ],
        ),
        (
            "kubeflow-paddlejob",
            [
                "dropped 1 heter pod: the Kubeflow PaddleJob has only Master and Worker replicas",
                "intranet HostNetwork not carried over: the pods use the pod network and find "
                "master-0 by the Service the training-operator makes for each pod",
                "elastic 1 not carried over: paddlegen's Kubeflow PaddleJob runs a fixed number "
                "of pods",
            ],
        ),
    ],
)
def test_heter_elastic_and_the_host_network_are_lossy(to, said):
    text = PADDLEFLOW_PS.replace("intranet: PodIP", "intranet: HostNetwork\n  elastic: 1")
    text = text.replace("  cleanPodPolicy: OnCompletion\n", "")  # a job without the policy
    text += (
        "  heter:\n    replicas: 1\n    template:\n      spec:\n        containers:\n"
        "        - {name: paddle, image: 'r/wd:v1'}\n"
    )
    job = imported(text, to)
    assert "heter" not in job.spec["spec"]
    assert set(said) <= set(messages(job, "lossy"))


BATCH_JOB = (
    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: one}\nspec:\n  template:\n"
    "    spec:\n      restartPolicy: Never\n      containers: [{name: paddle, image: 'r/a:v1'}]\n"
)


@pytest.mark.parametrize(
    ("text", "to", "message"),
    [
        (BATCH_JOB, "collective-job", r"cannot convert a Job \(workload job\) to collective-job"),
        (BATCH_JOB, "kubeflow-paddlejob", "converts PaddleFlow PaddleJobs"),
        (KUBEFLOW, "trainjob", "import converts to: collective-job, kubeflow-paddlejob"),
    ],
)
def test_only_an_operators_paddlejob_converts(text, to, message):
    with pytest.raises(InputError, match=message):
        imported(text, to)


def test_a_kubeflow_paddlejob_converted_to_kubeflow_is_read_as_it_is():
    assert imported(KUBEFLOW, "kubeflow-paddlejob").spec["spec"]["ps"] == {"replicas": 1}
