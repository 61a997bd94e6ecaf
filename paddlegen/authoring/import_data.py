"""`paddlegen import`: the data Job that any workload may have back to spec.dataPrep."""

from __future__ import annotations

import json
from typing import Any

from paddlegen.spec.model import CONTAINER_LISTS, DATA_PREP_INHERITS, ROLE_NAMES
from paddlegen.workloads.base import Spec
from paddlegen.workloads.import_notes import LOSSY, Context
from paddlegen.workloads.import_pod import Pod, pod
from paddlegen.workloads.import_spec import env_of, literal_env


def is_data_job(job: dict[str, Any]) -> bool:
    """A data-preparation Job of the classic image (it writes SPLIT_COUNT parts to OUT_DIR)."""
    return {"OUT_DIR", "SPLIT_COUNT"} <= {e.get("name") for e in env_of(job)}


def data_job(obj: dict[str, Any], spec: Spec, ctx: Context, where: str) -> None:
    """The classic data-preparation Job becomes spec.dataPrep (and its volume, if new)."""
    p = pod(
        obj.setdefault("spec", {}).setdefault("template", {}), ctx, where, at=("spec", "template")
    )
    role = p.role
    for key in CONTAINER_LISTS:
        for container in role.pop(key, []):
            ctx.note(
                LOSSY,
                where,
                f"{'sidecar' if key == 'sidecars' else 'init container'} "
                f"'{container.get('name')}' ({container.get('image')}) is not carried over: "
                "the data Job's pod runs none (spec.initContainers and sidecars are the "
                "trainers')",
            )
    out_dir = literal_env(role, "OUT_DIR", ctx, where)
    split = literal_env(role, "SPLIT_COUNT", ctx, where)
    if role.get("env"):
        p.container["env"] = role.pop("env")  # any other env stays listed as not mapped
    if len(p.volumes) != 1:
        ctx.note(
            LOSSY, where, f"the data Job mounts {len(p.volumes)} volumes; spec.dataPrep needs one"
        )
        return
    volume = _shared_volume(p.volumes[0], spec, ctx, where)
    prep: dict[str, Any] = {"volume": volume["name"]}
    image = role.pop("image", None)
    if image is not None and image != spec.get("image"):
        prep["image"] = image
    prep.update({key: role.pop(key) for key in ("command", "args") if key in role})
    if "backoffLimit" in obj["spec"]:
        prep["backoffLimit"] = obj["spec"].pop("backoffLimit")
    mount = p.volumes[0]["mountPath"].rstrip("/")
    if out_dir and (out_dir + "/").startswith(mount + "/") and mount != volume["mountPath"]:
        moved = volume["mountPath"].rstrip("/") + out_dir[len(mount) :]
        ctx.note(
            LOSSY,
            where,
            f"the data Job mounts the volume at {mount}, the trainers at "
            f"{volume['mountPath']}: one mountPath serves both, OUT_DIR {out_dir} "
            f"becomes {moved}",
        )
        out_dir = moved
    # Both as given: the importer leaves them out where they equal what the spec derives.
    if out_dir:
        prep["outDir"] = out_dir
    if split and split.isdigit():
        prep["splitCount"] = int(split)
    spec["dataPrep"] = prep
    ctx.data_priority = role.get("priorityClassName")
    _spec_wide_from_data_job(role, spec)
    _inherited(role, p, spec, ctx, where)


def _shared_volume(volume: dict[str, Any], spec: Spec, ctx: Context, where: str) -> dict[str, Any]:
    """The training volume with the same source, else the data Job's own, added to the spec."""

    def source(v: dict[str, Any]) -> str:
        return json.dumps(
            {k: x for k, x in v.items() if k not in ("name", "mountPath", "readOnly")},
            sort_keys=True,
        )

    volumes = spec.setdefault("volumes", [])
    same: dict[str, Any] | None = next((v for v in volumes if source(v) == source(volume)), None)
    if same is not None:
        return same
    if volume["name"] in {v["name"] for v in volumes}:
        volume = {**volume, "name": f"{volume['name']}-data"}
    ctx.note(
        LOSSY,
        where,
        f"the data Job's volume '{volume['name']}' is not one the trainers mount; "
        "it is added to spec.volumes, so the trainers mount it too",
    )
    volumes.append(volume)
    return volume


def _spec_wide_from_data_job(data: dict[str, Any], spec: Spec) -> None:
    """The data Job runs with the spec-wide values (model.DATA_PREP_INHERITS), the trainers with
    their roles' where they have their own: where the data Job's value differs from the one
    the trainers share (moved up to the spec), theirs goes back to their roles and the data
    Job's becomes the spec-wide one, when every role then has a value of its own."""
    roles = [spec[name] for name in ROLE_NAMES if name in spec]
    for key in DATA_PREP_INHERITS:
        if key == "image" or data.get(key) == spec.get(key):
            continue
        if key in data and not all(key in role for role in roles) and key not in spec:
            continue  # a role without one would take the data Job's: left to _inherited
        if key in spec:
            trainers = spec.pop(key)
            for role in roles:
                role.setdefault(key, trainers)
        if key in data:
            spec[key] = data.pop(key)
            for role in roles:
                if role[key] == spec[key]:
                    role.pop(key)


def _inherited(role: dict[str, Any], p: Pod, spec: Spec, ctx: Context, where: str) -> None:
    """What the data Job takes from the spec: anything else it had is listed."""
    for key, value in role.items():
        if spec.get(key) != value:
            theirs = json.dumps(spec[key]) if key in spec else "unset"
            ctx.note(
                LOSSY,
                where,
                f"{key} {json.dumps(value)} is not carried over: the data Job "
                f"takes {key} from the spec ({theirs})",
            )
    for what, value in (("/dev/shm", p.shm), ("Volcano scheduling", p.volcano)):
        if value:
            ctx.note(
                LOSSY,
                where,
                f"{what} is not carried over: the data Job runs outside the gang, without /dev/shm",
            )
    if p.restart_policy not in (None, "Never"):
        ctx.note(LOSSY, where, f"restartPolicy {p.restart_policy} becomes Never")
    # the data Job's containers get spec.security but the capabilities the trainers add
    shared = {k: v for k, v in spec.get("security", {}).items() if k != "capabilities"}
    if p.security != shared:
        ctx.note(
            LOSSY,
            where,
            f"security {json.dumps(p.security)} becomes the spec's "
            f"{json.dumps(shared)}: the data Job takes spec.security",
        )
    if p.networks:
        ctx.note(
            LOSSY,
            where,
            f"networks {json.dumps(p.networks)} are not carried over: the data Job's pod "
            "attaches no Multus network",
        )
