#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# check_layers.sh — fails when a file includes a header from a folder above its own in the dependency DAG.
# The order (docs/DESIGN.md): common -> artifact -> model -> unwind -> report -> cli; tracer uses common and artifact.
set -u
cd "${1:-$(dirname "$0")/..}" || exit 2
declare -A allowed=(
  [src/common]="common bpf"
  [src/artifact]="common artifact bpf"
  [src/model]="common artifact model bpf"
  [unwind]="common artifact model unwind bpf"
  [src/report]="common artifact model unwind report bpf"
  [src/cli]="common artifact model unwind report cli tracer bpf"
  [tracer]="common artifact tracer bpf"
)
bad=0
for dir in "${!allowed[@]}"; do
  for f in "$dir"/*.[ch]; do
    while IFS= read -r inc; do
      folder=${inc%%/*}
      if [ "$folder" = "$inc" ]; then
        # generated skeletons are the tracer's own; anything else names its folder
        [ "$dir" = tracer ] && [[ "$inc" == *.skel.h ]] && continue
        echo "$f: #include \"$inc\" does not name its folder"; bad=1; continue
      fi
      [ "$folder" = bpf ] && [ "$inc" != bpf/memtrack.h ] && { echo "$f: only bpf/memtrack.h is shared with BPF, not $inc"; bad=1; continue; }
      case " ${allowed[$dir]} " in
        *" $folder "*) ;;
        *) echo "$f: includes $inc, from a folder above $dir"; bad=1 ;;
      esac
    done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
  done
done
# bpf/ headers include only each other and vmlinux.h
for f in bpf/*.[ch]; do
  sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | grep -v -e '^vmlinux\.h$' -e '^[a-z_]*\.h$' -e '^[a-z_]*\.bpf\.h$' |
    sed "s|^|$f: includes from outside bpf/: |" | grep . && bad=1
done
[ $bad = 0 ] && echo "check_layers: every include goes down the DAG"
exit $bad
