#!/bin/bash -eu
# ClusterFuzzLite runs this from $SRC: the same build as OSS-Fuzz.
exec "$SRC/attnv/fuzz/oss-fuzz/build.sh"
