"""`paddlegen import` end to end: rendered examples come back to the same objects, and every
manifest the seeds show imports into a valid spec, with what it leaves listed.

Documented as unrecoverable (README, "Import"): overlays (only the base is rendered into a
stream), comments and field order of the original spec, and values equal to paddlegen's
defaults, which come back explicit (the objects they render to are the same).
"""

from __future__ import annotations

from functools import cache

import pytest

from paddlegen import api
from paddlegen.authoring.importer import import_manifests, read_manifests
from paddlegen.cli import cli
from paddlegen.spec.loader import parse_spec, read_spec
from tests.conftest import ROOT, example_specs
from tests.seeds import manifest_blocks, seed_text

EXAMPLES = example_specs()
SEEDS = ("000", "001", "002", "003", "004")
# Seed 001 writes its image as `[YOUR_REPO]/paddle:mypaddle`, which is not YAML until the
# reader puts their repository there, as the seed tells them to.
PLACEHOLDERS = {"[YOUR_REPO]": "registry.example.com"}
STORAGE_KINDS = {"PersistentVolume", "PersistentVolumeClaim"}


def rendered_stream(path) -> tuple[str, list[dict]]:
    manifests = api.render_document(read_spec(path)).manifests
    return "---\n".join(m.text() for m in manifests), [m.obj for m in manifests]


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_a_rendered_example_imports_to_a_spec_that_renders_the_same_objects(spec):
    stream, objects = rendered_stream(spec)
    imported = import_manifests([(spec.name, stream)])
    # paddlegen's own output carries nothing a spec cannot hold: not even a cosmetic note
    assert imported.notes == []
    assert not [d for d in imported.diagnostics if d.is_error]
    again = api.render_document(parse_spec(imported.text, "imported.yaml")).manifests
    assert [m.obj for m in again] == objects


def test_the_cli_round_trip_through_stdin(runner, tmp_path):
    spec = ROOT / "examples" / "distributed-efs.yaml"
    stream, objects = rendered_stream(spec)
    result = runner.invoke(cli, ["import", "-", "-o", str(tmp_path / "back.yaml")], input=stream)
    assert result.exit_code == 0, result.output
    rendered = runner.invoke(cli, ["render", str(tmp_path / "back.yaml"), "--stdout"])
    assert list(read_manifests([("back", rendered.stdout)])) == objects


@cache
def seed_cases() -> list[tuple[str, list[str]]]:
    """Each seed manifest with a training object, plus the storage-only manifests of the same
    seed that define the claims it mounts (the seeds apply them side by side).

    Read when a test runs, not while tests are collected: a checkout without the seeds skips
    these tests one by one and runs the rest."""
    cases = []
    for seed in SEEDS:
        text = seed_text(seed)
        for placeholder, value in PLACEHOLDERS.items():
            text = text.replace(placeholder, value)
        blocks = manifest_blocks(text)
        kinds = [{o["kind"] for o in read_manifests([("seed", b)])} for b in blocks]
        storage = [b for b, k in zip(blocks, kinds, strict=True) if k <= STORAGE_KINDS]
        for block, found in zip(blocks, kinds, strict=True):
            if found <= STORAGE_KINDS:
                continue
            extra = [
                s
                for s in storage
                if any(
                    f"claimName: {o['metadata']['name']}" in block
                    for o in read_manifests([("s", s)])
                    if o["kind"] == "PersistentVolumeClaim"
                )
            ]
            if extra:  # and the PVs the claims bind to
                extra += [s for s in storage if s not in extra and "PersistentVolumeClaim" not in s]
            cases.append((seed, [block, *extra]))
    return cases


# 000: 1, 001: 2, 003: 5 (one with its PV/PVC), 004: 2
SEED_CASE_COUNT = 10


def test_every_seed_manifest_is_covered():
    seen = {b for _, blocks in seed_cases() for b in blocks}
    for seed in SEEDS:
        shown = manifest_blocks(seed_text(seed).replace("[YOUR_REPO]", "registry.example.com"))
        assert set(shown) <= seen, seed
    assert len(seed_cases()) == SEED_CASE_COUNT


@pytest.mark.parametrize("index", range(SEED_CASE_COUNT))
def test_a_seed_manifest_imports_to_a_valid_spec_that_renders(index):
    seed, blocks = seed_cases()[index]
    imported = import_manifests([(f"seed {seed}", b) for b in blocks])
    assert not [d for d in imported.diagnostics if d.is_error], imported.diagnostics
    assert api.render_document(parse_spec(imported.text, "imported.yaml")).manifests


def _import_seed(seed: str, pick=slice(None)):
    blocks = manifest_blocks(seed_text(seed))[pick]
    return import_manifests([(f"seed {seed}", "---\n".join(blocks))])


def test_seed_003_typo_is_listed_with_a_suggestion_and_its_nfs_pv_is_read_back():
    imported = _import_seed("003", slice(-2, None))  # 示例5: pv-pvc.yaml + data_demo.yaml
    (typo,) = [n for n in imported.notes if "spec.cleanPolicy" in str(n)]
    assert "did you mean 'cleanPodPolicy'" in str(typo)
    assert typo.kind == "cosmetic"  # the API server dropped it from the input as well
    (volume,) = imported.spec["spec"]["volumes"]
    assert volume["nfs"] == {"server": "10.12.201.xx", "path": "/nas"}
    assert (volume["capacity"], volume["reclaimPolicy"], volume["storageClassName"]) == (
        "10Gi",
        "Recycle",
        "slow",
    )
    renamed = [
        n for n in imported.notes if str(n).startswith("PersistentVolumeClaim/nfs-pvc: renamed")
    ]
    assert [n.kind for n in renamed] == ["cosmetic"]  # the pods mount the same export


def test_seed_004_stream_becomes_a_distributed_job_with_data_preparation():
    imported = _import_seed("004")
    spec = imported.spec["spec"]
    assert spec["workload"] == "distributed-job"
    assert spec["distributed"] == {
        "volume": "efs",
        "trainConfigDir": "quick_start",
        "nic": "eth0",
        "port": 7164,
        "portsNum": 2,
        "portsNumSparse": 2,
        "trainerCount": 3,
        "hostPorts": True,
    }
    assert spec["dataPrep"] == {"volume": "efs", "image": "paddlepaddle/paddle-tutorial:k8s_data"}
    notes = "\n".join(map(str, imported.notes))
    assert "OUT_DIR /efs/paddle-cluster-job becomes /home/jobpath/paddle-cluster-job" in notes
    assert 'requests.storage "50Gi" differs' in notes
    assert "imagePullPolicy" in notes  # the data Job's Always is not carried over


def test_seed_001_cluster_job_lists_what_paddlegen_changes():
    text = seed_text("001").replace("[YOUR_REPO]", "registry.example.com")
    imported = import_manifests([("seed 001", manifest_blocks(text)[1])])
    notes = "\n".join(map(str, imported.notes))
    assert "TRAINER_COUNT was not set" in notes
    assert "JOB_NAMESPACE='default' now comes from the pod's namespace" in notes
    assert imported.spec["spec"]["distributed"]["trainConfigDir"] == "recommendation"
