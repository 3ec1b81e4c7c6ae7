#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# gen_sql.sh — writes the SQL of the sqlite3 workload: ROWS rows (default 100000) inserted in one transaction, an
# index, then aggregate, join and range queries. Deterministic: the values come from the row number.
set -euo pipefail
rows=${1:-100000}
cat <<SQL
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, price REAL, note TEXT);
CREATE TABLE grp (id INTEGER PRIMARY KEY, label TEXT);
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $rows)
INSERT INTO item SELECT i, printf('item-%08x', i * 2654435761 % 4294967296), i % 97, (i * 7919 % 10007) / 100.0,
	printf('%.*c', 20 + i % 60, 'x') FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 96)
INSERT INTO grp SELECT i, 'group ' || i FROM n;
COMMIT;
CREATE INDEX item_name ON item(name);
CREATE INDEX item_grp_price ON item(grp, price);
SELECT grp, count(*), round(avg(price), 2), max(length(note)) FROM item GROUP BY grp ORDER BY 3 DESC LIMIT 5;
SELECT g.label, count(*) FROM item i JOIN grp g ON g.id = i.grp WHERE i.price BETWEEN 10 AND 20 GROUP BY g.label
	ORDER BY 2 DESC LIMIT 3;
SELECT count(*) FROM item WHERE name LIKE 'item-1%';
SELECT count(DISTINCT substr(name, 6, 3)) FROM item;
SELECT name FROM item ORDER BY note DESC, name LIMIT 3;
UPDATE item SET price = price * 1.1 WHERE grp < 10;
DELETE FROM item WHERE id % 3 = 0;
SELECT count(*), round(sum(price), 2) FROM item;
SQL
