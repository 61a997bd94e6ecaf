"""Deterministic synthetic spec repositories for the benchmark: every workload, Volcano, every
volume source and overlays, all valid (no errors, no warnings)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import yaml

WORKLOADS = ("job", "distributed-job", "paddlejob", "kubeflow-paddlejob")
SOURCES = ("nfs", "efs", "cephfs", "hostPath", "dynamic", "claim", "emptyDir")
TEAMS = ("ads", "search", "vision", "nlp", "speech")
_PREFIX = {"job": "job", "distributed-job": "dist", "paddlejob": "pj", "kubeflow-paddlejob": "kf"}


def _volume(rng: random.Random, source: str, index: int) -> dict[str, Any]:
    name = f"{source.lower()}-{index}"
    v: dict[str, Any] = {"name": name, "mountPath": f"/mnt/{name}"}
    if source == "nfs":
        v["nfs"] = {
            "server": f"10.12.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
            "path": f"/exports/{rng.choice(TEAMS)}",
        }
    elif source == "efs":
        v["efs"] = {
            "fileSystemId": f"fs-{rng.getrandbits(32):08x}",
        }
    elif source == "cephfs":
        # The CSI driver's static volume, its Secret in the driver's namespace (a job may have
        # none); one draw, as the monitor address was before.
        v["cephfs"] = {
            "clusterID": f"ceph-{rng.randint(1, 254)}",
            "fsName": "cephfs",
            "secretName": "cephfs-secret",
            "secretNamespace": "ceph-csi",
            "path": "/",
        }
    elif source == "hostPath":
        v["hostPath"] = {"path": f"/home/work/{name}", "type": "DirectoryOrCreate"}
    elif source == "dynamic":
        v["dynamic"] = {"storageClassName": rng.choice(["standard", "fast-ssd"])}
    elif source == "claim":
        v["claim"] = {"name": f"shared-{rng.choice(TEAMS)}"}
    elif source == "emptyDir":
        v["emptyDir"] = rng.choice([{}, {"medium": "Memory", "sizeLimit": "1Gi"}])
    if source in ("nfs", "efs", "cephfs", "dynamic"):
        v["capacity"] = f"{rng.choice([10, 50, 100, 500])}Gi"
        v["accessModes"] = ["ReadWriteMany"]
    if source in ("nfs", "efs") and rng.random() < 0.3:
        v["readOnly"] = True
    return v


def _resources(rng: random.Random) -> dict[str, Any]:
    cpu, mem = rng.choice([("1", "2Gi"), ("2", "4Gi"), ("4", "8Gi"), ("500m", "1Gi")])
    return {"requests": {"cpu": cpu, "memory": mem}, "limits": {"memory": mem}}


def make_spec(i: int, seed: int, sources: tuple[str, ...] = SOURCES) -> dict[str, Any]:
    """Spec number ``i``: the workload cycles, everything else is drawn from (seed, i); its
    volumes come from ``sources`` (a subset of SOURCES: see ``leaving_out``)."""
    rng = random.Random(f"{seed}-{i}")
    workload = WORKLOADS[i % len(WORKLOADS)]
    name = f"{_PREFIX[workload]}-{rng.choice(TEAMS)}-{i:05d}"
    meta: dict[str, Any] = {"name": name}
    if rng.random() < 0.7:
        meta["namespace"] = f"team-{rng.choice(TEAMS)}"
    meta["labels"] = {"team": rng.choice(TEAMS)}
    spec: dict[str, Any] = {
        "workload": workload,
        "image": f"registry.example.com/paddle/{rng.choice(TEAMS)}:v{rng.randint(1, 9)}",
        "command": ["python3", "train.py"],
        "args": ["--epochs", str(rng.randint(1, 50))],
        "env": [
            {"name": "EPOCHS", "value": str(rng.randint(1, 50))},
            {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        ],
        "resources": _resources(rng),
    }
    if rng.random() < 0.2:
        spec["gpus"] = rng.choice([1, 2])
        spec["nodeSelector"] = {"accelerator": "nvidia-tesla-v100"}
        spec["tolerations"] = [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        ]
    # Every source appears: one chosen by position, plus a random second one sometimes.
    chosen = [sources[(i // len(WORKLOADS)) % len(sources)]]
    if rng.random() < 0.4 and len(sources) > 1:
        chosen.append(rng.choice([s for s in sources if s not in chosen]))
    volumes = [_volume(rng, s, k) for k, s in enumerate(chosen)]
    spec["volumes"] = volumes
    volcano = rng.random() < 0.4
    total = 1
    if workload == "job":
        spec["worker"] = {"replicas": 1}
        spec["run"] = {
            "restartPolicy": rng.choice(["Never", "OnFailure"]),
            "backoffLimit": rng.randint(0, 6),
        }
    elif workload == "distributed-job":
        replicas = rng.randint(2, 4)
        total = replicas
        spec["worker"] = {"replicas": replicas}
        data = volumes[0]["name"]
        spec["distributed"] = {
            "volume": data,
            "trainConfigDir": "quick_start",
            "portsNum": 2,
            "portsNumSparse": rng.choice([0, 2]),
            "trainerCount": rng.randint(1, 3),
            "hostPorts": rng.random() < 0.5,
        }
        spec["run"] = {"activeDeadlineSeconds": 86400}
        if rng.random() < 0.5 and not volumes[0].get("readOnly"):
            spec["dataPrep"] = {"image": "paddlepaddle/paddle-tutorial:k8s_data", "volume": data}
    elif workload == "paddlejob":
        spec["worker"] = {"replicas": rng.randint(1, 4)}
        total = spec["worker"]["replicas"]
        settings: dict[str, Any] = {
            "cleanPodPolicy": "OnCompletion",
            "intranet": rng.choice(["PodIP", "Service"]),
        }
        if rng.random() < 0.6:
            spec["ps"] = {"replicas": rng.randint(1, 3)}
            total += spec["ps"]["replicas"]
            if settings["intranet"] != "Service":
                settings["withGloo"] = 1
            if rng.random() < 0.2:
                spec["heter"] = {"replicas": 1}
                total += 1
        if "ps" not in spec:  # a Collective job of several workers (an overlay adds some)
            settings["intranet"] = "PodIP"  # with Service hangs: an error
        if rng.random() < 0.3:
            spec["shm"] = "2Gi"
        spec["paddlejob"] = settings
    else:
        spec["worker"] = {"replicas": rng.randint(1, 4)}
        total = spec["worker"]["replicas"]
        if rng.random() < 0.5:
            spec["ps"] = {"replicas": rng.randint(1, 2)}
            total += spec["ps"]["replicas"]
        spec["kubeflow"] = {"cleanPodPolicy": rng.choice(["None", "All", "Running"])}
        spec["run"] = {"backoffLimit": 3, "activeDeadlineSeconds": 604800}
    if volcano:
        spec["scheduling"] = {"scheduler": "volcano", "queue": rng.choice(["default", "batch"])}
        if rng.random() < 0.5:
            spec["scheduling"]["minAvailable"] = rng.randint(1, total)
    doc: dict[str, Any] = {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": meta,
        "spec": spec,
    }
    if rng.random() < 0.3:
        if workload == "job":
            overlay: dict[str, Any] = {"spec": {"image": spec["image"] + "-prod"}}
        else:
            overlay = {"spec": {"worker": {"replicas": spec["worker"]["replicas"] + 4}}}
        overlay["metadata"] = {"labels": {"env": "prod"}}
        doc["overlays"] = {"prod": overlay}
    return doc


def peer_spec(i: int, seed: int) -> dict[str, Any]:
    """The shape the Helm chart renders: PaddleJob (ps + worker) + Volcano PodGroup + NFS PV/PVC."""
    rng = random.Random(f"peer-{seed}-{i}")
    return {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": {"name": f"peer-{i:05d}", "namespace": f"team-{rng.choice(TEAMS)}"},
        "spec": {
            "workload": "paddlejob",
            "image": f"registry.example.com/paddle/{rng.choice(TEAMS)}:v{rng.randint(1, 9)}",
            "command": ["python3", "train.py"],
            "env": [{"name": "EPOCHS", "value": str(rng.randint(1, 50))}],
            "resources": _resources(rng),
            "ps": {"replicas": rng.randint(1, 3)},
            "worker": {"replicas": rng.randint(1, 4)},
            "volumes": [_volume(rng, "nfs", 0)],
            "scheduling": {"scheduler": "volcano", "queue": "default"},
            "paddlejob": {"cleanPodPolicy": "OnCompletion", "withGloo": 1},
        },
    }


def leaving_out(kinds: list[str]) -> tuple[str, ...]:
    """SOURCES without ``kinds``: a repository two paddlegen versions both accept (one that
    spells a volume source differently cannot read the other's), still deterministic."""
    unknown = sorted(set(kinds) - set(SOURCES))
    if unknown:
        raise ValueError(
            f"unknown volume source(s) {', '.join(unknown)}; known: {', '.join(SOURCES)}"
        )
    kept = tuple(s for s in SOURCES if s not in kinds)
    if not kept:
        raise ValueError("every volume source left out")
    return kept


def write_repo(root: Path, count: int, seed: int, make=make_spec) -> list[Path]:
    """``count`` spec files under ``root`` (one folder per team), returns their paths."""
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        doc = make(i, seed)
        team = doc["metadata"]["labels"]["team"] if "labels" in doc["metadata"] else "peers"
        path = root / team / f"{doc['metadata']['name']}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
        paths.append(path)
    return paths


def one_spec(_i: int, seed: int, sources: tuple[str, ...] = SOURCES) -> dict[str, Any]:
    """The spec of the one-spec measure: the first synthetic paddlejob with Volcano, a
    PersistentVolume source and an overlay (the most objects one spec renders to)."""
    if not {"nfs", "efs", "cephfs"} & set(sources):
        raise ValueError("the one-spec measure needs nfs, efs or cephfs among the sources")
    i = 0
    while True:
        doc = make_spec(i, seed, sources)
        spec = doc["spec"]
        if (
            spec["workload"] == "paddlejob"
            and "scheduling" in spec
            and "overlays" in doc
            and any(s in spec["volumes"][0] for s in ("nfs", "efs", "cephfs"))
        ):
            return doc
        i += 1
