#!/bin/sh
# Render a run's index.html to a PNG with headless Chromium (Debian package `chromium`),
# offline: render-png.sh REPORT_DIR OUT.png [WIDTHxHEIGHT]
set -eu
dir=$(cd "$1" && pwd)
out=$2
size=${3:-1500,900}
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --window-size="$size" \
  --screenshot="$out" "file://$dir/index.html" >/dev/null 2>&1
echo "wrote $out"
