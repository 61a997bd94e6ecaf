"""Every example through the real tools: render -> kubeconform (binary and in process) ->
kustomize build -> kubeconform on the built stream. Plus findings mapped back to the spec."""

from __future__ import annotations

import shlex
import subprocess

import pytest
import yaml

from paddlegen.cli import cli
from paddlegen.pipeline import build, write
from paddlegen.validate import inputs as validation
from paddlegen.validate.kubeconform import tree_files
from tests.conftest import example_specs, require_tool
from tests.helpers import executable, kustomize_build

EXAMPLES = example_specs()


@pytest.fixture(scope="module")
def rendered_tree(tmp_path_factory):
    out = tmp_path_factory.mktemp("deploy")
    rendered = build.render_specs(EXAMPLES)
    write.write_rendered(rendered, out)
    return out, rendered


def test_every_example_passes_kubeconform_strict_on_both_paths(rendered_tree):
    binary = require_tool("kubeconform")
    out, rendered = rendered_tree
    found, used = validation.validate_rendered(rendered, out, kubeconform=binary)
    assert used == "kubeconform" and found == []
    found, used = validation.validate_rendered(rendered, out, prefer_binary=False)
    assert used == "in-process" and found == []


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_kustomize_builds_every_example_without_warnings(rendered_tree, spec):
    out, rendered = rendered_tree
    (job,) = [r for r in rendered if r.doc.file == str(spec)]
    built = kustomize_build(out / job.job.name / ("base" if job.environments else ""))
    found, _ = validation.validate_files(
        [(f"kustomize-build/{job.job.name}", built)], kubeconform=require_tool("kubeconform")
    )
    assert found == []
    built_objects = sorted((d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(built))
    assert built_objects == sorted((m.kind, m.name) for m in job.manifests)
    for obj, manifest in zip(
        sorted(yaml.safe_load_all(built), key=lambda d: (d["kind"], d["metadata"]["name"])),
        sorted(job.manifests, key=lambda m: (m.kind, m.name)),
        strict=True,
    ):
        assert obj == manifest.obj  # kustomize adds nothing: namespace and labels already set


BAD_TEMPLATE = """\
{% from "_partials/meta.yaml.j2" import object_meta %}
apiVersion: batch/v1
kind: Job
metadata:
  {{ object_meta(job, job.name) | indent(2) }}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: paddle
        image: {{ job.roles.worker.image | tojson }}
        imagePullPolicyy: {{ job.roles.worker.imagePullPolicy | tojson }}
"""


@pytest.mark.parametrize("prefer_binary", [True, False], ids=["kubeconform", "in-process"])
def test_manifest_findings_point_back_at_the_spec(runner, tmp_path, prefer_binary, monkeypatch):
    if prefer_binary:
        require_tool("kubeconform")
    else:
        monkeypatch.setenv("PATH", "/nonexistent")
    (tmp_path / "templates" / "job").mkdir(parents=True)
    (tmp_path / "templates" / "job" / "job.yaml.j2").write_text(BAD_TEMPLATE)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "apiVersion: paddlegen/v1\nkind: TrainingJob\nmetadata: {name: demo}\n"
        "spec:\n  workload: job\n  image: img:1\n  imagePullPolicy: Always\n"
    )
    out = tmp_path / "deploy"
    templates = ["--templates", str(tmp_path / "templates")]
    result = runner.invoke(cli, ["render", str(spec), "--validate", "-o", str(out), *templates])
    assert result.exit_code == 1, result.output
    assert not out.exists(), "nothing is written when validation fails"
    line = next(x for x in result.stderr.splitlines() if "imagePullPolicyy" in x)
    assert line.startswith(
        f"{out}/demo/batch_v1_job_demo.yaml: error: Job/demo "
        "spec.template.spec.containers[0].imagePullPolicyy"
    )
    label = "kubeconform" if prefer_binary else "in-process"  # what found it
    assert line.endswith(f"(from {spec}:7:20) [{label}]")
    assert ("in process" in result.stderr) == (not prefer_binary)


def test_validate_on_100_rendered_jobs_runs_one_kubeconform(runner, tmp_path, monkeypatch):
    binary = require_tool("kubeconform")
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for i in range(100):
        (jobs / f"j{i}.yaml").write_text(
            f"apiVersion: paddlegen/v1\nkind: TrainingJob\nmetadata: {{name: job-{i}}}\n"
            "spec: {workload: job, image: img}\n"
        )
    assert runner.invoke(cli, ["render", str(jobs), "-o", str(tmp_path / "deploy")]).exit_code == 0
    counter = tmp_path / "calls"
    wrapper = executable(tmp_path / "kubeconform", f'echo run >> "{counter}"\nexec "{binary}" "$@"')
    result = runner.invoke(
        cli, ["validate", str(tmp_path / "deploy"), "--kubeconform", str(wrapper)]
    )
    assert result.exit_code == 0, result.output
    assert result.stderr == "100 rendered jobs valid\n"
    assert counter.read_text().splitlines() == ["run"]


def test_schemas_export_feeds_a_users_own_kubeconform(runner, tmp_path, rendered_tree):
    binary = require_tool("kubeconform")
    out, _ = rendered_tree
    schemas = tmp_path / "schemas"
    result = runner.invoke(cli, ["schemas", "export", str(schemas)])
    assert result.exit_code == 0, result.output
    crds = schemas / "crds" / "{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json"
    k8s = schemas / "kubernetes" / "{{.ResourceKind}}{{.KindSuffix}}.json"
    locations = ["-schema-location", str(crds), "-schema-location", str(k8s)]
    manifests = [name for name, _ in tree_files(validation.rendered_trees(out))]
    run = subprocess.run(
        [binary, "-strict", "-summary", *locations, *manifests], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_command_schemas_export_prints_passes_on_paddlegens_own_output(
    runner, tmp_path, rendered_tree
):
    """Run exactly what the user is told to run, over a whole rendered tree with overlays:
    kustomizations and patch files are not objects and must not fail it."""
    binary = require_tool("kubeconform")
    out, _ = rendered_tree
    assert list(out.rglob("overlays/*/patch-*"))  # the tree has overlay patches
    result = runner.invoke(cli, ["schemas", "export", str(tmp_path / "schemas")])
    assert result.exit_code == 0, result.output
    argv = shlex.split(result.stdout.splitlines()[-1])
    assert (argv[0], argv[-1]) == ("kubeconform", "DIR")
    run = subprocess.run(
        [binary, *argv[1:-1], "-summary", str(out)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Invalid: 0, Errors: 0" in run.stdout


def test_a_namespace_kustomize_sets_leaves_a_pv_alone_and_its_class_keeps_the_binding(tmp_path):
    """A namespace decided at build time (`namespace:` of a kustomization around paddlegen's
    folder) moves the claim; the cluster-scoped PV keeps its class of its own, which ties it
    to that claim alone. kustomize (v5.7.1) fills no claimRef namespace, not even one added by
    a patch: why paddlegen renders no claimRef without a namespace. Should that change, this
    fails, and a claimRef would do."""
    spec = tmp_path / "demo.yaml"
    spec.write_text(
        "apiVersion: paddlegen/v1\nkind: TrainingJob\nmetadata: {name: demo}\nspec:\n"
        "  workload: paddlejob\n"
        "  image: r/train:v1\n  resources: {limits: {memory: 1Gi}}\n  volumes: [{name: data, "
        "mountPath: /data, nfs: {server: 10.0.0.1, path: /data}, capacity: 10Gi}]\n"
    )
    write.write_rendered(build.render_specs([spec]), tmp_path / "deploy")
    team = tmp_path / "team"
    team.mkdir()
    (team / "kustomization.yaml").write_text(
        "namespace: team-a\nresources: [../deploy/demo]\npatches:\n"
        "- target: {kind: PersistentVolume}\n"
        '  patch: \'[{"op": "add", "path": "/spec/claimRef", '
        '"value": {"name": "demo-data"}}]\'\n'
    )
    objects = {d["kind"]: d for d in yaml.safe_load_all(kustomize_build(team))}
    pv, claim = objects["PersistentVolume"], objects["PersistentVolumeClaim"]
    assert claim["metadata"]["namespace"] == "team-a"
    assert pv["spec"]["claimRef"] == {"name": "demo-data"}  # no namespace filled in
    assert "namespace" not in pv["metadata"]
    assert pv["spec"]["storageClassName"] == claim["spec"]["storageClassName"] == "demo-data"
    assert claim["spec"]["volumeName"] == pv["metadata"]["name"] == "demo-data"


CUSTOM_COMPONENT = """\
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources: [networkpolicy.yaml]
patches:
  - path: patch-cost-center.yaml
    target: {kind: PaddleJob}
"""
NETWORK_POLICY = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: team-ingress}
spec: {podSelector: {}, policyTypes: [Ingress]}
"""
COST_CENTER = """\
- {op: add, path: /metadata/annotations/team.example.com~1cost-center, value: ads}
"""


@pytest.mark.parametrize("overlays", [False, True], ids=["flat", "overlays"])
def test_a_jobs_custom_component_is_built_with_its_objects(runner, tmp_path, overlays):
    """custom/: its objects get the job's namespace and labels, its patches meet paddlegen's
    objects, in the base and every environment; validate reads its objects, not its patches."""
    spec = tmp_path / "jobs" / "team.yaml"
    spec.parent.mkdir()
    spec.write_text(
        "apiVersion: paddlegen/v1\nkind: TrainingJob\nmetadata: {name: team, namespace: ml}\n"
        "spec:\n  workload: paddlejob\n  image: r/train:v1\n  resources: {limits: {memory: 1Gi}}\n"
        + ("overlays:\n  prod: {spec: {worker: {replicas: 4}}}\n" if overlays else "")
    )
    deploy = tmp_path / "deploy"
    job = deploy / "team"
    job.mkdir(parents=True)
    custom = job / "custom"
    custom.mkdir()
    (custom / "kustomization.yaml").write_text(CUSTOM_COMPONENT)
    (custom / "networkpolicy.yaml").write_text(NETWORK_POLICY)
    (custom / "patch-cost-center.yaml").write_text(COST_CENTER)
    assert runner.invoke(cli, ["render", str(spec.parent), "-o", str(deploy)]).exit_code == 0
    assert runner.invoke(cli, ["check", str(spec.parent), "-o", str(deploy)]).exit_code == 0
    for folder in [job / "base", job / "overlays" / "prod"] if overlays else [job]:
        objects = {d["kind"]: d for d in yaml.safe_load_all(kustomize_build(folder))}
        policy = objects["NetworkPolicy"]["metadata"]
        assert policy["namespace"] == "ml"
        assert policy["labels"]["app.kubernetes.io/instance"] == "team"
        annotations = objects["PaddleJob"]["metadata"]["annotations"]
        assert annotations["team.example.com/cost-center"] == "ads"
    validated = runner.invoke(cli, ["validate", str(deploy)])
    assert validated.exit_code == 0, validated.output
    (custom / "networkpolicy.yaml").write_text(NETWORK_POLICY.replace("podSelector", "podSelectr"))
    assert runner.invoke(cli, ["validate", str(deploy)]).exit_code == 1
