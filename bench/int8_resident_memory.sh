#!/bin/bash
# The resident memory of a listening server on int8 models, with and without
# --int8-activations, as a markdown table: VmRSS / RssAnon of the process once it logs that it
# listens (weights loaded, state slots allocated), medians of ROUNDS starts.
#
#   bench/int8_resident_memory.sh SERVER MODEL_DIR...      (ROUNDS=3 by default)
#
# The state slots are kept few (--max_slots 4) so the weights dominate. Loopback only; each
# server is started on a free port and stopped after the reading.
set -euo pipefail
server=$1
shift
rounds=${ROUNDS:-3}

# Prints "VmRSS RssAnon" in kB of one server start with the given flags.
one_reading() {
  local model=$1
  shift
  local log
  log=$(mktemp)
  "$server" --model "$model" --listen 127.0.0.1:0 --metrics_listen=127.0.0.1:0 --max_slots 4 \
    "$@" >"$log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 600); do
    grep -q "listening on" "$log" && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; return 1; }
    sleep 0.1
  done
  awk '/^VmRSS:/ {rss=$2} /^RssAnon:/ {anon=$2} END {print rss, anon}' "/proc/$pid/status"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  rm -f "$log"
}

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

echo "| model | flags | VmRSS MB | RssAnon MB |"
echo "|---|---|---:|---:|"
for model in "$@"; do
  for flags in "" "--int8_activations"; do
    rss=()
    anon=()
    for _ in $(seq 1 "$rounds"); do
      read -r r a < <(one_reading "$model" $flags)
      rss+=("$r")
      anon+=("$a")
    done
    r=$(printf '%s\n' "${rss[@]}" | median)
    a=$(printf '%s\n' "${anon[@]}" | median)
    printf '| %s | %s | %.1f | %.1f |\n' "$(basename "$model")" "${flags:-(none)}" \
      "$(echo "$r / 1000" | bc -l)" "$(echo "$a / 1000" | bc -l)"
  done
done
