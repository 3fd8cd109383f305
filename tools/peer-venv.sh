#!/usr/bin/env bash
# Create the peer's virtualenv, .peer-venv: OpenStack Blazar 18 with
# blazar-nova and nova, the release that the benchmarks compare with and
# that the import tests (tests/functional/test_import_blazar.py) write
# their Blazar databases with. Blazar pins its own OpenStack libraries, so
# it gets a venv of its own. Does nothing when the venv is there.
#
#   tools/peer-venv.sh [PYTHON]     (default: python3)
#
# Prints the venv's python. bench/common.py's peer_python() runs it too.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=$top/.peer-venv
python=${1:-python3}

if [[ ! -x $venv/bin/blazar-db-manage ]]; then
    echo "building $venv (a few minutes, once)" >&2
    rm -rf "$venv"
    "$python" -m venv "$venv"
    # -qq: errors only (a pip.conf may name locations that do not exist).
    "$venv/bin/pip" install -qq --disable-pip-version-check \
        blazar==18.0.0 blazar-nova==10.0.0 nova==34.0.0 >&2
fi
echo "$venv/bin/python"
