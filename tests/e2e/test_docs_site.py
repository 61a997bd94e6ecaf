"""The documentation site: `mkdocs build --strict` succeeds, and in a real browser (headless
Chromium, driven through chromedriver's W3C WebDriver API) the site's search box finds a spec
field on the generated spec reference.

mkdocs, Chromium and chromedriver skip the tests when absent on a developer machine and fail
them when CI=true (`.ci/run` installs Debian's chromium and chromium-driver). Nothing is
downloaded: the site is served from a temporary folder on localhost, and the browser starts
with its network features off.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, require_tool

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",  # wide enough for Material's search box in the header
]
FIELD = "activeDeadlineSeconds"


def require_mkdocs() -> None:
    if importlib.util.find_spec("mkdocs") and importlib.util.find_spec("material"):
        return
    if os.environ.get("CI") == "true":
        pytest.fail("mkdocs and mkdocs-material are required in CI (requirements/ci.txt)")
    pytest.skip("mkdocs or mkdocs-material is not installed")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built with --strict into a temporary folder (once for the module)."""
    require_mkdocs()
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean"]
        + ["--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(out)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # Material's banner about MkDocs 2
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr}"
    return out


def test_the_site_builds_strict_with_every_page(site):
    for page in ROOT.joinpath("docs").rglob("*.md"):
        relative = page.relative_to(ROOT / "docs").with_suffix("")
        html = site / ("index.html" if relative.name == "index" else f"{relative}/index.html")
        assert html.is_file(), html
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert any(FIELD in doc["text"] for doc in index["docs"])


# --------------------------------------------------------------------------- the browser


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """The folder over HTTP on localhost, in a thread; yields its base URL."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=folder))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class WebDriver:
    """The few W3C WebDriver commands the test needs, over chromedriver's HTTP API."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.session = ""

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.load(response)["value"]
        except urllib.error.HTTPError as exc:
            raise AssertionError(f"{method} {path}: {exc.read().decode(errors='replace')}") from exc

    def start(self, binary: str, profile: Path) -> None:
        options = {"binary": binary, "args": [*CHROMIUM_FLAGS, f"--user-data-dir={profile}"]}
        capabilities = {"alwaysMatch": {"goog:chromeOptions": options}}
        self.session = self.call("POST", "/session", {"capabilities": capabilities})["sessionId"]

    def s(self, path: str) -> str:
        return f"/session/{self.session}{path}"

    def find_all(self, css: str) -> list[str]:
        found = self.call("POST", self.s("/elements"), {"using": "css selector", "value": css})
        return [next(iter(element.values())) for element in found]


@contextlib.contextmanager
def chromedriver(driver: str) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [driver, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(base + "/status", timeout=5) as response:
                    if json.load(response)["value"]["ready"]:
                        break
            except (OSError, ValueError):
                pass
            assert time.monotonic() < deadline, "chromedriver did not start"
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_the_search_box_finds_a_spec_field_on_the_spec_reference(site, tmp_path):
    binary = require_tool("chromium")
    driver_path = require_tool("chromedriver")
    with serve(site) as url, chromedriver(driver_path) as base:
        web = WebDriver(base)
        web.start(binary, tmp_path / "profile")
        try:
            web.call("POST", web.s("/url"), {"url": url})
            (box,) = web.find_all("input.md-search__input")
            web.call("POST", web.s(f"/element/{box}/click"), {})
            web.call("POST", web.s(f"/element/{box}/value"), {"text": FIELD})
            hrefs: list[str] = []
            deadline = time.monotonic() + 60  # the search worker indexes the site first
            while time.monotonic() < deadline:
                links = web.find_all(".md-search-result__list a.md-search-result__link")
                hrefs = [web.call("GET", web.s(f"/element/{link}/property/href")) for link in links]
                if any("/reference/spec/" in href for href in hrefs):
                    break
                time.sleep(0.5)
            assert any(href.startswith(url + "reference/spec/") for href in hrefs), hrefs
            # and the result leads there: following it shows the field's section
            (first,) = [h for h in hrefs if "/reference/spec/" in h][:1]
            web.call("POST", web.s("/url"), {"url": first})
            text = web.call(
                "POST",
                web.s("/execute/sync"),
                {"script": "return document.body.innerText", "args": []},
            )
            assert FIELD in text
        finally:
            web.call("DELETE", web.s(""))
