#!/bin/sh
# Install node-tar (the npm package `tar`) VERSION into DIR for node-tar.toml, unless it is
# there already, and print the package's directory (the value for SNAPCONF_NODE_TAR).
# Usage: sh install_node_tar.sh DIR VERSION    (VERSION: 6.1.0, 7, ... as npm reads it)
set -eu
[ $# -eq 2 ] || { echo "usage: $0 DIR VERSION" >&2; exit 2; }
dir=$1
version=$2
pkg="$dir/node_modules/tar"
if [ ! -f "$pkg/package.json" ]; then
  command -v npm >/dev/null 2>&1 || { echo "$0: npm is not installed" >&2; exit 3; }
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --no-save --no-package-lock --silent "tar@$version" >&2
fi
cd "$pkg" && pwd
