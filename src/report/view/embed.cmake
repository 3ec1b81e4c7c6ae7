# SPDX-License-Identifier: GPL-2.0-only
# embed.cmake — the pages' CSS and scripts as C arrays for src/report/view_page.c, at build time:
#   cmake -DDIR=src/report/view -DOUT=view_assets.h -P embed.cmake
# view.css → mt_view_css, view_common.js → mt_view_common_js, and so on.
set(text "/* made from src/report/view/ by embed.cmake: edit those */\n")
foreach(file view.css view_common.js view.js view_diff.js)
  string(REPLACE "." "_" name ${file})
  file(READ ${DIR}/${file} hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(APPEND text "static const char mt_${name}[] = {${hex}};\n")
endforeach()
file(WRITE ${OUT} "${text}")
