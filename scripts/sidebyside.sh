#!/usr/bin/env bash
# sidebyside.sh: the client's CPU per request beside the floor, over loopback.
#
# Starts one fakellm (fixed 200 ms TTFT, 64 tokens 10 ms apart, 1024 slots,
# no prefix cache) and runs against it, in turn, ROUNDS times (A B C D A B C D):
#   raw          a hand-written HTTP/1.1 reader that times every SSE event
#                without decoding JSON (latencytest's BenchmarkLoopback/raw)
#   latencytest  latencytest's OpenAI client (BenchmarkLoopback/latencytest)
#   nethttp      the same client on net/http instead of its own HTTP/1.1
#                client (BenchmarkLoopback/nethttp): what that one saves
#   vegeta       vegeta attack, where vegeta is on PATH (skipped otherwise)
# each at concurrency 50: 50 warm-up requests then 500 measured (vegeta: the
# same load for 11 s, counted). It prints each run's CPU per request: the
# whole process's user+system time (from /usr/bin/time, startup included)
# divided by the requests it sent, and for the two Go clients the CPU of
# the measured section alone (getrusage) and the TTFT error (TTFT - 200 ms).
#
# Usage: scripts/sidebyside.sh            (ROUNDS=3 by default)
#        ROUNDS=5 scripts/sidebyside.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
CONC=50
work=$(mktemp -d)
fake_pid=""
cleanup() {
  if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/profile.yaml" <<'YAML'
model: fake-model
ttft: 200ms
itl: 10ms
output_tokens: 64
slots_per_replica: 1024
prefix_cache: {enabled: false}
YAML

go build -o "$work/fakellm" ./cmd/fakellm
go test -c -o "$work/latencytest.test" ./latencytest

"$work/fakellm" -addr 127.0.0.1:0 -profile "$work/profile.yaml" >"$work/fakellm.out" 2>&1 &
fake_pid=$!
url=""
for _ in $(seq 100); do
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$work/fakellm.out" | head -1 || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "fakellm did not start:" >&2; cat "$work/fakellm.out" >&2; exit 1; }
echo "fakellm at $url (fixed 200 ms TTFT, 64 tokens at 10 ms); concurrency $CONC; $ROUNDS rounds"

body='{"max_tokens":64,"messages":[{"role":"user","content":"Say sixty-four words."}],"model":"fake-model","stream":true,"stream_options":{"include_usage":true}}'
have_vegeta=""
if command -v vegeta >/dev/null 2>&1; then
  have_vegeta=1
  b64=$(printf '%s' "$body" | base64 -w0)
  printf '{"method":"POST","url":"%s/v1/chat/completions","body":"%s","header":{"Content-Type":["application/json"],"Accept":["text/event-stream"]}}\n' \
    "$url" "$b64" >"$work/targets.json"
else
  echo "vegeta not on PATH: skipped (go install github.com/tsenart/vegeta/v12@v12.13.0)"
fi

# cpu_of FILE: user+system seconds that /usr/bin/time wrote to FILE.
cpu_of() { awk '{print $1 + $2}' "$1"; }

# fake_ticks: fakellm's user+system CPU so far, in clock ticks (Linux;
# 0 elsewhere), to print the fake's CPU per request beside the client's.
tck=$(getconf CLK_TCK 2>/dev/null || echo 100)
fake_ticks() { if [ -r "/proc/$fake_pid/stat" ]; then awk '{print $14 + $15}' "/proc/$fake_pid/stat"; else echo 0; fi; }

run_go() { # run_go NAME: one BenchmarkLoopback/NAME run.
  local name=$1 f0 f1
  f0=$(fake_ticks)
  TAILGUARD_FAKELLM_URL=$url /usr/bin/time -f '%U %S' -o "$work/time" \
    "$work/latencytest.test" -test.run '^$' -test.bench "Loopback/$name\$" -test.benchtime 1x >"$work/out" 2>&1 ||
    { cat "$work/out" >&2; exit 1; }
  local line cpu in ttft50 ttft99
  line=$(grep "^BenchmarkLoopback/$name" "$work/out")
  in=$(echo "$line" | grep -o '[0-9.]* [a-z]*-cpu-us/req' | awk '{print $1}')
  ttft50=$(echo "$line" | grep -o '[0-9.-]* [a-z]*-ttft-err-p50-us' | awk '{print $1}')
  ttft99=$(echo "$line" | grep -o '[0-9.-]* [a-z]*-ttft-err-p99-us' | awk '{print $1}')
  cpu=$(cpu_of "$work/time")
  f1=$(fake_ticks)
  printf '%-12s %8.0f us/req (process)  %8.0f us/req (measured section)  TTFT error p50 %6.0f us  p99 %7.0f us  fake %6.0f us/req\n' \
    "$name" "$(echo "$cpu" | awk -v n=$((CONC + 500)) '{print $1 * 1e6 / n}')" "$in" "$ttft50" "$ttft99" \
    "$(echo "$f0 $f1" | awk -v n=$((CONC + 500)) -v t="$tck" '{print ($2 - $1) / t * 1e6 / n}')"
}

run_vegeta() {
  /usr/bin/time -f '%U %S' -o "$work/time" \
    vegeta attack -format=json -targets="$work/targets.json" -rate=0 -max-workers=$CONC -workers=$CONC -duration=11s \
    >"$work/vegeta.bin" 2>"$work/vegeta.err" || { cat "$work/vegeta.err" >&2; exit 1; }
  local n ok cpu
  n=$(vegeta report -type=json <"$work/vegeta.bin" | sed -n 's/.*"requests":\([0-9]*\).*/\1/p')
  ok=$(vegeta report -type=json <"$work/vegeta.bin" | sed -n 's/.*"success":\([0-9.]*\).*/\1/p')
  cpu=$(cpu_of "$work/time")
  printf '%-12s %8.0f us/req (process)  %d requests, success ratio %s\n' \
    vegeta "$(echo "$cpu $n" | awk '{print $1 * 1e6 / $2}')" "$n" "$ok"
}

for r in $(seq "$ROUNDS"); do
  echo "round $r (load average $(cut -d' ' -f1 /proc/loadavg))"
  run_go raw
  run_go latencytest
  run_go nethttp
  if [ -n "$have_vegeta" ]; then run_vegeta; fi
done
