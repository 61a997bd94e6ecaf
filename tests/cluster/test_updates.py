"""GitOps updates: a spec changed after its job was applied, re-rendered and applied over the
live objects, as Argo CD's sync or `kubectl apply --server-side` does. What the API server
accepts and what it refuses (a Job's pod template is immutable) is pinned here for every
workload; the README ("Changing a job that is already applied") says what a user does."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from tests.cluster.conftest import Kube
from tests.conftest import EXAMPLES

FIELD_MANAGER = "--field-manager=paddlegen"


def _image(spec: dict[str, Any]) -> None:
    spec["spec"]["image"] = "registry.invalid/other:2"
    for role in ("worker", "ps"):
        spec["spec"].get(role, {}).pop("image", None)


def _replicas(spec: dict[str, Any]) -> None:
    spec["spec"]["worker"]["replicas"] += 1


def _env(spec: dict[str, Any]) -> None:
    spec["spec"].setdefault("env", []).append({"name": "PADDLEGEN_UPDATE", "value": "1"})


def _labels(spec: dict[str, Any]) -> None:
    spec["metadata"].setdefault("labels", {})["team"] = "updated"


CHANGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "image": _image,
    "replicas": _replicas,
    "env": _env,
    "labels": _labels,
}
# workload -> (example, {change: outcome}); "immutable" names the kinds the server refused.
# Jobs: the pod template and completions are immutable once created; the custom resources
# (PaddleJob, PodGroup) have no such rule in their CRDs, so their updates are accepted here
# and it is the operator that decides what it does with them.
EXPECTED: dict[str, tuple[str, dict[str, str]]] = {
    "job": (
        "quickstart.yaml",
        {"image": "immutable: Job", "env": "immutable: Job", "labels": "immutable: Job"},
    ),
    "distributed-job": (
        "distributed-hostpath.yaml",
        {
            "image": "immutable: Job",
            "replicas": "immutable: Job",
            "env": "immutable: Job",
            "labels": "immutable: Job",
        },
    ),
    "paddlejob": (
        "paddlejob-volcano.yaml",
        {"image": "accepted", "replicas": "accepted", "env": "accepted", "labels": "accepted"},
    ),
    "kubeflow-paddlejob": (
        "kubeflow-wide-and-deep.yaml",
        {"image": "accepted", "replicas": "accepted", "env": "accepted", "labels": "accepted"},
    ),
    # An Indexed Job's completions may change with its parallelism, but the ranks' count is
    # in the pod template too (PADDLE_NNODES); the headless Service takes every change.
    "collective-job": (
        "collective-resnet.yaml",
        {
            "image": "immutable: Job",
            "replicas": "immutable: Job",
            "env": "immutable: Job",
            "labels": "immutable: Job",
        },
    ),
}


def render(data: dict[str, Any]) -> str:
    text = yaml.safe_dump(data, sort_keys=False)
    return build.manifest_stream([build.render_document(parse_spec(text.encode(), "spec.yaml"))])


def outcome(kube: Kube, stream: str) -> str:
    done = kube.run("apply", "--server-side", FIELD_MANAGER, "-f", "-", stdin=stream, check=False)
    if done.returncode == 0:
        return "accepted"
    kinds = sorted(
        set(re.findall(r'([A-Z][A-Za-z]+)(?:\.[a-z.]+)? "[^"]+" is invalid', done.stderr))
    )
    assert "field is immutable" in done.stderr, f"refused for another reason:\n{done.stderr}"
    assert kinds, f"refused, but not for an immutable field:\n{done.stderr}"
    return "immutable: " + ", ".join(kinds)


@pytest.mark.parametrize("workload", sorted(EXPECTED))
def test_each_change_is_accepted_or_refused_as_documented(kube: Kube, workload: str) -> None:
    example, expected = EXPECTED[workload]
    original = yaml.safe_load((EXAMPLES / example).read_text())
    original.pop("ignore", None)
    original["metadata"]["namespace"] = f"update-{workload}"
    kube.run("create", "namespace", original["metadata"]["namespace"])
    assert outcome(kube, render(original)) == "accepted"
    assert outcome(kube, render(original)) == "accepted"  # the same render again: no change
    found = {}
    for change in expected:
        changed = copy.deepcopy(original)
        CHANGES[change](changed)
        found[change] = outcome(kube, render(changed))
    assert found == expected


def test_every_change_is_covered() -> None:
    assert {c for _, changes in EXPECTED.values() for c in changes} == set(CHANGES)
    assert Path(EXAMPLES).is_dir()


def test_replace_refuses_what_apply_takes_and_force_recreates(kube: Kube) -> None:
    # Why Jobs carry no Replace=true by default: Argo CD's Replace=true is `kubectl replace`,
    # which must repeat the selector the server generated at creation, so it refuses even a
    # change a plain apply takes (activeDeadlineSeconds); Force=true,Replace=true (what
    # run.recreateOnChange asks for) deletes the Job and creates it again.
    original = yaml.safe_load((EXAMPLES / "quickstart.yaml").read_text())
    original["metadata"]["namespace"] = "update-replace"
    kube.run("create", "namespace", "update-replace")
    assert outcome(kube, render(original)) == "accepted"
    changed = copy.deepcopy(original)
    changed["spec"].setdefault("run", {})["activeDeadlineSeconds"] = 600
    stream = render(changed)
    replaced = kube.run("replace", "-f", "-", stdin=stream, check=False)
    assert replaced.returncode != 0
    assert "spec.selector: Required value" in replaced.stderr
    assert outcome(kube, stream) == "accepted"
    name = original["metadata"]["name"]

    def uid() -> str:
        return kube.run(
            "get", "job", name, "-n", "update-replace", "-o", "jsonpath={.metadata.uid}"
        ).stdout

    before = uid()
    changed["spec"]["image"] = "registry.invalid/other:2"
    jobs_only = "".join(
        f"---\n{yaml.safe_dump(o)}"
        for o in yaml.safe_load_all(render(changed))
        if o and o["kind"] == "Job"
    )
    forced = kube.run("replace", "--force", "-f", "-", stdin=jobs_only)
    assert "replaced" in forced.stdout
    assert uid() not in ("", before)  # a new Job: the old one is gone
