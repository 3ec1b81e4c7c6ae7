#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# check_layers.sh — fails when a file includes a header from a folder above its own in the dependency DAG.
# The DAG (docs/DESIGN.md, "Where things live"): src/common -> src/artifact -> src/model -> src/stacks -> src/report
# -> src/cli; the engines: unwind/ uses src/common, tracer/ uses src/common and src/artifact, src/stacks uses unwind/,
# src/cli uses tracer/; bpf/memtrack.h is the only header shared with BPF.
# An include names its folder ("stacks/stacks.h", "unwind/unwinder.h"): src/ is the root of the program's layers and
# the repository's root that of the engines, so each name must resolve in exactly one of the two.
set -u
cd "${1:-$(dirname "$0")/..}" || exit 2
shopt -s nullglob
declare -A allowed=(
  [src/common]="common bpf"
  [src/artifact]="common artifact bpf"
  [src/model]="common artifact model bpf"
  [src/stacks]="common artifact model unwind stacks bpf"
  [src/report]="common artifact model unwind stacks report bpf"
  [src/cli]="common artifact model unwind stacks report tracer cli bpf"
  [unwind]="common unwind bpf"
  [tracer]="common artifact tracer bpf"
)
bad=0
# Every folder holding C is in the table, and no folder name is both a layer of src/ and an engine.
for dir in src/*/ unwind/ tracer/; do
  dir=${dir%/}
  [ -n "${allowed[$dir]+x}" ] || { echo "$dir: not in check_layers.sh's table"; bad=1; }
  [ "${dir#src/}" != "$dir" ] && [ -e "${dir#src/}" ] && { echo "$dir: its name is also a top-level folder"; bad=1; }
done
for dir in "${!allowed[@]}"; do
  for f in "$dir"/*.[ch]; do
    while IFS= read -r inc; do
      folder=${inc%%/*}
      if [ "$folder" = "$inc" ]; then
        # generated skeletons are the tracer's own; anything else names its folder
        [ "$dir" = tracer ] && [[ "$inc" == *.skel.h ]] && continue
        # and view_assets.h (view.js and view.css as C arrays, made in the build tree) is src/report's
        [ "$dir" = src/report ] && [ "$inc" = view_assets.h ] && continue
        echo "$f: #include \"$inc\" does not name its folder"; bad=1; continue
      fi
      found=0
      [ -e "src/$inc" ] && found=$((found + 1))
      [ -e "$inc" ] && found=$((found + 1))
      if [ $found != 1 ]; then
        echo "$f: #include \"$inc\" resolves in none or both of src/ and the root"; bad=1; continue
      fi
      [ "$folder" = bpf ] && [ "$inc" != bpf/memtrack.h ] && { echo "$f: only bpf/memtrack.h is shared with BPF, not $inc"; bad=1; continue; }
      case " ${allowed[$dir]} " in
        *" $folder "*) ;;
        *) echo "$f: includes $inc, from a folder $dir may not use"; bad=1 ;;
      esac
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
  done
done
# bpf/ headers include only each other and vmlinux.h
for f in bpf/*.[ch]; do
  sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | grep -v -e '^vmlinux\.h$' -e '^[a-z_]*\.h$' -e '^[a-z_]*\.bpf\.h$' |
    sed "s|^|$f: includes from outside bpf/: |" | grep . && bad=1
done
[ $bad = 0 ] && echo "check_layers: every include goes down the DAG"
exit $bad
