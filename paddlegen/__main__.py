"""The `paddlegen` command (and `python -m paddlegen`).

`--version` is answered here, before the CLI and click are imported: scripts and hooks ask
for it often, and it should cost no more than starting Python. Its text is click's.
"""

import sys

from paddlegen import __version__


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(f"paddlegen, version {__version__}\n")
        return
    from paddlegen.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
