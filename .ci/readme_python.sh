#!/usr/bin/env bash
# The README's Python set-up, followed as a fresh ordinary user (uid 65534, `env -i`, PATH
# limited to /usr/bin:/bin, where Debian's packages are): `pipx install uv`, then
# `uv python install 3.12`; then `snapconf list` must show the four Python adapters
# available with no SNAPCONF_PYTHON and no --python, and a short run of them must work.
# `uv python install` downloads from GitHub, which CI cannot reach: when it fails, a copy
# of this machine's PEP 706 Python is put where uv puts its Pythons
# (~/.local/share/uv/python/cpython-VERSION-linux-x86_64-gnu), made relocatable as uv's
# builds are (RUNPATH $ORIGIN/../lib), and the run says so.
# Usage: .ci/readme_python.sh SNAPCONF_BINARY   (as root; leaves nothing behind)
set -euo pipefail
bin=$1
command -v setpriv >/dev/null 2>&1 || { echo "no setpriv (util-linux)"; exit 1; }
command -v pipx >/dev/null 2>&1 || { echo "no pipx (apt-get install pipx)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
home="$work/home"
mkdir "$home"
chown 65534:65534 "$home"
cp "$bin" "$work/snapconf"
fresh() {
  (cd "$home" && setpriv --reuid=65534 --regid=65534 --clear-groups env -i HOME="$home" \
    PATH=/usr/bin:/bin "$@")
}
echo "-- README: pipx install uv (as uid 65534)"
fresh pipx install uv >"$work/pipx.log" 2>&1 || { cat "$work/pipx.log"; exit 1; }
fresh "$home/.local/bin/uv" --version
echo "-- README: uv python install 3.12"
if fresh "$home/.local/bin/uv" python install 3.12 >"$work/uv.log" 2>&1; then
  echo "uv installed a Python 3.12"
else
  tail -n 3 "$work/uv.log"
  echo "uv cannot download here (no GitHub): a copy of this machine's Python goes where uv puts one"
  python=
  for p in "$(pyenv root 2>/dev/null || echo /nonexistent)"/versions/3.1[2-9]*/bin/python3 python3.13 python3.12 python3; do
    if "$p" -I -c 'import tarfile; tarfile.data_filter' 2>/dev/null; then python=$p; break; fi
  done
  [ -n "$python" ] || { echo "no Python with PEP 706 filters on this machine to copy"; exit 1; }
  prefix=$("$python" -I -c 'import sys; print(sys.base_prefix)')
  version=$("$python" -I -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
  exe=$(readlink -f "$("$python" -I -c 'import sys; print(sys.executable)')")
  dest="$home/.local/share/uv/python/cpython-$version-linux-x86_64-gnu"
  mkdir -p "$dest"
  tar -C "$prefix" --exclude='lib/python3*/test' --exclude='lib/python3*/site-packages' \
    --exclude='lib/python3*/config-*' --exclude='lib/python3*/idlelib' --exclude=__pycache__ \
    -cf - bin lib | tar -C "$dest" -xf -
  patchelf --set-rpath '$ORIGIN/../lib' "$dest/bin/$(basename "$exe")"
  chown -R 65534:65534 "$home/.local"
fi
echo "-- snapconf list as uid 65534 (no SNAPCONF_PYTHON, no --python)"
fresh "$work/snapconf" list >"$work/list.txt"
grep ' python-' "$work/list.txt"
[ "$(grep -c ' python-' "$work/list.txt")" -eq 4 ] || { echo "four Python adapters expected"; exit 1; }
if grep ' python-' "$work/list.txt" | grep -q unavailable; then
  echo "the README's steps leave a Python adapter unavailable"
  exit 1
fi
echo "-- a short run of the four as uid 65534"
set +e
fresh "$work/snapconf" run --cases 4 --seed 1 --shrink-total 4 \
  --producers python-tarfile,python-tarfile-gnu --extractors python-data,python-tar \
  --report-dir "$home/report" >"$work/run.log" 2>&1
code=$?
set -e
tail -n 8 "$work/run.log"
if [ "$code" -ne 0 ] && [ "$code" -ne 1 ]; then
  echo "snapconf run of the Python adapters exited $code (expected 0 or 1)"
  exit 1
fi
echo "README Python set-up: the four Python adapters are available to a fresh ordinary user"
