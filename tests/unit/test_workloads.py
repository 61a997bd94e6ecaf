"""The WORKLOADS registry: each entry's facts are what its templates actually render."""

from __future__ import annotations

import pytest

from paddlegen.pipeline import build
from paddlegen.resources import templates_dir
from paddlegen.spec.loader import parse_spec
from paddlegen.spec.model import build_job
from paddlegen.workloads import (
    DEFAULT_WORKLOAD,
    PS_WORKLOAD,
    WORKLOADS,
    conversion_targets,
    workload_of,
)
from paddlegen.workloads.base import RUN_KEYS
from tests.helpers import HEADER

# Every role a workload accepts (job: one worker; distributed-job: workers only).
ROLE_BLOCKS = {"ps": "  ps: {replicas: 2}\n", "heter": "  heter: {replicas: 1}\n"}


DISTRIBUTED = "  distributed: {volume: data, trainConfigDir: cfg}\n"


def _spec_text(name: str, extra: str = "", distributed: str = DISTRIBUTED) -> str:
    w = WORKLOADS[name]
    roles = "".join(block for role, block in ROLE_BLOCKS.items() if role in w.roles)
    if name == "distributed-job":
        roles += "  volumes: [{name: data, mountPath: /data, emptyDir: {}}]\n" + distributed
    if name == "collective-job":
        roles += "  args: [train.py]\n"  # what the launcher runs
    return (
        f"{HEADER}metadata: {{name: demo}}\nspec:\n  workload: {name}\n  image: img:1\n"
        f"  worker: {{replicas: {1 if name == 'job' else 3}}}\n{roles}{extra}"
    )


def _main_object(name: str, extra: str = "", distributed: str = DISTRIBUTED) -> dict:
    w = WORKLOADS[name]
    rendered = build.render_valid(parse_spec(_spec_text(name, extra, distributed), "spec.yaml"))
    (main,) = [m.obj for m in rendered.manifests if (m.obj["apiVersion"], m.kind) == w.kind]
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
    run = "".join(f"    {key}: 7\n" for key in RUN_KEYS)
    main = _main_object(name, f"  run:\n{run}")
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


def test_each_settings_section_belongs_to_one_workload():
    sections = [w.settings.section for w in WORKLOADS.values() if w.settings]
    assert len(sections) == len(set(sections))


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
    ports = "  distributed: {volume: data, trainConfigDir: cfg, portsNum: 2}\n"
    pod = _main_object("distributed-job", distributed=ports)["spec"]["template"]["spec"]
    data = parse_spec(_spec_text("distributed-job", distributed=ports), "s.yaml").data
    job = build_job(data, workload_of(data))
    built = WORKLOADS["distributed-job"].context(job)["pod"]
    assert [p["hostPort"] for p in built.container.ports] == [7164, 7165]
    assert pod["containers"][0]["ports"] == built.container.ports
    assert pod["containers"][0]["env"] == built.container.env
    assert pod["affinity"] == built.affinity
