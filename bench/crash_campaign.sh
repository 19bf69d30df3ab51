#!/usr/bin/env bash
# The crash campaign of tests/test_crash.c, long: SIGKILLs `agora run` at KILLS seeded random moments of a
# long scripted run (moments counted in its printed progress), checking the database after each kill:
# seqs contiguous, counts, memories, contexts equal to the reduction of their threads, every message
# printed as saved present as printed. Usage: bench/crash_campaign.sh [kills] [seed]  (default 100;
# about 1 s a kill on 2 cores, most of it fsync). Uses build-bench/ (a release build), or $BUILD.
set -euo pipefail
cd "$(dirname "$0")/.."
kills="${1:-100}"
build="${BUILD:-build-bench}"
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$build" -j2 --target agora test_crash > /dev/null
export AGORA_BIN="$PWD/$build/agora" AGORA_SRC="$PWD" CRASH_ROUNDS="$kills"
if [ $# -ge 2 ]; then export CRASH_SEED="$2"; fi
"$build/test_crash" kill_run_repeatedly
