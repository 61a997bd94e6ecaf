"""The images the pods run: given, pinned and well-formed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from paddlegen.spec.loader import FieldPath
from paddlegen.spec.rule import Context, Finding, SpecRule, init_containers


def _image(ctx: Context) -> Iterator[Finding]:
    """Every role, and the data Job, has an image (its own, or the spec's)."""
    prep = ctx.spec.get("dataPrep")
    if "image" in ctx.spec:
        return
    if prep is not None and "image" not in prep:
        yield ctx.finding(
            ("spec", "dataPrep"),
            "the data Job has no image: set dataPrep.image or spec.image",
            key=True,
        )
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    missing = [role for role, body in roles.items() if "image" not in body]
    if missing:
        yield ctx.finding(
            ("spec",),
            "no image: set spec.image, or an image on every role "
            f"(missing on: {', '.join(missing)})",
            key=True,
        )


IMAGE_REQUIRED = SpecRule(
    "image-required",
    "every role, and the data Job, has an image",
    explanation=(
        "Every pod needs an image to run. Each role, and the data-preparation Job, takes its own "
        "`image` or the spec's; without either, the API server refuses the pods and the job never "
        "starts."
    ),
    severity="error",
    silenceable=True,
    check=_image,
)


def _images(ctx: Context) -> Iterator[tuple[FieldPath, str]]:
    """Every image the spec names (spec, roles, dataPrep, init containers and sidecars), with
    the place that names it."""
    places: list[FieldPath] = [
        ("spec",),
        *(("spec", role) for role, _ in ctx.roles()),
        ("spec", "dataPrep"),
    ]
    for place in places:
        section: Any = ctx.data
        for part in place:
            section = section.get(part, {})
        image = section.get("image")
        if isinstance(image, str):
            yield place, image
    for place, container in ctx.once(init_containers):
        yield place, container["image"]


def _image_tags(ctx: Context) -> Iterator[Finding]:
    """GitOps promises that a commit pins what runs; an untagged or `latest` image breaks that."""
    for place, image in ctx.once(_images):
        if "@" in image:
            continue  # a digest pins it exactly
        name, _, tag = image.rpartition(":")
        if not name or "/" in tag or tag == "latest":
            yield ctx.finding(
                (*place, "image"),
                f"image '{image}' is not pinned to a tag: the same "
                "commit can run different code tomorrow",
                "use an explicit version tag or a digest",
            )


IMAGE_TAG = SpecRule(
    "image-tag",
    "images are pinned to a tag (not `latest`) or a digest",
    explanation=(
        "GitOps promises that a commit pins what runs. An image without a tag, or tagged `latest`, "
        "runs whatever the registry holds when a node pulls it, so two pods of one job can run "
        "different code."
    ),
    severity="warning",
    silenceable=True,
    check=_image_tags,
)


def _image_whitespace(ctx: Context) -> Iterator[Finding]:
    """An image starts and ends with a visible character: the API server refuses pods whose
    image does not (the Job is accepted, its controller can create no pod)."""
    for place, image in ctx.once(_images):
        if image != image.strip():
            yield ctx.finding(
                (*place, "image"),
                f"image '{image}' has leading or trailing whitespace: the API server refuses "
                "the pods",
                "remove the whitespace",
            )


IMAGE_WHITESPACE = SpecRule(
    "image-whitespace",
    "an image has no leading or trailing whitespace (the API server refuses the pods)",
    explanation=(
        "The API server refuses pods whose image has leading or trailing whitespace. The Job "
        "itself is accepted, so nothing fails until its controller cannot create a pod."
    ),
    severity="error",
    silenceable=True,
    check=_image_whitespace,
)
