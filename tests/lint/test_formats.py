"""The CI output formats (DESIGN §7): SARIF 2.1.0 validated against the official schema, GitHub
workflow annotations parsed back, JUnit XML parsed; and the flags that shape every format."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest

from fusion_lint.base.diagnostics import Diagnostic, Edit, Fix, Span
from fusion_lint.check.report import Report
from fusion_lint.config.settings import LoadedConfig, Settings
from fusion_lint.output.github import escape_data, escape_property, github_annotation
from fusion_lint.output.junit import junit
from fusion_lint.output.sarif import sarif
from fusion_lint.rules import all_rules

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json").read_text())

CONTRACT_TOOL = """\
from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, McpError, tool


@tool("lookup", errors=[ErrorContract(reason="missing", code=JsonRpcErrorCode.NOT_FOUND,
                                      when="No such key", recovery="Call lookup again with an existing key.")])
def lookup(key: str, ctx: Context) -> str:
    if not key:
        ctx.fail("missing")
    if key == "\u00e9t\u00e9":
        raise ctx.fail("50%_off, really: no")
    return key
"""
CLEAN_TOOL = CONTRACT_TOOL.replace('        ctx.fail("missing")', '        raise ctx.fail("missing")').replace(
    '"50%_off, really: no"', '"missing"'
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "tools.py").write_text(CONTRACT_TOOL)
    (tmp_path / "app" / "clean.py").write_text(CLEAN_TOOL.replace('"lookup"', '"lookup_clean"'))
    return tmp_path


def _lint(run_cli, *args: str):
    return run_cli("check", "--no-cache", *args)


def _json(run_cli, *args: str) -> list[dict]:
    return json.loads(_lint(run_cli, "--output-format", "json", *args).stdout)


# ----- SARIF ------------------------------------------------------------------------------------


def test_sarif_is_valid_and_matches_the_findings(project: Path, run_cli) -> None:
    outcome = _lint(run_cli, "--output-format", "sarif")
    assert outcome.exit_code == 1
    document = json.loads(outcome.stdout)
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    assert document["version"] == "2.1.0" and document["$schema"].endswith("sarif-schema-2.1.0.json")
    (run,) = document["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "fusion-lint" and driver["version"] and driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    # The rules that ran: the default set (FL207 is opt-in, so it is not listed).
    expected = sorted(rule.code for rule in all_rules() if rule.default_enabled)
    assert [rule["id"] for rule in rules] == expected
    for rule in rules:
        assert rule["name"] and rule["shortDescription"]["text"] and rule["helpUri"].startswith("https://")
        assert rule["defaultConfiguration"]["level"] in ("error", "warning")

    expected_findings = _json(run_cli)
    results = run["results"]
    assert len(results) == len(expected_findings) == 2
    for result, finding in zip(results, expected_findings):
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == finding["code"]
        assert result["level"] == finding["severity"]
        assert result["message"]["text"] == finding["message"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"] == {"uri": "app/tools.py", "uriBaseId": "%SRCROOT%"}
        assert location["region"] == {
            "startLine": finding["location"]["row"],
            "startColumn": finding["location"]["column"],
            "endLine": finding["end_location"]["row"],
            "endColumn": finding["end_location"]["column"],
        }
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.as_uri() + "/"
    fixed = [result for result in results if result["ruleId"] == "FL204"][0]
    replacement = fixed["fixes"][0]["artifactChanges"][0]["replacements"][0]
    offset = replacement["deletedRegion"]["charOffset"]
    assert (
        CONTRACT_TOOL[:offset].endswith("    if not key:\n        ")
        and replacement["insertedContent"]["text"] == "raise "
    )


def test_sarif_lists_only_the_selected_rules(project: Path, run_cli) -> None:
    document = json.loads(_lint(run_cli, "--output-format", "sarif", "--select", "FL204").stdout)
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    (run,) = document["runs"]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == ["FL204"]
    assert [(result["ruleId"], result["ruleIndex"]) for result in run["results"]] == [("FL204", 0)]


def test_sarif_of_a_clean_run_is_valid(project: Path, run_cli) -> None:
    outcome = _lint(run_cli, "--output-format", "sarif", "app/clean.py")
    assert outcome.exit_code == 0
    document = json.loads(outcome.stdout)
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    assert document["runs"][0]["results"] == []


def test_sarif_flags(project: Path, run_cli) -> None:
    outcome = _lint(run_cli, "--output-format", "sarif", "--show-source", "--statistics", "--quiet", "--exit-zero")
    assert outcome.exit_code == 0
    document = json.loads(outcome.stdout)  # still exactly one JSON document
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    (run,) = document["runs"]
    snippets = [r["locations"][0]["physicalLocation"]["region"]["snippet"]["text"] for r in run["results"]]
    assert snippets == ['        ctx.fail("missing")', '        raise ctx.fail("50%_off, really: no")']
    assert run["properties"]["resultCountsByRule"] == {"FL203": 1, "FL204": 1}


def _fingerprints(run_cli) -> dict[tuple[str, int], str]:
    document = json.loads(_lint(run_cli, "--output-format", "sarif").stdout)
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    return {
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]): r["partialFingerprints"][
            "fusionLint/v1"
        ]
        for r in document["runs"][0]["results"]
    }


def test_sarif_fingerprints_survive_an_unrelated_line_above(project: Path, run_cli) -> None:
    before = _fingerprints(run_cli)
    assert sorted(before) == [("FL203", 10), ("FL204", 8)]
    tools = project / "app" / "tools.py"
    tools.write_text('"""A docstring added on top."""\n\n' + CONTRACT_TOOL)
    after = _fingerprints(run_cli)
    assert sorted(after) == [("FL203", 12), ("FL204", 10)]  # the lines moved ...
    assert (
        after[("FL204", 10)] == before[("FL204", 8)] and after[("FL203", 12)] == before[("FL203", 10)]
    )  # ... not them
    # A second identical finding gets a fingerprint of its own; editing the finding's line changes it.
    tools.write_text(CONTRACT_TOOL.replace('        ctx.fail("missing")\n', '        ctx.fail("missing")\n' * 2))
    twice = _fingerprints(run_cli)
    assert twice[("FL204", 8)] == before[("FL204", 8)] and twice[("FL204", 9)] not in before.values()
    tools.write_text(CONTRACT_TOOL.replace('ctx.fail("missing")', 'ctx.fail( "missing")'))
    assert _fingerprints(run_cli)[("FL204", 8)] != before[("FL204", 8)]


def test_sarif_rules_carry_their_page_as_markdown(project: Path, run_cli) -> None:
    document = json.loads(_lint(run_cli, "--output-format", "sarif").stdout)
    rules = {rule["id"]: rule for rule in document["runs"][0]["tool"]["driver"]["rules"]}
    markdown = rules["FL204"]["help"]["markdown"]
    assert "**What it does.**" in markdown and "```python" in markdown and "**Fix safety.**" in markdown
    assert rules["FL204"]["help"]["text"].startswith(rules["FL204"]["shortDescription"]["text"])


def test_sarif_uris_are_percent_encoded(tmp_path: Path, run_cli) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "my tools").mkdir()
    (tmp_path / "my tools" / "caf\u00e9.py").write_text(CONTRACT_TOOL)
    document = json.loads(_lint(run_cli, "--output-format", "sarif").stdout)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in document["runs"][0]["results"]}
    assert uris == {"my%20tools/caf%C3%A9.py"}


# ----- GitHub annotations -----------------------------------------------------------------------

ANNOTATION = re.compile(r"^::(?P<kind>error|warning) (?P<properties>[^:]*)::(?P<message>.*)$")


def _unescape(value: str) -> str:
    return value.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def _parse_annotation(line: str) -> tuple[str, dict[str, str], str]:
    match = ANNOTATION.match(line)
    assert match, line
    properties = dict(pair.split("=", 1) for pair in match["properties"].split(","))
    return match["kind"], {key: _unescape(value) for key, value in properties.items()}, _unescape(match["message"])


def test_github_annotations_carry_the_findings(project: Path, run_cli) -> None:
    outcome = _lint(run_cli, "--output-format", "github")
    assert outcome.exit_code == 1
    lines = outcome.stdout.splitlines()
    annotations = [_parse_annotation(line) for line in lines if line.startswith("::")]
    findings = _json(run_cli)
    assert len(annotations) == len(findings) == 2
    for (kind, properties, message), finding in zip(annotations, findings):
        assert kind == finding["severity"]
        assert properties == {
            "file": "app/tools.py",
            "line": str(finding["location"]["row"]),
            "col": str(finding["location"]["column"]),
            "endLine": str(finding["end_location"]["row"]),
            "endColumn": str(finding["end_location"]["column"]),
            "title": f"{finding['code']} {finding['name']}",
        }
        assert message == finding["message"]
    # The reason with '%', ',' and ':' went through the message escaping intact.
    assert any("50%_off, really: no" in message for _, _, message in annotations)
    # Plain log lines after the annotations: the runner shows them, it does not parse them.
    assert lines[-2:] == ["Found 2 errors, 0 warnings in 1 file (2 tools; 3 files checked).", "1 fixable with --fix."]


def test_github_quiet_prints_annotations_only(project: Path, run_cli) -> None:
    lines = _lint(run_cli, "--output-format", "github", "--quiet").stdout.splitlines()
    assert lines and all(line.startswith("::") for line in lines)
    assert _lint(run_cli, "--output-format", "github", "--quiet", "app/clean.py").stdout == ""


def test_github_statistics_and_exit_zero(project: Path, run_cli) -> None:
    outcome = _lint(run_cli, "--output-format", "github", "--statistics", "--exit-zero", "--quiet")
    assert outcome.exit_code == 0
    plain = [line for line in outcome.stdout.splitlines() if not line.startswith("::")]
    assert plain == ["    1  FL203  [ ] error-contract-reason-undeclared", "    1  FL204  [*] fail-not-raised"]


def test_github_escaping_follows_the_workflow_command_rules() -> None:
    assert escape_data("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext: a, b"
    assert escape_property("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext%3A a%2C b"
    span = Span(3, 4, 5, 6)
    diagnostic = Diagnostic("FL204", "fail-not-raised", "warning", "line one\nline: two, 5%", "odd,dir:x/f.py", span)
    line = github_annotation(diagnostic)
    assert line == (
        "::warning file=odd%2Cdir%3Ax/f.py,line=3,col=5,endLine=5,endColumn=7,"
        "title=FL204 fail-not-raised::line one%0Aline: two, 5%25"
    )
    kind, properties, message = _parse_annotation(line)
    assert (kind, properties["file"], message) == ("warning", "odd,dir:x/f.py", "line one\nline: two, 5%")


# ----- JUnit ------------------------------------------------------------------------------------


def test_junit_has_one_testcase_per_checked_file(project: Path, run_cli) -> None:
    outcome = _lint(run_cli, "--output-format", "junit")
    assert outcome.exit_code == 1
    root = ElementTree.fromstring(outcome.stdout.encode("utf-8"))
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert sorted(cases) == ["app/__init__.py", "app/clean.py", "app/tools.py"]
    assert (suite.get("tests"), suite.get("failures"), root.get("failures")) == ("3", "1", "1")
    assert cases["app/clean.py"].find("failure") is None and cases["app/__init__.py"].find("failure") is None
    failure = cases["app/tools.py"].find("failure")
    assert failure is not None and failure.get("message") == "2 findings (2 errors)"
    listed = failure.text.splitlines()
    assert [line.split(": ")[1].split()[0] for line in listed] == ["FL204", "FL203"]
    assert listed[0].startswith("app/tools.py:8:9: FL204 [fail-not-raised] tool 'lookup'")
    assert cases["app/tools.py"].get("classname") == "app.tools"


def test_junit_show_source_and_statistics(project: Path, run_cli) -> None:
    outcome = _lint(run_cli, "--output-format", "junit", "--show-source", "--statistics", "--quiet")
    root = ElementTree.fromstring(outcome.stdout.encode("utf-8"))
    suite = root.find("testsuite")
    properties = {p.get("name"): p.get("value") for p in suite.find("properties").findall("property")}
    assert properties == {"FL203 error-contract-reason-undeclared": "1", "FL204 fail-not-raised": "1"}
    failure = suite.find("testcase[@name='app/tools.py']/failure")
    assert '  8 |         ctx.fail("missing")' in failure.text.splitlines()


def test_junit_stays_well_formed_with_characters_xml_cannot_hold() -> None:
    span = Span(1, 0, 1, 1)
    message = "tool 'x': reason 'a\x00b' & <c> \"d\" \x1b[0m"
    report = Report(
        [Diagnostic("FL203", "error-contract-reason-undeclared", "error", message, "/abs/x.py", span)],
        1,
        LoadedConfig(settings=Settings(), path=None),
        {},
        ["/abs/x.py"],
        frozenset({"FL203"}),
    )
    document = ElementTree.fromstring(junit(report).encode("utf-8"))
    text = document.find("testsuite/testcase/failure").text
    assert "reason 'a\ufffdb' & <c> \"d\" \ufffd[0m" in text


def test_sarif_fix_offsets_and_unicode_survive(tmp_path: Path) -> None:
    """A fix edit is reported as a code-point replacement; a non-ASCII message stays text."""
    span = Span(2, 4, 2, 9, 10, 15, 2)
    fix = Fix("Raise the error", [Edit(10, 10, "raise ")])
    diagnostic = Diagnostic(
        "FL204", "fail-not-raised", "error", "tool 'caf\u00e9': \U0001f50e", str(tmp_path / "x.py"), span, fix
    )
    report = Report(
        [diagnostic], 1, LoadedConfig(settings=Settings(), path=None), {}, [diagnostic.path], frozenset({"FL204"})
    )
    document = json.loads(sarif(report))
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    (result,) = document["runs"][0]["results"]
    assert result["message"]["text"] == "tool 'caf\u00e9': \U0001f50e"
    assert result["fixes"][0]["artifactChanges"][0]["replacements"] == [
        {"deletedRegion": {"charOffset": 10, "charLength": 0}, "insertedContent": {"text": "raise "}}
    ]
    assert document["runs"][0]["columnKind"] == "unicodeCodePoints"


# ----- the text format's flags ------------------------------------------------------------------


def test_text_quiet_statistics_of_a_clean_run_prints_nothing(project: Path, run_cli) -> None:
    outcome = _lint(run_cli, "--quiet", "--statistics", "app/clean.py")
    assert (outcome.exit_code, outcome.stdout) == (0, "")


def test_text_statistics_then_summary(project: Path, run_cli) -> None:
    lines = _lint(run_cli, "--statistics").stdout.splitlines()
    assert lines[-5:] == [
        "    1  FL203  [ ] error-contract-reason-undeclared",
        "    1  FL204  [*] fail-not-raised",  # ruff's mark: --fix can fix it
        "",
        "Found 2 errors, 0 warnings in 1 file (2 tools; 3 files checked).",
        "1 fixable with --fix.",
    ]
    clean = _lint(run_cli, "--statistics", "app/clean.py").stdout
    assert clean == "All checks passed (1 tool; 1 file checked).\n"


def test_exit_zero_with_every_format(project: Path, run_cli) -> None:
    for output_format in ("text", "json", "sarif", "github", "junit"):
        outcome = _lint(run_cli, "--output-format", output_format, "--exit-zero")
        assert outcome.exit_code == 0, output_format
        assert "FL204" in outcome.stdout, output_format
