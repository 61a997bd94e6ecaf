"""paddlegen/workloads/objects.py: the kinds of object the workloads list, from which Argo CD's
health checks and ignoreDifferences come."""

from __future__ import annotations

from pathlib import Path

from paddlegen import workloads
from paddlegen.gitops.argocd_health import HEALTH_KEY_PREFIX, health_scripts
from paddlegen.gitops.kueue_diff import ignore_differences
from paddlegen.workloads import WORKLOADS, judged_objects, rendered_objects
from paddlegen.workloads.objects import (
    ANY_WORKLOAD,
    BATCH_JOB,
    JOBSET,
    PODGROUP,
    SHARED_HEALTH,
    TrainingObject,
)


def every_definition() -> list[TrainingObject]:
    listed = [o for w in WORKLOADS.values() for o in (*w.objects, *w.children)]
    return [*listed, *ANY_WORKLOAD]


def test_each_kind_is_defined_once():
    definitions: dict[tuple[str, str], set[TrainingObject]] = {}
    for obj in every_definition():
        definitions.setdefault((obj.group, obj.kind), set()).add(obj)
    assert {key: len(found) for key, found in definitions.items() if len(found) > 1} == {}


def test_the_main_object_is_the_first_of_the_objects():
    for w in WORKLOADS.values():
        assert w.kind == (w.objects[0].api_version, w.objects[0].kind)
        assert w.kind_name == w.objects[0].kind


def test_every_health_file_is_used_and_every_one_used_exists():
    used = {f for obj in judged_objects() for f in obj.health}
    assert used == set(Path(workloads.__file__).parent.rglob("*.lua"))
    assert SHARED_HEALTH / "conditions.lua" in used


def test_a_kind_one_workload_renders_has_its_health_check_in_the_workloads_folder():
    shared = {BATCH_JOB, JOBSET, PODGROUP}
    for w in WORKLOADS.values():
        for obj in [o for o in (*w.objects, *w.children) if o not in shared]:
            assert obj.health[0] == Path(workloads.__file__).parent / w.package / "health.lua"
            assert all(f.parent == SHARED_HEALTH for f in obj.health[1:])
    assert all(f.parent == SHARED_HEALTH for obj in shared for f in obj.health)


def test_there_is_a_health_check_per_kind_the_podgroup_and_the_data_job_among_them():
    # the keys themselves: tests/unit/test_argocd_setup.py
    keys = [HEALTH_KEY_PREFIX + obj.health_key for obj in judged_objects()]
    assert list(health_scripts()) == keys
    assert len(set(keys)) == len(keys)
    assert keys[-1] == HEALTH_KEY_PREFIX + PODGROUP.health_key  # no workload's: after theirs
    assert HEALTH_KEY_PREFIX + BATCH_JOB.health_key in keys


def test_the_key_of_a_kind_of_the_core_group_is_the_kind_alone():
    assert BATCH_JOB.health_key == "batch_Job"
    assert TrainingObject("v1", "Pod", health=()).health_key == "Pod"
    assert TrainingObject("v1", "Pod", health=()).group == ""


def test_kueue_paths_come_from_the_rendered_objects_only():
    # trainjob's children (a JobSet, its batch Jobs) are never queued: the TrainJob is. The
    # JobSet's paths are there as collective-job renders one (with run.restarts).
    rendered = {(o.group, o.kind) for o in rendered_objects() if o.kueue_written}
    assert (JOBSET.group, JOBSET.kind) in rendered
    assert {(e["group"], e["kind"]) for e in ignore_differences()} == rendered
