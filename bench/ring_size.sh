#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# ring_size.sh — memtrack's own RSS (churn, 1,000,000 pairs) and drops (churn_threads, 64 threads) per --ring-size.
# Run from anywhere as root after building (build/); two rounds of 32, 16 and 8 MiB. Needs jq.
set -euo pipefail
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$(dirname "${BASH_SOURCE[0]}")/.."
for round in 1 2; do
for ring in 32 16 8; do
  rm -rf "$TMP"/rb; build/bench/rss -o "$TMP"/rb.rss -- build/memtrack record -q --ring-size $ring -o "$TMP"/rb -- build/bench/churn 1000000 >/dev/null 2>&1
  self=$(sed -n 's/.*self_kb=\([0-9]*\).*/\1/p' "$TMP"/rb.rss)
  d1=$(build/memtrack report --json "$TMP"/rb | jq .totals.dropped_events)
  rm -rf "$TMP"/rb; build/memtrack record -q --ring-size $ring -o "$TMP"/rb -- build/bench/churn_threads 2000000 64 >/dev/null 2>&1
  d2=$(build/memtrack report --json "$TMP"/rb | jq .totals.dropped_events)
  echo "round=$round ring=$ring churn_self_kb=$self churn_drops=$d1 threads64_drops=$d2"
done; done
