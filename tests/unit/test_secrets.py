"""The credential judgement: names say where a credential may be, values whether one is."""

from __future__ import annotations

import pytest

from paddlegen.spec.secrets import could_be_credential, is_literal_credential, is_secret_name


@pytest.mark.parametrize(
    "name",
    [
        "DB_PASSWORD",
        "db_passwd",
        "PASSPHRASE",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "CLIENT_SECRET",
        "API_KEY",
        "KEY",
        "LABEL_KEY",  # a credential name; its value decides
        "GOOGLE_APPLICATION_CREDENTIALS",
        "DBPASSWORD",  # a compound ending in the word
        "AUTHTOKEN",
        "APIKEY",
        "dbPassword",  # any spelling
        "apiKey",
        "SECRET_SAUCE_ENABLED",
    ],
)
def test_credential_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "MAX_TOKENS",  # plural: a count
        "NUM_TOKENS",
        "TOKENIZER_PATH",  # a word starting with TOKEN
        "TOKENIZER",
        "KEY_COLUMN",  # KEY counts only as the last word
        "MONKEY",
        "PASSWORD_FILE",  # a location, not the secret
        "TOKEN_PATH",
        "SECRETS_DIR",
        "SSH_KEY_FILENAME",
        "EPOCHS",
        "",
    ],
)
def test_names_that_are_not_credentials(name):
    assert not is_secret_name(name)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "   ",
        "4096",
        "-1",
        "0.5",
        "1e-4",
        "true",
        "False",
        "YES",
        "off",
        "/mnt/tok",
        "/etc/secret/pw",
        "./vocab.txt",
        "../data",
        "~/models",
        "data/tok",
        "models/bert-base/vocab.txt",
        "/data/date=2024-01-01/part-0",
        "click",
        "CLICK",
        "Click",
        "user_click_label",  # 16 characters of words
        "en_US",
        "bert-base.cased",
        "$(DB_PASSWORD)",  # Kubernetes expands it from another variable
        "$(A)$(B)",
    ],
)
def test_values_that_are_not_credentials(value):
    assert not could_be_credential(value)


@pytest.mark.parametrize(
    "value",
    [
        "hunter2",  # a letter and a digit: not a plain word
        "hunter2hunter2",
        "sk-live-4eC39HqLyjWDarjtT1zdp7dc",
        "sk-live-abcdefghijklmnop",  # plain words, but longer than 20 characters
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # base64 holds '/': mixed case, no path
        "/K7MDENG/bPxRfiCYEXAMPLEKEYwJalrXUtnFEMI",  # nor with a leading '/'
        "/cache/3f9a2b7c1d4e5f6a7b8c9d0e1f2a3b4c",  # a hex key as a segment
        "3f9a2b7c1d4e5f6a7b8c9d0e1f2a3b4c",
        "xKfQpLmZrTbWvNhJ",  # one case per word, or it is not a word
        "123456789012345678901",  # 21 digits: a token more likely than a count
        "postgres://app:pw@db/app",
        "p@ss word",
    ],
)
def test_values_that_could_be_credentials(value):
    assert could_be_credential(value)


@pytest.mark.parametrize("value", ["letmein", "Summer", "123456", "0000"])
def test_a_password_can_be_a_plain_word_or_a_number(value):
    assert not could_be_credential(value)
    assert could_be_credential(value, password=True)
    assert is_literal_credential("DB_PASSWORD", value)
    # a name that only mentions passwords holds a setting
    assert not is_literal_credential("PASSWORD_POLICY", value)


@pytest.mark.parametrize("value", ["", "true", "/run/secrets/db", "$(PG_PASSWORD)"])
def test_even_a_password_name_passes_an_empty_value_a_boolean_a_path_or_a_reference(value):
    assert not is_literal_credential("DB_PASSWORD", value)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TOKENIZER_PATH", "ghp_" + "a" * 36),
        ("EPOCHS", "AKIAABCDEFGHIJKLMNOP"),
        ("MAX_TOKENS", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"),
        ("NOTES", "-----BEGIN OPENSSH PRIVATE KEY-----"),
        ("SLACK", "xoxb-1234567890-abcdefghij"),
        # a password in a URL's userinfo, whatever the variable is called
        ("MLFLOW_TRACKING_URI", "https://user:s3cr3tPass@mlflow.example.com"),
        ("DATABASE_URL", "postgres://admin:hunter2@db:5432/x"),
        ("BROKER", "redis://:letmein@redis:6379/0"),  # a password without a user
        ("NOTES", "see amqp://guest:guest@rabbit/ for the queue"),
        ("PROXY", "http://bob:p@ss:w0rd@proxy:3128"),  # an unencoded '@' or ':' in it
    ],
)
def test_a_value_shaped_like_a_key_is_a_credential_whatever_the_name(name, value):
    assert not is_secret_name(name)
    assert is_literal_credential(name, value)


@pytest.mark.parametrize(
    "value",
    [
        "https://mlflow.example.com",
        "https://user@mlflow.example.com",  # a user, no password
        "https://user:@mlflow.example.com",  # an empty password
        "postgres://admin:$(DB_PASSWORD)@db:5432/x",  # Kubernetes expands the reference
        "http://[::1]:8080/path",  # a port, not a password
        "http://proxy:3128/a@b",  # an '@' in the path
        "user:pass@host",  # no scheme: not a URL
    ],
)
def test_urls_without_a_literal_password_are_not_credentials(value):
    assert not is_literal_credential("MLFLOW_TRACKING_URI", value)
