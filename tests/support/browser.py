"""Headless Chromium for the HTML report's tests: render a file, dump its DOM, take a screenshot,
and prove that nothing the page does leaves the machine.

Why a real browser: the report's promises (sections present, filters that hide rows, a page that
is not blank, no request to anywhere) are promises about what a browser does with the file, and
only a browser running the page's script can check them. We drive Debian's ``chromium`` through
its command-line modes (``--dump-dom``, ``--screenshot``); no driver, no download at run time.
Where no browser is installed the tests skip with a message that says why and how to get one.

The network check. Every Chromium run goes through a recording HTTP proxy on 127.0.0.1 (a thread
of the test process), with ``--proxy-bypass-list=<-loopback>`` so that even loopback requests go
through it, and ``--host-resolver-rules`` that resolve no host name, so a request can go nowhere
but the proxy. The proxy answers 404 to everything and records every request line. The page may
then cause no request at all. Chromium itself still makes one request of its own that no switch
turns off (the sign-in service's ``ListAccounts``, sent when the profile's network comes up);
``--gaia-url`` points it at :data:`BROWSER_OWN_HOST`, a name under ``.invalid`` that no page
uses, so it is told apart exactly and never reaches a real host. Every other request counts
against the page; :func:`page_requests` is the list the tests require to be empty.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

#: Where Debian's package puts the browser, then the names other systems use on PATH.
BROWSER_NAMES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Where Chromium's own sign-in probe is sent instead of accounts.google.com (``--gaia-url``).
BROWSER_OWN_HOST = "browser-signin.invalid"
#: Virtual time the page's script gets before the DOM is dumped or the screenshot taken (ms).
VIRTUAL_TIME_MS = 3000
#: Seconds before a Chromium run is given up (a hung browser fails the test, it does not hang it).
BROWSER_TIMEOUT_S = 90

#: Chromium's background services that would otherwise call out while the page loads: network
#: time, the search engine's preconnect, AI-mode eligibility, translate, optimization hints, media
#: router. Together with the switches below, the only request left is the sign-in probe.
_DISABLED_FEATURES = (
    "NetworkTimeServiceQuerying",
    "PreconnectToSearch",
    "SearchEnginePreconnector",
    "AimEligibilityService",
    "AimServerEligibilityEnabled",
    "AimServerRequestOnStartupEnabled",
    "AiModeOmniboxEntryPoint",
    "OptimizationHints",
    "Translate",
    "MediaRouter",
    "DialMediaRouteProvider",
    "AutofillServerCommunication",
    "CertificateTransparencyComponentUpdater",
    "InterestFeedContentSuggestions",
)


def find_browser() -> str | None:
    """The first Chromium-like browser found, or None."""
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def require_browser() -> str:
    """The browser's path; skips the calling test, loudly, when there is none."""
    found = find_browser()
    if found is None:
        pytest.skip(
            "browser test skipped: no Chromium found (looked for " + ", ".join(BROWSER_NAMES) + "); "
            "install Debian's package with `apt-get install chromium` (.ci/run does this when it runs as root)"
        )
    return found


# ------------------------------------------------------------------------------------------ proxy


@dataclass(frozen=True)
class Request:
    """One request line the proxy saw: ``GET http://host/path`` or ``CONNECT host:443``."""

    method: str
    target: str

    @property
    def host(self) -> str:
        authority = self.target.split("://", 1)[-1].split("/", 1)[0]
        return authority.split(":", 1)[0]

    def __str__(self) -> str:
        return f"{self.method} {self.target}"


class _Recorder(BaseHTTPRequestHandler):
    """Answers every request 404 (CONNECT too: no tunnel is opened) and records its request line."""

    def _record(self) -> None:
        server = self.server
        assert isinstance(server, RecordingProxy)
        with server.lock:
            server.requests.append(Request(self.command, self.path))
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()

    # http.server dispatches on ``do_<METHOD>``: the names are its, not ours.
    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_OPTIONS = do_PATCH = do_CONNECT = _record  # noqa: N815

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the requests are in :attr:`RecordingProxy.requests`."""


class RecordingProxy(ThreadingHTTPServer):
    """An HTTP proxy on 127.0.0.1 that forwards nothing and remembers every request."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Recorder)
        self.requests: list[Request] = []
        self.lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])


@contextmanager
def recording_proxy() -> Iterator[RecordingProxy]:
    """A :class:`RecordingProxy` serving in a thread for the duration of the block."""
    proxy = RecordingProxy()
    thread = threading.Thread(target=proxy.serve_forever, name="recording-proxy", daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join(timeout=5)


def page_requests(requests: Sequence[Request]) -> list[Request]:
    """The requests that are the page's doing: all but Chromium's own services (sign-in probe, GCM), which
    :func:`browser_args` sends to :data:`BROWSER_OWN_HOST`."""
    return [r for r in requests if r.host != BROWSER_OWN_HOST]


# ---------------------------------------------------------------------------------------- browser


def browser_args(user_data_dir: Path, proxy_port: int) -> list[str]:
    """Switches for a headless, offline, repeatable run (fresh profile, no extensions, no services)."""
    return [
        "--headless",
        "--no-sandbox",  # CI runs as root, where the sandbox refuses to start
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--user-data-dir={user_data_dir}",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-component-extensions-with-background-pages",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-default-apps",
        "--disable-sync",
        "--disable-client-side-phishing-detection",
        "--disable-domain-reliability",
        "--disable-breakpad",
        "--no-pings",
        "--metrics-recording-only",
        "--password-store=basic",
        "--use-mock-keychain",
        "--disable-features=" + ",".join(_DISABLED_FEATURES),
        f"--gaia-url=http://{BROWSER_OWN_HOST}/",
        # Chromium's push-messaging (GCM) check-in and registration, which a longer page load
        # lets it start (seen on the demo's page: CONNECT android.clients.google.com:443)
        f"--gcm-checkin-url=http://{BROWSER_OWN_HOST}/checkin",
        f"--gcm-registration-url=http://{BROWSER_OWN_HOST}/register",
        f"--gcm-mcs-endpoint=http://{BROWSER_OWN_HOST}/mcs",
        f"--proxy-server=http://127.0.0.1:{proxy_port}",
        "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        "--force-color-profile=srgb",
        "--lang=en-US",
        f"--virtual-time-budget={VIRTUAL_TIME_MS}",
    ]


def file_url(path: str | Path, hash: str = "") -> str:
    """``file:///...`` for ``path``, with ``#hash`` when given."""
    url = Path(path).resolve().as_uri()
    return f"{url}#{hash.lstrip('#')}" if hash else url


def run_browser(url: str, mode: Sequence[str], proxy: RecordingProxy | None = None) -> str:
    """Run Chromium once on ``url`` with ``mode`` (``--dump-dom``, ``--screenshot=...``); its stdout.

    Without a ``proxy`` a private one is used (and its requests are thrown away): every run is
    offline either way, because the browser is pointed at a proxy that forwards nothing.
    """
    browser = require_browser()
    with tempfile.TemporaryDirectory(prefix="tooldiag-chromium-") as profile:
        if proxy is None:
            with recording_proxy() as private:
                return _run(browser, Path(profile), private, url, mode)
        return _run(browser, Path(profile), proxy, url, mode)


def _run(browser: str, profile: Path, proxy: RecordingProxy, url: str, mode: Sequence[str]) -> str:
    command = [browser, *browser_args(profile, proxy.port), *mode, url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=BROWSER_TIMEOUT_S, check=False)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"chromium exited with {done.returncode} on {url}:\n{tail}")
    return done.stdout


def dump_dom(path: str | Path, hash: str = "", *, proxy: RecordingProxy | None = None) -> str:
    """The DOM of ``path`` after its script ran (``#hash`` in the URL: the page's filter presets)."""
    dom = run_browser(file_url(path, hash), ["--dump-dom"], proxy)
    if "<html" not in dom.lower():
        raise RuntimeError(f"chromium dumped no document for {path} (stdout: {dom[:200]!r})")
    return dom


def screenshot(
    path: str | Path, out_png: str | Path, size: tuple[int, int] = (1280, 1600), *, proxy: RecordingProxy | None = None
) -> Path:
    """A PNG of the top ``size`` (width, height in px) of the rendered page, written to ``out_png``."""
    out = Path(out_png).resolve()
    out.unlink(missing_ok=True)
    run_browser(file_url(path), [f"--screenshot={out}", f"--window-size={size[0]},{size[1]}"], proxy)
    if not out.is_file() or out.stat().st_size == 0:
        raise RuntimeError(f"chromium wrote no screenshot to {out}")
    return out


@dataclass(frozen=True)
class Pixels:
    """What a screenshot holds: its size, how many distinct colours, the share of non-white pixels."""

    width: int
    height: int
    colours: int
    non_white: float

    @property
    def blank(self) -> bool:
        """One flat colour, or (nearly) all white: nothing was drawn."""
        return self.colours < 8 or self.non_white < 0.005


def pixels_of(png: str | Path) -> Pixels:
    """Decode ``png`` (Pillow, which matplotlib brings) and count its colours."""
    from PIL import Image

    with Image.open(png) as image:
        rgb = image.convert("RGB")
        colours = rgb.getcolors(maxcolors=1 << 24) or []
        total = rgb.width * rgb.height
        white = sum(count for count, colour in colours if min(colour) >= 250)
        return Pixels(rgb.width, rgb.height, len(colours), (total - white) / total if total else 0.0)


# -------------------------------------------------------------------------------------------- DOM


@dataclass
class Row:
    """One ``<tr>`` of a table's body: its classes and its ``data-*`` attributes."""

    classes: list[str]
    data: dict[str, str]

    @property
    def hidden(self) -> bool:
        return "hidden" in self.classes

    def has(self, attr: str, value: str) -> bool:
        """Whether the row's ``data-<attr>`` tokens hold ``value`` (the page script's own rule)."""
        return value in self.data.get(attr, "").split()


@dataclass
class Dom:
    """The parts of a dumped DOM the checks read: section headings, one table's rows, its filter block."""

    headings: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    table_found: bool = False
    filter_found: bool = False
    shown: str | None = None


class _DomReader(HTMLParser):
    def __init__(self, table_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.table_id = table_id
        self.dom = Dom()
        self._heading: list[str] | None = None
        self._table_depth = 0  # > 0 inside the wanted table (nested tables counted)
        self._in_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "h2":
            self._heading = []
        elif tag == "table":
            if self._table_depth:
                self._table_depth += 1
            elif values.get("id") == self.table_id:
                self._table_depth, self.dom.table_found = 1, True
        elif tag == "tbody" and self._table_depth == 1:
            self._in_body = True
        elif tag == "tr" and self._table_depth == 1 and self._in_body:
            data = {k[5:]: v for k, v in values.items() if k.startswith("data-")}
            self.dom.rows.append(Row(values.get("class", "").split(), data))
        if "filters" in values.get("class", "").split() and values.get("data-table") == self.table_id:
            self.dom.filter_found, self.dom.shown = True, values.get("data-shown")

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2" and self._heading is not None:
            self.dom.headings.append(" ".join("".join(self._heading).split()))
            self._heading = None
        elif tag == "tbody" and self._table_depth == 1:
            self._in_body = False
        elif tag == "table" and self._table_depth:
            self._table_depth -= 1

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._heading.append(data)


def read_dom(dom: str, table_id: str = "cases") -> Dom:
    """The headings of ``dom`` and the body rows of its table ``table_id``."""
    reader = _DomReader(table_id)
    reader.feed(dom)
    reader.close()
    return reader.dom


# ------------------------------------------------------------------------------ external references

_ABSOLUTE = re.compile(r"(?:https?|wss?|ftp):/{2}[^\s\"'<>()`]*", re.I)
#: Attributes whose value the browser loads, submits to or resolves as a URL.
_URL_ATTRIBUTES = frozenset(
    {
        "src",
        "href",
        "action",
        "formaction",
        "xlink:href",
        "srcset",
        "poster",
        "data",
        "background",
        "cite",
        "longdesc",
        "manifest",
        "ping",
        "codebase",
        "archive",
        "icon",
        "profile",
        "usemap",
        "lowsrc",
        "dynsrc",
    }
)
_CSS_URL = re.compile(r"url\(\s*[\"']?\s*((?:(?:https?|ftp):)?/{2}[^)\"'\s]*)", re.I)
_CSS_IMPORT = re.compile(r"@import\s+[\"']\s*((?:(?:https?|ftp):)?/{2}[^\"']*)", re.I)
#: A script loader called with a protocol-relative URL (absolute ones are caught by :data:`_ABSOLUTE`).
_JS_RELATIVE_LOADER = re.compile(
    r"\b(?:fetch|open|sendBeacon|EventSource|WebSocket|Worker|import|importScripts)\s*\(\s*"
    r"(?:[\"'`][A-Z]+[\"'`]\s*,\s*)?[\"'`](/{2}[^\"'`]*)"
)


def _css_references(css: str) -> list[str]:
    return [m.group(1) for m in _CSS_URL.finditer(css)] + [m.group(1) for m in _CSS_IMPORT.finditer(css)]


class _ReferenceFinder(HTMLParser):
    """Walks a document and collects every URL the browser could fetch; text is left alone."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._raw: str | None = None  # "script" or "style" while inside one

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if not value:
                continue
            where = f"<{tag} {name}>"
            if name in _URL_ATTRIBUTES or name == "xmlns" or name.startswith("xmlns:"):
                urls = _ABSOLUTE.findall(value) or ([value.strip()] if value.strip().startswith("//") else [])
                self.found += [f"{where} {url}" for url in urls]
            elif name == "style":
                self.found += [f"{where} {url}" for url in _css_references(value)]
            elif name.startswith("on") or (name == "content" and "url=" in value.lower()):
                self.found += [f"{where} {url}" for url in _ABSOLUTE.findall(value)]
        if tag in ("script", "style"):
            self._raw = tag

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self._raw = None

    def handle_endtag(self, tag: str) -> None:
        if tag == self._raw:
            self._raw = None

    def handle_data(self, data: str) -> None:
        if self._raw == "style":
            urls = _css_references(data)
            urls += [url for url in _ABSOLUTE.findall(data) if url not in urls]  # in a comment, a string
            self.found += [f"<style> {url}" for url in urls]
        elif self._raw == "script":
            self.found += [f"<script> {url}" for url in _ABSOLUTE.findall(data)]
            self.found += [f"<script> {m.group(1)}" for m in _JS_RELATIVE_LOADER.finditer(data)]

    def handle_comment(self, data: str) -> None:
        self.found += [f"<!-- --> {url}" for url in _ABSOLUTE.findall(data)]

    def handle_decl(self, decl: str) -> None:
        self.found += [f"<!{decl.split()[0]}> {url}" for url in _ABSOLUTE.findall(decl)]

    def handle_pi(self, data: str) -> None:
        self.found += [f"<?{data.split()[0] if data.split() else ''}> {url}" for url in _ABSOLUTE.findall(data)]


def external_references(html: str) -> list[str]:
    """Every URL in ``html`` that points outside the file, as ``"<tag attr> URL"``; [] for a clean page.

    Counted: URL-valued attributes (``src``, ``href``, ``action``, ``xmlns``, ``xlink:href``,
    ``srcset``, ...) holding an absolute or protocol-relative URL; CSS ``url(...)`` and
    ``@import`` (in ``<style>`` and ``style=""``); any absolute URL in a ``<script>`` (``fetch``,
    ``XMLHttpRequest.open``, ``WebSocket``, ``import()``, or built up otherwise) or an ``on*``
    handler, and protocol-relative URLs passed to a loader; absolute URLs in comments, the doctype
    and processing instructions. Not counted: a URL written in the text of the page (a citation
    the reader can copy), which loads nothing. Links to ``#anchors`` and ``data:`` URLs are local.
    """
    finder = _ReferenceFinder()
    finder.feed(html)
    finder.close()
    return finder.found


# --------------------------------------------------------------------------------- the whole check


@dataclass
class BrowserFacts:
    """What :func:`check_report_in_browser` saw; ``problems`` is empty when every check held."""

    headings: list[str]
    missing_headings: list[str]
    requests: list[str]
    browser_own_requests: list[str]
    pixels: Pixels
    rows: int
    rows_shown_unfiltered: int
    shown_unfiltered: str | None
    matching_rows: int
    rows_shown_filtered: int
    shown_filtered: str | None
    wrongly_hidden: int
    wrongly_shown: int
    external_references: list[str]
    problems: list[str]


def check_report_in_browser(
    path: str | Path,
    expected_headings: Sequence[str],
    filter_table: str = "cases",
    filter_attr: str = "verdict",
    filter_value: str = "masked",
    *,
    screenshot_to: str | Path | None = None,
) -> BrowserFacts:
    """Render the report at ``path`` in headless Chromium and check what the issue asks of it.

    Three browser runs, all through one recording proxy: the DOM as loaded, the DOM with the hash
    ``#<filter_table>:<filter_attr>=<filter_value>``, and a screenshot. Checked: every expected
    ``<h2>`` is in the rendered DOM; the screenshot is not blank; the page made no request; without
    the hash every row of ``filter_table`` shows and the filter block's ``data-shown`` is the row
    count; with it exactly the rows whose ``data-<filter_attr>`` holds ``filter_value`` show, and
    ``data-shown`` is their count; the filter value selects some rows but not all (else filtering
    could not be told from no filtering); the file holds no :func:`external_references`.
    Raises AssertionError naming every failed check; returns the facts when all hold.
    """
    path = Path(path)
    problems: list[str] = []
    with recording_proxy() as proxy, tempfile.TemporaryDirectory(prefix="tooldiag-shot-") as tmp:
        plain = read_dom(dump_dom(path, proxy=proxy), filter_table)
        filtered = read_dom(dump_dom(path, f"{filter_table}:{filter_attr}={filter_value}", proxy=proxy), filter_table)
        png = screenshot(path, Path(screenshot_to) if screenshot_to else Path(tmp) / "page.png", proxy=proxy)
        pixels = pixels_of(png)
        with proxy.lock:
            seen = list(proxy.requests)
    requests = [str(r) for r in page_requests(seen)]
    own = [str(r) for r in seen if r.host == BROWSER_OWN_HOST]
    missing = [h for h in expected_headings if h not in plain.headings]
    matching = [r for r in filtered.rows if r.has(filter_attr, filter_value)]
    wrongly_hidden = sum(r.hidden for r in matching)
    wrongly_shown = sum(not r.hidden for r in filtered.rows if not r.has(filter_attr, filter_value))
    shown_filtered = sum(not r.hidden for r in filtered.rows)
    shown_plain = sum(not r.hidden for r in plain.rows)
    references = external_references(path.read_text(encoding="utf-8"))

    if missing:
        problems.append(f"headings missing from the rendered DOM: {missing} (found {plain.headings})")
    if pixels.blank:
        problems.append(f"the screenshot is blank: {pixels}")
    if requests:
        distinct = sorted(set(requests))
        problems.append(f"the page made {len(requests)} request(s) in 3 browser runs, to {distinct[:10]}")
    if not plain.table_found or not plain.filter_found:
        problems.append(f"no table #{filter_table} with a .filters[data-table={filter_table}] block in the DOM")
    elif not plain.rows:
        problems.append(f"table #{filter_table} has no rows")
    else:
        if shown_plain != len(plain.rows) or plain.shown != str(len(plain.rows)):
            problems.append(f"without a hash {shown_plain} of {len(plain.rows)} rows show, data-shown={plain.shown!r}")
        if not 0 < len(matching) < len(filtered.rows):
            problems.append(
                f"{filter_attr}={filter_value} selects {len(matching)} of {len(filtered.rows)} rows: "
                "the check cannot tell filtering from no filtering"
            )
        if wrongly_hidden or wrongly_shown or filtered.shown != str(len(matching)):
            problems.append(
                f"with #{filter_table}:{filter_attr}={filter_value}: {wrongly_hidden} matching rows hidden, "
                f"{wrongly_shown} other rows shown, data-shown={filtered.shown!r} for {len(matching)} matching"
            )
    if references:
        problems.append(f"external references in the file: {references[:10]}")

    facts = BrowserFacts(
        headings=plain.headings,
        missing_headings=missing,
        requests=requests,
        browser_own_requests=own,
        pixels=pixels,
        rows=len(plain.rows),
        rows_shown_unfiltered=shown_plain,
        shown_unfiltered=plain.shown,
        matching_rows=len(matching),
        rows_shown_filtered=shown_filtered,
        shown_filtered=filtered.shown,
        wrongly_hidden=wrongly_hidden,
        wrongly_shown=wrongly_shown,
        external_references=references,
        problems=problems,
    )
    assert not problems, "browser check failed:\n- " + "\n- ".join(problems)
    return facts
