"""The package page (issue 21): what ``python -m build`` makes is what PyPI will show and pip install.

The sdist and the wheel are built from a copy of the working tree (so the build writes nothing into
the checkout), the wheel from the sdist, as ``python -m build`` does by default: a file missing from
the sdist is then missing from the wheel too. Building needs a package index for the isolated build
environment (setuptools); only when pip cannot reach one is the test skipped.
"""

from __future__ import annotations

import email
import email.policy
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from test_precommit import OFFLINE, REPO_ROOT, copy_sources  # a sibling test module

#: What the distribution is built from (everything else of the checkout stays out of the sdist).
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "fusion_lint", "mcp_fusion")
#: Markdown links and images ``[text](target)``, reference definitions ``[id]: target`` and HTML.
LINK_TARGETS = re.compile(r"\]\(\s*<?([^)\s>]+)|^\s*\[[^\]]+\]:\s*(\S+)|(?:href|src)=[\"']([^\"']+)", re.MULTILINE)


def _long_description(metadata: str) -> str:
    return email.message_from_string(metadata, policy=email.policy.compat32).get_payload()


def relative_links(markdown: str) -> list[str]:
    """The link targets a package page cannot resolve: anything but an absolute http(s) URL (an
    in-page ``#anchor`` too: PyPI does not give headings the ids GitHub does)."""
    targets = [next(group for group in match.groups() if group) for match in LINK_TARGETS.finditer(markdown)]
    return [target for target in targets if not re.match(r"https?://", target)]


def mentions_our_ci(text: str) -> list[str]:
    """Words about this repository's CI or machines, which mean nothing on a package page."""
    return re.findall(r"\.ci/\w*|this (?:project|repository)'s [\w-]+(?: machine)?|our CI", text)


def test_the_link_and_ci_checks_catch_what_they_look_for() -> None:
    page = (
        "[rules](docs/rules.md#fl000) ![logo](img/logo.png) [up](#usage) <a href='CONTRIBUTING.md'>x</a>\n"
        "[ref]: ./docs/editors.md\n[ok](https://github.com/fusion-lint/fusion-lint/blob/main/docs/rules.md#x)\n"
        "Run `bash .ci/run`. Measured on this project's 2-core machine.\n"
    )
    assert relative_links(page) == [
        "docs/rules.md#fl000",
        "img/logo.png",
        "#usage",
        "CONTRIBUTING.md",
        "./docs/editors.md",
    ]
    assert mentions_our_ci(page) == [".ci/run", "this project's 2-core machine"]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("build", reason="building the package needs the dev extra's 'build'")
    source = copy_sources(SOURCES, tmp_path_factory.mktemp("package") / "source")
    out = source.parent / "dist"
    run = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(source)], capture_output=True, text=True, timeout=900
    )
    if run.returncode != 0:
        output = run.stdout + run.stderr
        if OFFLINE.search(output):
            pytest.skip("pip cannot reach a package index for the isolated build environment")
        pytest.fail(f"python -m build failed:\n{output}")
    return out


def _one(dist: Path, pattern: str) -> Path:
    (found,) = dist.glob(pattern)
    return found


@pytest.mark.slow
def test_the_wheel_holds_the_types_marker_and_the_licence(dist: Path) -> None:
    with zipfile.ZipFile(_one(dist, "*.whl")) as wheel:
        names = set(wheel.namelist())
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = wheel.read(metadata_name).decode("utf-8")
        licence = wheel.read(metadata_name.replace("METADATA", "licenses/LICENSE")).decode("utf-8")
    assert {"fusion_lint/py.typed", "mcp_fusion/py.typed"} <= names
    assert "MIT License" in licence and "Copyright (c) 2026 fusion-lint contributors" in licence
    headers = email.message_from_string(metadata, policy=email.policy.compat32)
    # PEP 639: an SPDX expression and the file, not the deprecated free-text table or a classifier.
    assert headers["License-Expression"] == "MIT"
    assert headers.get_all("License-File") == ["LICENSE"]
    classifiers = headers.get_all("Classifier")
    assert not [c for c in classifiers if c.startswith("License ::")]
    assert {f"Programming Language :: Python :: 3.{minor}" for minor in (10, 11, 12, 13)} <= set(classifiers)
    assert "Typing :: Typed" in classifiers and any(c.startswith("Topic ::") for c in classifiers)
    urls = dict(url.split(", ", 1) for url in headers.get_all("Project-URL"))
    assert set(urls) >= {"Homepage", "Repository", "Documentation", "Issues"}
    assert all(url.startswith("https://github.com/fusion-lint/fusion-lint") for url in urls.values())


@pytest.mark.slow
def test_the_sdist_holds_the_licence_and_the_types_markers(dist: Path) -> None:
    with tarfile.open(_one(dist, "*.tar.gz")) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert {"LICENSE", "README.md", "fusion_lint/py.typed", "mcp_fusion/py.typed"} <= names


@pytest.mark.slow
def test_twine_check_strict_passes_on_sdist_and_wheel(dist: Path) -> None:
    pytest.importorskip("twine", reason="twine is in the dev extra")
    artifacts = sorted(str(path) for path in dist.iterdir())
    assert len(artifacts) == 2, artifacts
    run = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *artifacts], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("PASSED") == 2, run.stdout


@pytest.mark.slow
def test_the_package_description_reads_well_on_a_package_page(dist: Path) -> None:
    with zipfile.ZipFile(_one(dist, "*.whl")) as wheel:
        (metadata_name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = wheel.read(metadata_name).decode("utf-8")
    headers = email.message_from_string(metadata, policy=email.policy.compat32)
    assert headers["Description-Content-Type"] == "text/markdown"
    description = _long_description(metadata)
    assert description.strip() == (REPO_ROOT / "README.md").read_text(encoding="utf-8").strip()
    assert relative_links(description) == []
    assert mentions_our_ci(description) == []
    # Still the quickstart: the demo command and the test command, each on its own line.
    lines = description.splitlines()
    assert "python -m pytest" in lines
    assert any(line.endswith("fusion-lint fixtures/example_server") for line in lines)
