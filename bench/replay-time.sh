#!/usr/bin/env bash
# Wall time of `knockwatch replay` on the replay fixture folder, broker start included.
# Usage: ./knockwatch bench replay [RUNS]   (default 5 runs; prints each, then min / median / max)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-5}"
input="$here/cli/src/test/resources/replay/basic"
expected="$here/cli/src/test/resources/replay/basic-expected.jsonl"
times=()
for i in $(seq 1 "$runs"); do
  t0=$(date +%s%N)
  out=$("$here/knockwatch" replay --rules "$here/alert-rules" --input "$input" 2>/dev/null)
  t1=$(date +%s%N)
  ms=$(( (t1 - t0) / 1000000 ))
  if [ "$out" != "$(cat "$expected")" ]; then
    echo "run $i: output differs from $expected" >&2
    exit 1
  fi
  echo "run $i: ${ms} ms (output identical to the golden file)"
  times+=("$ms")
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
n=${#sorted[@]}
echo "replay of $(find "$input" -name '*.jsonl' | xargs cat | wc -l) lines, $n runs: min ${sorted[0]} ms, median ${sorted[$((n / 2))]} ms, max ${sorted[$((n - 1))]} ms"
