# Bookworm's node-dompurify 2.4.1+dfsg+~2.4.0-2+deb12u1 backported a nesting-depth check into sanitize() with
# a variable of another function (`shadowNode`): every call on HTML throws "shadowNode is not defined". The
# same check is made for every node in the loop that follows (as upstream does), so the stray copy is
# dropped here: cmake -DIN=purify.js -DOUT=file -P purify_fix.cmake. A file without it is copied as it is.
file(READ ${IN} js)
set(stray "      if (shadowNode.__depth >= MAX_NESTING_DEPTH || numberIsNaN(shadowNode.__depth)) {\n        _forceRemove(body.firstChild);\n      }\n")
string(FIND "${js}" "${stray}" at)
if(NOT at EQUAL -1)
  string(REPLACE "${stray}" "" js "${js}")
  string(FIND "${js}" "currentNode.__depth >= MAX_NESTING_DEPTH" kept)
  if(kept EQUAL -1)
    message(FATAL_ERROR "${IN}: the per-node nesting check is missing: not the file purify_fix.cmake knows")
  endif()
endif()
file(WRITE ${OUT} "${js}")
