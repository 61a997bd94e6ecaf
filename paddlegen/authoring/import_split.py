"""`paddlegen import`, part four: an input of several jobs split into one group of objects per
job (a folder of manifests, `kubectl get paddlejobs -A -o yaml`), each of which becomes a spec.

Every training object (a PaddleJob, a batch Job that prepares no data) is a job. The objects
around them go to the job they belong to: a data Job named `<job>-data` or mounting the job's
claims, a PodGroup its pods name, the claims its pods mount and the PVs bound to those, and
anything else (its RBAC, its run record) named after the job. With one job every object is
its own (what it cannot carry is listed against it); with several, an object no rule gives to
exactly one job belongs to none.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from paddlegen.authoring.import_data import is_data_job
from paddlegen.workloads.base import GROUP_NAME

Obj = dict[str, Any]
PV = ("v1", "PersistentVolume")
PVC = ("v1", "PersistentVolumeClaim")
PODGROUP_KIND = "PodGroup"


def split_jobs(
    objects: list[Obj], operator_kinds: set[tuple[str, str]], batch_job: tuple[str, str]
) -> tuple[list[tuple[Obj, list[Obj]]], list[Obj]]:
    """``[(training object, its objects in input order)]`` in input order, and the objects
    that belong to no job (empty with one job). Objects are told apart by identity."""
    mains = training_objects(objects, operator_kinds, batch_job)
    if len(mains) <= 1:
        return [(main, list(objects)) for main in mains], []
    owner: dict[int, Obj] = {id(main): main for main in mains}
    rest = [o for o in objects if id(o) not in owner]
    for obj in rest:  # data Jobs first (every other batch Job trains): their claims count too
        if _key(obj) == batch_job:
            found = _owner_of_data_job(obj, mains)
            if found is not None:
                owner[id(obj)] = found
    claims = {
        id(main): {claim for o in objects if owner.get(id(o)) is main for claim in _claim_names(o)}
        for main in mains
    }
    for obj in rest:
        if _key(obj) == PVC:
            found = _only(
                m for m in mains if _same_namespace(obj, m) and _name(obj) in claims[id(m)]
            )
            if found is not None:
                owner[id(obj)] = found
    for obj in rest:
        if id(obj) in owner:
            continue
        if _key(obj) == PV:
            found = _owner_of_volume(obj, objects, owner)
        elif obj.get("kind") == PODGROUP_KIND:
            found = _only(m for m in mains if _name(obj) in _group_names(m))
        else:
            found = _owner_by_name(obj, mains)
        if found is not None:
            owner[id(obj)] = found
    groups = [(main, [o for o in objects if owner.get(id(o)) is main]) for main in mains]
    return groups, [o for o in objects if id(o) not in owner]


def training_objects(
    objects: list[Obj], operator_kinds: set[tuple[str, str]], batch_job: tuple[str, str]
) -> list[Obj]:
    """The jobs of the input: the controllers' objects and batch Jobs that prepare no data; a
    data Job only when nothing else trains (it runs as a job of its own then). A controller's
    object that another controller made is that one's (the JobSet Kubeflow Trainer makes
    for a TrainJob: `kubectl get trainjobs,jobsets` prints both)."""
    jobs = [o for o in objects if _key(o) == batch_job]
    trainers = [
        o
        for o in objects
        if (_key(o) in operator_kinds and not _made_by_a_controller(o))
        or (_key(o) == batch_job and not is_data_job(o))
    ]
    return trainers or jobs


def _made_by_a_controller(obj: Obj) -> bool:
    """Whether ``obj`` has a controller owner (metadata.ownerReferences, controller: true)."""
    owners = obj["metadata"].get("ownerReferences") or []
    return any(isinstance(o, dict) and o.get("controller") is True for o in owners)


def _key(obj: Obj) -> tuple[str, str]:
    return obj["apiVersion"], obj["kind"]


def _name(obj: Obj) -> str:
    return str(obj["metadata"]["name"])


def _namespace(obj: Obj) -> str | None:
    namespace: str | None = obj["metadata"].get("namespace")
    return namespace


def _same_namespace(obj: Obj, main: Obj) -> bool:
    return _namespace(obj) == _namespace(main)


def _only(candidates: Iterator[Obj]) -> Obj | None:
    """The one candidate, else None (none, or several: then the object is no one job's)."""
    found = list(candidates)
    return found[0] if len(found) == 1 else None


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    """Every mapping inside ``value``."""
    if isinstance(value, dict):
        yield value
        for child in value.values():
            yield from _walk(child)
    elif isinstance(value, list):
        for child in value:
            yield from _walk(child)


def _claim_names(obj: Obj) -> set[str]:
    """The claims the pod templates of ``obj`` mount (wherever its workload keeps them)."""
    return {
        m["persistentVolumeClaim"]["claimName"]
        for m in _walk(obj.get("spec"))
        if isinstance(m.get("persistentVolumeClaim"), dict)
        and isinstance(m["persistentVolumeClaim"].get("claimName"), str)
    }


def _group_names(main: Obj) -> set[str]:
    """The PodGroups a job's pods join (their annotation), and the job's own name, which the
    operators and paddlegen give the group."""
    names = {_name(main)}
    for m in _walk(main.get("spec")):
        annotations = m.get("annotations")
        group = annotations.get(GROUP_NAME) if isinstance(annotations, dict) else None
        if isinstance(group, str):
            names.add(group)
    return names


def _owner_of_data_job(obj: Obj, mains: list[Obj]) -> Obj | None:
    """A data Job belongs to the job it is named after (`<job>-data`), else to the one job
    that mounts a claim it mounts."""
    named = _only(m for m in mains if _same_namespace(obj, m) and _name(obj) == _name(m) + "-data")
    if named is not None:
        return named
    mine = _claim_names(obj)
    return _only(m for m in mains if _same_namespace(obj, m) and mine & _claim_names(m))


def _owner_of_volume(pv: Obj, objects: list[Obj], owner: dict[int, Obj]) -> Obj | None:
    """The job of the claim a PV is bound to: the claim names it, or its claimRef the claim."""
    ref = pv.get("spec", {}).get("claimRef") or {}
    for claim in (o for o in objects if _key(o) == PVC and id(o) in owner):
        if claim.get("spec", {}).get("volumeName") == _name(pv) or (
            ref.get("name") == _name(claim)
            and ref.get("namespace", _namespace(claim)) == _namespace(claim)
        ):
            return owner[id(claim)]
    return None


def _owner_by_name(obj: Obj, mains: list[Obj]) -> Obj | None:
    """The job whose name the object's is, or starts (`<job>-run`): the longest such name."""
    named = [
        m
        for m in mains
        if _same_namespace(obj, m)
        and (_name(obj) == _name(m) or _name(obj).startswith(_name(m) + "-"))
    ]
    longest = max((len(_name(m)) for m in named), default=0)
    return _only(m for m in named if len(_name(m)) == longest)
