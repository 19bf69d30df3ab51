# Embeds a file into the binary: cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake writes a C
# file defining `const char NAME[]` (the bytes, NUL-terminated) and `const unsigned long NAME_len`.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE ${OUT} "/* Generated from ${IN} at build time (cmake/embed.cmake). Do not edit. */\n"
  "const char ${NAME}[] = {\n${bytes}0x00};\nconst unsigned long ${NAME}_len = ${len}ul;\n")
