#!/usr/bin/env bash
# The end-of-run cost of pgvector's keyword average (docs/STORES.md, "pgvector's keyword search"), before and
# after the sums kept by triggers, on a table of 100k+ rows; and what the triggers cost the writes.
#
#   keyword_lengths.sh PORT [COPIES]     (PGPASSWORD set; psql on PATH)
#
# Needs, on the server at PORT: `sluice_chunks`, the sample index (`sluice run Pipelines/pgvector.yaml`), and
# `bench_kl`, an empty table the sink prepared (a run of the same pipeline with `--set sink.table=bench_kl` over
# an empty source folder): it has the sink's triggers and `bench_kl_keyword_lengths`. `bench_plain` is made
# here like it, without them. Both are filled with COPIES (default 46: 101,200 rows) copies of the sample rows,
# each copy a statement; then, five times each, alternating:
#   scan: what the end of a run did before, `avg(length(text_search))` over the table;
#   fold: what it does now, after a run of 50 statements (the sums' rows folded into one, then summed);
#   upsert: a 512-row batch as the staging path writes it (`INSERT … ON CONFLICT DO UPDATE`, half new rows,
#           half replaced), into each table.
# Figures are psql's `\timing` (wall ms on the server's round trip) and EXPLAIN's shared buffers.
set -euo pipefail
port=$1
copies=${2:-46}
psql_() { psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -q "$@"; }
columns="id, document_key, ordinal, text, metadata, embedding"

psql_ <<SQL
DROP TABLE IF EXISTS bench_plain;
CREATE TABLE bench_plain (LIKE bench_kl INCLUDING ALL);
TRUNCATE bench_kl;
SQL
echo "fill: $copies copies of $(psql_ -Atc 'SELECT count(*) FROM sluice_chunks') rows, one statement a copy"
for table in bench_kl bench_plain; do
  start=$(date +%s%N)
  for copy in $(seq 1 "$copies"); do
    psql_ -c "INSERT INTO $table ($columns) SELECT id || '-$copy', document_key, ordinal, text, metadata, embedding FROM sluice_chunks"
  done
  echo "  $table: $(( ($(date +%s%N) - start) / 1000000 )) ms"
done
psql_ -c "VACUUM ANALYZE bench_kl" -c "VACUUM ANALYZE bench_plain"
echo "rows: $(psql_ -Atc 'SELECT count(*) FROM bench_kl'); the sums' rows: $(psql_ -Atc 'SELECT count(*) FROM bench_kl_keyword_lengths')"
echo "scan average: $(psql_ -Atc 'SELECT avg(length(text_search))::float8 FROM bench_kl')"
echo "sums average: $(psql_ -Atc 'SELECT (sum(lexemes)::float8 / sum(chunks)) FROM bench_kl_keyword_lengths')"

for round in 1 2 3 4 5; do
  echo "round $round"
  # A run's 50 statements: 50 rows of differences (each replaces one row with itself).
  for statement in $(seq 1 50); do
    psql_ -c "UPDATE bench_kl SET ordinal = ordinal WHERE id = (SELECT id FROM sluice_chunks OFFSET $statement LIMIT 1) || '-1'"
  done
  psql_ <<SQL
\timing on
\echo scan
SELECT coalesce(avg(length(text_search)), 1)::float8 FROM bench_kl;
\echo fold
WITH taken AS (DELETE FROM bench_kl_keyword_lengths RETURNING lexemes, chunks)
INSERT INTO bench_kl_keyword_lengths SELECT coalesce(sum(lexemes), 0), coalesce(sum(chunks), 0) FROM taken;
SELECT coalesce(sum(lexemes), 0)::text, coalesce(sum(chunks), 0)::text FROM bench_kl_keyword_lengths;
\timing off
SQL
  for table in bench_kl bench_plain; do
    psql_ <<SQL
BEGIN;
CREATE TEMP TABLE staging (LIKE $table INCLUDING DEFAULTS) ON COMMIT DROP;
INSERT INTO staging ($columns) SELECT id || '-' || (CASE WHEN ordinal % 2 = 0 THEN '1' ELSE 'new$round' END),
    document_key, ordinal, text || ' $round', metadata, embedding FROM sluice_chunks LIMIT 512;
\timing on
\echo upsert $table
INSERT INTO $table ($columns) SELECT $columns FROM staging
ON CONFLICT (id) DO UPDATE SET document_key = EXCLUDED.document_key, ordinal = EXCLUDED.ordinal,
text = EXCLUDED.text, metadata = EXCLUDED.metadata, embedding = EXCLUDED.embedding;
\timing off
COMMIT;
SQL
  done
done
echo "buffers: scan"
psql_ -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT coalesce(avg(length(text_search)), 1)::float8 FROM bench_kl" | grep -E "Buffers|Execution" | head -2
echo "buffers: the sums (after a fold)"
psql_ -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT sum(lexemes), sum(chunks) FROM bench_kl_keyword_lengths" | grep -E "Buffers|Execution" | head -2
echo "check: scan $(psql_ -Atc 'SELECT avg(length(text_search))::float8 FROM bench_kl') sums $(psql_ -Atc 'SELECT (sum(lexemes)::float8 / sum(chunks)) FROM bench_kl_keyword_lengths')"
