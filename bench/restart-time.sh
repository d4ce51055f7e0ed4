#!/usr/bin/env bash
# Restart after kill -9, as a user meets it: `./knockwatch up` (the launcher, its defaults, its own
# JVM) on kept data is killed with SIGKILL while refusals flow, then started again. Each run times,
# from the restart, (1) the banner ("Ctrl-C to stop.") and (2) the page of a new refusal written at
# the moment of the restart (an off-role host: paged on the first refusal), and (3) the CPU the
# restarted process spent up to that page.
# Usage: ./knockwatch bench restart [RUNS]   (default 3; prints each run, then min / median / max;
#        KEEP=1, or a failed run, keeps each start's output and logs in the directory it names)
# --no-probes: the probes' sandboxes would share the two cores with the restart being timed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-3}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/knockwatch-bench-restart-XXXXXX")"
agent=bench-restart
dir="$tmp/logs/$agent"
mkdir -p "$dir"
pid=
feeder=
cleanup() {
  local status=$?
  [ -n "$feeder" ] && kill "$feeder" 2>/dev/null || true
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    wait "$pid" 2>/dev/null || true
  fi
  if [ -n "${KEEP:-}" ] || [ "$status" -ne 0 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

now_ms() { date +%s%3N; }
cpu_ms() { # PID: the CPU (user + system) the process has spent, in ms
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / hz) }' "/proc/$1/stat"
}
refusal() { # COMMAND_ID HOST: one srt violation record, stamped now
  printf '{"line":"deny network-outbound %s (host is not on the allow list)","commandId":"%s","timestamp":"%s"}\n' \
    "$2" "$1" "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" >> "$dir/$1.violations.jsonl"
}
start_up() { # N: starts up, its output in up.N.out / up.N.err
  "$here/knockwatch" up --var "$tmp/var" --logs "$tmp/logs" --no-probes >"$tmp/up.$1.out" 2>"$tmp/up.$1.err" &
  pid=$!
}
await() { # FILE TEXT SECONDS: the time (ms) TEXT appeared in FILE
  local deadline=$(( $(date +%s) + $3 ))
  until grep -qF -- "$2" "$1" 2>/dev/null; do
    if [ "$(date +%s)" -gt "$deadline" ] || ! kill -0 "$pid" 2>/dev/null; then
      echo "no \"$2\" in $1 within $3 s; its log ends:" >&2
      tail -20 "${1%.out}.err" >&2
      exit 1
    fi
    sleep 0.05
  done
  now_ms
}

"$here/knockwatch" --version >/dev/null # builds the jar first, when it is stale
start_up 0
await "$tmp/up.0.out" "Ctrl-C to stop." 180 >/dev/null
refusal "BenchRestartPrimer0000001" evil.example:443
await "$tmp/up.0.out" "command=BenchRestartPrimer0000001" 120 >/dev/null

banners=()
alerts=()
cpus=()
for i in $(seq 1 "$runs"); do
  # refusals flow while the process dies, each of a new command (a new alert): detection has a
  # transaction open that holds alerts, ingest a batch in flight
  ( n=0; while true; do n=$((n + 1)); refusal "BenchRestartFlow${i}x$(printf %012d "$n")" evil.example:443; sleep 0.1; done ) &
  feeder=$!
  sleep 2
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  kill "$feeder"
  wait "$feeder" 2>/dev/null || true
  feeder=
  t0=$(now_ms)
  start_up "$i"
  id="BenchRestartNewCommand00$i"
  refusal "$id" "new-door-$i.example:443"
  tb=$(await "$tmp/up.$i.out" "Ctrl-C to stop." 300)
  ta=$(await "$tmp/up.$i.out" "command=$id" 300)
  cpu=$(cpu_ms "$pid")
  banners+=("$(( tb - t0 ))")
  alerts+=("$(( ta - t0 ))")
  cpus+=("$cpu")
  echo "run $i: banner after $(( tb - t0 )) ms, page of the new refusal after $(( ta - t0 )) ms, $cpu ms of CPU to it"
done

summary() { # NAME VALUES...
  local name=$1
  shift
  local sorted
  sorted=($(printf '%s\n' "$@" | sort -n))
  local n=${#sorted[@]}
  echo "$name: min ${sorted[0]} ms, median ${sorted[$((n / 2))]} ms, max ${sorted[$((n - 1))]} ms ($n runs)"
}
summary "banner after kill -9" "${banners[@]}"
summary "page of a new refusal after kill -9" "${alerts[@]}"
summary "CPU of the restarted process to that page" "${cpus[@]}"
