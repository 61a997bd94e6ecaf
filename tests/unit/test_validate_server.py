"""validate --server's handling of kubectl failures that need no cluster (a fake kubectl on
PATH; the real behaviour is tested against the local control plane in tests/cluster/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from paddlegen.errors import ToolError
from paddlegen.pipeline import build
from paddlegen.validate.kueue_queues import QUEUE_LABEL
from paddlegen.validate.server import Server, dry_run
from tests.builders import job_spec, render_file, spec
from tests.helpers import executable


@pytest.fixture
def kubectl(tmp_path, monkeypatch):
    """Puts a stand-in kubectl, running the shell body it is given, alone on PATH."""
    monkeypatch.setenv("PATH", str(tmp_path))
    return lambda body: executable(tmp_path / "kubectl", body)


@pytest.fixture
def rendered(tmp_path):
    return [render_file(tmp_path, job_spec("a"))]


def test_a_kubectl_that_hangs_is_a_tool_error_after_the_timeout(kubectl, rendered):
    kubectl("exec /bin/sleep 30")
    with pytest.raises(ToolError, match=r"kubectl did not answer in 0\.2 s"):
        dry_run(rendered, Server(timeout=0.2))


def test_a_kubectl_that_fails_silently_is_a_tool_error(kubectl, rendered):
    kubectl("/bin/cat >/dev/null; exit 3")
    with pytest.raises(ToolError, match="kubectl exited 3 and said nothing"):
        dry_run(rendered, Server())


def test_kubectl_gets_the_context_kubeconfig_and_no_shell(tmp_path, kubectl, rendered):
    kubectl(f'printf "%s\\n" "$@" > {tmp_path}/argv; /bin/cat > {tmp_path}/stdin')
    assert dry_run(rendered, Server("stage; rm -rf /", "/k/config", 5)) == []
    assert (tmp_path / "argv").read_text().splitlines() == [
        "--kubeconfig=/k/config",
        "--context=stage; rm -rf /",
        "--request-timeout=5s",
        "apply",
        "--server-side",
        "--dry-run=server",
        "--field-manager=paddlegen",
        "-f",
        "-",
    ]
    assert "kind: Job" in (tmp_path / "stdin").read_text()


def test_each_error_of_a_several_error_refusal_is_a_finding(kubectl, rendered):
    # kubectl's form for an object with several errors: a head line, then one `* ` line each.
    kubectl(
        "/bin/cat >/dev/null\n"
        "echo 'The Job \"a\" is invalid: ' >&2\n"
        "echo '* spec.completions: Invalid value: 4: field is immutable' >&2\n"
        f'echo \'* spec.template: Invalid value: {{"x": "{"x" * 300}"}}: '
        "field is immutable' >&2\n"
        "exit 1",
    )
    found = dry_run(rendered, Server())
    assert [(d.path, d.message) for d in found] == [
        ("Job/a spec.completions", "Invalid value: 4: field is immutable"),
        ("Job/a spec.template", "Invalid value: {…}: field is immutable"),  # not 300 x
    ]
    assert {d.rule for d in found} == {"server"}


# A kubectl that accepts every dry-run and lists the LocalQueues `team` of the namespace `ml`
# (and none elsewhere), logging each `get`; `get` of a namespace `old` finds no Kueue at all.
KUEUE_KUBECTL = """\
case " $* " in
  *" get localqueues.kueue.x-k8s.io "*)
    echo "$@" >> "${0%/*}/gets"
    case " $* " in
      *" --namespace=ml "*) echo localqueue.kueue.x-k8s.io/team ;;
      *" --namespace=old "*)
        echo 'error: the server doesn'"'"'t have a resource type "localqueues"' >&2; exit 1 ;;
    esac ;;
  *) /bin/cat >/dev/null ;;
esac"""


def queued(tmp_path: Path, name: str, namespace: str, queue: str, extra: str = ""):
    """The `job` spec ``name`` rendered, its Job labelled for the LocalQueue ``queue`` (as
    spec.scheduling.kueue does)."""
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(job_spec(name, extra=extra).replace(
        f"name: {name}\n", f"name: {name}\n  namespace: {namespace}\n", 1
    ))  # fmt: skip
    (rendered,) = build.render_specs([spec])
    for manifests in [rendered.manifests, *rendered.environments.values()]:
        (job,) = [m for m in manifests if m.kind == "Job"]
        # a new dict: the render shares one labels mapping between a job's objects
        job.obj["metadata"]["labels"] = {
            **job.obj["metadata"].get("labels", {}),
            QUEUE_LABEL: queue,
        }
    return rendered


def test_a_local_queue_the_namespace_lacks_is_a_warning_at_the_job(tmp_path, kubectl):
    kubectl(KUEUE_KUBECTL)
    rendered = [
        queued(tmp_path, "a", "ml", "team"),
        queued(tmp_path, "b", "ml", "teem"),
        queued(tmp_path, "c", "ml", "team"),
    ]
    (found,) = dry_run(rendered, Server())
    assert (found.severity, found.rule, found.path) == (
        "warning",
        "kueue-local-queue",
        "$.metadata.name",
    )
    lines = Path(found.file).read_text().splitlines()
    assert (Path(found.file).name, lines[found.line - 1]) == ("b.yaml", "  name: b")
    assert found.message == (
        "Job/b names the Kueue LocalQueue 'teem', which namespace 'ml' does not have: "
        "Kueue keeps the job suspended until it exists"
    )
    # one `get` for the namespace of all three
    assert len((tmp_path / "gets").read_text().splitlines()) == 1


def test_each_overlay_is_checked_in_its_own_namespace(tmp_path, kubectl):
    kubectl(KUEUE_KUBECTL)
    rendered = queued(
        tmp_path, "a", "ml", "team", "overlays:\n  dev: {metadata: {namespace: dev}}\n"
    )
    (found,) = dry_run([rendered], Server())
    assert found.message.endswith("which namespace 'dev' does not have: Kueue keeps the job "
                                  "suspended until it exists (environment dev)")  # fmt: skip


def test_a_cluster_without_kueue_is_a_warning_that_the_label_queues_nothing(tmp_path, kubectl):
    kubectl(KUEUE_KUBECTL)
    (found,) = dry_run([queued(tmp_path, "a", "old", "team")], Server())
    assert found.rule == "kueue-local-queue" and found.severity == "warning"
    assert "the cluster does not serve LocalQueues (kueue.x-k8s.io)" in found.message


def test_a_job_of_no_queue_costs_no_local_queue_lookup(tmp_path, kubectl, rendered):
    kubectl(KUEUE_KUBECTL)
    assert dry_run(rendered, Server()) == []
    assert not (tmp_path / "gets").exists()


# kubectl's words for a kind the API server does not serve (its discovery knows no such kind),
# and for one deleted since kubectl cached its discovery.
NO_MATCH = (
    'error: resource mapping not found for name: "llm" namespace: "" from "STDIN": no matches '
    'for kind "JobSet" in version "jobset.x-k8s.io/v1alpha2"\nensure CRDs are installed first'
)
NOT_FOUND = (
    "Error from server (NotFound): the server could not find the requested resource "
    "(patch jobsets.jobset.x-k8s.io llm)"
)


@pytest.mark.parametrize("said", [NO_MATCH, NOT_FOUND], ids=["no-match", "not-found"])
def test_a_kind_the_server_does_not_serve_says_what_serves_it(tmp_path, kubectl, said):
    llm = spec(
        "collective-job", metadata={"name": "llm"}, worker={"replicas": 2}, run={"restarts": 2}
    )
    kubectl(f"/bin/cat >/dev/null; printf '%s\\n' '{said}' >&2; exit 1")
    with pytest.raises(ToolError) as refused:
        dry_run([render_file(tmp_path, llm)], Server())
    what = "JobSet (jobset.x-k8s.io/v1alpha2)" if said == NO_MATCH else "jobsets.jobset.x-k8s.io"
    assert str(refused.value) == (
        f"the cluster of the current context does not serve {what}: install its CRDs (the "
        "operator) before validating against it; a JobSet needs the JobSet controller, with its "
        "CRD and webhook (paddlegen is tested with JobSet v0.12.0; Kubeflow Trainer installs it "
        "too): a collective-job renders one for spec.run.restarts; without run.restarts it is "
        "a plain Indexed Job, which needs no controller"
    )


def test_every_kind_of_a_controller_the_workloads_render_says_what_serves_it():
    """Each kind a workload renders that no API server serves by itself (a CRD's: any group
    but batch) names its controller, for validate --server to say."""
    from paddlegen.workloads import rendered_objects

    crds = [o for o in rendered_objects() if o.group != "batch"]
    assert {o.kind for o in crds} == {"PaddleJob", "JobSet", "TrainJob"}
    assert all(
        f"{o.kind} needs " in o.needs and "paddlegen is tested with" in o.needs for o in crds
    )


def test_a_rendered_tree_is_no_input_for_server_which_validates_specs(runner, tmp_path):
    from paddlegen.cli import cli
    from paddlegen.validate.inputs import any_rendered_tree

    spec = tmp_path / "a.yaml"
    spec.write_text(job_spec("a"))
    deploy = tmp_path / "deploy"
    assert runner.invoke(cli, ["render", str(spec), "-o", str(deploy)]).exit_code == 0
    assert any_rendered_tree([spec, deploy]) and any_rendered_tree([deploy / "a"])
    assert not any_rendered_tree([spec, tmp_path])  # a folder of specs
    result = runner.invoke(cli, ["validate", "--server", str(spec), str(deploy)])
    assert result.exit_code == 2
    assert result.stderr.endswith(
        "Error: --server validates specs; for a rendered tree run "
        "kubectl apply --server-side --dry-run=server -k DIR\n"
    )
