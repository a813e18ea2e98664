"""The documentation's code cannot rot: every example of ``docs/`` runs here (issue #17).

Fenced blocks of each page, by their info string:

- ```` ```python ```` -- the page's blocks run in order in one namespace (as a reader would type
  them), from the repository root; a failing ``assert`` or an exception fails the page.
- ```` ```python title="test_x.py" ```` -- a pytest module: written to a temporary directory and run
  with pytest (rootdir = the repository root, so the ``karpy_scenario`` fixture resolves the
  cookbook's relative paths); every ``def test_`` in it must pass.
- ```` ```sh ```` -- in a tutorial every line is a ``karpy ...`` command, run as ``python -m karpy``
  and expected to exit 0; elsewhere (the set-up commands of ``index.md``) shell blocks are not run.

Any other fence language fails :func:`test_every_fence_is_known`, so an example cannot slip past
by being spelled ``py`` or ``python3``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TUTORIALS = DOCS / "tutorials"
PAGES = sorted(DOCS.rglob("*.md"))

FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
TITLE = re.compile(r'^python\s+title="(?P<title>test_\w+\.py)"$')
#: fence languages that are prose, not examples (none yet besides the shell set-up commands)
KNOWN = {"python", "sh", "yaml", "text"}
#: inner pytest runs: no cache dir; karpy.testing is already imported by this process, so pytest
#: cannot assertion-rewrite it again and says so -- harmless here
INNER_ARGS = ("-p", "no:cacheprovider", "-W", "ignore::pytest.PytestAssertRewriteWarning")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int           # 1-based line of the block's first body line in the page
    info: str
    body: str

    @property
    def language(self) -> str:
        return self.info.split()[0] if self.info.strip() else ""

    @property
    def title(self) -> str | None:
        match = TITLE.match(self.info.strip())
        return match.group("title") if match else None

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    return [Block(page, text.count("\n", 0, m.start("body")) + 1, m.group("info").strip(), m.group("body"))
            for m in FENCE.finditer(text)]


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(DOCS)) for p in paths]


def test_the_tutorials_exist_and_have_examples() -> None:
    names = {p.name for p in TUTORIALS.glob("*.md")}
    assert {"design-testing.md", "generation-preference.md", "embedding.md"} <= names
    for page in TUTORIALS.glob("*.md"):
        assert any(b.language == "python" for b in blocks(page)), f"{page.name} has no Python example"


def test_every_fence_is_known() -> None:
    unknown = [f"{b}: ```{b.info}" for page in PAGES for b in blocks(page) if b.language not in KNOWN]
    assert not unknown, "fences this test would not run: " + ", ".join(unknown)
    untitled = [str(b) for page in PAGES for b in blocks(page)
                if b.language == "python" and b.info != "python" and b.title is None]
    assert not untitled, f"python fences with an info string that is not title=\"test_*.py\": {untitled}"


def test_every_public_root_has_a_reference_page() -> None:
    spec = importlib.util.spec_from_file_location("_public_api", ROOT / "tests" / "test_public_api.py")
    assert spec is not None and spec.loader is not None
    public_api = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(public_api)
    documented = {line[4:].strip() for page in (DOCS / "reference").glob("*.md")
                  for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("::: ")}
    assert set(public_api.PUBLIC) <= documented
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in (DOCS / "reference").glob("*.md"):
        assert f"reference/{page.name}" in nav, f"{page.name} is not in mkdocs.yml's nav"


@pytest.mark.parametrize("page", [p for p in PAGES if any(b.info == "python" for b in blocks(p))],
                         ids=_ids([p for p in PAGES if any(b.info == "python" for b in blocks(p))]))
def test_python_examples_run(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {"__name__": f"docs.{page.stem}"}
    for block in blocks(page):
        if block.info != "python":
            continue
        # pad with newlines so a traceback's line numbers are the page's
        code = compile("\n" * (block.line - 1) + block.body, str(block.page), "exec")
        exec(code, namespace)  # noqa: S102 -- running the documentation's own examples is the point


PYTEST_BLOCKS = [b for p in PAGES for b in blocks(p) if b.title is not None]


def test_pytest_examples_are_found() -> None:
    assert {b.title for b in PYTEST_BLOCKS} >= {"test_one_nodepool.py", "test_weighted_nodepools.py",
                                                "test_nodeoverlay.py"}


@pytest.mark.parametrize("block", PYTEST_BLOCKS, ids=[f"{b.page.stem}/{b.title}" for b in PYTEST_BLOCKS])
def test_pytest_examples_pass(block: Block, pytester: pytest.Pytester) -> None:
    assert block.title is not None
    tests = len(re.findall(r"^def test_", block.body, re.MULTILINE))
    assert tests, f"{block}: no test functions"
    path = pytester.path / block.title
    path.write_text(block.body, encoding="utf-8")
    result = pytester.runpytest("--rootdir", str(ROOT), *INNER_ARGS, str(path))
    result.assert_outcomes(passed=tests)


SHELL_BLOCKS = [b for p in sorted(TUTORIALS.glob("*.md")) for b in blocks(p) if b.language == "sh"]


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=[str(b) for b in SHELL_BLOCKS])
def test_shell_examples_run(block: Block) -> None:
    commands = [line for line in block.body.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert commands, f"{block}: empty shell block"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    for command in commands:
        argv = shlex.split(command, comments=True)
        assert argv[0] == "karpy", f"{block}: only karpy commands run here, not {command!r}"
        done = subprocess.run([sys.executable, "-m", "karpy", *argv[1:]], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{block}: {command!r} exited {done.returncode}\n{done.stderr}"
