#!/usr/bin/env bash
# examples/c/ built against the INSTALLED library: a DESTDIR install into a temporary directory, the
# example compiled with its Makefile through pkg-config (PKG_CONFIG_PATH there) and with its CMake
# project through find_package(Agora), both run on an installed example world. AGORA_PRELOAD: the ASan
# runtime, preloaded into the example when the library is sanitized (set by ctest).
set -u
build=${1:?usage: lib_example.sh BUILD_DIR}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
check() { local name=$1; shift; if "$@"; then passes=$((passes + 1)); else echo "FAIL: $name"; fails=$((fails + 1)); fi; }

dest=$tmp/dest
DESTDIR=$dest cmake --install "$build" --prefix /usr >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
pcdir=$(dirname "$(find "$dest" -name agora.pc | head -n 1)")
libdir=$(dirname "$pcdir")
check "agora.pc installed" test -f "$pcdir/agora.pc"
check "agora.h installed" test -f "$dest/usr/include/agora.h"
check "agora_db.h installed beside it" test -f "$dest/usr/include/agora_db.h"
check "agora_server.h installed beside it" test -f "$dest/usr/include/agora_server.h"
check "no internal header installed" bash -c "! find '$dest' -name '*_int.h' -o -name 'runtime.h' | grep -q ."
export PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$dest
check "pkg-config knows agora $(pkg-config --modversion agora 2>&1)" pkg-config --exists agora
cp -r "$src/examples/c" "$tmp/ex"
make -s -C "$tmp/ex" >"$tmp/make.log" 2>&1
check "the example builds with pkg-config ($(head -c 400 "$tmp/make.log"))" test -x "$tmp/ex/hello"
world=$dest/usr/share/agora/examples/relay.json
out=$(LD_PRELOAD=${AGORA_PRELOAD:-} LD_LIBRARY_PATH=$libdir "$tmp/ex/hello" "$world" "@Ann the relay starts now" 2>&1)
check "the example runs the relay ($out)" grep -q '^cat: .*Relay complete' <<<"$out"
check "the example ran on the installed library" bash -c "LD_LIBRARY_PATH='$libdir' ldd '$tmp/ex/hello' | grep -q '$libdir/libagora.so.0'"

unset PKG_CONFIG_SYSROOT_DIR
cmake -S "$tmp/ex" -B "$tmp/exb" -DCMAKE_PREFIX_PATH="$dest/usr" >"$tmp/cmake.log" 2>&1 &&
  cmake --build "$tmp/exb" >>"$tmp/cmake.log" 2>&1
check "the example builds with find_package(Agora) ($(tail -c 400 "$tmp/cmake.log"))" test -x "$tmp/exb/hello"
out=$(LD_PRELOAD=${AGORA_PRELOAD:-} LD_LIBRARY_PATH=$libdir "$tmp/exb/hello" "$world" "@Ann go" 2>&1)
check "the CMake-built example runs ($out)" grep -q '^libagora 0\.' <<<"$out"
echo "$passes passed, $fails failed"
test "$fails" = 0
