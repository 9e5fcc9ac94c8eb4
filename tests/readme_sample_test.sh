#!/usr/bin/env bash
# README.md's code sample must be exactly the part of examples/readme_sample.cpp
# between its README-BEGIN and README-END markers (which the build compiles).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
readme=$(awk '/^```cpp$/ {inside = 1; next} inside && /^```$/ {exit} inside {print}' "$root/README.md")
example=$(awk '/\/\/ README-END$/ {exit} inside {print} /\/\/ README-BEGIN$/ {inside = 1}' \
    "$root/examples/readme_sample.cpp")
if [ -z "$example" ]; then
    echo "no README-BEGIN/README-END region in examples/readme_sample.cpp" >&2
    exit 1
fi
if [ "$readme" != "$example" ]; then
    echo "README.md's first cpp block differs from examples/readme_sample.cpp:" >&2
    diff <(echo "$readme") <(echo "$example") >&2 || true
    exit 1
fi
echo "README.md's sample is examples/readme_sample.cpp ($(echo "$example" | wc -l) lines)"
