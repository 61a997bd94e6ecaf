"""The WORKLOADS registry: each entry's facts are what its templates actually render."""

from __future__ import annotations

import pytest

from paddlegen.pipeline import load
from paddlegen.resources import templates_dir
from paddlegen.spec.loader import parse_spec
from paddlegen.spec.model import build_job
from paddlegen.workloads import (
    DEFAULT_WORKLOAD,
    PS_WORKLOAD,
    SETTINGS_OWNERS,
    WORKLOADS,
    conversion_targets,
    workload_of,
)
from paddlegen.workloads.base import RUN_KEYS
from tests.builders import rendered, spec, text_of

# Every role a workload accepts beside its workers, with its replicas.
ROLES = {"ps": {"replicas": 2}, "heter": {"replicas": 1}}


def _spec(name: str, **fields: object) -> dict:
    roles = {role: replicas for role, replicas in ROLES.items() if role in WORKLOADS[name].roles}
    worker = {"replicas": 1 if name == "job" else 3}
    return spec(name, worker=worker, **roles, **fields)


def _main_object(name: str, **fields: object) -> dict:
    w = WORKLOADS[name]
    manifests = rendered(_spec(name, **fields)).manifests
    (main,) = [m.obj for m in manifests if (m.obj["apiVersion"], m.kind) == w.kind]
    return main


def _keys(obj: object) -> set[str]:
    if isinstance(obj, dict):
        return set(obj) | {k for v in obj.values() for k in _keys(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in _keys(v)}
    return set()


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_each_entry_has_its_template_folder_and_renders_its_main_kind(name):
    w = WORKLOADS[name]
    assert w.name == name
    assert list((templates_dir() / w.folder).glob("*.yaml.j2"))
    assert _main_object(name)["kind"] == w.kind_name


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_the_main_object_carries_exactly_the_run_keys_the_entry_lists(name):
    main = _main_object(name, run=dict.fromkeys(RUN_KEYS, 7))
    carried = {key for key in RUN_KEYS if key in _keys(main)}
    assert carried == set(WORKLOADS[name].run_keys)


@pytest.mark.parametrize("name", ["paddlejob", "kubeflow-paddlejob"])
def test_operator_roles_become_the_replica_names_the_entry_maps_them_to(name):
    main = _main_object(name)
    replicas = main["spec"].get("paddleReplicaSpecs", main["spec"])
    for role, replica in WORKLOADS[name].roles.items():
        assert replicas[replica]["replicas"] == (
            3 if role == "worker" else 2 if role == "ps" else 1
        )


def test_one_entry_is_the_default_and_one_runs_parameter_servers():
    assert [w.name for w in WORKLOADS.values() if w.default] == [DEFAULT_WORKLOAD]
    assert [w.name for w in WORKLOADS.values() if w.ps_default] == [PS_WORKLOAD]
    assert "ps" in WORKLOADS[PS_WORKLOAD].roles
    assert workload_of({"spec": {}}) is WORKLOADS[DEFAULT_WORKLOAD]
    assert workload_of({"spec": {"workload": "job"}}, "trainjob") is WORKLOADS["trainjob"]


def test_each_workload_reads_back_every_kind_it_renders_and_converts_what_it_says():
    for w in WORKLOADS.values():
        imports = w.imports()
        assert [i.kind for i in imports.objects] == list(w.objects), w.name
        assert (imports.convert is not None) == bool(w.converts_from), w.name
        assert set(w.converts_from) <= set(WORKLOADS) - {w.name}
    assert conversion_targets() == ["collective-job", "kubeflow-paddlejob"]


def test_one_importer_reads_every_object_of_its_kind_that_no_other_claims():
    """A kind several workloads render (the batch Job) is read by the one workload whose
    importer claims the object, else by the one that claims none."""
    catch_all: dict[tuple[str, str], list[str]] = {}
    for w in WORKLOADS.values():
        for importer in w.imports().objects:
            found = catch_all.setdefault(importer.kind.api_kind, [])
            found += [w.name] if importer.claims is None else []
    assert all(len(names) == 1 for names in catch_all.values()), catch_all
    assert catch_all[("batch/v1", "Job")] == ["job"]


def test_templates_get_computed_values_not_logic():
    """The distributed env, ports and anti-affinity come from the context builder."""
    ports = {"portsNum": 2}
    pod = _main_object("distributed-job", distributed=ports)["spec"]["template"]["spec"]
    data = _spec("distributed-job", distributed=ports)
    job = build_job(data, workload_of(data))
    built = WORKLOADS["distributed-job"].context(job)["pod"]
    assert [p["hostPort"] for p in built.container.ports] == [7164, 7165]
    assert pod["containers"][0]["ports"] == built.container.ports
    assert pod["containers"][0]["env"] == built.container.env
    assert pod["affinity"] == built.affinity


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_each_example_is_its_smallest_spec_without_a_finding_and_renders(name):
    example = WORKLOADS[name].example
    assert example["spec"]["workload"] == name
    assert load.validate_document(parse_spec(text_of(example), "example.yaml")) == []
    assert WORKLOADS[name].kind in {
        (m.obj["apiVersion"], m.kind) for m in rendered(example).manifests
    }
    # every field but the workload's name is needed: without it, a finding
    for field in set(example["spec"]) - {"workload"}:
        smaller = spec(name, **{field: None})
        assert load.validate_document(parse_spec(text_of(smaller), "smaller.yaml")), field


def test_the_registry_lists_each_entry_under_its_own_name():
    """WORKLOADS lists the names and loads each entry from its folder when asked for it."""
    assert len(WORKLOADS) == len(set(WORKLOADS)) == len(list(WORKLOADS.values()))
    for name, w in WORKLOADS.items():
        assert w.name == name and name in WORKLOADS
        assert WORKLOADS[name] is w  # loaded once
    assert "no-such-workload" not in WORKLOADS
    with pytest.raises(KeyError):
        WORKLOADS["no-such-workload"] = WORKLOADS[DEFAULT_WORKLOAD]
    import paddlegen.workloads

    with pytest.raises(AttributeError):
        paddlegen.workloads.NO_SUCH_NAME  # noqa: B018


def test_the_registry_names_each_settings_section_s_workload():
    sections = [w.settings.section for w in WORKLOADS.values() if w.settings]
    assert len(sections) == len(set(sections))  # each belongs to one workload
    given = {w.settings.section: name for name, w in WORKLOADS.items() if w.settings}
    assert given == SETTINGS_OWNERS
