"""Every example (the snapshot cases, examples/gitops included) as a real API server takes it:
server-side dry-run of each base and overlay, a real apply, a second apply that changes nothing,
the Job controller's pods, and the distributed job's service account."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from paddlegen.pipeline import build, write
from tests.cluster.conftest import Kube
from tests.conftest import DATA, example_specs
from tests.helpers import kustomize_build

EXAMPLES = example_specs()  # the snapshot cases, examples/gitops/jobs among them
# Also dry-run (not applied: its job shares a name with an example's)
SPECS = [*EXAMPLES, *sorted((DATA / "specs" / "valid").glob("*.yaml"))]
FIELD_MANAGER = "--field-manager=paddlegen"


def spec_id(path: Path) -> str:
    return path.name if path.parent.name != "jobs" else f"gitops-{path.name}"


@pytest.fixture(scope="module")
def deploy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each spec rendered into a folder of its own, ``<deploy>/<spec id>/<job>``."""
    out = tmp_path_factory.mktemp("deploy")
    for spec in SPECS:
        write.write_rendered(build.render_specs([spec]), out / spec_id(spec))
    return out


def folders(deploy: Path, spec: Path) -> list[Path]:
    """The deployable folders of a spec's job: itself when flat, else base and every overlay."""
    (job,) = (deploy / spec_id(spec)).iterdir()
    if (job / "kustomization.yaml").exists():
        return [job]
    return [job / "base", *sorted((job / "overlays").iterdir())]


def warnings(stderr: str) -> list[str]:
    return [
        line.removeprefix("Warning: ")
        for line in stderr.splitlines()
        if line.startswith("Warning: ")
    ]


@pytest.fixture(scope="module")
def namespaces(kube: Kube, deploy: Path) -> set[str]:
    """Every namespace the examples name, created (a dry-run into a missing one is refused)."""
    names = set()
    for spec in SPECS:
        for folder in folders(deploy, spec):
            for obj in yaml.safe_load_all(kustomize_build(folder)):
                names.add(obj["metadata"].get("namespace", "default"))
    for name in sorted(names - {"default"}):
        kube.run("create", "namespace", name)
    return names


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_the_server_accepts_every_base_and_overlay_by_server_side_dry_run(
    kube: Kube, deploy: Path, namespaces: set[str], spec: Path
) -> None:
    for folder in folders(deploy, spec):
        for mode in (["--server-side", FIELD_MANAGER], []):  # server-side and client-side apply
            done = kube.run(
                "apply",
                "--dry-run=server",
                *mode,
                "-f",
                "-",
                stdin=kustomize_build(folder),
                check=False,
            )
            where = f"{folder.relative_to(deploy)} ({'server' if mode else 'client'}-side apply)"
            assert done.returncode == 0, f"{where} refused:\n{done.stderr}"
            assert warnings(done.stderr) == [], where  # not even a deprecation


def live(kube: Kube, manifests: str) -> dict[str, str]:
    """kind/namespace/name -> resourceVersion of every object in ``manifests``, as stored."""
    got = json.loads(kube.run("get", "-f", "-", "-o", "json", stdin=manifests).stdout)
    return {
        "/".join([o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]]): o[
            "metadata"
        ]["resourceVersion"]
        for o in got["items"]
    }


@pytest.fixture(scope="module")
def applied(kube: Kube, deploy: Path, namespaces: set[str]) -> dict[str, str]:
    """Every job's base (or flat folder) really applied, server-side, as manager paddlegen."""
    stream = "".join(f"---\n{kustomize_build(folders(deploy, spec)[0])}" for spec in EXAMPLES)
    kube.run("apply", "--server-side", FIELD_MANAGER, "-f", "-", stdin=stream)
    return {"stream": stream}


def test_a_real_apply_creates_every_object_and_a_second_changes_nothing(
    kube: Kube, applied: dict[str, str]
) -> None:
    stream = applied["stream"]
    expected = [o for o in yaml.safe_load_all(stream) if o]
    assert len(live(kube, stream)) == len(expected)
    # What a second apply would write, against the live objects (controllers and operators
    # keep changing their status meanwhile, so resourceVersions cannot tell): nothing. An
    # operator writing a status between kubectl's read and its dry-run shows as a difference
    # once; one of paddlegen's would show every time.
    for _ in range(3):
        diff = kube.run(
            "diff", "--server-side", FIELD_MANAGER, "-f", "-", stdin=stream, check=False
        )
        if (diff.returncode, diff.stdout) == (0, ""):
            break
        time.sleep(1)
    assert (diff.returncode, diff.stdout) == (0, ""), diff.stdout + diff.stderr
    kube.run("apply", "--server-side", FIELD_MANAGER, "-f", "-", stdin=stream)


def test_the_job_controller_turns_every_job_into_pods(kube: Kube, applied: dict[str, str]) -> None:
    jobs = [o for o in yaml.safe_load_all(applied["stream"]) if o and o["kind"] == "Job"]
    assert jobs
    waiting = {(j["metadata"].get("namespace", "default"), j["metadata"]["name"]) for j in jobs}
    deadline = time.monotonic() + 60
    while waiting and time.monotonic() < deadline:
        for namespace, name in sorted(waiting):
            pods = kube.run("get", "pods", "-n", namespace, "-l", f"job-name={name}", "-o", "name")
            if pods.stdout.strip():
                waiting.discard((namespace, name))
        time.sleep(0.5)
    assert not waiting, f"no pods for {sorted(waiting)}"


def test_the_distributed_jobs_service_account_may_read_pods_and_nothing_more(
    kube: Kube, applied: dict[str, str]
) -> None:
    accounts = [
        o for o in yaml.safe_load_all(applied["stream"]) if o and o["kind"] == "ServiceAccount"
    ]
    assert accounts, "no example has a service account"
    for account in accounts:
        namespace = account["metadata"].get("namespace", "default")
        name = account["metadata"]["name"]

        granted = can_i_list(kube, f"system:serviceaccount:{namespace}:{name}", namespace)
        anyone = can_i_list(kube, f"system:serviceaccount:{namespace}:no-such-account", namespace)
        assert granted - anyone == {"pods [] [] [get list watch]"}, name
        for verb, resource in [("create", "pods"), ("get", "secrets"), ("delete", "pods")]:
            can = kube.run(
                "auth",
                "can-i",
                verb,
                resource,
                f"--as=system:serviceaccount:{namespace}:{name}",
                "-n",
                namespace,
                check=False,
            )
            assert can.stdout.strip() == "no", (name, verb, resource)
        other = kube.run(
            "auth",
            "can-i",
            "get",
            "pods",
            f"--as=system:serviceaccount:{namespace}:{name}",
            "-n",
            "kube-system",
            check=False,
        )
        assert other.stdout.strip() == "no", name


def can_i_list(kube: Kube, who: str, namespace: str) -> set[str]:
    """`kubectl auth can-i --list` rows for ``who`` in ``namespace``, spacing normalised."""
    listed = kube.run("auth", "can-i", "--list", f"--as={who}", "-n", namespace).stdout
    return {" ".join(row.split()) for row in listed.splitlines()[1:]}  # after the header
