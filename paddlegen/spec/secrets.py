"""Credential detection: literal secrets never reach Git, and no message repeats one.

An env variable is a literal credential when its value has the shape of a key (a PEM block,
an AWS key id, a GitHub or Slack token, a JWT, a URL with a password), whatever its name; or
when its name says it holds a credential and its value could be one. The name alone is not
enough: ``MAX_TOKENS=4096``, ``LABEL_KEY=click`` and ``SECRET_SAUCE_ENABLED=true`` are settings.
"""

from __future__ import annotations

import re
from typing import Any

# Values with the shape of a key, whatever the variable is called.
_SECRET_VALUE = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----"  # PEM private keys
    r"|\b(AKIA|ASIA)[0-9A-Z]{16}\b"  # AWS access key ids
    r"|\bgh[pousr]_[A-Za-z0-9]{36,}\b"  # GitHub tokens
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"  # Slack tokens
    r"|\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"  # JWTs
)
# A password in a URL's userinfo (`scheme://user:password@host`, the user may be empty):
# RFC 3986 allows no '/', '?' or '#' in it, but people write '@' and ':' unencoded, so the
# last '@' before the host ends it. `user@host` and `user:@host` hold no password.
_URL_PASSWORD = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:([^\s/?#]+)@")
REDACTED = "<redacted>"

# The words of a name, in any spelling: DB_PASSWORD, db-password, dbPassword, APIKey.
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# A word naming a credential, alone or at the end of a compound (DBPASSWORD, AUTHTOKEN), never
# at its start or in the plural: TOKENIZER and MAX_TOKENS are not credentials.
_CREDENTIAL_WORD = re.compile(
    r".*(PASSWORD|PASSWD|PASSPHRASE|TOKEN|SECRET|CREDENTIALS?|APIKEY)", re.IGNORECASE
)
# Words that people choose rather than machines issue: a plain word or a number is one.
_PASSWORD_WORD = re.compile(r".*(PASSWORD|PASSWD|PASSPHRASE)", re.IGNORECASE)
# `KEY` only as the last word: LABEL_KEY and API_KEY, not KEY_COLUMN or MONKEY.
_LAST_KEY = "KEY"
# A last word that makes the variable a location: PASSWORD_FILE names where the secret is.
_LOCATION_WORDS = frozenset({"FILE", "FILENAME", "PATH", "DIR", "DIRECTORY"})

_BOOLEANS = frozenset({"true", "false", "yes", "no", "on", "off", "y", "n", "enabled", "disabled"})
# At most 20 characters: int64 has 19 digits; a longer run of digits is more likely a token.
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_MAX_NUMBER = 20
# Words as people write them (lower, UPPER or Capitalized), joined by '-', '_' or '.', at most
# 20 characters: room for `user_click_label`, less than any issued key or token (Stripe's and
# GitHub's are 32 to 40 and more, with digits), and random letters rarely keep one case per word.
_PLAIN_WORDS = re.compile(r"([a-z]+|[A-Z]+|[A-Z][a-z]+)([-_.]([a-z]+|[A-Z]+|[A-Z][a-z]+))*")
_MAX_PLAIN = 20
# Kubernetes expands $(VAR) from the container's other variables: a reference, not a value.
_REFERENCES = re.compile(r"(\$\([A-Za-z_][A-Za-z0-9_.-]*\))+")
# A path: absolute, explicitly relative, or lower-case segments joined by '/' (`data/tok`;
# base64 keys, which also hold '/', mix cases).
_PATH = re.compile(r"(/|\./|\.\./|~/)\S*|[a-z0-9._=-]+(/[a-z0-9._=-]+)+/?")
# A path segment of 16 characters or more that mixes letters with digits, or cases, without a
# separator looks like a key: a path does not make a key harmless.
_KEYLIKE_SEGMENT = re.compile(
    r"(?=[^-_./]{16,}$)(?:(?=.*[0-9])(?=.*[A-Za-z])|(?=.*[a-z])(?=.*[A-Z])).*"
)


def _words(name: str) -> list[str]:
    return [word.upper() for word in _WORD.findall(name)]


def is_secret_name(name: str) -> bool:
    """Whether ``name`` says its variable holds a credential (its value decides whether it does).

    A credential word anywhere (`DB_PASSWORD`, `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
    `CREDENTIALS`), or `KEY` as the last word (`API_KEY`); but a name ending in `_FILE`,
    `_PATH` or `_DIR` (also `_FILENAME`, `_DIRECTORY`) names a location.
    """
    words = _words(name)
    if not words or words[-1] in _LOCATION_WORDS:
        return False
    return words[-1] == _LAST_KEY or any(_CREDENTIAL_WORD.fullmatch(w) for w in words)


def _is_password_name(name: str) -> bool:
    """Whether ``name`` ends in a password word: its value is a password."""
    words = _words(name)
    return bool(words) and bool(_PASSWORD_WORD.fullmatch(words[-1]))


def looks_like_secret(value: Any) -> bool:
    return isinstance(value, str) and (bool(_SECRET_VALUE.search(value)) or has_url_password(value))


def has_url_password(value: Any) -> bool:
    """Whether ``value`` holds a URL with a literal password (`$(VAR)` is a reference)."""
    return isinstance(value, str) and any(
        not _REFERENCES.fullmatch(match.group(1)) for match in _URL_PASSWORD.finditer(value)
    )


def could_be_credential(value: Any, *, password: bool = False) -> bool:
    """Whether a value under a credential name could be the credential itself.

    Not when it is empty, a boolean word, a `$(VAR)` reference or a path (unless a segment
    looks like a key); nor, unless it is a ``password``, a number or a short plain word
    (`LABEL_KEY=click`): people choose passwords, and `letmein` or `123456` are passwords.
    """
    if not isinstance(value, str):
        return False  # the schema refuses anything else; its message is redacted there
    text = value.strip()
    if not text or text.lower() in _BOOLEANS or _REFERENCES.fullmatch(text) or _is_path(text):
        return False
    if password:
        return True
    if len(text) <= _MAX_NUMBER and _NUMBER.fullmatch(text):
        return False
    return not (len(text) <= _MAX_PLAIN and _PLAIN_WORDS.fullmatch(text))


def _is_path(text: str) -> bool:
    return bool(_PATH.fullmatch(text)) and not any(
        _KEYLIKE_SEGMENT.fullmatch(segment) for segment in text.split("/")
    )


def is_literal_credential(name: str, value: Any) -> bool:
    """Whether env ``name=value`` writes a credential into the manifests."""
    if looks_like_secret(value):
        return True
    return is_secret_name(name) and could_be_credential(value, password=_is_password_name(name))


def redact(text: str, value: Any) -> str:
    """``text`` with every occurrence of ``value`` (and its repr) replaced."""
    if isinstance(value, (str, int, float)) and str(value):
        text = text.replace(repr(value), REDACTED).replace(str(value), REDACTED)
    return text
