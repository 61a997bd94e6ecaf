"""Credential detection: literal secrets never reach Git, and no message repeats one."""

from __future__ import annotations

import re
from typing import Any

# Env names that carry credentials by convention (DB_PASSWORD, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY,
# API_KEY, ...). `_KEY` only as a suffix: `KEY_COLUMN` or `MONKEY` are not secrets.
_SECRET_NAME = re.compile(
    r"PASSWORD|PASSWD|PASSPHRASE|TOKEN|SECRET|CREDENTIAL|(^|_)KEY$", re.IGNORECASE
)
# Values with the shape of a key, whatever the variable is called.
_SECRET_VALUE = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----"  # PEM private keys
    r"|\b(AKIA|ASIA)[0-9A-Z]{16}\b"  # AWS access key ids
    r"|\bgh[pousr]_[A-Za-z0-9]{36,}\b"  # GitHub tokens
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"  # Slack tokens
    r"|\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"  # JWTs
)
REDACTED = "<redacted>"


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def looks_like_secret(value: Any) -> bool:
    return isinstance(value, str) and bool(_SECRET_VALUE.search(value))


def redact(text: str, value: Any) -> str:
    """``text`` with every occurrence of ``value`` (and its repr) replaced."""
    if isinstance(value, (str, int, float)) and str(value):
        text = text.replace(repr(value), REDACTED).replace(str(value), REDACTED)
    return text
