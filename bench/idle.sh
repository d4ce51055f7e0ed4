#!/usr/bin/env bash
# `up` idle, as a user meets it: `./knockwatch up` (the launcher, its defaults, its own JVM) on an
# empty var/, probes on, then the same with --no-probes. Each start waits for its demo's alerts
# (probes on: the limit probe's persistent-retry WARNING; --no-probes: the page of one refusal
# written by the bench), then samples the process over a window: its CPU (utime + stime of
# /proc/PID/stat) as % of one core, its resident memory (VmRSS) and its threads, every 10 s. Then the
# page of a refusal written to an idle process, several times: the time from the line written to its
# alert printed. Each run also ranks the process's threads by the CPU they spent in the window.
# Usage: ./knockwatch bench idle [--window SECONDS] [--runs N] [--pages N] [--no-probes-only] [--probes-only]
#   --window (default 300): the idle window after the demo; --runs (default 1): starts per mode,
#   alternated; --pages (default 8): refusals written after the window, 3 s apart.
#   KEEP=1, or a failed run, keeps each start's output and logs in the directory it names.
# Ports: picked free each start (the defaults may be another `up`'s); KNOCKWATCH_JAVA_OPTS as for up.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
window=300
runs=1
pages=8
modes=(probes no-probes)
while [ $# -gt 0 ]; do
  case "$1" in
    --window) window="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --pages) pages="$2"; shift 2 ;;
    --no-probes-only) modes=(no-probes); shift ;;
    --probes-only) modes=(probes); shift ;;
    *) echo "usage: ./knockwatch bench idle [--window SECONDS] [--runs N] [--pages N] [--probes-only|--no-probes-only]" >&2; exit 2 ;;
  esac
done
tmp="$(mktemp -d "${TMPDIR:-/tmp}/knockwatch-bench-idle-XXXXXX")"
hz="$(getconf CLK_TCK)"
pid=
cleanup() {
  local status=$?
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    wait "$pid" 2>/dev/null || true
  fi
  if [ -n "${KEEP:-}" ] || [ "$status" -ne 0 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

now_ms() { date +%s%3N; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
threads() { awk '/^Threads:/ { print $2 }' "/proc/$1/status"; }
# per thread: TID, its CPU ticks, its name (comm; spaces as _)
thread_ticks() {
  local t
  for t in /proc/"$1"/task/*; do
    awk -v tid="${t##*/}" '{ n = $0; sub(/^[^(]*\(/, "", n); sub(/\) .*$/, "", n); gsub(/ /, "_", n);
      sub(/^.*\) /, ""); print tid, $12 + $13, n }' "$t/stat" 2>/dev/null || true
  done
}
refusal() { # DIR COMMAND_ID HOST: one srt violation record, stamped now
  printf '{"line":"deny network-outbound %s (host is not on the allow list)","commandId":"%s","timestamp":"%s"}\n' \
    "$3" "$2" "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" >> "$1/$2.violations.jsonl"
}
await() { # FILE TEXT SECONDS: the time (ms) TEXT appeared in FILE
  local deadline=$(( $(date +%s) + $3 ))
  until grep -qF -- "$2" "$1" 2>/dev/null; do
    if [ "$(date +%s)" -gt "$deadline" ] || ! kill -0 "$pid" 2>/dev/null; then
      echo "no \"$2\" in $1 within $3 s; its log ends:" >&2
      tail -20 "${1%.out}.err" >&2
      exit 1
    fi
    sleep 0.01
  done
  now_ms
}
stats() { # VALUES...: min / median / max
  local sorted
  sorted=($(printf '%s\n' "$@" | sort -g))
  local n=${#sorted[@]}
  echo "${sorted[0]} / ${sorted[$((n / 2))]} / ${sorted[$((n - 1))]}"
}
pct() { # p VALUES...: the p-th percentile (nearest rank)
  local p=$1
  shift
  local sorted
  sorted=($(printf '%s\n' "$@" | sort -g))
  local n=${#sorted[@]}
  local k=$(( (p * n + 99) / 100 ))
  [ "$k" -lt 1 ] && k=1
  echo "${sorted[$((k - 1))]}"
}

"$here/knockwatch" --version >/dev/null # builds the jar first, when it is stale
declare -A cpu_all rss_all thr_all page_all
for i in $(seq 1 "$runs"); do
  for mode in "${modes[@]}"; do
    run="$tmp/$mode.$i"
    mkdir -p "$run/logs/bench-idle"
    args=(up --var "$run/var" --logs "$run/logs" --kafka-port "$(free_port)" --metrics-port "$(free_port)"
      --api-port "$(free_port)" --otlp-port "$(free_port)")
    [ "$mode" = no-probes ] && args+=(--no-probes)
    t0=$(now_ms)
    "$here/knockwatch" "${args[@]}" >"$run/up.out" 2>"$run/up.err" &
    pid=$!
    tb=$(await "$run/up.out" "Ctrl-C to stop." 300)
    if [ "$mode" = probes ]; then
      td=$(await "$run/up.out" "ALERT [WARNING] persistent-retry firing" 300)
    else
      refusal "$run/logs/bench-idle" BenchIdleDemo00000000001 evil.example:443
      td=$(await "$run/up.out" "command=BenchIdleDemo00000000001" 120)
    fi
    echo "$mode run $i: banner after $(( tb - t0 )) ms, demo's alerts after $(( td - t0 )) ms; idle window ${window} s"
    before="$run/threads.0"
    thread_ticks "$pid" > "$before"
    c0=$(cpu_ticks "$pid")
    s0=$(now_ms)
    cs=()
    rs=()
    ts=()
    slices=()
    last_c=$c0
    last_t=$s0
    elapsed=0
    while [ "$elapsed" -lt "$window" ]; do
      sleep 10
      c=$(cpu_ticks "$pid")
      t=$(now_ms)
      rs+=("$(( $(rss_kb "$pid") / 1024 ))")
      ts+=("$(threads "$pid")")
      elapsed=$(( (t - s0) / 1000 ))
      # a slice of 60 s (or the window's end): % of one core
      if [ $(( t - last_t )) -ge 59500 ] || [ "$elapsed" -ge "$window" ]; then
        slices+=("$(awk -v c="$(( c - last_c ))" -v hz="$hz" -v ms="$(( t - last_t ))" 'BEGIN { printf "%.2f", c / hz * 100000 / ms }')")
        last_c=$c
        last_t=$t
      fi
    done
    c1=$(cpu_ticks "$pid")
    s1=$(now_ms)
    thread_ticks "$pid" > "$run/threads.1"
    # the threads' whole names (comm keeps 15 characters), from the JVM, when jcmd can ask it
    : > "$run/names"
    if command -v jcmd >/dev/null 2>&1; then
      jcmd "$pid" Thread.print 2>/dev/null | sed -n 's/^"\(.*\)" .* nid=0x\([0-9a-f]*\) .*/\2 \1/p' \
        | while read -r nid name; do echo "$((16#$nid)) ${name// /_}"; done > "$run/names" || true
    fi
    whole=$(awk -v c="$(( c1 - c0 ))" -v hz="$hz" -v ms="$(( s1 - s0 ))" 'BEGIN { printf "%.2f", c / hz * 100000 / ms }')
    echo "  CPU ${whole} % of one core over $(( (s1 - s0) / 1000 )) s (per minute: $(stats "${slices[@]}") %)," \
      "resident $(stats "${rs[@]}") MB, threads $(stats "${ts[@]}") (min / median / max over $((${#rs[@]})) samples)"
    cpu_all[$mode]+="$whole "
    rss_all[$mode]+="${rs[-1]} "
    thr_all[$mode]+="${ts[-1]} "
    # the threads by their CPU in the window, grouped by name without its digits
    echo "  threads by CPU in the window (% of one core; name without digits: threads):"
    awk -v hz="$hz" -v ms="$(( s1 - s0 ))" 'FILENAME == ARGV[1] { name[$1] = $2; next }
      FILENAME == ARGV[2] { a[$1] = $2; next }
      { d = $2 - (($1 in a) ? a[$1] : 0); g = ($1 in name) ? name[$1] : $3; gsub(/[0-9]+/, "N", g); cpu[g] += d; n[g]++ }
      END { for (g in cpu) if (cpu[g] > 0) printf "%8.3f %% %s: %d\n", cpu[g] / hz * 100000 / ms, g, n[g] }' \
      "$run/names" "$before" "$run/threads.1" | sort -rn | head -20 | sed 's/^/   /'
    # pages of refusals written to the idle process, 3 s apart
    ps_=()
    for p in $(seq 1 "$pages"); do
      id="BenchIdlePage${i}x$(printf %010d "$p")"
      tw=$(now_ms)
      refusal "$run/logs/bench-idle" "$id" "door-$p.example:443"
      ta=$(await "$run/up.out" "command=$id" 60)
      ps_+=("$(( ta - tw ))")
      sleep 3
    done
    echo "  page of a refusal written to the idle process: p50 $(pct 50 "${ps_[@]}") ms, p99 $(pct 99 "${ps_[@]}") ms" \
      "(min $(pct 0 "${ps_[@]}"), max $(pct 100 "${ps_[@]}"); $pages pages: ${ps_[*]})"
    page_all[$mode]+="${ps_[*]} "
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    pid=
  done
done

for mode in "${modes[@]}"; do
  echo "$mode, $runs run(s): CPU $(stats ${cpu_all[$mode]}) % of one core; resident at the window's end" \
    "$(stats ${rss_all[$mode]}) MB; threads $(stats ${thr_all[$mode]}) (min / median / max);" \
    "page p50 $(pct 50 ${page_all[$mode]}) ms, p99 $(pct 99 ${page_all[$mode]}) ms over all its pages"
done
