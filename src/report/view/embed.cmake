# embed.cmake — view.css and view.js as C arrays for src/report/view.c, at build time:
#   cmake -DDIR=src/report/view -DOUT=view_assets.h -P embed.cmake
set(text "/* made from src/report/view/view.{css,js} by embed.cmake: edit those */\n")
foreach(name css js)
  file(READ ${DIR}/view.${name} hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(APPEND text "static const char mt_view_${name}[] = {${hex}};\n")
endforeach()
file(WRITE ${OUT} "${text}")
