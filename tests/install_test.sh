#!/usr/bin/env bash
# Installing like a real tool: `cmake --install` into a DESTDIR, the installed binary runs an installed example,
# the man page renders with man -l, the bash completion offers chat ids from a database, and `cpack -G DEB` builds
# a package whose control file declares the libraries the binary needs. (CI also installs that .deb for real.)
set -u
build=${1:?usage: install_test.sh BUILD_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
check() { # NAME COMMAND...: one assertion
  local name=$1; shift
  if "$@"; then passes=$((passes + 1)); else echo "FAIL: $name"; fails=$((fails + 1)); fi
}

# agora(1) is generated from dist/agora.1.in when the project is built, before anything is installed:
# no file a user may open (the source's dist/, the build's page) holds a template placeholder.
src=$(cd "$(dirname "$0")/.." && pwd)
version=$("$build/agora" --version | sed -n 's/^agora //p')
check "the build generated agora.1" test -f "$build/agora.1"
check "no placeholder in the build's agora.1" bash -c "! grep -n '@[A-Za-z_]*@' '$build/agora.1'"
check "the build's agora.1 has the binary's version ($version)" grep -q "\"agora $version\"" "$build/agora.1"
check "no placeholder in dist/ but in the template" bash -c "! grep -rln '@[A-Z_]*@' '$src/dist' | grep -v '\.in$'"

dest=$tmp/dest
DESTDIR=$dest cmake --install "$build" --prefix /usr >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
bin=$dest/usr/bin/agora
check "binary installed" test -x "$bin"
check "--version" bash -c "'$bin' --version | grep -qx 'agora [0-9]*\.[0-9]*\.[0-9]*'"
check "examples installed" test -f "$dest/usr/share/agora/examples/debate.json"
check "libagora.so.0 installed" bash -c "ls '$dest'/usr/lib*/libagora.so.0 '$dest'/usr/lib/*/libagora.so.0 2>/dev/null | grep -q ."
check "agora.h installed" test -f "$dest/usr/include/agora.h"
check "agora_db.h installed beside it" test -f "$dest/usr/include/agora_db.h"
check "the MCP example's folder installed" test -f "$dest/usr/share/agora/examples/library/opening-hours.txt"
out=$("$bin" run "$dest/usr/share/agora/examples/debate.json" --db "$tmp/db" 2>"$tmp/run.err")
rc=$?
check "installed binary runs an installed example (exit $rc)" test "$rc" = 0
check "example transcript printed" grep -q '^alice: ' <<<"$out"

man1=$dest/usr/share/man/man1/agora.1
check "man page installed" test -f "$man1"
page=$(MANWIDTH=200 man -l "$man1" 2>"$tmp/man.err" | col -bx | tr -s " ")
check "man -l renders NAME" grep -q 'agora - run worlds of LLM agents' <<<"$page"
check "man page names the installed examples" grep -q '/usr/share/agora/examples/debate.json' <<<"$page"
check "man page renders without warnings" test ! -s "$tmp/man.err"
check "no placeholder in the installed man page" bash -c "! grep -n '@[A-Za-z_]*@' '$man1'"
check "installed man page has the binary's version" grep -q "\"agora $version\"" "$man1"
for cmd in run say init console tools replay serve chats worlds host; do
  check "man page names agora $cmd" grep -q "agora $cmd" <<<"$page"
done

comp=$dest/usr/share/bash-completion/completions/agora
check "bash completion installed" test -f "$comp"
check "zsh completion installed" test -f "$dest/usr/share/zsh/vendor-completions/_agora"
if command -v zsh >/dev/null; then check "zsh completion parses" zsh -n "$dest/usr/share/zsh/vendor-completions/_agora"; fi
# The completion asks the installed agora for the chat ids of the --db on the command line.
id=$("$bin" chats list --json --db "$tmp/db" | sed -n 's/^{"id":"\([^"]*\)".*/\1/p' | head -n 1)
check "a chat id to complete" test -n "$id"
got=$(PATH=$dest/usr/bin:$PATH bash -c '
  source "$1"
  COMP_WORDS=(agora chats show --db "$2" ""); COMP_CWORD=5; _agora
  printf "%s\n" "${COMPREPLY[@]}"
  COMP_WORDS=(agora ch); COMP_CWORD=1; _agora
  printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$tmp/db")
check "completion offers the chat id" grep -qx "$id" <<<"$got"
check "completion offers commands" grep -qx chats <<<"$got"

# The Debian package, built from the same build tree.
(cd "$build" && cpack -G DEB -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; exit 1; }
deb=$(ls "$tmp"/pkg/agora_*.deb 2>/dev/null | head -n 1)
check "cpack built a .deb" test -f "$deb"
if [ -f "$deb" ]; then
  deps=$(dpkg-deb -f "$deb" Depends)
  for lib in libevent libcurl liblmdb libcjson libc6; do check "Depends names $lib ($deps)" grep -q "$lib" <<<"$deps"; done
  check ".deb holds the binary" bash -c "dpkg-deb -c '$deb' | grep -c './usr/bin/agora$' >/dev/null"
  check ".deb holds the man page" bash -c "dpkg-deb -c '$deb' | grep -c './usr/share/man/man1/agora.1' >/dev/null"
  # The page the package ships is the generated one, for its /usr prefix (gzipped or not).
  dpkg-deb -x "$deb" "$tmp/debroot"
  debman=$(ls "$tmp"/debroot/usr/share/man/man1/agora.1* 2>/dev/null | head -n 1)
  debpage=$( { zcat -f "$debman" 2>/dev/null; } )
  check ".deb's man page has no placeholder" bash -c "! grep -n '@[A-Za-z_]*@' <<<\"\$1\"" _ "$debpage"
  check ".deb's man page names /usr/share/agora/examples" grep -q '/usr/share/agora/examples/debate.json' <<<"$debpage"
  check ".deb holds the MCP example's folder" test -f "$tmp/debroot/usr/share/agora/examples/library/rules.txt"
  # libagora in the same package (docs/decisions.md "libagora: one package"): the library with its
  # soname and shlibs entry, the header, pkg-config and CMake files.
  for f in 'lib/.*libagora.so.0$' 'lib/.*libagora.so -> ' 'lib/.*libagora.a$' 'include/agora.h$' 'include/agora_db.h$' \
           'lib/.*pkgconfig/agora.pc$' 'lib/.*cmake/Agora/AgoraConfig.cmake$'; do
    check ".deb holds $f" bash -c "dpkg-deb -c '$deb' | grep -q '$f'"
  done
  check ".deb's shlibs names libagora 0" bash -c "dpkg-deb -I '$deb' shlibs | grep -q '^libagora 0 agora (>= '"
  check ".deb runs ldconfig" bash -c "dpkg-deb -I '$deb' triggers | grep -qx 'activate-noawait ldconfig'"
  check "no internal header in the .deb" bash -c "! dpkg-deb -c '$deb' | grep -q 'include/.*/'"
fi
echo "$passes passed, $fails failed"
test "$fails" = 0
