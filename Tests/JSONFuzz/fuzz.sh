#!/usr/bin/env bash
# Fuzz JSONCodec's parser, writer, pointer and Codable/action paths with libFuzzer.
#   Tests/JSONFuzz/fuzz.sh [SECONDS [libFuzzer flags...]]   (default 60 s)
# Builds the module's sources plus FuzzJSON.swift with -sanitize=fuzzer,address into .build/json-fuzz/
# and runs from the committed corpus in Tests/JSONFuzz/corpus/, folding what it finds back into it.
# A crash prints its input; turn each one into a test case in Tests/JSONCodecTests before fixing it.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
shift $(($# > 0 ? 1 : 0))   # the rest: libFuzzer flags, e.g. -runs=10000000
out=.build/json-fuzz
mkdir -p "$out"

swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name JSONCodec \
    Sources/JSONCodec/*.swift Tests/JSONFuzz/FuzzJSON.swift -o "$out/json-fuzz"

.ci/libfuzzer "$out/json-fuzz" Tests/JSONFuzz/corpus "$out" "$seconds" \
    -max_len=4096 -timeout=10 -dict=Tests/JSONFuzz/json.dict "$@"
