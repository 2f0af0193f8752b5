#!/usr/bin/env bash
# Fuzz JSONCodec's parser, writer, pointer and Codable/action paths with libFuzzer.
#   Tests/JSONFuzz/fuzz.sh [SECONDS]   (default 60)
# Builds the module's sources plus FuzzJSON.swift with -sanitize=fuzzer,address into .build/json-fuzz/
# and runs with a corpus seeded from seeds/. A crash leaves its input in .build/json-fuzz/artifacts/;
# turn each one into a test case in Tests/JSONCodecTests before fixing it.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
out=.build/json-fuzz
mkdir -p "$out/corpus" "$out/artifacts"
cp -n Tests/JSONFuzz/seeds/* "$out/corpus/" 2>/dev/null || true

swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name JSONCodec \
    Sources/JSONCodec/*.swift Tests/JSONFuzz/FuzzJSON.swift -o "$out/json-fuzz"

# The Swift backtracer trips ASan while reading memory; libFuzzer reports the crash itself.
SWIFT_BACKTRACE=enable=no "$out/json-fuzz" "$out/corpus" \
    -max_total_time="$seconds" -max_len=4096 -timeout=10 \
    -dict=Tests/JSONFuzz/json.dict -artifact_prefix="$out/artifacts/" -print_final_stats=1
