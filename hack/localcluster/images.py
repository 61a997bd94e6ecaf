"""The node's images, built without a registry: a pause image (one static Go binary) and two
Paddle CPU images (Debian bookworm by debootstrap, Paddle from a lock in requirements/
installed by the host's pip): Paddle 3.x for collective training, Paddle 2.6 for
parameter-server training (3.x's CPU wheel has none). Made into images by umoci and skopeo,
cached by content."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from .base import HACK, TOOLS, ClusterError, cache_root, run, timer

REQUIREMENTS = HACK.parent / "requirements"
SUITE = "bookworm"  # Debian's Python 3.11: the wheels of the lock are for cp311
PYTHON = "3.11"
# The wheels' platforms pip may take (the lock's wheels are manylinux1 to manylinux_2_28;
# bookworm's glibc is 2.36): pip before 24 widens no tag to the older ones, nor a PEP 600 one
# to its legacy alias. Without manylinux2014 pip took protobuf's pure-Python wheel over its
# `cp37-abi3-manylinux2014` one, and Paddle 2.6, which names protobuf's C module
# (google._upb), failed in `fleet.distributed_optimizer(...).minimize` (seen on the node).
PLATFORMS = (
    "manylinux_2_28_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux2010_x86_64",
    "manylinux1_x86_64",
)
# Debian's packages in the Paddle images: Python, the OpenMP runtime Paddle links to (without
# it: ImportError: libgomp.so.1), and an nslookup for the PaddleFlow operator's init
# container, which runs `nslookup <peer>` in a loop until every peer resolves (paddle-operator
# v0.3.5 controllers/paddlejob_helper.go:38): BIND's exits 0 once a search domain resolves,
# Debian's busybox exits 1 when any search domain fails, so its loop never ends. No
# ca-certificates: nothing in a pod downloads.
PACKAGES = ("python3", "libgomp1", "bind9-dnsutils")
REPOSITORY = "paddlegen.local"  # never pulled: pods name the images with imagePullPolicy Never


@dataclass(frozen=True)
class Image:
    """An image `build` makes into <cache>/images/NAME-KEY/image.tar (a docker archive that
    `ctr images import` takes), KEY being a digest of everything that decides its bytes."""

    name: str
    recipe: Callable[[], dict[str, object]]  # what decides the content (hashed into KEY)
    rootfs: Callable[[Path], None]  # fills a folder with the image's files
    config: tuple[str, ...]  # umoci config flags

    def key(self) -> str:
        text = json.dumps({"config": self.config, **self.recipe()}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def reference(self) -> str:
        return f"{REPOSITORY}/{self.name}:{self.key()}"

    def archive(self) -> Path:
        return cache_root() / "images" / f"{self.name}-{self.key()}" / "image.tar"

    def build(self) -> None:
        """Build the archive unless it is there: into a folder beside it, then renamed."""
        archive = self.archive()
        if archive.is_file():
            return
        for tool in ("umoci", "skopeo"):
            if shutil.which(tool) is None:
                raise ClusterError(f"`{tool}` is not on PATH: it makes the node's images (Debian)")
        archive.parent.parent.mkdir(parents=True, exist_ok=True)
        report = timer()
        with tempfile.TemporaryDirectory(dir=archive.parent.parent, prefix=".build-") as tmp:
            work = Path(tmp)
            rootfs = work / "rootfs"
            rootfs.mkdir()
            try:
                self.rootfs(rootfs)
            finally:
                unmount_under(rootfs)  # debootstrap mounts /proc and /sys; a failure leaves them
            layout = f"{work / 'oci'}:{self.name}"
            run(["umoci", "init", "--layout", str(work / "oci")])
            run(["umoci", "new", "--image", layout])
            run(["umoci", "insert", "--image", layout, str(rootfs), "/"])
            run(["umoci", "config", "--image", layout, *self.config])
            (work / "image").mkdir()
            output = work / "image" / "image.tar"
            run(["skopeo", "copy", "--quiet", f"oci:{layout}",
                 f"docker-archive:{output}:{self.reference}"])  # fmt: skip
            os.replace(work / "image", archive.parent)
        report(f"image {self.reference}")


def build_all(pending: list[Image]) -> None:
    """Build ``pending``, as a process of its own: exit 2 saying why when one fails."""
    try:
        for image in pending:
            image.build()
    except ClusterError as exc:
        print(f"local-cluster: error: {exc}", file=sys.stderr)
        sys.exit(2)


def unmount_under(folder: Path) -> None:
    """Unmount whatever is mounted at or below ``folder``, deepest first."""
    for point in reversed(mounts_under(folder)):
        subprocess.run(["umount", "--lazy", point], check=False, capture_output=True)


def mounts_under(folder: Path) -> list[str]:
    """The mount points at or below ``folder``, in the order they were mounted."""
    prefix = str(folder.resolve())
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        # mountinfo escapes blanks in paths as octal (\040)
        point = re.sub(r"\\(\d{3})", lambda m: chr(int(m.group(1), 8)), line.split()[4])
        if point == prefix or point.startswith(prefix + "/"):
            points.append(point)
    return points


def pause_recipe() -> dict[str, object]:
    files = sorted((TOOLS / "pause").glob("*"))
    return {"pause": {file.name: file.read_text() for file in files}}


def pause_rootfs(rootfs: Path) -> None:
    go = shutil.which("go")
    if go is None:
        raise ClusterError("`go` is not on PATH: it builds the pause image's binary")
    run(
        [go, "build", "-trimpath", "-ldflags=-s -w", "-o", str(rootfs / "pause"), "."],
        cwd=TOOLS / "pause",
        env={**os.environ, "CGO_ENABLED": "0"},  # static: the image has nothing else
    )


def paddle_recipe(lock: str) -> dict[str, object]:
    return {
        "suite": SUITE,
        "packages": PACKAGES,
        "lock": (REQUIREMENTS / lock).read_text(encoding="utf-8"),
        "python": PYTHON,
        "platforms": PLATFORMS,
    }


def mirror() -> str:
    """The Debian mirror of this machine's apt sources (deb822 or one-line format)."""
    sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for source in sources:
        text = source.read_text(encoding="utf-8") if source.is_file() else ""
        found = re.search(r"^URIs:\s*(\S+/debian)\s*$", text, re.MULTILINE) or re.search(
            r"^deb\s+(?:\[[^]]*\]\s+)?(\S+/debian)\s", text, re.MULTILINE
        )
        if found:
            return found.group(1)
    raise ClusterError("no Debian mirror in /etc/apt/sources*: debootstrap needs one")


def paddle_rootfs(lock: str, rootfs: Path) -> None:
    """Debian (minbase) with PACKAGES, then the wheels of the lock installed by the
    host's pip for that Python: pip inside the chroot would need a CA bundle there (and fails
    TLS verification on machines whose proxy signs with its own CA), none may stay in the
    image."""
    if shutil.which("debootstrap") is None:
        raise ClusterError("`debootstrap` is not on PATH: it makes the Paddle image (Debian)")
    if os.geteuid() != 0:
        raise ClusterError("debootstrap, which makes the Paddle image, needs root")
    debs = cache_root() / "images" / "debs"  # the downloaded packages, for the next build
    debs.mkdir(parents=True, exist_ok=True)
    run(["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}",
         f"--cache-dir={debs}", SUITE, str(rootfs), mirror()])  # fmt: skip
    run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--require-hashes",
         "--only-binary=:all:", *(f"--platform={tag}" for tag in PLATFORMS),
         f"--python-version={PYTHON}", "--implementation=cp",
         f"--target={rootfs}/usr/local/lib/python{PYTHON}/dist-packages",
         "-r", str(REQUIREMENTS / lock)]
    )  # fmt: skip
    # apt's downloads and lists: nothing installs in a pod
    for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for path in (rootfs / leftover).glob("*"):
            if path.is_file():
                path.unlink()


PAUSE = Image(
    "pause",
    pause_recipe,
    pause_rootfs,
    ("--config.entrypoint=/pause", "--config.user=65535:65535"),
)


def paddle_image(name: str, lock: str) -> Image:
    """A Paddle image: Debian and the wheels of requirements/LOCK."""
    return Image(
        name,
        partial(paddle_recipe, lock),
        partial(paddle_rootfs, lock),
        (
            "--config.env=PATH=/usr/local/bin:/usr/bin:/bin",
            "--config.env=PYTHONUNBUFFERED=1",  # logs line by line, as kubectl logs shows them
            "--config.cmd=python3",
            "--config.workingdir=/",
        ),
    )


PADDLE = paddle_image("paddle", "paddle-image.txt")  # Paddle 3.x: collective, single node
PADDLE_PS = paddle_image("paddle-ps", "paddle-ps-image.txt")  # Paddle 2.6: parameter servers
IMAGES = (PAUSE, PADDLE, PADDLE_PS)
