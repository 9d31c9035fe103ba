#!/bin/bash -eu
# ClusterFuzzLite build step: delegates to the list of targets in fuzz/oss-fuzz-build.sh.
exec "$SRC/snapconf/fuzz/oss-fuzz-build.sh"
