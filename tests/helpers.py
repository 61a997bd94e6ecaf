"""Small helpers shared by the tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def pod_templates(objects: Any) -> list[dict[str, Any]]:
    """Every pod template in ``objects``, whatever nests it (a TrainJob's runtime patch too),
    in their order."""
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "containers" in node.get("spec", {}):
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(objects)
    return found


def copy_repository(into: Path, names: Iterable[str]) -> None:
    """The repository's files and folders ``names`` copied into ``into``, caches left out."""
    for name in names:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, into / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            into.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)


def _git_glob(path: str, pattern: str) -> bool:
    # `git ls-files -- PATTERN` (Argo CD's default file globbing): `*` matches `/` too.
    return fnmatchcase(path, pattern)


def _segment_glob(path: str, pattern: str) -> bool:
    # doublestar (--enable-new-git-file-globbing): `*` stays within one path segment.
    parts, globs = path.split("/"), pattern.split("/")
    return len(parts) == len(globs) and all(map(fnmatchcase, parts, globs))


GLOBBINGS = {"git ls-files": _git_glob, "doublestar": _segment_glob}


def generated_paths(appset: dict[str, Any], tree: list[str], globbing: str) -> list[str]:
    """The files an ApplicationSet's git files generators pick from ``tree`` (paths in the
    repository), as Argo CD v3.5.1 does (applicationset/generators/git.go): per generator,
    the union of its includes less anything any of its excludes match; then every generator's
    results, one Application each."""
    match = GLOBBINGS[globbing]
    picked = []
    for generator in appset["spec"]["generators"]:
        files = generator["git"]["files"]
        included = {p for p in tree for f in files if not f.get("exclude") and match(p, f["path"])}
        excluded = {p for p in tree for f in files if f.get("exclude") and match(p, f["path"])}
        picked += sorted(included - excluded)
    return picked


# A Job to import: its container's name is cosmetic, its hostNetwork lossy (exit 1 unless --lossy).
LOSSY_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: demo}
spec:
  template:
    spec:
      containers: [{name: main, image: "r/demo:v1", command: [python3, train.py]}]
      restartPolicy: Never
      hostNetwork: true
"""


POD_SETTINGS: dict[str, Any] = {
    "imagePullSecrets": ["regcred"],
    "serviceAccountName": "trainer",
    "podLabels": {"sidecar.istio.io/inject": "false"},
    "podAnnotations": {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"},
    "priorityClassName": "high-priority",
    "terminationGracePeriodSeconds": 120,
    "runtimeClassName": "nvidia",
    "automountServiceAccountToken": True,
    # the cluster's DNS alone, as ClusterFirst has it, with fewer dots before a name is absolute
    "dnsPolicy": "None",
    "dnsConfig": {
        "nameservers": ["10.96.0.10"],
        "searches": ["ml.svc.cluster.local", "svc.cluster.local", "cluster.local"],
        "options": [{"name": "ndots", "value": "2"}],
    },
    "topologySpreadConstraints": [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app.kubernetes.io/instance": "demo"}},
        }
    ],
}
# What a role's own value replaces the spec-wide one with.
ROLE_POD_SETTINGS: dict[str, Any] = {
    "imagePullSecrets": ["other"],
    "serviceAccountName": "worker-identity",
    "podLabels": {"tier": "worker"},
    "podAnnotations": {"sidecar.istio.io/inject": "false"},
    "priorityClassName": "low-priority",
    "terminationGracePeriodSeconds": 5,
    "runtimeClassName": "gvisor",
    "automountServiceAccountToken": True,
    "dnsPolicy": "ClusterFirstWithHostNet",
    "dnsConfig": {"searches": ["corp.example.com"], "options": [{"name": "edns0"}]},
    "topologySpreadConstraints": [
        {
            "maxSkew": 2,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {
                "matchExpressions": [
                    {"key": "app.kubernetes.io/instance", "operator": "In", "values": ["demo"]}
                ]
            },
        }
    ],
}
# The training container's env sources, spec-wide and a role's own: every valueFrom kind, and
# envFrom with a ConfigMap and a Secret.
ENV_SOURCES: dict[str, Any] = {
    "env": [
        {"name": "LEVEL", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "level"}}},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {
            "name": "MEMORY_MI",
            "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}},
        },
    ],
    "envFrom": [
        {"configMapRef": {"name": "training-config"}},
        {"secretRef": {"name": "s3-credentials", "optional": True}, "prefix": "S3_"},
    ],
}
ROLE_ENV_SOURCES: dict[str, Any] = {
    "env": [
        {
            "name": "TOKEN",
            "valueFrom": {"secretKeyRef": {"name": "hub", "key": "token", "optional": True}},
        },
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
    ],
    "envFrom": [{"configMapRef": {"name": "worker-config", "optional": True}, "prefix": "W_"}],
}

# Init containers and native sidecars, spec-wide, and a role's own sidecar (volumes data, code
# and logs: tests/render/test_init_containers.py).
INIT_CONTAINERS: list[dict[str, Any]] = [
    {
        "name": "fetch-code",
        "image": "alpine/git:2.45.2",
        "args": ["clone", "--depth=1", "https://git.example.com/train.git", "/code/train"],
        "volumeMounts": [{"name": "code"}],
    },
    {
        "name": "warm-cache",
        "image": "r/train:v1",
        "command": ["python3", "warm.py"],
        "env": [{"name": "CACHE", "value": "/data/cache"}],
        "resources": {"requests": {"cpu": 2, "memory": "256Mi"}},
        "volumeMounts": [{"name": "data", "subPath": "cache", "mountPath": "/cache"}],
    },
]
SIDECARS: list[dict[str, Any]] = [
    {
        "name": "log-shipper",
        "image": "fluent/fluent-bit:3.1.9",
        "resources": {"requests": {"cpu": 0.25, "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
        "ports": [{"name": "http", "containerPort": 2020}],
        "startupProbe": {"httpGet": {"path": "/api/v1/health", "port": "http"}, "periodSeconds": 1},
        "livenessProbe": {"tcpSocket": {"port": 2020}},
        "volumeMounts": [{"name": "logs", "readOnly": True}],
    }
]
ROLE_SIDECARS: list[dict[str, Any]] = [{"name": "metrics", "image": "prom/statsd-exporter:v0.27.1"}]


# A ServiceMonitor with a typo: a kind paddlegen has no schema for (tests/data/schemas has one).
SERVICE_MONITOR = """\
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: a}
spec:
  selector: {matchLabels: {app: a}}
  endpoints: [{port: metrics, intervall: 30s}]
"""


def add_service_monitor(job_dir: Path) -> None:
    """A user's custom/ Component in a rendered job folder, holding SERVICE_MONITOR."""
    custom = job_dir / "custom"
    custom.mkdir()
    (custom / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
        "resources: [servicemonitor.yaml]\n"
    )
    (custom / "servicemonitor.yaml").write_text(SERVICE_MONITOR)


def release(tmp_path: Path, version: str, template_change: bool = True) -> Path:
    """A copy of this paddlegen as another version; with ``template_change`` its batch Jobs
    gain a field (a new default, say)."""
    tree = tmp_path / f"paddlegen-{version}"
    copy_repository(tree, ("paddlegen", "templates", "schemas"))
    init = tree / "paddlegen" / "__init__.py"
    text = init.read_text(encoding="utf-8")
    init.write_text(text.replace('__version__ = "0.1.0"', f'__version__ = "{version}"'))
    if template_change:
        partial = tree / "templates" / "_partials" / "batch_job.yaml.j2"
        text = partial.read_text(encoding="utf-8")
        assert "  template:\n" in text
        partial.write_text(text.replace("  template:\n", "  suspend: false\n  template:\n", 1))
    return tree


def paddlegen_of(tree: Path | None, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``paddlegen ARGS`` of ``tree`` (a release's copy), else of this checkout."""
    env = {**os.environ, "PYTHONPATH": str(tree or ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "paddlegen", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


# tc-gitops: recorded upstream files and stand-in executables.


def assert_sha256sums(folder: Path, sums: str = "SHA256SUMS") -> dict[str, str]:
    """``folder``'s ``sums`` file (as `sha256sum -c` reads it) lists every YAML file below
    ``folder``, each with its digest; its listing, by path."""
    import hashlib

    lines = (folder / sums).read_text(encoding="utf-8").splitlines()
    listed = dict(reversed(line.split("  ", 1)) for line in lines)
    assert sorted(listed) == sorted(
        p.relative_to(folder).as_posix() for p in folder.rglob("*.yaml")
    )
    for name, digest in listed.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name
    return listed


def executable(path: Path, body: str) -> Path:
    """A shell script at ``path`` running ``body``, executable (a tool's stand-in on PATH)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def kustomize_build(folder: Path) -> str:
    """What `kustomize build FOLDER` prints; it must say nothing on stderr (a warning fails)."""
    from tests.conftest import require_tool

    built = subprocess.run(
        [require_tool("kustomize"), "build", str(folder)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert built.stderr == ""
    return built.stdout


# ---- tc-cli: what the command line's tests share --------------------------------------------


def own_templates(folder: Path) -> Path:
    """A --templates folder, ``folder``/templates, with a copy of the job workload's template:
    the copy's path."""
    from paddlegen.resources import templates_dir

    template = folder / "templates" / "job" / "job.yaml.j2"
    template.parent.mkdir(parents=True)
    shutil.copy(templates_dir() / "job" / "job.yaml.j2", template)
    return template


def rendered_quickstart(tmp_path: Path) -> Path:
    """``tmp_path``/repo: examples/quickstart.yaml in jobs/, rendered into deploy/ by this
    paddlegen (0.1.0)."""
    repo = tmp_path / "repo"
    (repo / "jobs").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "quickstart.yaml", repo / "jobs" / "quickstart.yaml")
    done = paddlegen_of(None, repo, "render", "jobs", "-o", "deploy")
    assert done.returncode == 0, done.stderr
    return repo


def drop_source(stamp: Path) -> None:
    """``stamp`` as written before stamps said what of the input is the user's: no source,
    no version."""
    lines = stamp.read_text().splitlines(keepends=True)
    stamp.write_text("".join(x for x in lines if '"source"' not in x and '"version"' not in x))


def invoked(runner: Any, *args: str, code: int = 0) -> Any:
    """``paddlegen ARGS`` through ``runner`` (click's CliRunner), which must exit with ``code``:
    click's Result."""
    from paddlegen.cli import cli

    result = runner.invoke(cli, list(args))
    assert result.exit_code == code, result.output
    return result
