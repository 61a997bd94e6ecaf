"""spec.checkpoint for an LLM CLI: the output_dir override the kubelet expands, import, the rule."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from paddlegen.authoring.importer import import_manifests
from paddlegen.workloads.shared.launcher import CHECKPOINT_OVERRIDE
from tests.builders import HEADER, findings, rendered_objects
from tests.helpers import pod_templates

SPEC = """\
metadata: {{name: sft, namespace: llm}}
spec:
  workload: {workload}
  image: r/pf:1
  command: {command}
  worker: {{replicas: 2}}
  resources: {{limits: {{memory: 8Gi}}}}
  volumes: [{{name: llm, mountPath: /mnt/llm, claim: {{name: llm}}}}]
"""
CHECKPOINT = "  checkpoint: {volume: llm, path: ckpt/sft}\n"
CONFIG = "[paddleformers-cli, train, /mnt/llm/sft.yaml]"
# the kubelet's $(VAR) reference (k8s.io/kubernetes third_party/forked/golang/expansion)
REFERENCE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def spec(workload: str = "collective-job", command: str = CONFIG, extra: str = CHECKPOINT) -> str:
    return SPEC.format(workload=workload, command=command) + extra


def container(body: str) -> dict[str, Any]:
    (template,) = [t for t in pod_templates(rendered_objects(HEADER + body)) if "paddle" in str(t)]
    (found,) = template["spec"]["containers"]
    return dict(found)


def expanded(found: dict[str, Any]) -> list[str]:
    """The container's args as the kubelet runs them: each $(VAR) from the container's env.
    A TrainJob's trainer env (which Trainer puts in the container) stands in for it there."""
    env = {e["name"]: e.get("value") for e in found["env"]}
    return [REFERENCE.sub(lambda m: env[m.group(1)], arg) for arg in found.get("args", [])]


def trainer(body: str) -> dict[str, Any]:
    return dict(rendered_objects(HEADER + body)[("TrainJob", "sft")]["spec"]["trainer"])


@pytest.mark.parametrize("cli", ["paddleformers-cli", "/opt/venv/bin/erniekit"])
def test_with_a_checkpoint_the_cli_saves_and_resumes_in_its_folder(cli):
    found = container(spec(command=f"[{cli}, train, /mnt/llm/sft.yaml]"))
    assert found["args"] == [CHECKPOINT_OVERRIDE]
    assert expanded(found) == ["output_dir=/mnt/llm/ckpt/sft"]
    # after the config and the spec's own overrides
    found = container(spec(command=CONFIG) + "  args: [learning_rate=1e-5]\n")
    assert found["args"] == ["learning_rate=1e-5", CHECKPOINT_OVERRIDE]


def test_a_trainjobs_trainer_gets_it_with_the_env_it_names():
    found = trainer(spec(workload="trainjob"))
    assert found["args"] == [CHECKPOINT_OVERRIDE]
    assert expanded(found) == ["output_dir=/mnt/llm/ckpt/sft"]


@pytest.mark.parametrize(
    ("command", "extra"),
    [
        (CONFIG, ""),  # no checkpoint
        ("[python3, -m, paddle.distributed.launch, train.py]", CHECKPOINT),  # not an LLM CLI
        ("[paddleformers-cli, train, --config, sft.yaml]", CHECKPOINT),  # no config to follow
        (CONFIG, CHECKPOINT + "  args: [output_dir=/mnt/llm/out]\n"),  # the spec's own
    ],
)
def test_nothing_is_appended_where_it_would_not_be_read_or_the_spec_chose(command, extra):
    found = container(spec(command=command, extra=extra))
    assert CHECKPOINT_OVERRIDE not in found.get("args", [])


@pytest.mark.parametrize("workload", ["collective-job", "trainjob"])
@pytest.mark.parametrize("args", ["", "  args: [learning_rate=1e-5]\n"])
def test_the_override_imports_back_as_the_checkpoint_alone(workload, args):
    body = spec(workload=workload) + args
    objects = rendered_objects(HEADER + body)
    result = import_manifests([("in.yaml", yaml.safe_dump_all(objects.values()))])
    given = yaml.safe_load(spec(workload=workload) + args)["spec"]
    assert result.spec["spec"].get("args") == given.get("args")
    assert result.spec["spec"]["checkpoint"] == given["checkpoint"]
    again = {k: result.spec[k] for k in ("metadata", "spec")}
    assert rendered_objects(HEADER + yaml.safe_dump(again)) == objects


def checked(body: str) -> list[str]:
    """The llm-checkpoint findings of ``body`` (its metadata: the checks' header's)."""
    return [f for f in findings(body.split("\n", 1)[1]) if "[llm-checkpoint]" in f]


def test_a_cli_form_that_cannot_take_it_is_a_finding():
    body = spec(command="[paddleformers-cli, train, --config, sft.yaml]")
    (found,) = checked(body)
    assert found.startswith("spec.yaml:7:12: warning: $.spec.command: spec.checkpoint cannot ")
    assert "these words are not `paddleformers-cli train CONFIG.yaml`" in found


def test_an_output_dir_of_the_specs_own_is_a_finding_unless_it_is_the_checkpoint_folder():
    for own in ("output_dir=/mnt/llm/ckpt/sft", CHECKPOINT_OVERRIDE):
        body = spec() + f"  args: ['{own}']\n"
        assert not checked(body)
    (found,) = checked(spec() + "  args: [lr=1, output_dir=/mnt/llm/out]\n")
    assert "$.spec.args[1]: paddleformers-cli's trainer saves in and resumes from " in found
    assert "/mnt/llm/out, not the checkpoint folder /mnt/llm/ckpt/sft" in found
