#!/usr/bin/env bash
# Release build of JSONCodec as its own module plus this bench, then run it.
#   Tests/JSONCodecBench/bench.sh [ITERATIONS]   (default 200000)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.build/json-bench
mkdir -p "$out"
swiftc -O -wmo -parse-as-library -module-name JSONCodec -emit-module -emit-module-path "$out/JSONCodec.swiftmodule" \
    -emit-library -static Sources/JSONCodec/*.swift -o "$out/libJSONCodec.a"
swiftc -O -I "$out" -L "$out" -lJSONCodec Tests/JSONCodecBench/main.swift -o "$out/json-bench"
"$out/json-bench" "$@"
