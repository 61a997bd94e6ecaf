"""Nothing deployed is removed silently: an environment folder (overlays/<env>/, one Argo CD
Application) that a write would drop from a job whose spec is still there is refused, nothing
written, unless `--allow-removal` says so; `--env ''` is no environment, a usage error."""

from __future__ import annotations

from pathlib import Path

import pytest

from paddlegen.cli import cli
from tests.builders import job_spec
from tests.security.trees import tree_state

OVERLAYS = "overlays:\n  dev: {spec: {image: img:3}}\n  prod: {spec: {image: img:2}}\n"
WRITERS = [["render"], ["render", "-j", "2"], ["render", "--validate"], ["check", "--fix"]]


@pytest.fixture
def rendered(runner, tmp_path) -> tuple[Path, Path]:
    """jobs/a.yaml with environments dev and prod, and jobs/b.yaml without, rendered."""
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "a.yaml").write_text(job_spec("a") + OVERLAYS)
    (jobs / "b.yaml").write_text(job_spec("b"))
    out = tmp_path / "deploy"
    assert runner.invoke(cli, ["render", str(jobs), "-o", str(out)]).exit_code == 0
    return jobs, out


def refused(runner, command: list[str], jobs: Path, out: Path, *more: str):
    before = tree_state(out)
    result = runner.invoke(cli, [*command, str(jobs), "-o", str(out), *more])
    assert result.exit_code == 1, result.output
    assert tree_state(out) == before  # nothing written, nothing removed
    return result


@pytest.mark.parametrize("command", WRITERS, ids=" ".join)
def test_a_misspelt_environment_is_refused_with_the_name_it_misspells(runner, rendered, command):
    jobs, out = rendered
    spec = jobs / "a.yaml"
    spec.write_text(spec.read_text().replace("  prod:", "  prdo:"))
    result = refused(runner, command, jobs, out)
    assert (
        f"{spec}:11:3: error: $.overlays.prdo: this would remove {out}/a/overlays/prod/ (the "
        "spec has no environment 'prod' now): under Argo CD its Application is deleted, and "
        "the running job with it ('prdo' is new: if it is 'prod' misspelt, name it 'prod' "
        "again; --allow-removal allows it) [removal]\n"
    ) in result.stderr
    allowed = runner.invoke(cli, [*command, str(jobs), "-o", str(out), "--allow-removal"])
    assert allowed.exit_code == (1 if "check" in command else 0), allowed.output
    assert sorted(p.name for p in (out / "a" / "overlays").iterdir()) == ["dev", "prdo"]


@pytest.mark.parametrize(
    ("edit", "gone"),
    [
        (lambda text: text.replace("  dev: {spec: {image: img:3}}\n", ""), ["dev"]),
        (lambda text: text.replace(OVERLAYS, ""), ["dev", "prod"]),  # back to the flat layout
    ],
    ids=["one-removed", "all-removed"],
)
def test_an_environment_removed_from_the_spec_is_refused_unless_allowed(
    runner, rendered, edit, gone
):
    jobs, out = rendered
    spec = jobs / "a.yaml"
    spec.write_text(edit(spec.read_text()))
    result = refused(runner, ["render"], jobs, out)
    for env in gone:
        assert (
            f"this would remove {out}/a/overlays/{env}/ (the spec has no environment '{env}'"
            in (result.stderr)
        )
    assert "is new" not in result.stderr  # no new name to suggest
    assert result.stderr.count("[removal]") == len(gone)
    assert (
        runner.invoke(cli, ["render", str(jobs), "-o", str(out), "--allow-removal"]).exit_code == 0
    )


@pytest.mark.parametrize("command", [["render"], ["check", "--fix"]], ids=" ".join)
def test_one_environment_rendered_into_an_overlay_folder_is_refused(runner, rendered, command):
    """--env writes the flat layout: into a folder of overlays it would flatten them."""
    jobs, out = rendered
    result = refused(runner, command, jobs, out, "--env", "prod")
    assert f"this would remove {out}/a/overlays/dev/ (--env prod writes the flat layout" in (
        result.stderr
    )
    assert f"{out}/b" not in result.stderr  # a job without overlays loses nothing


def test_added_environments_and_unchanged_jobs_write_as_before(runner, rendered):
    jobs, out = rendered
    spec = jobs / "b.yaml"
    spec.write_text(spec.read_text() + "overlays:\n  prod: {spec: {image: img:2}}\n")
    result = runner.invoke(cli, ["render", str(jobs), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "b" / "overlays" / "prod" / "kustomization.yaml").is_file()


@pytest.mark.parametrize("command", [["render"], ["check"], ["check", "--fix"], ["diff"]])
def test_an_empty_env_is_a_usage_error(runner, rendered, command):
    """Like an environment no job has: an unset shell variable must not flatten overlays."""
    jobs, out = rendered
    before = tree_state(out)
    result = runner.invoke(cli, [*command, str(jobs), "-o", str(out), "--env", ""])
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--env': an environment's name, not an empty string" in (
        result.stderr
    )
    assert tree_state(out) == before


def test_an_empty_env_is_a_usage_error_for_argocd_too(runner, rendered, tmp_path):
    _, out = rendered
    argocd = tmp_path / "argocd"
    args = ["argocd", "--deploy", str(out), "-o", str(argocd), "--repo-url", "file:///r"]
    result = runner.invoke(cli, [*args, "--env", ""])
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--env': an environment's name, not an empty string" in (
        result.stderr
    )
    assert not argocd.exists()
