#!/usr/bin/env bash
# Runs every libFuzzer harness in fuzz/ for SECONDS each (default 20) on its seed corpus, with
# ASan+UBSan, after running large generated inputs under -timeout so that quadratic loading fails
# loudly. Builds BUILD (default build-fuzz) with clang first. Exits non-zero on any finding; the
# input that caused it is kept in BUILD/findings/. Usage: fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
shift || true
build=${AGORA_FUZZ_BUILD:-build-fuzz}
targets=("$@")
[ ${#targets[@]} -gt 0 ] ||
  targets=(mention shape title stream wire world snapshot http_api mcp_rpc mcp_http record cron template)

cmake -S . -B "$build" -DAGORA_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 >/dev/null
findings="$build/findings"
mkdir -p "$findings"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Large inputs, generated rather than committed: a 1.8 MB world of 80,000 agents, 160,000 leading
# mentions (1.3 MB), a snapshot of 20,000 agents. Instrumented, linear code reads each in 2-6 s; the
# quadratic duplicate checks of issue 17 take minutes, far past the 30 s timeout (which leaves room
# for a busy machine).
mkdir -p "$work/big"
awk 'BEGIN { printf "{\"name\":\"big\",\"agents\":["; for (i = 0; i < 80000; i++) printf "%s{\"name\":\"agent %d\"}", (i ? "," : ""), i; printf "]}" }' >"$work/big/world"
awk 'BEGIN { printf "\001\003"; for (i = 0; i < 160000; i++) printf "@m%d hi\n", i }' >"$work/big/mention"
awk 'BEGIN { printf "\200"; for (i = 0; i < 160000; i++) printf "@m%d hi\n", i }' >"$work/big/shape"
awk 'BEGIN { printf "{\"format\":1,\"world\":{\"name\":\"big\"},\"chat\":{\"id\":\"c\",\"world\":\"big\",\"title\":\"t\",\"message_count\":0,\"created_at\":\"2026-11-22T10:00:00Z\",\"updated_at\":\"2026-11-22T10:00:00Z\"},\"messages\":[],\"agents\":[";
  for (i = 0; i < 20000; i++) printf "%s{\"id\":\"a%d\",\"turn_count\":0,\"notice_sent\":false,\"reply_counter\":0,\"memory\":[]}", (i ? "," : ""), i;
  printf "],\"thread\":[]}" }' >"$work/big/snapshot"
# 100,000 JSON-RPC lines from an MCP server (3.6 MB), read in 1-17-byte pieces: linear framing only.
awk 'BEGIN { printf "\001"; for (i = 0; i < 100000; i++) printf "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{}}\n", i }' >"$work/big/mcp_rpc"
cat fuzz/json.dict fuzz/sse.dict >"$work/wire.dict"

status=0
for t in "${targets[@]}"; do
  bin="$build/fuzz/fuzz_$t"
  case $t in
    mention | shape | title) dict=fuzz/text.dict ;;
    stream) dict=fuzz/sse.dict ;;
    wire | mcp_http) dict="$work/wire.dict" ;;
    *) dict=fuzz/json.dict ;;
  esac
  opts=(-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$findings/$t-")
  if [ -f "$work/big/$t" ] && ! "$bin" "${opts[@]}" -timeout=30 "$work/big/$t" >"$work/$t-big.log" 2>&1; then
    echo "fuzz_$t: FAILED on the large input (timeout or crash):"
    tail -n 20 "$work/$t-big.log"
    status=1
    continue
  fi
  mkdir -p "$work/new-$t"
  if "$bin" "${opts[@]}" -max_total_time="$secs" -max_len=65536 -dict="$dict" -print_final_stats=1 \
    "$work/new-$t" "fuzz/corpus/$t" >"$work/$t.log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log")
    cov=$(grep -o 'cov: [0-9]*' "$work/$t.log" | tail -n 1)
    echo "fuzz_$t: ok, $runs runs in ${secs}s, $cov, $(ls "$work/new-$t" | wc -l) new inputs"
  else
    echo "fuzz_$t: FINDING (input kept in $findings/):"
    grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "$work/$t.log" | head -n 20
    status=1
  fi
done
exit $status
