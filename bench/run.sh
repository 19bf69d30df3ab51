#!/usr/bin/env bash
# Runs every benchmark on a release build and prints the tables (bench/README.md has one run's figures).
# Usage: bench/run.sh [runs]   (default 5; the whole run takes a few minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build-bench -j2 --target agora bench_world bench_fanout_world bench_fanout_tls bench_cold bench_store bench_fanout bench_load bench_mcp_http bench_serve bench_mcp bench_million bench_llm_scale bench_memory agora_shared > /dev/null
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
echo
echo "== turn overhead, bus, memory (bench_world) =="
build-bench/bench_world 10000 "$runs"
echo
echo "== fan-out through the world, durable storage (bench_fanout_world) =="
build-bench/bench_fanout_world "$runs"
echo
echo "== fan-out over HTTPS + HTTP/2 beside plain HTTP, no storage (bench_fanout_tls; needs nghttpx, openssl) =="
build-bench/bench_fanout_tls 1
echo
echo "== LLM calls only, no world (bench_fanout) =="
build-bench/bench_fanout "$runs"
echo
echo "== cold start on 1.1 M messages (bench_cold) =="
build-bench/bench_cold build-bench/agora "$runs"
echo
echo "== storage alone (bench_store) =="
build-bench/bench_store
echo
echo "== worlds of 1,000 to 1,000,000 agents (bench_million; ~2 GiB at a million) =="
build-bench/bench_million 1000000 "$runs"
echo
echo "== loading big worlds and mention lists (bench_load) =="
build-bench/bench_load "$runs"
echo
echo "== agora serve's event streams (bench_serve) =="
AGORA_BIN=build-bench/agora build-bench/bench_serve 3
echo
echo "== MCP tool calls over stdio (bench_mcp; needs node) =="
AGORA_SRC=$PWD build-bench/bench_mcp 2000 "$runs"
echo
echo "== virtual clock: 30 simulated days, 20 agents, hourly cron (bench_sim) =="
build-bench/bench_sim 30 "$runs"
echo
echo "== MCP over Streamable HTTP: cost per tool call (bench_mcp_http; server-everything needs the test peers) =="
[ -n "${AGORA_PEERS:-}" ] || [ ! -d build/peers/node_modules ] || export AGORA_PEERS="$PWD/build/peers"
build-bench/bench_mcp_http "$runs"
echo
echo "== a world on NATS JetStream: per message, 1,000 agents on 3 hosts, failover (bench_nats) =="
build-bench/bench_nats build-bench/agora "$runs"
echo
echo "== real LLMs at scale: rate limits, the limiter, cache replay (bench_llm_scale) =="
build-bench/bench_llm_scale 3
echo "== libagora from Python: events/s to a consumer, say() per call, Python beside the CLI (bench_python.py) =="
/usr/bin/python3 bench/bench_python.py build-bench "$runs"
echo
echo "== the memory stream: top-8 retrieval, 1,000 agents x 1,000 memories (bench_memory) =="
build-bench/bench_memory "$runs"
