# SPDX-License-Identifier: GPL-2.0-only
# pyjson.py — the python3 workload: dicts of strings and numbers built, JSON-encoded, decoded, merged and sorted.
# Deterministic with PYTHONHASHSEED=0 (bench/programs.sh sets it): the same objects, the same allocations.
import json
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
records = []
for i in range(n):
    records.append({"id": i, "name": "user%07d" % (i * 7919 % n), "tags": ["t%d" % (i % 13), "g%d" % (i % 7)],
                    "score": (i * 31 % 1000) / 10.0, "active": i % 3 == 0})
text = json.dumps(records)
back = json.loads(text)
index = {}
for r in back:
    index.setdefault(r["tags"][0], {})[r["name"]] = r["score"]
merged = {k: sorted(v.items(), key=lambda kv: (-kv[1], kv[0]))[:10] for k, v in index.items()}
print(len(text), len(index), sum(len(v) for v in merged.values()))
