"""The patch docs/environments.md shows is the one paddlegen writes for the page's own spec."""

from __future__ import annotations

from paddlegen.pipeline import build
from tests.docs.pages import DOCS, blocks

PAGE = DOCS / "environments.md"
PATCH = "# deploy/resnet/overlays/prod/patch-batch_v1_job_resnet.yaml\n"


def test_the_page_shows_the_patch_its_spec_renders_to(tmp_path):
    samples = [b for b in blocks({"yaml"}) if b.page == PAGE]
    spec = tmp_path / "resnet.yaml"
    spec.write_text(samples[0].body)
    (shown,) = [b.body for b in samples if b.body.startswith(PATCH)]
    (rendered,) = build.render_specs([spec])
    written = rendered.plan["overlays/prod/patch-batch_v1_job_resnet.yaml"]
    assert shown[len(PATCH) :] == written.split("\n", 1)[1]  # without the generated header
