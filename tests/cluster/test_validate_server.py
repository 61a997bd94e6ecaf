"""`paddlegen validate --server` and `render --validate --server` against the local control
plane: refusals are findings at spec positions, a cluster that cannot answer is exit 2; a
job name JobSet's webhook refuses, paddlegen refuses first."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from paddlegen.cli import cli
from paddlegen.workloads.objects import NO_OPERATOR
from tests.cluster.conftest import Kube, with_extras
from tests.cluster.test_paddleflow import wait_for
from tests.conftest import ROOT, example_specs

SPEC = """\
apiVersion: paddlegen/v1
kind: TrainingJob
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  workload: job
  image: img:1
  resources: {{requests: {{cpu: "{request}", memory: 1Gi}}, limits: {{cpu: "2", memory: 1Gi}}}}
overlays:
  prod: {{metadata: {{namespace: {prod}}}}}
"""


def spec(tmp_path: Path, request: str = "1", namespace: str = "srv", prod: str = "srv") -> Path:
    path = tmp_path / "job.yaml"
    path.write_text(SPEC.format(name="srv-job", namespace=namespace, request=request, prod=prod))
    return path


@pytest.fixture(scope="module")
def namespaces(kube: Kube) -> None:
    for name in sorted({"srv", "paddlecloud", "ml-training", "yanxu", "kubeflow"}):
        if kube.run("get", "namespace", name, check=False).returncode != 0:
            kube.run("create", "namespace", name)


def run(kube: Kube, *args: str, env: dict[str, str] | None = None):
    result = CliRunner().invoke(cli, list(args), env=env or kube.env)
    assert kube.token not in result.output, "a credential was echoed"
    return result


def test_every_example_passes(kube: Kube, tmp_path: Path) -> None:
    # Namespaces of their own: other tests apply the examples for real, and a dry-run of a
    # changed overlay over those live Jobs is refused as it should be (immutable template).
    examples = []
    for path in example_specs():
        data = yaml.safe_load(path.read_text())
        data["metadata"]["namespace"] = "vs-" + data["metadata"].get("namespace", "default")
        if kube.run("get", "namespace", data["metadata"]["namespace"], check=False).returncode:
            kube.run("create", "namespace", data["metadata"]["namespace"])
        examples.append(tmp_path / path.name)
        examples[-1].write_text(yaml.safe_dump(data, sort_keys=False))
    result = run(kube, "validate", "--server", *map(str, examples))
    assert result.exit_code == 0, result.output
    assert result.stderr.endswith(f"{len(examples)} specs valid\n")


def test_a_refusal_is_a_finding_at_the_spec_position(kube: Kube, namespaces, tmp_path) -> None:
    # A request above its limit is paddlegen's own request-limit error: silenced, the spec
    # reaches the API server, whose refusal is the finding under test.
    path = spec(tmp_path, request="4")
    ignore = ("--ignore", "request-limit")
    result = run(kube, "validate", "--server", *ignore, "--format", "json", str(path))
    assert result.exit_code == 1, result.output
    base, prod = json.loads(result.stdout)  # the overlay keeps the base's resources
    for finding in (base, prod):
        assert finding["rule"] == "server"
        assert finding["file"] == str(path)
        assert finding["line"] == 7  # the resources line of the spec
        assert finding["message"].startswith(
            'Invalid value: "4": must be less than or equal to cpu limit of 2'
        )
        assert finding["path"] == "Job/srv-job spec.template.spec.containers[0].resources.requests"
    assert prod["message"].endswith(" (environment prod)")


def test_a_missing_namespace_is_named_at_metadata_namespace(kube, namespaces, tmp_path) -> None:
    path = spec(tmp_path, namespace="srv", prod="srv-nowhere")
    result = run(kube, "validate", "--server", str(path))
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[0] == (
        f"{path}:9:32: error: $.overlays.prod.metadata.namespace: namespace 'srv-nowhere' does "
        "not exist on the cluster of the current context (environment prod) [server]"
    )


def test_render_validate_server_writes_nothing_when_refused(kube, namespaces, tmp_path) -> None:
    out = tmp_path / "deploy"
    bad = run(
        kube,
        "render",
        "--validate",
        "--server",
        "--ignore",
        "request-limit",  # paddlegen's own error, silenced: the server refuses
        str(spec(tmp_path, "4")),
        "-o",
        str(out),
    )
    assert bad.exit_code == 1, bad.output
    assert not out.exists()
    good = run(kube, "render", "--validate", "--server", str(spec(tmp_path)), "-o", str(out))
    assert good.exit_code == 0, good.output
    assert (out / "srv-job" / "base" / "kustomization.yaml").exists()


def test_a_cluster_that_cannot_answer_is_exit_2_and_says_why(kube, namespaces, tmp_path) -> None:
    path = str(spec(tmp_path))
    unknown = run(kube, "validate", "--server", "--context", "nope", path)
    assert (unknown.exit_code, unknown.stderr) == (
        2,
        "paddlegen: error: kubeconfig has no context 'nope'\n",
    )
    config = json.loads(Path(kube.env["KUBECONFIG"]).read_text())
    config["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1"
    (tmp_path / "closed").write_text(json.dumps(config))
    closed = run(kube, "validate", "--server", "--kubeconfig", str(tmp_path / "closed"), path)
    assert closed.exit_code == 2
    assert closed.stderr == (
        "paddlegen: error: cannot use the API server of the current context at "
        "https://127.0.0.1:1: connection refused\n"
    )
    empty = tmp_path / "bin"
    empty.mkdir()
    no_kubectl = run(kube, "validate", "--server", path, env={**kube.env, "PATH": str(empty)})
    assert (no_kubectl.exit_code, no_kubectl.stderr) == (
        2,
        "paddlegen: error: kubectl not found on PATH: --server sends the objects with it\n",
    )
    assert run(kube, "validate", "--context", "x", path).exit_code == 2  # needs --server


@contextmanager
def crd_removed(kube: Kube, crd: str, file: str) -> Iterator[None]:
    """The cluster without the CRD ``crd`` while the block runs; then ``file`` of hack/crds
    installed again, and served."""
    plural, group = crd.split(".", 1)
    versions = kube.run("get", "crd", crd, "-o", "jsonpath={.spec.versions[*].name}").stdout
    kube.run("delete", "crd", crd, "--wait=true")

    # Gone from etcd, the CRD may still be served a moment as terminating ("create not allowed
    # while custom resource definition is terminating"): wait until discovery drops it.
    def served(version: str) -> bool:
        found = kube.run("get", "--raw", f"/apis/{group}/{version}", check=False).stdout
        return f'"name":"{plural}"' in found

    for version in versions.split():
        wait_for(f"{crd} {version} no longer served", lambda v=version: not served(v))
    try:
        yield
    finally:
        kube.run("apply", "--server-side", "-f", str(ROOT / "hack" / "crds" / file))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # `kubectl wait` fails before status exists
            done = kube.run("get", "crd", crd, "-o", "jsonpath={.status.conditions}", check=False)
            conditions = json.loads(done.stdout or "null") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"{crd} was not served again within 60 s")


def test_a_missing_crd_is_exit_2_naming_the_kind(kube: Kube, namespaces, tmp_path) -> None:
    (kubeflow,) = [p for p in example_specs() if p.name == "kubeflow-wide-and-deep.yaml"]
    crd = "paddlejobs.kubeflow.org"
    with crd_removed(kube, crd, "kubeflow.org_paddlejobs.yaml"):
        result = run(kube, "validate", "--server", str(kubeflow))
    assert result.exit_code == 2, result.output
    # kubectl names the kind, or (its discovery cache still listing it) the resource
    assert result.stderr in [
        "paddlegen: error: the cluster of the current context does not serve "
        f"{what}: install its CRDs (the operator) before validating against it; a Kubeflow "
        "PaddleJob needs the Kubeflow training-operator (paddlegen is tested with v1.9.0); "
        f"{NO_OPERATOR}\n"
        for what in ("PaddleJob (kubeflow.org/v1)", crd)
    ]


RESTARTS = """\
apiVersion: paddlegen/v1
kind: TrainingJob
metadata: {name: srv-group, namespace: srv}
spec:
  workload: collective-job
  image: img:1
  args: [train.py]
  resources: {limits: {memory: 1Gi}}
  worker: {replicas: 2}
  run: {restarts: 2, activeDeadlineSeconds: 600}
"""


def test_a_cluster_without_jobset_says_run_restarts_needs_its_controller(
    kube: Kube, namespaces, tmp_path
) -> None:
    path, plain = tmp_path / "group.yaml", tmp_path / "plain.yaml"
    path.write_text(RESTARTS)
    plain.write_text(RESTARTS.replace("restarts: 2, ", ""))
    crd = "jobsets.jobset.x-k8s.io"
    with crd_removed(kube, crd, "jobset.x-k8s.io_jobsets.yaml"):
        result = run(kube, "validate", "--server", str(path))
        # the way out works on that cluster: without restarts the job needs no JobSet
        without = run(kube, "validate", "--server", str(plain))
    assert without.exit_code == 0, without.output
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("paddlegen: error: the cluster of the current context does not serve ")
    assert line.split("does not serve ")[1].startswith(
        ("JobSet (jobset.x-k8s.io/v1alpha2): ", f"{crd}: ")
    )
    assert line.endswith(
        "; a JobSet needs the JobSet controller, with its CRD and webhook (paddlegen is tested "
        "with JobSet v0.12.0; Kubeflow Trainer installs it too): a collective-job renders one "
        "for spec.run.restarts; without run.restarts it is a plain Indexed Job, which needs no "
        "controller"
    )


def group_spec(tmp_path: Path, name: str) -> Path:
    """A 4-worker collective-job with restarts (a JobSet) named ``name``."""
    path = tmp_path / f"{len(name)}.yaml"
    path.write_text(RESTARTS.replace("srv-group", name).replace("replicas: 2", "replicas: 4"))
    return path


def test_jobsets_webhook_refuses_a_restarted_job_name_where_paddlegen_does(
    kube: Kube, namespaces, tmp_path
) -> None:
    """JobSet v0.12.0's webhook refuses a JobSet whose last pod name, `<name>-worker-0-3` and
    5 random characters, exceeds 63 (pkg/webhooks/jobset_webhook.go:243-255): 47 characters
    here. paddlegen refuses it before anything is sent, and takes 46, which the server takes."""
    with_extras(kube, ["jobset"])
    too_long, longest = group_spec(tmp_path, "g" * 47), group_spec(tmp_path, "g" * 46)
    first = run(kube, "validate", "--server", "--format", "json", str(too_long))
    assert first.exit_code == 1, first.output
    assert [(f["rule"], f["line"]) for f in json.loads(first.stdout)] == [("name-length", 3)]
    # paddlegen's own error silenced, the spec reaches the API server, whose JobSet webhook
    # refuses it
    sent = run(
        kube, "validate", "--server", "--ignore", "name-length", "--format", "json", str(too_long)
    )
    assert sent.exit_code == 1, sent.output
    refusals = [f for f in json.loads(sent.stdout) if f["severity"] == "error"]
    assert refusals, sent.output
    for finding in refusals:
        assert finding["rule"] == "server"
        assert finding["file"] == str(too_long)
        assert (
            "JobSet name is too long, pod names generated for this JobSet will exceed 63 "
            "characters" in finding["message"]
        ), finding
    accepted = run(kube, "validate", "--server", str(longest))
    assert accepted.exit_code == 0, accepted.output
    assert accepted.stderr.endswith("1 spec valid\n")
