#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what it needs, then runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages the browser and desktop tests drive for real (installed only when missing).
packages=(chromium xvfb dbus-x11 at-spi2-core gtk-3-examples python3-gi gir1.2-gtk-3.0
          gir1.2-atspi-2.0 python3-pyatspi)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
export PLAYWRIGHT_CHROMIUM_EXECUTABLE=/usr/bin/chromium

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
# Bytecode for the package and the test apps, written once: an editable install compiles
# nothing, and where PYTHONDONTWRITEBYTECODE is set each of the suite's many `semledger`
# children would compile the package again (0.4 s of CPU each).
.venv/bin/python -m compileall -q -j 0 actors adapters eventlog hosts replay runtime semledger \
  tests/apps >/dev/null
# One worker per core, at most four: the suite waits on subprocesses and browsers as much as it
# computes, and more workers would only crowd a bigger machine's other work. (loadgroup: the
# tests marked with one xdist_group run on one worker.)
exec .venv/bin/python -m pytest --numprocesses=auto --maxprocesses=4 --dist=loadgroup "$@"
