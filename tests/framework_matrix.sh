#!/usr/bin/env bash
# The framework matrix (issue 18): the adapter tests once per supported framework combination, each
# in its own virtual environment installed from the package registry. `.ci/run` calls it; run it
# alone with `bash tests/framework_matrix.sh` (or `... mcp1-fastmcp3` for one environment).
# The default environment (`python -m pytest`: mcp 2.x MCPServer) is not repeated here.
set -euo pipefail
cd "$(dirname "$0")/.."

# name | requirements, from the one declaration of what is supported (mcp_fusion/internals.py: SUPPORTED
# and MATRIX, both ends of every line; a test checks that MATRIX holds them). Each environment costs
# about 1-2 minutes to install and 1-2 minutes of tests on this machine.
PYTHON="${PYTHON:-python3}"
mapfile -t COMBINATIONS < <("$PYTHON" -m mcp_fusion.internals --matrix)
ADAPTER_TESTS=(tests/runtime/test_runtime_frameworks.py tests/runtime/test_runtime_contract_api.py
  # Issue 22: run_tool_contract and contract coverage on each framework.
  tests/runtime/test_runtime_run_tool_contract.py tests/runtime/test_runtime_contract_coverage.py
  tests/runtime/test_runtime_contract_coverage_servers.py tests/runtime/test_runtime_contract_coverage_examples.py
  tests/runtime/test_runtime_contract_coverage_static.py tests/contracts/test_contracts_billing.py
  # Issue 33: the hostile handlers, the internals, the draft ToolFailure metadata, every client and transport.
  tests/runtime/test_runtime_hostile_adapters.py tests/runtime/test_runtime_internals.py
  tests/runtime/test_runtime_tool_failure_meta.py tests/runtime/test_runtime_wire_clients.py
  tests/runtime/test_runtime_inspector_cli.py
  # Issue 31: every public import path of the installed frameworks' server classes is recognised.
  tests/lint/test_framework_import_paths.py
  # Issue 30: FL208's fix keeps every message and adds the declared code and reason, on each framework.
  tests/runtime/test_runtime_fl208_fix.py)

status=0
for combination in "${COMBINATIONS[@]}"; do
  name="${combination%%|*}"
  requirements="${combination#*|}"
  if [ "$#" -gt 0 ] && [[ ! " $* " =~ " $name " ]]; then
    continue
  fi
  venv=".ci-matrix/$name"
  echo "== framework matrix: $name ($requirements)"
  if [ ! -x "$venv/bin/python" ]; then
    "$PYTHON" -m venv "$venv"
  fi
  # shellcheck disable=SC2086 - the requirements are words on purpose
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e . $requirements "pytest>=8" "anyio>=4" \
    "uvicorn>=0.30"
  "$venv/bin/python" -c "from importlib.metadata import version as v; import importlib.util as u; \
print('   mcp', v('mcp'), '| fastmcp', v('fastmcp') if u.find_spec('fastmcp') else '-')"
  if ! "$venv/bin/python" -m pytest -p no:cacheprovider "${ADAPTER_TESTS[@]}"; then
    echo "framework matrix: $name FAILED" >&2
    status=1
  fi
done
exit "$status"
