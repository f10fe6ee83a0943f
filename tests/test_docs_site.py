"""The documentation site (mkdocs.yml, docs/): it builds with ``mkdocs build --strict``, every
public name of ``rlkit.__all__`` has an API entry with its docstring and an example, a missing
docstring or a broken link fails the build, and the built site renders in headless Chromium
(search box, search results, the API page, a notebook)."""

from __future__ import annotations

import doctest
import functools
import html
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import rlkit

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
# where the Chromium test also saves its screenshots (for a person to look at), when set
SCREENSHOTS = os.environ.get("RLKIT_DOCS_SCREENSHOTS")


def _gen_api():
    path = ROOT / "docs" / "gen_api.py"
    spec = importlib.util.spec_from_file_location("rlkit_docs_gen_api", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _build(root: Path, site_dir: Path) -> subprocess.CompletedProcess:
    if importlib.util.find_spec("mkdocs") is None:
        pytest.fail("mkdocs is not installed: pip install -e '.[docs]' (the test extra has it)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site_dir = tmp_path_factory.mktemp("site")
    start = time.perf_counter()
    result = _build(ROOT, site_dir)
    seconds = time.perf_counter() - start
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]
    print(f"mkdocs build --strict: {seconds:.1f} s")
    return site_dir


def _text(page: Path) -> str:
    """A built page's text: tags dropped, entities decoded, whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.read_text())).split())


# ---- the docstrings: every public name has one, with an example ----


def test_every_public_name_has_a_docstring_with_an_example():
    gen_api = _gen_api()
    names = gen_api.public_names()
    assert sorted(n.name for n in names if "." not in n.name) == sorted(rlkit.__all__)
    assert len(rlkit.__all__) > 100
    members = {n.name for n in names if n.name.startswith("optimizers.")}  # public subpackages
    assert members == {f"optimizers.{name}" for name in rlkit.optimizers.__all__}
    assert gen_api.check(names) == []


def test_the_example_check_sees_a_missing_example():
    gen_api = _gen_api()
    entry = gen_api.PublicName("X", "rlkit.x.X", "core", "Does x.\n\nArgs:\n    a: b.", "class")
    assert gen_api.check([entry]) == [
        "rk.X (rlkit.x.X) has no example (an Example section or >>> line)"
    ]
    empty = gen_api.PublicName("Y", "rlkit.y.Y", "core", "", "class")
    assert gen_api.check([empty]) == ["rk.Y (rlkit.y.Y) has no docstring"]


def test_a_name_of_a_new_package_gets_a_page_of_its_own():
    gen_api = _gen_api()
    # a package whose name sorts after every existing one
    saved = gen_api.PublicName(
        "save", "rlkit.widgets.artifact.save", "widgets", "Save.", "function"
    )
    names = [*gen_api.public_names(), saved]
    assert gen_api.groups(names)[-1] == "widgets"
    assert gen_api.groups(names)[:2] == ["core", "optimizers"]
    page = gen_api.page("widgets", [saved])
    assert page.startswith("# rlkit.widgets\n")
    assert "[](){#rlkit.save}\n\n::: rlkit.widgets.artifact.save\n" in page
    assert "- [`rk.save`][rlkit.save]" in gen_api.index(names)


def test_the_examples_of_attribute_docstrings_run():
    """Constants (rk.POST_ACT_STAGE, rk.__version__) document themselves with the string under
    their assignment, which --doctest-modules does not collect: run those examples here."""
    attributes = [n for n in _gen_api().public_names() if n.kind == "attribute" and not n.built]
    assert {"POST_ACT_STAGE", "__version__"} <= {n.name for n in attributes}
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(verbose=False)
    for entry in attributes:
        test = parser.get_doctest(entry.docstring, {}, entry.path, entry.path, 0)
        assert test.examples, entry.name
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


# ---- the build ----


def test_the_site_builds_strictly_with_every_page(site):
    assert (site / "index.html").is_file()
    for page in ["getting-started", "architecture", "concepts/dispatch", "how-to/write-a-learner",
                 "how-to/write-a-hook", "how-to/write-a-recipe", "how-to/resume-a-run",
                 "how-to/vector-envs", "how-to/trained-policies", "api"]:
        assert (site / page / "index.html").is_file(), page
    for notebook in NOTEBOOKS:  # rendered, not executed
        assert "import rlkit as rk" in _text(site / "notebooks" / notebook / "index.html"), notebook
    # getting started is the README's quick start, included, not copied
    text = _text(site / "getting-started" / "index.html")
    assert "pip install -e . && rlkit run TabularQLearning_CliffWalking --seed 0" in text
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in text


def test_every_public_name_has_an_api_entry_with_its_docstring(site):
    pages = {page: page.read_text() for page in (site / "api").glob("*/index.html")}
    texts = {page: re.sub(r"\W", "", _text(page)) for page in pages}  # letters and digits
    for entry in _gen_api().public_names():
        anchor = entry.path if "." in entry.name else f"rlkit.{entry.name}"
        found = [page for page, source in pages.items() if f'id="{anchor}"' in source]
        assert found, f"rk.{entry.name} has no entry in the API reference"
        first = re.sub(r"[`*]|:\w+:", "", entry.docstring.split("\n\n")[0])
        words = " ".join(first.split()[:6])
        assert re.sub(r"\W", "", words) in texts[found[0]], (entry.name, words)
        if entry.name in ("PPO", "run", "TDLearner"):  # examples render as code
            assert "&gt;&gt;&gt;" in pages[found[0]]


def test_a_missing_docstring_or_a_broken_link_fails_the_build(tmp_path):
    for name in ["mkdocs.yml", "README.md"]:
        shutil.copy(ROOT / name, tmp_path / name)
    for name in ["docs", "rlkit", "experiments", "notebooks"]:
        shutil.copytree(ROOT / name, tmp_path / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    hooks = tmp_path / "rlkit" / "hooks" / "basic.py"
    source = hooks.read_text()
    start = source.index('    """A hook that does nothing')
    end = source.index('"""', start + 8) + 3
    hooks.write_text(source[:start] + "    pass" + source[end:])
    with open(tmp_path / "docs" / "index.md", "a") as page:
        page.write("\nSee [the missing page](no-such-page.md).\n")
    result = _build(tmp_path, tmp_path / "site")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "rk.EmptyHook (rlkit.hooks.basic.EmptyHook) has no docstring" in output
    assert "no-such-page.md" in output
    assert "Aborted with" in output and "in strict mode" in output


# ---- the site in a browser ----


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def served(site):
    """The built site over http on 127.0.0.1 (a free port): Material's search needs http."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@pytest.mark.skipif(_chromium() is None,
                    reason="needs Chromium (Debian: apt-get install chromium; .ci/run installs it)")
def test_the_site_renders_in_headless_chromium(served, tmp_path):
    from docs_browser import Browser

    screens = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path
    screens.mkdir(parents=True, exist_ok=True)
    browser = Browser(_chromium(), timeout=120)
    try:
        # the index page and its search box; a query finds the API entry of rk.PPO
        tab = browser.open(f"{served}/")
        assert browser.wait_for(tab, "!!document.querySelector('input.md-search__input')")
        width = browser.wait_for(tab, """(() => {
            const width = document.querySelector('.md-search__form').getBoundingClientRect().width;
            return document.readyState === 'complete' && width > 100 ? width : 0; })()""")
        assert width, "the search box is not shown in the header"
        browser.screenshot(tab, screens / "index.png")
        browser.evaluate(tab, "document.querySelector('input.md-search__input').focus()")
        assert browser.wait_for(
            tab, "document.querySelector('.md-search-result__meta').textContent"
                 " === 'Type to start searching'"), "the search index did not load"
        browser.evaluate(tab, """(() => {
            const box = document.querySelector('input.md-search__input');
            box.value = 'PPO';
            box.dispatchEvent(new KeyboardEvent('keyup', {bubbles: true, key: 'O'}));
        })()""")
        links = browser.wait_for(tab, """(() => {
            const items = document.querySelectorAll('.md-search-result__item a');
            return items.length ? Array.from(items, a => a.href) : null;
        })()""")
        assert links and any("/api/learners/" in link for link in links), links
        browser.screenshot(tab, screens / "search.png")

        # the API page: rk.PPO's entry, its docstring and its example rendered
        tab = browser.open(f"{served}/api/learners/")
        entry = browser.wait_for(tab, """(() => {
            const anchor = document.getElementById('rlkit.PPO');
            const heading = document.getElementById('rlkit.learners.policy_gradient.ppo.PPO');
            if (!anchor || !heading) return null;
            const body = heading.closest('.doc-object');
            return {heading: heading.textContent.trim(),
                    entries: document.querySelectorAll('.doc-heading').length,
                    text: body.textContent, code: body.querySelectorAll('pre code').length};
        })()""")
        assert entry, "no rendered entry for rk.PPO on the API page"
        assert entry["heading"].startswith("PPO")
        assert "Schulman et al. 2017" in entry["text"] and entry["code"] >= 1
        assert entry["entries"] >= 20
        browser.screenshot(tab, screens / "api.png")

        # a notebook, rendered from its .ipynb without being executed
        tab = browser.open(f"{served}/notebooks/05_td_control/")
        cells = browser.wait_for(
            tab, "document.querySelectorAll('.jp-Cell, .jp-CodeCell, .cell').length")
        assert cells and cells > 3
        browser.screenshot(tab, screens / "notebook.png")
    finally:
        browser.close()
    for name in ["index", "search", "api", "notebook"]:
        assert (screens / f"{name}.png").stat().st_size > 10_000, name
