# Fills the man page template: cmake -DIN=dist/agora.1.in -DOUT=agora.1 -DVERSION=X.Y.Z -DEXAMPLES_DIR=DIR
# -P manpage.cmake. Run at build time (for the configured prefix) and again at install time (for the prefix
# being installed to, which cpack sets to /usr), so a page a user opens never shows a placeholder; one
# left unfilled (a new @NAME@ in the template) fails the build instead.
set(AGORA_VERSION "${VERSION}")
set(AGORA_EXAMPLES_DIR "${EXAMPLES_DIR}")
configure_file(${IN} ${OUT}.tmp @ONLY)
file(READ ${OUT}.tmp page)
string(REGEX MATCH "@[A-Za-z_]+@" left "${page}")
if(left OR NOT VERSION OR NOT EXAMPLES_DIR)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "manpage.cmake: ${IN}: placeholder '${left}' left unfilled (VERSION='${VERSION}', "
                      "EXAMPLES_DIR='${EXAMPLES_DIR}')")
endif()
file(RENAME ${OUT}.tmp ${OUT})
