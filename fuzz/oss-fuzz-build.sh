#!/usr/bin/env bash
# Builds every snapconf fuzz target the way OSS-Fuzz / ClusterFuzzLite expect: the binaries,
# their dictionary and seed corpora land in $OUT. Run by .clusterfuzzlite/build.sh (and
# usable as an OSS-Fuzz project build.sh). $SRC/snapconf is the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/fuzz/out}
mkdir -p "$OUT"
# Every target, one per line; keep in step with fuzz/Cargo.toml.
TARGETS=(
  extract_reference
  archive_plan
  roundtrip_workspace
)
cargo fuzz build -O --fuzz-dir fuzz
for t in "${TARGETS[@]}"; do
  cp "fuzz/target/x86_64-unknown-linux-gnu/release/$t" "$OUT/$t"
  cp fuzz/tar.dict "$OUT/$t.dict"
  printf '[libfuzzer]\nmax_len = 65536\ndict = %s.dict\n' "$t" >"$OUT/$t.options"
done
# Seed corpora: the raw-bytes targets start from the committed archives.
(cd corpora && zip -q -j "$OUT/extract_reference_seed_corpus.zip" seeds/*.tar adversarial/*.tar)
