"""The CI formats of round two (DESIGN §13.5), each read back the way its consumer reads it:
GitLab Code Quality and reviewdog's rdjson validated against schemas written from their docs,
Azure's logging commands parsed by the agent's own rules, pylint's lines by Jenkins' parser; and
``concise``/``full``/``json-lines``, SARIF from a subfolder of a repository.

The project is a repository (``.git`` at its top) whose server lives in ``svc/``: line 7 has an
FL204 after non-ASCII text (``été``: code points and UTF-8 bytes differ), line 9 an FL203 whose
message holds ``%``, ``;`` and ``]`` (the characters Azure's commands escape).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

SERVER = """\
from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, tool


@tool("lookup", errors=[ErrorContract(reason="missing", code=JsonRpcErrorCode.NOT_FOUND,
                                      when="No such key", recovery="Call lookup again with an existing key.")])
def lookup(key: str, ctx: Context) -> str:
    if key == "\u00e9t\u00e9": ctx.fail("missing")
    if key == "x":
        raise ctx.fail("50%_off; really] no")
    return key
"""
FL204_LINE = '    if key == "\u00e9t\u00e9": ctx.fail("missing")'

# GitLab's Code Quality report (docs.gitlab.com/ci/testing/code_quality, "Code Quality report
# format"): a JSON array of objects; each needs description, check_name, fingerprint (a unique
# string), severity (one of info, minor, major, critical, blocker) and location.path (relative to
# the repository) with location.lines.begin (or location.positions.begin.line).
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path"],
                "properties": {
                    "path": {"type": "string", "pattern": r"^[^/]"},  # relative, never absolute
                    "lines": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {"begin": {"type": "integer", "minimum": 1}, "end": {"type": "integer"}},
                    },
                },
                "anyOf": [
                    {"required": ["lines"]},
                    {"required": ["positions"], "properties": {"positions": {"required": ["begin"]}}},
                ],
            },
        },
    },
}

# reviewdog's DiagnosticResult (proto/rdf/jsonschema/DiagnosticResult.jsonschema, its $refs to
# Position, Range and Source written in place), with the proto's severity enum and the fields the
# proto calls required (a message; a range's start) made required.
_POSITION = {
    "type": "object",
    "properties": {"line": {"type": "integer", "minimum": 1}, "column": {"type": "integer", "minimum": 1}},
}
_RANGE = {"type": "object", "required": ["start"], "properties": {"start": _POSITION, "end": _POSITION}}
_SOURCE = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string"}, "url": {"type": "string"}},
}
_SEVERITY = {"oneOf": [{"enum": ["UNKNOWN_SEVERITY", "ERROR", "WARNING", "INFO"]}, {"type": "integer"}]}
RDJSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "type": "object",
    "properties": {
        "source": _SOURCE,
        "severity": _SEVERITY,
        "diagnostics": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["message", "location"],
                "properties": {
                    "message": {"type": "string"},
                    "location": {
                        "type": "object",
                        "required": ["path"],
                        "properties": {"path": {"type": "string"}, "range": _RANGE},
                    },
                    "severity": _SEVERITY,
                    "source": _SOURCE,
                    "code": {
                        "type": "object",
                        "required": ["value"],
                        "properties": {"value": {"type": "string"}, "url": {"type": "string"}},
                    },
                    "suggestions": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["range", "text"],
                            "properties": {"range": _RANGE, "text": {"type": "string"}},
                        },
                    },
                },
            },
        },
    },
}

# Jenkins' warnings plugin, PyLintParser: PYLINT_ERROR_PATTERN (path, line, category, message).
JENKINS_PYLINT = re.compile(r"(.*):(\d+): \[(\D\d*).*\] (.*)")


def azure_parse(line: str) -> tuple[str, dict[str, str], str] | None:
    """The agent's ``Command.TryParse`` and ``Unescape``: ``##vso[`` anywhere in the line, the
    command info up to the first ``]``, ``area.event`` then ``key=value`` pairs split on ``;`` (and
    the first ``=``), the rest of the line the data; ``%3B %0D %0A %5D`` and (with the agent's
    percent decoding) ``%AZP25`` decoded."""

    def unescape(value: str) -> str:
        for token, replacement in ((";", "%3B"), ("\r", "%0D"), ("\n", "%0A"), ("]", "%5D"), ("%", "%AZP25")):
            value = value.replace(replacement, token)
        return value

    prefix = line.find("##vso[")
    if prefix < 0:
        return None
    bracket = line.find("]", prefix)
    if bracket < 0:
        return None
    info = line[prefix + len("##vso[") : bracket]
    name, _, rest = info.partition(" ")
    if len([part for part in name.split(".") if part]) != 2:
        return None
    properties = {}
    for pair in filter(None, rest.split(";")):
        key, equals, value = pair.partition("=")
        if equals and key and value:
            properties[key] = unescape(value)
    return name, properties, unescape(line[bracket + 1 :])


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # what marks the repository root (a worktree has a .git file)
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "svc" / "server.py").write_text(SERVER, encoding="utf-8")
    return tmp_path


def _lint(run_cli, monkeypatch: pytest.MonkeyPatch, where: Path, output_format: str, *args: str):
    monkeypatch.chdir(where)
    outcome = run_cli("check", "--no-cache", "--output-format", output_format, *args)
    assert outcome.exit_code == 1, outcome.stderr
    return outcome.stdout


def _json_findings(run_cli, monkeypatch, where: Path) -> list[dict]:
    return json.loads(_lint(run_cli, monkeypatch, where, "json"))


def test_gitlab_is_a_code_quality_report_named_from_the_repository_root(repository: Path, run_cli, monkeypatch):
    from_svc = json.loads(_lint(run_cli, monkeypatch, repository / "svc", "gitlab"))
    from_top = json.loads(_lint(run_cli, monkeypatch, repository, "gitlab", "svc"))

    jsonschema.Draft4Validator(GITLAB_SCHEMA).validate(from_svc)
    assert from_svc == from_top  # the same report whatever folder the run started in
    assert [(i["check_name"], i["location"]["path"], i["location"]["lines"]["begin"]) for i in from_svc] == [
        ("FL204", "svc/server.py", 7),
        ("FL203", "svc/server.py", 9),
    ]
    assert len({issue["fingerprint"] for issue in from_svc}) == len(from_svc)  # GitLab keeps one per fingerprint
    assert all(issue["severity"] == "major" for issue in from_svc)  # errors
    assert from_svc[0]["description"].startswith("FL204 [fail-not-raised] tool 'lookup'")


def test_gitlab_fingerprints_survive_an_unrelated_edit_above(repository: Path, run_cli, monkeypatch):
    before = [i["fingerprint"] for i in json.loads(_lint(run_cli, monkeypatch, repository, "gitlab", "svc"))]
    server = repository / "svc" / "server.py"
    server.write_text("# a comment above everything\n\n" + SERVER, encoding="utf-8")
    after = json.loads(_lint(run_cli, monkeypatch, repository, "gitlab", "svc"))
    assert [i["location"]["lines"]["begin"] for i in after] == [9, 11]
    assert [i["fingerprint"] for i in after] == before


def test_rdjson_is_a_reviewdog_diagnostic_result_with_byte_columns(repository: Path, run_cli, monkeypatch):
    document = json.loads(_lint(run_cli, monkeypatch, repository / "svc", "rdjson"))
    jsonschema.Draft4Validator(RDJSON_SCHEMA).validate(document)
    assert document["source"]["name"] == "fusion-lint" and document["severity"] == "ERROR"
    fl204, fl203 = document["diagnostics"]
    assert (fl204["code"]["value"], fl204["severity"], fl204["location"]["path"]) == ("FL204", "ERROR", "server.py")
    assert fl204["code"]["url"].startswith("https://")
    # rdjson columns count UTF-8 bytes from 1: 'ctx' starts after 'été' (3 code points, 5 bytes).
    code_points = FL204_LINE.index("ctx.fail")
    expected = len(FL204_LINE[:code_points].encode("utf-8")) + 1
    assert fl204["location"]["range"]["start"] == {"line": 7, "column": expected}
    assert expected == code_points + 1 + 2  # 1-based, and each of the two é is one byte more than a code point
    assert _json_findings(run_cli, monkeypatch, repository / "svc")[0]["location"]["column"] == code_points + 1
    end = len(FL204_LINE.encode("utf-8")) + 1  # the span ends with the line (exclusive end)
    assert fl204["location"]["range"]["end"] == {"line": 7, "column": end}
    # The fix (insert 'raise ') as a suggestion: a zero-width range at the call.
    assert fl204["suggestions"] == [
        {"range": {"start": {"line": 7, "column": expected}, "end": {"line": 7, "column": expected}}, "text": "raise "}
    ]
    assert "suggestions" not in fl203  # no fix, no suggestion


def test_azure_commands_parse_back_to_the_findings(repository: Path, run_cli, monkeypatch):
    out = _lint(run_cli, monkeypatch, repository / "svc", "azure")
    commands = [parsed for parsed in map(azure_parse, out.splitlines()) if parsed is not None]
    findings = _json_findings(run_cli, monkeypatch, repository / "svc")
    assert len(commands) == len(findings) == 2
    for (name, properties, data), finding in zip(commands, findings):
        assert name == "task.logissue"
        assert properties == {
            "type": "error",
            "sourcepath": "server.py",
            "linenumber": str(finding["location"]["row"]),
            "columnnumber": str(finding["location"]["column"]),
            "code": finding["code"],
        }
        assert data == f"[{finding['name']}] {finding['message']}"  # '%', ';' and ']' come back intact
    assert "50%_off; really] no" in commands[1][2]
    # Every line that is not a command stays plain log text (the summary).
    assert [line for line in out.splitlines() if "##vso[" not in line][0].startswith("Found 2 errors")


def test_azure_escapes_what_would_end_a_property_or_a_line() -> None:
    from fusion_lint.base.diagnostics import Diagnostic, Span
    from fusion_lint.output.azure import azure_issue

    diagnostic = Diagnostic("FL300", "n", "warning", "a\nb;c]d%e\r", "dir;x]/f%.py", Span(2, 0, 2, 1))
    line = azure_issue(diagnostic)
    assert "\n" not in line and "\r" not in line
    parsed = azure_parse(line)
    assert parsed is not None
    assert parsed[1]["sourcepath"] == "dir;x]/f%.py" and parsed[1]["type"] == "warning"
    assert parsed[2] == "[n] a\nb;c]d%e\r"


def test_pylint_lines_parse_with_jenkins_pylint_parser(repository: Path, run_cli, monkeypatch):
    out = _lint(run_cli, monkeypatch, repository / "svc", "pylint")
    findings = _json_findings(run_cli, monkeypatch, repository / "svc")
    lines = out.splitlines()
    assert len(lines) == len(findings)  # nothing but findings
    for line, finding in zip(lines, findings):
        assert line == f"server.py:{finding['location']['row']}: [{finding['code']}] {finding['message']}"
        match = JENKINS_PYLINT.fullmatch(line)
        assert match is not None
        assert (match.group(1), int(match.group(2)), match.group(3)) == ("server.py", finding["location"]["row"], "F")
        # The parser's greedy '.*\]' ends the code at the message's last '] ': a message without
        # one comes back whole (FL203's here quotes a reason holding '] ', as pylint's would be cut).
        if "] " not in finding["message"]:
            assert match.group(4) == finding["message"]
        else:
            assert finding["message"].endswith(match.group(4))


def test_json_lines_is_the_json_format_one_object_a_line(repository: Path, run_cli, monkeypatch):
    out = _lint(run_cli, monkeypatch, repository / "svc", "json-lines")
    assert out.endswith("\n") and "\n\n" not in out
    assert [json.loads(line) for line in out.splitlines()] == _json_findings(run_cli, monkeypatch, repository / "svc")


def test_concise_is_text_and_the_default(repository: Path, run_cli, monkeypatch):
    concise = _lint(run_cli, monkeypatch, repository / "svc", "concise")
    assert concise == _lint(run_cli, monkeypatch, repository / "svc", "text")
    assert concise == run_cli("check", "--no-cache").stdout
    assert concise.splitlines()[0].startswith("server.py:7:22: FL204 [fail-not-raised] ")


def test_full_shows_the_source_line_a_caret_and_the_fix(repository: Path, run_cli, monkeypatch):
    lines = _lint(run_cli, monkeypatch, repository / "svc", "full").splitlines()
    at = lines.index(next(line for line in lines if line.startswith("server.py:7:22: FL204")))
    assert lines[at + 1] == f"  7 | {FL204_LINE}"
    caret = lines[at + 2]
    assert caret.index("^") - len("  7 | ") == FL204_LINE.index("ctx.fail")
    assert caret.count("^") == len('ctx.fail("missing")')
    assert lines[at + 3] == "  fix: Raise the error"
    fl203 = lines.index(next(line for line in lines if line.startswith("server.py:9:15: FL203")))
    assert lines[fl203 + 1].startswith("  9 |") and not lines[fl203 + 3].startswith("  fix")


def test_sarif_is_named_from_the_repository_root_from_any_folder(repository: Path, run_cli, monkeypatch):
    def run(where: Path, *args: str) -> dict:
        return json.loads(_lint(run_cli, monkeypatch, where, "sarif", *args))["runs"][0]

    from_svc, from_top = run(repository / "svc"), run(repository, "svc")
    for run_ in (from_svc, from_top):
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run_["results"]}
        assert uris == {"svc/server.py"}  # never "server.py": GitHub resolves it from the checkout's root
        assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repository.resolve().as_uri() + "/"
    prints = [[r["partialFingerprints"] for r in run_["results"]] for run_ in (from_svc, from_top)]
    assert prints[0] == prints[1]
    (repository / "svc" / "server.py").write_text("# above\n" + SERVER, encoding="utf-8")
    assert [r["partialFingerprints"] for r in run(repository / "svc")["results"]] == prints[0]


def test_every_format_has_a_reporter_and_a_name() -> None:
    from fusion_lint.config.settings import OUTPUT_FORMATS
    from fusion_lint.output import FORMATTERS

    assert sorted(FORMATTERS) == sorted(OUTPUT_FORMATS)
    assert all(callable(FORMATTERS[name]) for name in OUTPUT_FORMATS)
