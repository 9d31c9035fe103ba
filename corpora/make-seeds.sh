#!/usr/bin/env bash
# Regenerates corpora/seeds/ (small valid archives from each real producer) and
# corpora/adversarial/ (built in code). Run from the repository root:
#   corpora/make-seeds.sh
# Tools missing here are skipped with a note. Versions used for the committed seeds are in
# corpora/README.md. Timestamps, owners and order are fixed so reruns give stable bytes
# where the tool allows it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cargo run -q -p snapconf-harness --example make-corpora -- "$here"
seeds="$here/seeds"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src="$work/ws"
mkdir -p "$src/dir/sub" "$src/.venv/bin"
printf 'hello\n' >"$src/dir/file.txt"
printf '#!/bin/sh\n' >"$src/dir/run.sh"; chmod 0755 "$src/dir/run.sh"
printf 'x\n' >"$src/dir/sub/$(printf 'n%.0s' $(seq 1 120))"
ln "$src/dir/file.txt" "$src/dir/hard.txt"
ln -s /usr/local/bin/python "$src/.venv/bin/python"
ln -s python "$src/.venv/bin/python3"
find "$src" -exec touch -h -d @1700000000 {} +
gnu() { tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@1700000000 -C "$src" "$@" .; }
if command -v tar >/dev/null; then
  # ustar cannot store the 120-byte component: GNU tar leaves it out and exits 2 (kept:
  # the archive of the rest is still a valid seed).
  gnu --format=ustar -cf "$seeds/gnu-ustar.tar" 2>/dev/null || echo "note: gnu-ustar left out the long name"
  gnu --format=gnu -cf "$seeds/gnu-gnu.tar"
  gnu --format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    -cf "$seeds/gnu-posix.tar"
else echo "skip: GNU tar (apt-get install tar)"; fi
if command -v bsdtar >/dev/null; then
  (cd "$src" && bsdtar --uid 0 --gid 0 -cf "$seeds/bsdtar-pax.tar" .)
  (cd "$src" && bsdtar --format=ustar --uid 0 --gid 0 -cf "$seeds/bsdtar-ustar.tar" . 2>/dev/null) \
    || echo "note: bsdtar-ustar left out the long name"
else echo "skip: bsdtar (apt-get install libarchive-tools)"; fi
if command -v busybox >/dev/null; then
  (cd "$src" && busybox tar -cf "$seeds/busybox.tar" .)
else echo "skip: BusyBox (apt-get install busybox)"; fi
if command -v python3 >/dev/null; then
  for f in PAX GNU; do
    python3 -I -S - "$src" "$seeds/python-$(echo $f | tr A-Z a-z).tar" "$f" <<'PY'
import sys, tarfile
src, out, fmt = sys.argv[1], sys.argv[2], sys.argv[3]
def reset(ti):
    ti.uid = ti.gid = 0; ti.uname = ti.gname = ""; ti.mtime = 1700000000
    return ti
with tarfile.open(out, "w", format=getattr(tarfile, fmt + "_FORMAT")) as t:
    t.add(src, arcname=".", filter=reset)
PY
  done
else echo "skip: Python (apt-get install python3)"; fi
ls -l "$seeds"
