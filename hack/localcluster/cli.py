"""hack/local-cluster's command line."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import images
from .base import ClusterError, state_dir
from .cluster import build, down, install, load, running_extras, up
from .components import COMPONENTS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hack/local-cluster",
        description="A local Kubernetes control plane on loopback, from pinned sources.",
    )
    parser.add_argument(
        "command",
        choices=["build", "up", "env", "install", "down", "status"],
        help="build: the binaries, once per version; up: start (builds if needed); "
        "env: print the exports for a shell; install: put what `paddlegen argocd` wrote "
        "in FOLDER into the running Argo CD; down: stop and remove the state; "
        "status: say whether it runs",
    )
    parser.add_argument("folder", nargs="?", metavar="FOLDER", help="install: the folder")
    parser.add_argument(
        "--with",
        dest="extras",
        default="",
        metavar="NAMES",
        help=f"build/up: also these, comma-separated: {', '.join(COMPONENTS)}",
    )
    args = parser.parse_args(argv)
    extras = [name for name in args.extras.split(",") if name]
    try:
        if args.command == "build":
            for name, path in build(extras).items():
                print(f"{name}: {path}")
        elif args.command == "up":
            cluster = up(extras=extras)
            print(
                f"up: {cluster.server} (state in {cluster.state}); "
                f'`eval "$(hack/local-cluster env)"` to use it'
            )
        elif args.command == "env":
            loaded = load(state_dir())
            if loaded is None:
                raise ClusterError("no cluster is running (hack/local-cluster up)")
            print(f"export KUBECONFIG={loaded.kubeconfig}")
            print(f"export PATH={os.pathsep.join(loaded.bin_dirs)}:$PATH")
            if "node" in running_extras(loaded):  # what a spec names, imagePullPolicy: Never
                print(f"export PADDLEGEN_PADDLE_IMAGE={images.PADDLE.reference}")
                print(f"export PADDLEGEN_PADDLE_PS_IMAGE={images.PADDLE_PS.reference}")
                print(f"export PADDLEGEN_CMP_IMAGE={images.PLUGIN.reference}")
                print(f"export PADDLEGEN_PADDLE_LLM_IMAGE={images.PADDLE_LLM.reference}")
        elif args.command == "install":
            if args.folder is None:
                parser.error("install needs the FOLDER `paddlegen argocd -o` wrote")
            for file in install(Path(args.folder)):
                print(f"installed {file}")
        elif args.command == "status":
            found = load(state_dir())
            print(f"running: {found.server}" if found else "not running")
            return 0 if found else 1
        else:
            down()
    except ClusterError as exc:
        print(f"local-cluster: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
