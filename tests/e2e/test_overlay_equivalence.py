"""`kustomize build` of each overlay equals, object by object, the merged spec's direct render."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paddlegen.cli import cli
from paddlegen.pipeline import build, write
from tests.conftest import example_specs
from tests.helpers import kustomize_build


def built_objects(directory: Path) -> list[dict]:
    return sorted(yaml.safe_load_all(kustomize_build(directory)), key=_key)


def _key(obj: dict) -> tuple[str, str]:
    return obj["kind"], obj["metadata"]["name"]


def assert_overlays_equal_direct_renders(spec: Path, out: Path) -> build.Rendered:
    (rendered,) = build.render_specs([spec])
    write.write_rendered([rendered], out)
    assert rendered.environments, f"{spec} has no overlays"
    base = built_objects(out / rendered.job.name / "base")
    assert base == sorted((m.obj for m in rendered.manifests), key=_key)
    for env, manifests in rendered.environments.items():
        direct = sorted((m.obj for m in manifests), key=_key)
        assert built_objects(out / rendered.job.name / "overlays" / env) == direct, env
    return rendered


def overlays_of(tmp_path: Path, name: str, text: str) -> build.Rendered:
    """The render of ``text`` as ``name``.yaml, built to its direct render in tmp_path/deploy."""
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(text)
    return assert_overlays_equal_direct_renders(spec, tmp_path / "deploy")


def environment(rendered: build.Rendered, env: str) -> dict[tuple[str, str], dict]:
    """The objects of environment ``env``, by kind and name."""
    return {(m.kind, m.name): m.obj for m in rendered.environments[env]}


def built_by_kind(folder: Path) -> dict[str, dict]:
    """What kustomize builds in ``folder``, by kind (one object of each)."""
    return {o["kind"]: o for o in built_objects(folder)}


WITH_OVERLAYS = [p for p in example_specs() if "\noverlays:" in p.read_text()]


def test_some_examples_have_overlays():
    assert len(WITH_OVERLAYS) >= 2


@pytest.mark.parametrize("spec", WITH_OVERLAYS, ids=lambda p: p.stem)
def test_example_overlays_build_to_the_merged_render(spec, tmp_path):
    assert_overlays_equal_direct_renders(spec, tmp_path)


BASE = {
    "apiVersion": "paddlegen/v1",
    "kind": "TrainingJob",
    "metadata": {"name": "prop", "namespace": "ml", "labels": {"team": "a"}},
    "spec": {
        "workload": "job",
        "image": "img:1",
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
        "env": [{"name": "A", "value": "1"}],
        "volumes": [
            {
                "name": "data",
                "mountPath": "/data",
                "nfs": {"server": "10.0.0.1", "path": "/x"},
                "capacity": "1Gi",
            }
        ],
    },
}

overlay_specs = st.fixed_dictionaries(
    {},
    optional={
        "image": st.sampled_from(["img:2", "other/img:3"]),
        "gpus": st.integers(0, 4),
        "shm": st.sampled_from(["1Gi", "64Mi"]),
        "env": st.lists(
            st.fixed_dictionaries(
                {"name": st.sampled_from(["A", "B", "C"]), "value": st.text("abc\n: ", max_size=5)}
            ),
            max_size=3,
            unique_by=lambda e: e["name"],
        ),
        "resources": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {"requests": st.fixed_dictionaries({"cpu": st.sampled_from(["500m", "2"])})}
            ),
        ),
        "scheduling": st.fixed_dictionaries({"scheduler": st.sampled_from(["default", "volcano"])}),
        "volumes": st.one_of(
            st.just([]),
            st.just(
                [
                    {
                        "name": "d2",
                        "mountPath": "/d2",
                        "dynamic": {"storageClassName": "fast"},
                        "capacity": "2Gi",
                    }
                ]
            ),
        ),
        "nodeSelector": st.dictionaries(
            st.sampled_from(["pool", "zone"]), st.sampled_from(["a", "b"]), max_size=2
        ),
        "run": st.fixed_dictionaries(
            {},
            optional={
                "backoffLimit": st.integers(0, 3),
                "ttlSecondsAfterFinished": st.integers(0, 100),
            },
        ),
    },
)
overlays = st.dictionaries(
    st.sampled_from(["dev", "prod"]),
    st.fixed_dictionaries(
        {"spec": overlay_specs},
        optional={
            "metadata": st.fixed_dictionaries(
                {},
                optional={
                    "labels": st.dictionaries(
                        st.sampled_from(["env", "team"]), st.sampled_from(["x", "y"]), max_size=2
                    ),
                    "namespace": st.sampled_from(["ml", "ml-prod"]),
                },
            )
        },
    ),
    min_size=1,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(overlays)
def test_any_overlay_builds_to_the_merged_render(tmp_path_factory, envs):
    out = tmp_path_factory.mktemp("prop")
    spec = out / "spec.yaml"
    spec.write_text(yaml.safe_dump({**BASE, "overlays": envs}))
    assert_overlays_equal_direct_renders(spec, out / "deploy")


NAMESPACED = """\
apiVersion: paddlegen/v1
kind: TrainingJob
metadata: {name: ns-demo%s}
spec:
  workload: distributed-job
  image: img:1
  worker: {replicas: 2}
  resources: {limits: {memory: 1Gi}}
  volumes:
    - {name: data, mountPath: /data, nfs: {server: 10.0.0.1, path: /x}, capacity: 1Gi}
  distributed: {volume: data, trainConfigDir: quick_start, hostPorts: false}
overlays:
  prod: {metadata: {namespace: ml-prod}}
  dev: {metadata: {namespace: ml-dev}, spec: {worker: {replicas: 1}}}
"""


@pytest.mark.parametrize("base_namespace", ["", ", namespace: ml"], ids=["none", "ml"])
def test_an_overlay_moves_every_object_and_reference_to_its_namespace(base_namespace, tmp_path):
    overlays_of(tmp_path, "ns-demo", NAMESPACED % base_namespace)
    for env in ("prod", "dev"):
        objects = built_objects(tmp_path / "deploy" / "ns-demo" / "overlays" / env)
        namespaced = [o for o in objects if o["kind"] != "PersistentVolume"]
        assert {o["metadata"]["namespace"] for o in namespaced} == {f"ml-{env}"}
        (binding,) = (o for o in objects if o["kind"] == "RoleBinding")
        assert binding["subjects"][0]["namespace"] == f"ml-{env}"
        (volume,) = (o for o in objects if o["kind"] == "PersistentVolume")
        assert volume["spec"]["claimRef"]["namespace"] == f"ml-{env}"
        assert volume["metadata"]["name"].startswith(f"ml-{env}-")  # PVs are cluster-wide
        kustomization = yaml.safe_load(
            (tmp_path / "deploy" / "ns-demo" / "overlays" / env / "kustomization.yaml").read_text()
        )
        assert kustomization["namespace"] == f"ml-{env}"


@pytest.mark.parametrize(("base_namespace", "stated"), [("", None), (", namespace: ml", "ml")])
def test_every_overlay_kustomization_states_the_namespace_it_deploys_to(
    base_namespace, stated, tmp_path
):
    """Also an overlay that keeps its base's namespace: Argo CD's git files generator (the
    ApplicationSet's destination namespace) reads only that one file."""
    text = NAMESPACED.replace("prod: {metadata: {namespace: ml-prod}}", "prod: {}")
    overlays_of(tmp_path, "ns-demo", text % base_namespace)
    overlay = tmp_path / "deploy" / "ns-demo" / "overlays" / "prod" / "kustomization.yaml"
    assert yaml.safe_load(overlay.read_text()).get("namespace") == stated


POD_SETTINGS_SPEC = """\
apiVersion: paddlegen/v1
kind: TrainingJob
metadata: {name: pods, namespace: ml}
spec:
  workload: distributed-job
  image: img:1
  imagePullSecrets: [regcred]
  podAnnotations: {cluster-autoscaler.kubernetes.io/safe-to-evict: "false"}
  worker: {replicas: 2}
  volumes:
    - {name: data, mountPath: /data, emptyDir: {}}
    - {name: code, mountPath: /code, configMap: {name: code, defaultMode: 0444}}
  distributed: {volume: data, trainConfigDir: qs}
  dataPrep: {volume: data, image: img:1}
overlays:
  prod:
    spec:
      imagePullSecrets: [prod-registry]
      serviceAccountName: trainer
      podLabels: {sidecar.istio.io/inject: "false"}
      podAnnotations: null
      priorityClassName: high-priority
      terminationGracePeriodSeconds: 300
      runtimeClassName: nvidia
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
      envFrom: [{configMapRef: {name: prod-config}}]
      worker: {podAnnotations: {team: ml}, envFrom: [{secretRef: {name: worker-s3}, prefix: S3_}]}
"""


def test_pod_settings_in_an_overlay_build_to_the_merged_render(tmp_path):
    """Each pod setting set, replaced or removed by an overlay; for distributed-job the
    user's account also drops the job's own ServiceAccount and rebinds its Role."""
    prod = environment(overlays_of(tmp_path, "pods", POD_SETTINGS_SPEC), "prod")
    assert ("ServiceAccount", "pods") not in prod
    pod = prod[("Job", "pods")]["spec"]["template"]
    assert pod["spec"]["serviceAccountName"] == "trainer"
    assert pod["spec"]["imagePullSecrets"] == [{"name": "prod-registry"}]
    assert pod["metadata"]["annotations"] == {"team": "ml"}
    assert pod["spec"]["containers"][0]["envFrom"] == [
        {"secretRef": {"name": "worker-s3"}, "prefix": "S3_"}
    ]
    data = prod[("Job", "pods-data")]["spec"]["template"]
    assert data["spec"]["runtimeClassName"] == "nvidia"
    assert data["spec"]["topologySpreadConstraints"][0]["maxSkew"] == 1
    assert "annotations" not in data["metadata"]


INIT_CONTAINERS_SPEC = """\
apiVersion: paddlegen/v1
kind: TrainingJob
metadata: {name: inits, namespace: ml}
spec:
  workload: kubeflow-paddlejob
  image: img:1
  volumes: [{name: code, mountPath: /code, emptyDir: {}}]
  initContainers: [{name: fetch, image: "git:1", volumeMounts: [{name: code}]}]
  ps: {replicas: 1}
  worker: {replicas: 2}
overlays:
  prod:
    spec:
      initContainers:
        - {name: fetch, image: "git:2", volumeMounts: [{name: code, readOnly: false}]}
        - {name: check, image: "check:1", volumeMounts: [{name: code, readOnly: true}]}
      sidecars: [{name: proxy, image: "proxy:1", ports: [{containerPort: 15000}]}]
      worker: {initContainers: []}
  dev:
    spec:
      initContainers: null
"""


def test_init_containers_and_sidecars_in_an_overlay_build_to_the_merged_render(tmp_path):
    """An overlay replaces, adds and removes init containers and sidecars, spec-wide and for
    a role: the patches of the operator's PaddleJob build to the direct render."""
    rendered = overlays_of(tmp_path, "inits", INIT_CONTAINERS_SPEC)

    def init_containers(env: str, replica: str) -> list[tuple[str, str]]:
        job = environment(rendered, env)[("PaddleJob", "inits")]
        pod = job["spec"]["paddleReplicaSpecs"][replica]["template"]["spec"]
        return [(c["name"], c["image"]) for c in pod.get("initContainers", [])]

    assert init_containers("prod", "Master") == [
        ("proxy", "proxy:1"),
        ("fetch", "git:2"),
        ("check", "check:1"),
    ]
    assert init_containers("prod", "Worker") == [("proxy", "proxy:1")]
    assert init_containers("dev", "Master") == init_containers("dev", "Worker") == []


COLLECTIVE_SPEC = """\
apiVersion: paddlegen/v1
kind: TrainingJob
metadata: {name: col, namespace: ml}
spec:
  workload: collective-job
  image: img:1
  args: [train.py]
  resources: {limits: {memory: 1Gi}}
  worker: {replicas: 2}
overlays:
  prod:
    metadata: {namespace: ml-prod}
    spec: {worker: {replicas: 4}, collective: {port: 8090}, scheduling: {scheduler: volcano}}
"""


def test_a_collective_job_overlay_moves_the_ranks_their_names_and_their_gang(tmp_path):
    """The ranks, the master's port and the gang follow the overlay; rank 0's name is relative
    to the pods' namespace, so it stays right in the namespace the overlay moves them to."""
    overlays_of(tmp_path, "col", COLLECTIVE_SPEC)
    objects = built_by_kind(tmp_path / "deploy" / "col" / "overlays" / "prod")
    assert objects["Service"]["metadata"]["namespace"] == "ml-prod"
    assert objects["Service"]["spec"]["selector"] == {"batch.kubernetes.io/job-name": "col"}
    job = objects["Job"]
    assert (job["spec"]["parallelism"], job["spec"]["completions"]) == (4, 4)
    assert job["metadata"]["annotations"]["scheduling.volcano.sh/group-min-member"] == "4"
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert (env["PADDLE_NNODES"], env["PADDLE_MASTER"]) == ("4", "col-0.col:8090")
    assert container["ports"] == [{"name": "master", "containerPort": 8090, "protocol": "TCP"}]


TRAINJOB_SPEC = """\
apiVersion: paddlegen/v1
kind: TrainingJob
metadata: {name: tj, namespace: ml}
spec:
  workload: trainjob
  image: img:1
  args: [train.py]
  resources: {limits: {memory: 1Gi}}
  worker: {replicas: 2}
overlays:
  prod:
    metadata: {namespace: ml-prod}
    spec:
      worker: {replicas: 4, nodeSelector: {gpu: a100}}
      shm: 1Gi
      scheduling: {scheduler: volcano, queue: prod}
"""


def test_a_trainjob_overlay_changes_its_nodes_runtime_and_runtime_patch(tmp_path):
    """numNodes, PADDLE_NNODES, the runtime (Volcano's), its queue and the pod settings in
    the runtime patch (a list keyed by manager, which kustomize replaces whole) follow."""
    overlays_of(tmp_path, "tj", TRAINJOB_SPEC)
    train_job = built_by_kind(tmp_path / "deploy" / "tj" / "overlays" / "prod")["TrainJob"]
    assert train_job["metadata"]["namespace"] == "ml-prod"
    trainer = train_job["spec"]["trainer"]
    assert trainer["numNodes"] == 4
    assert trainer["env"] == [{"name": "PADDLE_NNODES", "value": "4"}]
    assert train_job["spec"]["runtimeRef"]["name"] == "paddle-distributed-volcano"
    (patch,) = train_job["spec"]["runtimePatches"]
    template = patch["trainingRuntimeSpec"]["template"]
    assert template["metadata"]["annotations"] == {"scheduling.volcano.sh/queue-name": "prod"}
    pod = template["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"gpu": "a100"}
    assert [v["name"] for v in pod["volumes"]] == ["dshm"]


KUEUE_SPEC = """\
apiVersion: paddlegen/v1
kind: TrainingJob
metadata: {name: queued, namespace: team-a}
spec:
  workload: collective-job
  image: img:1
  args: [train.py]
  resources: {requests: {cpu: "1", memory: 1Gi}, limits: {memory: 1Gi}}
  worker: {replicas: 2}
  volumes: [{name: data, mountPath: /data, emptyDir: {}}]
  dataPrep: {volume: data}
  scheduling: {kueue: {queue: team-a}}
overlays:
  moved:
    metadata: {namespace: team-b}
  prod:
    spec:
      scheduling: {kueue: {queue: prod, priorityClass: high}}
  unqueued:
    spec:
      scheduling: {kueue: null}
"""


def test_kueue_in_an_overlay_builds_to_the_merged_render(tmp_path):
    """An overlay changes the queue, adds a priority class or takes the job out of Kueue; one
    that only moves the job to another namespace keeps its queue's name, which there names
    that namespace's LocalQueue (LocalQueues are per namespace)."""
    rendered = overlays_of(tmp_path, "queued", KUEUE_SPEC)

    def labels(env: str, name: str = "queued") -> dict[str, str]:
        job = environment(rendered, env)[("Job", name)]
        return {k: v for k, v in job["metadata"]["labels"].items() if k.startswith("kueue.")}

    queue, priority = "kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class"
    assert labels("moved") == {queue: "team-a"}
    assert {m.obj["metadata"]["namespace"] for m in rendered.environments["moved"]} == {"team-b"}
    assert labels("prod") == {queue: "prod", priority: "high"}
    assert labels("unqueued") == {}
    assert all(labels(env, "queued-data") == {} for env in ("moved", "prod", "unqueued"))


def _container(name: str) -> st.SearchStrategy[dict]:
    pairs = st.lists(st.sampled_from("ABCDE"), unique=True, max_size=4)
    return st.fixed_dictionaries(
        {"name": st.just(name), "image": st.sampled_from(["img:1", "img:2"])},
        optional={
            "env": pairs.flatmap(
                lambda names: st.tuples(*(st.sampled_from("12") for _ in names)).map(
                    lambda values: [
                        {"name": n, "value": v} for n, v in zip(names, values, strict=True)
                    ]
                )
            ),
            "volumeMounts": st.lists(
                st.sampled_from(
                    [{"name": "a", "mountPath": "/a"}, {"name": "b", "mountPath": "/b"}]
                ),
                unique_by=lambda m: m["name"],
            ),
            "ports": st.lists(
                st.sampled_from([{"containerPort": 80}, {"containerPort": 81, "protocol": "UDP"}]),
                unique_by=lambda p: p["containerPort"],
                max_size=2,
            ),
            "args": st.lists(st.sampled_from(["x", "y"]), max_size=2),
        },
    )


pod_objects = st.fixed_dictionaries(
    {
        "kind": st.sampled_from([("batch/v1", "Job"), ("batch.volcano.sh/v1alpha1", "Job")]),
        "labels": st.dictionaries(st.sampled_from(["a", "b"]), st.sampled_from(["1", "2"])),
        "containers": st.lists(
            st.sampled_from(["main", "side"]), min_size=1, max_size=2, unique=True
        ).flatmap(lambda names: st.tuples(*map(_container, names)).map(list)),
    },
    optional={
        "nodeSelector": st.dictionaries(st.sampled_from(["p", "z"]), st.just("1"), min_size=1),
        "tolerations": st.lists(st.sampled_from([{"key": "x"}, {"key": "y"}]), max_size=2),
        "volumes": st.lists(
            st.sampled_from(
                [
                    {"name": "a", "emptyDir": {}},
                    {"name": "a", "hostPath": {"path": "/a"}},
                    {"name": "b", "emptyDir": {"medium": "Memory"}},
                ]
            ),
            unique_by=lambda v: v["name"],
        ),
    },
)


def _object(drawn: dict, kind: tuple[str, str]) -> dict:
    pod = {
        k: drawn[k] for k in ("containers", "nodeSelector", "tolerations", "volumes") if k in drawn
    }
    metadata = {
        "name": "obj",
        "namespace": "ml",
        **({"labels": drawn["labels"]} if drawn["labels"] else {}),
    }
    return {
        "apiVersion": kind[0],
        "kind": kind[1],
        "metadata": metadata,
        "spec": {"template": {"spec": pod}},
    }


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pod_objects, pod_objects)
def test_kustomize_and_validate_apply_a_patch_to_the_environment_object(
    tmp_path_factory, base_drawn, env_drawn
):
    """Any two pod-carrying objects, built-in (lists merged by key) or custom (lists replaced):
    kustomize turns the base into the environment with the patch, and so does the in-process
    application `validate` uses."""
    from paddlegen.output.patches import overlay_kustomization
    from paddlegen.validate.merge import apply_patch

    kind = base_drawn["kind"]
    base, env = _object(base_drawn, kind), _object(env_drawn, kind)
    kustomization, files = overlay_kustomization({"obj.yaml": base}, {"obj.yaml": env})
    folder = tmp_path_factory.mktemp("smp")
    (folder / "base").mkdir()
    (folder / "base" / "obj.yaml").write_text(yaml.safe_dump(base))
    (folder / "base" / "kustomization.yaml").write_text("resources: [obj.yaml]\n")
    overlay = folder / "overlays" / "env"
    overlay.mkdir(parents=True)
    (overlay / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    for name, content in files.items():
        (overlay / name).write_text(yaml.safe_dump(content))
    assert built_objects(overlay) == [env]
    if files:
        assert apply_patch(base, files["patch-obj.yaml"]) == env


CUSTOM_REORDER = """\
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
patches:
  - target: {kind: Job, name: reorder}
    patch: |
      apiVersion: batch/v1
      kind: Job
      metadata: {name: reorder}
      spec:
        template:
          spec:
            containers:
              - name: paddle
                env:
                  - {name: TEAM_TOKEN, value: abc}
"""


def test_an_environment_patch_applies_after_the_jobs_component_reorders_env(runner, tmp_path):
    """The job's own Component puts a variable first in the container's env; the prod patch
    still changes the rank count by name, and the team's variable stays."""
    spec = tmp_path / "jobs" / "reorder.yaml"
    spec.parent.mkdir()
    spec.write_text(COLLECTIVE_SPEC.replace("name: col", "name: reorder"))
    deploy = tmp_path / "deploy"
    custom = deploy / "reorder" / "custom"
    custom.mkdir(parents=True)
    (custom / "kustomization.yaml").write_text(CUSTOM_REORDER)
    assert runner.invoke(cli, ["render", str(spec), "-o", str(deploy)]).exit_code == 0

    def env_of(folder: str) -> list[dict]:
        job = built_by_kind(deploy / "reorder" / folder)["Job"]
        return job["spec"]["template"]["spec"]["containers"][0]["env"]

    assert env_of("base")[0]["name"] == "TEAM_TOKEN"  # kustomize puts a patch's elements first
    env = env_of("overlays/prod")
    values = {e["name"]: e.get("value") for e in env}
    assert values["PADDLE_NNODES"] == "4"
    assert values["TEAM_TOKEN"] == "abc"
    assert len(env) == len(values)  # nothing doubled
