"""The wheel carries templates and schemas, and paddlegen finds them there."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from tests.conftest import ROOT


def test_wheel_contains_templates_and_schemas(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("paddlegen-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "paddlegen/_data/schemas/trainingjob.v1.schema.json" in names
    assert "paddlegen/_data/schemas/kueue.v1.schema.json" in names  # paddlegen kueue's input
    assert "paddlegen/_data/templates/job/job.yaml.j2" in names
    assert "paddlegen/_data/templates/_partials/pod.yaml.j2" in names
    assert "paddlegen/py.typed" in names

    # Installed from the wheel alone (no checkout next to it), the data is found.
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "from paddlegen.resources import spec_schema_path, templates_dir;"
        "print(spec_schema_path()); print(templates_dir())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(site)},
    ).stdout
    assert out.splitlines() == [
        str(site / "paddlegen/_data/schemas/trainingjob.v1.schema.json"),
        str(site / "paddlegen/_data/templates"),
    ]
