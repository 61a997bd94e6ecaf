"""Maintainer tools, not shipped in the wheel."""
