"""`python -m paddlegen`."""

from paddlegen.cli import main

main()
