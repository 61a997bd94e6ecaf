"""build, up, down and friends: the control plane plus the components `--with` names."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from . import argocd, controlplane
from .base import Cluster, ClusterError, alive, reap, state_dir, stop
from .components import COMPONENTS


def known(extras: Sequence[str]) -> None:
    unknown = sorted(set(extras) - set(COMPONENTS))
    if unknown:
        raise ClusterError(
            f"no such component: {', '.join(unknown)} (known: {', '.join(COMPONENTS)})"
        )


def resolve(extras: Sequence[str]) -> list[str]:
    """``extras`` with the components each requires (`--with trainer` starts jobset too: a
    TrainJob runs only as a JobSet), each after what it requires, once."""
    known(extras)
    found: list[str] = []

    def add(name: str) -> None:
        if name not in found:
            for required in COMPONENTS[name].requires:
                add(required)
            found.append(name)

    for name in extras:
        add(name)
    return found


def binaries(extras: Sequence[str] = ()) -> dict[str, Path]:
    """Every binary the control plane (and ``extras``) needs, by name, where `build` puts it."""
    found = controlplane.binaries()
    for name in extras:
        found.update(COMPONENTS[name].binaries())
    return found


def image_archives(extras: Sequence[str] = ()) -> dict[str, Path]:
    """Every image ``extras`` need, by name, where `build` puts it."""
    return {key: path for name in extras for key, path in COMPONENTS[name].images().items()}


def missing(extras: Sequence[str] = ()) -> list[str]:
    extras = resolve(extras)
    return [
        *(name for name, path in binaries(extras).items() if not os.access(path, os.X_OK)),
        *(name for name, path in image_archives(extras).items() if not path.is_file()),
    ]


def unusable(extras: Sequence[str] = ()) -> list[str]:
    """What this machine lacks to run ``extras`` (the node needs root, overlayfs, cgroups)."""
    extras = resolve(extras)
    return [lack for name in extras for lack in COMPONENTS[name].unusable()]


def build(extras: Sequence[str] = ()) -> dict[str, Path]:
    """Build what is missing from the cache; nothing when every binary is there."""
    extras = resolve(extras)
    absent = set(missing(extras))
    with ExitStack() as aside:
        for name in extras:
            aside.enter_context(COMPONENTS[name].building_aside(absent))
        controlplane.build(absent)
        for name in extras:
            COMPONENTS[name].build(absent)
    return {**binaries(extras), **image_archives(extras)}


def extras_of(processes: Sequence[str]) -> list[str]:
    """The components whose processes are among ``processes`` (a cluster's recorded pids)."""
    return [
        name
        for name, component in COMPONENTS.items()
        if set(component.processes()) & set(processes)
    ]


def executables(processes: Sequence[str]) -> dict[str, Path]:
    """The executable each of ``processes`` (recorded names) was started with, if ours."""
    found = controlplane.binaries()
    for name in extras_of(processes):
        found.update(COMPONENTS[name].processes())
    return {process: found[process] for process in processes if process in found}


def load(state: Path) -> Cluster | None:
    """The cluster recorded in ``state``, if every process of it still runs."""
    try:
        cluster = Cluster(**json.loads((state / "cluster.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None
    paths = executables(list(cluster.pids))
    if all(alive(pid, str(paths.get(name, ""))) for name, pid in cluster.pids.items()):
        return cluster
    return None


def running_extras(cluster: Cluster) -> list[str]:
    return extras_of(list(cluster.pids))


def up(
    state: Path | None = None,
    timeout: float = controlplane.READY_TIMEOUT,
    extras: Sequence[str] = (),
) -> Cluster:
    """Build if needed, start the control plane, install the CRDs, wait until it is ready;
    then start ``extras`` (see COMPONENTS) and what they require, those not running yet."""
    extras = resolve(extras)
    state = state_dir(state)
    running = load(state)
    starting = [e for e in extras if running is None or e not in running_extras(running)]
    said = "; ".join(
        f"{name}: no {'; no '.join(lacking)}"
        for name in starting
        if (lacking := COMPONENTS[name].unusable())
    )
    if said:  # before anything starts: nothing to undo
        raise ClusterError(f"this machine cannot run {said}")
    if running:
        start_extras(running, starting)
        return running
    if (state / "cluster.json").exists():
        down(state)  # a half-dead cluster from before: stop what is left, start afresh
    build(extras)
    try:
        cluster = controlplane.start(state, stand_in="volcano" not in extras, timeout=timeout)
        start_extras(cluster, list(extras))
    except BaseException:
        down(state)
        raise
    return cluster


def start_extras(cluster: Cluster, extras: list[str]) -> None:
    """Start each of ``extras`` on a running control plane (built if needed), recorded in
    the state so that `down` stops them too."""
    if not extras:
        return
    build(extras)
    for name in extras:
        try:
            COMPONENTS[name].start(cluster)
        except BaseException:
            # on a running cluster nothing else would: stop what it started, undo its host
            # changes, and leave the rest of the cluster running and recorded
            component = COMPONENTS[name]
            component.stop(Path(cluster.state), cluster.pids)
            processes = component.processes()
            started = {p: pid for p, pid in cluster.pids.items() if p in processes}
            stop([pid for p, pid in started.items() if alive(pid, str(processes[p]))])
            reap(started.values())
            for process in started:
                del cluster.pids[process]
            cluster.save()
            raise


def install(folder: Path, state: Path | None = None) -> list[Path]:
    """What `paddlegen argocd` wrote in ``folder``, installed into the running Argo CD."""
    cluster = load(state_dir(state))
    if cluster is None or "argocd" not in running_extras(cluster):
        raise ClusterError(
            "no cluster with Argo CD is running (hack/local-cluster up --with argocd)"
        )
    return argocd.install(cluster, folder)


def down(state: Path | None = None) -> None:
    """Stop the processes `up` recorded in ``state`` (by pid, only if they still run our
    binary) and remove the state folder."""
    state = state_dir(state)
    try:
        recorded = json.loads((state / "cluster.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        recorded = {}
    pids = list(recorded.get("pids", {}).items())
    for name in reversed(extras_of([name for name, _ in pids])):
        COMPONENTS[name].stop(state, dict(pids))
    paths = executables([name for name, _ in pids])
    ours = [pid for name, pid in reversed(pids) if name in paths and alive(pid, str(paths[name]))]
    stop(ours)
    reap([pid for _, pid in pids])
    if (state / "cluster.json").exists():  # never remove a folder `up` did not make
        shutil.rmtree(state, ignore_errors=True)
