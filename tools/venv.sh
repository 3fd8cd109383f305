# Sourced by ./run-tests and ./run-sandbox: (re)build .venv, with the
# pinned OpenStack release, the project (editable) with its [sandbox]
# and [dashboard] extras, and the test requirements, when it is missing
# or when what it was built from changed.
# Needs only python3. Sets $venv.

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=$top/.venv
stamp=$venv/.built-from

# What the venv is built from: a change to any of it rebuilds the venv.
# setup.cfg holds the entry points, which an editable install records,
# and the [sandbox] extra; this file the pip command.
built_from() {
    python3 --version
    (cd "$top" && sha256sum requirements.txt test-requirements.txt \
        upper-constraints.txt setup.cfg tools/venv.sh)
}

if [[ ! -x $venv/bin/stestr ||
      $(cat "$stamp" 2>/dev/null) != "$(built_from)" ]]; then
    echo "building $venv (a few minutes, once)" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    # -qq: errors only; a machine's pip.conf may name package locations
    # that do not exist, and pip warns about each of them for every package.
    (cd "$top" && "$venv/bin/pip" install -qq --disable-pip-version-check \
        -c upper-constraints.txt -e '.[sandbox,dashboard]' -r test-requirements.txt)
    built_from > "$stamp"
fi
