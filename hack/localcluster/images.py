"""The node's images, built without a registry: a pause image (one static Go binary), two
Paddle CPU images (Debian bookworm by debootstrap, Paddle from a lock in requirements/
installed by the host's pip): Paddle 3.x for collective training, Paddle 2.6 for
parameter-server training (3.x's CPU wheel has none), and paddlegen's Argo CD plugin sidecar
(a cached base of Debian, Python and paddlegen's dependencies, and a layer of the wheel built
from this checkout). Made into images by umoci and skopeo, cached by content."""

from __future__ import annotations

import configparser
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable
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
# Where Debian's python3 looks for packages installed outside its own (site-packages is not)
SITE = f"usr/local/lib/python{PYTHON}/dist-packages"
REPOSITORY = "paddlegen.local"  # never pulled: pods name the images with imagePullPolicy Never
KEEP = 4  # the images on a base kept in the cache (each 270 MB), and the wheels of them


@dataclass(frozen=True)
class Image:
    """An image `build` makes into <cache>/images/NAME-KEY/image.tar (a docker archive that
    `ctr images import` takes), KEY being a digest of everything that decides its bytes."""

    name: str
    recipe: Callable[[], dict[str, object]]  # what decides the content (hashed into KEY)
    rootfs: Callable[[Path], None]  # fills a folder with the image's files
    config: tuple[str, ...]  # umoci config flags
    # None: ``rootfs`` is the whole image, one layer; else it is a layer on top of ``base``
    base: Base | None = None

    def key(self) -> str:
        lower = {"base": self.base.key()} if self.base else {}
        text = json.dumps({"config": self.config, **lower, **self.recipe()}, sort_keys=True)
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
        if self.base:
            self.base.build()
        archive.parent.parent.mkdir(parents=True, exist_ok=True)
        report = timer()
        with tempfile.TemporaryDirectory(dir=archive.parent.parent, prefix=".build-") as tmp:
            work = Path(tmp)
            if self.base:
                layout = f"{work / 'oci'}:{self.base.name}"
                self.base.copy_layout(work / "oci")
            else:
                layout = f"{work / 'oci'}:{self.name}"
                run(["umoci", "init", "--layout", str(work / "oci")])
                run(["umoci", "new", "--image", layout])
            insert_layer(self.rootfs, work, layout)
            run(["umoci", "config", "--image", layout, *self.config])
            (work / "image").mkdir()
            output = work / "image" / "image.tar"
            run(["skopeo", "copy", "--quiet", f"oci:{layout}",
                 f"docker-archive:{output}:{self.reference}"])  # fmt: skip
            os.replace(work / "image", archive.parent)
        report(f"image {self.reference}")
        if self.base:  # a new one per commit to paddlegen: the oldest go
            keep_newest(archive.parent.parent.glob(f"{self.name}-*/image.tar"))


def keep_newest(archives: Iterable[Path], keep: int = KEEP) -> None:
    """Remove the folders of all but the ``keep`` newest of ``archives``: other checkouts
    sharing the cache (worktrees) may still want theirs, and a removed one is built again in
    seconds."""
    newest = sorted(archives, key=lambda path: path.stat().st_mtime, reverse=True)
    for archive in newest[keep:]:
        shutil.rmtree(archive.parent, ignore_errors=True)


@dataclass(frozen=True)
class Base:
    """The lower part of images that change more often than it does, cached as an OCI layout
    <cache>/images/NAME-KEY/oci (tag NAME), KEY a digest of ``recipe``: what an image on it
    adds is one layer, which takes seconds where the base takes minutes."""

    name: str
    recipe: Callable[[], dict[str, object]]
    rootfs: Callable[[Path], None]

    def key(self) -> str:
        text = json.dumps(self.recipe(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def layout(self) -> Path:
        return cache_root() / "images" / f"{self.name}-{self.key()}" / "oci"

    def build(self) -> None:
        """Build the layout unless it is there: into a folder beside it, then renamed."""
        layout = self.layout()
        if (layout / "index.json").is_file():
            return
        layout.parent.parent.mkdir(parents=True, exist_ok=True)
        report = timer()
        with tempfile.TemporaryDirectory(dir=layout.parent.parent, prefix=".build-") as tmp:
            work = Path(tmp)
            image = f"{work / 'base' / 'oci'}:{self.name}"
            run(["umoci", "init", "--layout", str(work / "base" / "oci")])
            run(["umoci", "new", "--image", image])
            insert_layer(self.rootfs, work, image)
            os.replace(work / "base", layout.parent)
        report(f"base {self.name}:{self.key()}")

    def copy_layout(self, target: Path) -> None:
        """A copy of the layout at ``target`` that umoci may add to: the blobs (named by their
        digest, never rewritten) linked, the files umoci rewrites (index.json) copied."""
        shutil.copytree(self.layout(), target, copy_function=os.link)
        for name in ("index.json", "oci-layout"):
            (target / name).unlink()
            shutil.copyfile(self.layout() / name, target / name)


def insert_layer(fill: Callable[[Path], None], work: Path, image: str) -> None:
    """A layer of the files ``fill`` puts into an empty folder, added to ``image`` at /."""
    rootfs = work / "rootfs"
    rootfs.mkdir()
    try:
        fill(rootfs)
    finally:
        unmount_under(rootfs)  # debootstrap mounts /proc and /sys; a failure leaves them
    run(["umoci", "insert", "--image", image, str(rootfs), "/"])


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


def paddle_recipe(
    lock: str, packages: tuple[str, ...] = PACKAGES, sdists: tuple[str, ...] = (), cli: bool = False
) -> dict[str, object]:
    return {
        "suite": SUITE,
        "packages": packages,
        "lock": (REQUIREMENTS / lock).read_text(encoding="utf-8"),
        "python": PYTHON,
        "platforms": PLATFORMS,
        # only when set: the other images' keys stay as they were
        **({"sdists": sdists} if sdists else {}),
        **({"console_scripts": "/usr/local/bin"} if cli else {}),
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


def debian_rootfs(
    packages: tuple[str, ...],
    lock: str,
    rootfs: Path,
    sdists: tuple[str, ...] = (),
    cli: bool = False,
) -> None:
    """Debian (minbase) with ``packages``, then the wheels of the lock installed by the
    host's pip for that Python: pip inside the chroot would need a CA bundle there (and fails
    TLS verification on machines whose proxy signs with its own CA), none may stay in the
    image. ``sdists``: pure-Python packages of the lock published only as a source archive,
    built into a wheel by the host's pip (its hash checked like the others'). With ``cli``
    the packages' console scripts go to /usr/local/bin, for the image's Python: pip --target
    leaves them in SITE/bin, off PATH, naming the host's Python."""
    if shutil.which("debootstrap") is None:
        raise ClusterError("`debootstrap` is not on PATH: it makes the node's Debian images")
    if os.geteuid() != 0:
        raise ClusterError("debootstrap, which makes the node's Debian images, needs root")
    debs = cache_root() / "images" / "debs"  # the downloaded packages, for the next build
    debs.mkdir(parents=True, exist_ok=True)
    run(["debootstrap", "--variant=minbase", f"--include={','.join(packages)}",
         f"--cache-dir={debs}", SUITE, str(rootfs), mirror()])  # fmt: skip
    run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--require-hashes",
         "--only-binary=:all:", *(f"--no-binary={name}" for name in sdists),
         *(f"--platform={tag}" for tag in PLATFORMS),
         f"--python-version={PYTHON}", "--implementation=cp",
         f"--target={rootfs}/{SITE}", "-r", str(REQUIREMENTS / lock)]
    )  # fmt: skip
    if cli:
        site = rootfs / SITE
        for entry_points in sorted(site.glob("*.dist-info/entry_points.txt")):
            console_scripts(entry_points, rootfs / "usr" / "local" / "bin")
        shutil.rmtree(site / "bin")
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


def paddle_image(
    name: str,
    lock: str,
    packages: tuple[str, ...] = PACKAGES,
    sdists: tuple[str, ...] = (),
    cli: bool = False,
) -> Image:
    """A Paddle image: Debian's ``packages`` and the wheels of requirements/LOCK (with
    ``cli``, their console scripts on PATH)."""
    return Image(
        name,
        partial(paddle_recipe, lock, packages, sdists, cli),
        partial(debian_rootfs, packages, lock, sdists=sdists, cli=cli),
        (
            "--config.env=PATH=/usr/local/bin:/usr/bin:/bin",
            "--config.env=PYTHONUNBUFFERED=1",  # logs line by line, as kubectl logs shows them
            "--config.cmd=python3",
            "--config.workingdir=/",
        ),
    )


PADDLE = paddle_image("paddle", "paddle-image.txt")  # Paddle 3.x: collective, single node
PADDLE_PS = paddle_image("paddle-ps", "paddle-ps-image.txt")  # Paddle 2.6: parameter servers
# PaddleFormers (`paddleformers-cli`) and its dependencies on Paddle 3.x: 2.4 GB unpacked, twice
# the Paddle image, so an image of its own that only `--with paddle-llm` builds and imports, not
# every node. Its CLI, `paddleformers-cli` on PATH, starts `python -m
# paddle.distributed.launch` (paddleformers 1.2.0 cli/cli.py:155-158): `python`, which Debian's
# python3 does not provide, comes from python-is-python3. GPUtil, which the CLI imports to
# count GPUs (:91-93), has no wheel, and imports distutils.spawn (GPUtil 1.4.0 GPUtil.py:34),
# which Debian's python3 leaves to python3-distutils.
PADDLE_LLM = paddle_image(
    "paddle-llm",
    "paddle-llm-image.txt",
    (*PACKAGES, "python-is-python3", "python3-distutils"),
    sdists=("gputil",),
    cli=True,
)

# paddlegen's Config Management Plugin sidecar, as sidecar/Dockerfile (`paddlegen argocd`)
# makes it elsewhere: Argo CD's user 999, its home, the plugin's configuration where
# argocd-cmp-server reads it, and that server as the entry point, which is not in the image:
# Argo CD copies its binary into the volume it shares with the sidecar (var-files).
PLUGIN_PACKAGES = ("python3",)  # sh and grep (the plugin's commands) are in minbase
ARGOCD_USER = 999
ARGOCD_HOME = "home/argocd"
PLUGIN_CONFIG = f"{ARGOCD_HOME}/cmp-server/config/plugin.yaml"
CMP_SERVER = "/var/run/argocd/argocd-cmp-server"
# A fixed time for the files of the wheel (hatchling's reproducible builds: the zip entries'
# times; its own default when the variable is unset, 2020-02-02): the wheel's bytes, and so
# the image's key, depend on its files only, whatever the environment says.
SOURCE_DATE_EPOCH = "1580601600"


def plugin_base_recipe() -> dict[str, object]:
    return {
        "suite": SUITE,
        "packages": PLUGIN_PACKAGES,
        "lock": (REQUIREMENTS / "plugin-image.txt").read_text(encoding="utf-8"),
        "python": PYTHON,
        "platforms": PLATFORMS,
        "user": ARGOCD_USER,
        "home": ARGOCD_HOME,
    }


def plugin_base_rootfs(rootfs: Path) -> None:
    """Debian, Python and paddlegen's dependencies, and Argo CD's user with its home."""
    debian_rootfs(PLUGIN_PACKAGES, "plugin-image.txt", rootfs)
    user = ARGOCD_USER
    with (rootfs / "etc" / "passwd").open("a", encoding="utf-8") as passwd:
        passwd.write(f"argocd:x:{user}:{user}::/{ARGOCD_HOME}:/usr/sbin/nologin\n")
    with (rootfs / "etc" / "group").open("a", encoding="utf-8") as group:
        group.write(f"argocd:x:{user}:\n")
    home = rootfs / ARGOCD_HOME
    home.mkdir(parents=True)
    os.chown(home, user, user)


def console_scripts(entry_points: Path, bin_dir: Path) -> None:
    """The console scripts of a package's ``entry_points`` (its dist-info's
    entry_points.txt) in ``bin_dir``, run by the image's Python."""
    scripts = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    scripts.optionxform = str  # type: ignore[assignment,method-assign]  # names keep their case
    scripts.read(entry_points, encoding="utf-8")
    if not scripts.has_section("console_scripts"):
        return
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, target in scripts["console_scripts"].items():
        module, _, function = target.partition(":")
        script = bin_dir / name
        script.write_text(
            f"#!/usr/bin/python3\nimport sys\nfrom {module} import {function.split('.')[0]}\n"
            f"sys.exit({function}())\n",
            encoding="utf-8",
        )
        script.chmod(0o755)


@functools.cache
def paddlegen_wheel() -> Path:
    """paddlegen's wheel, built from this checkout once per process (`python -m build`, the
    build backend of the running Python: the test extra has both), kept by its digest."""
    with tempfile.TemporaryDirectory(prefix="paddlegen-wheel-") as tmp:
        env = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH}
        try:
            run([sys.executable, "-m", "build", "--wheel", "--no-isolation",
                 f"--outdir={tmp}", str(HACK.parent)], env=env)  # fmt: skip
        except ClusterError as exc:
            raise ClusterError(
                f"paddlegen's wheel, for the plugin sidecar image: {exc} (are `build` and "
                f"`hatchling` installed beside {sys.executable}? the test extra has them)"
            ) from None
        (built,) = Path(tmp).glob("paddlegen-*.whl")
        digest = hashlib.sha256(built.read_bytes()).hexdigest()[:16]
        kept = cache_root() / "images" / "wheels" / digest / built.name
        if not kept.is_file():
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(built, kept.with_suffix(".tmp"))
            os.replace(kept.with_suffix(".tmp"), kept)
            keep_newest(kept.parent.parent.glob(f"*/{built.name}"), KEEP)
    return kept


def plugin_recipe() -> dict[str, object]:
    wheel = paddlegen_wheel()
    return {"wheel": wheel.name, "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()}


def plugin_layer(rootfs: Path) -> None:
    """The wheel installed (its files spread into SITE, its console script in /usr/local/bin,
    its modules compiled ahead: user 999 cannot write __pycache__ there, and each of the
    plugin's renders is a new process), and the plugin.yaml that wheel's `paddlegen argocd`
    writes."""
    wheel = paddlegen_wheel()
    site = rootfs / SITE
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
        (info,) = {name.split("/")[0] for name in archive.namelist() if ".dist-info/" in name}
    console_scripts(site / info / "entry_points.txt", rootfs / "usr" / "local" / "bin")
    if sys.version_info[:2] == tuple(int(n) for n in PYTHON.split(".")):
        # by hash, not by time: the files' times are not the wheel's (umoci, extraction)
        run([sys.executable, "-m", "compileall", "-q", "--invalidation-mode=checked-hash",
             "-d", f"/{SITE}", str(site)])  # fmt: skip
    written = rootfs / "argocd"
    run(
        [sys.executable, "-m", "paddlegen", "argocd", "--repo-url", "file:///",
         "--deploy", str(rootfs / "no-deploy"), "-o", str(written), "--sidecar"],
        cwd=rootfs,  # not a checkout, whose paddlegen `-m` would find first
        env={**os.environ, "PYTHONPATH": str(site)},  # the wheel's paddlegen, not the host's
    )  # fmt: skip
    config = rootfs / PLUGIN_CONFIG
    config.parent.mkdir(parents=True)
    shutil.copyfile(written / "sidecar" / "plugin.yaml", config)
    shutil.rmtree(written)
    for folder in (rootfs / ARGOCD_HOME, rootfs / ARGOCD_HOME / "cmp-server"):
        os.chown(folder, ARGOCD_USER, ARGOCD_USER)


PLUGIN = Image(
    "paddlegen-cmp",
    plugin_recipe,
    plugin_layer,
    (
        f"--config.user={ARGOCD_USER}:{ARGOCD_USER}",
        f"--config.env=HOME=/{ARGOCD_HOME}",
        "--config.env=PATH=/usr/local/bin:/usr/bin:/bin",
        f"--config.entrypoint={CMP_SERVER}",
        f"--config.workingdir=/{ARGOCD_HOME}",
    ),
    Base("paddlegen-cmp-base", plugin_base_recipe, plugin_base_rootfs),
)
IMAGES = (PAUSE, PADDLE, PADDLE_PS, PLUGIN)  # every node's (`--with node`)
ALL = (*IMAGES, PADDLE_LLM)  # and those of components on the node (`--with paddle-llm`)
