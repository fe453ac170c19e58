#!/usr/bin/env bash
# Bytes per span on disk of the spans table of one ClickHouse database
# (docs/benchmarks.md), from the active parts: compressed column data, all
# files of the parts (marks, primary index, checksums too), and the
# uncompressed size; then the five columns that take the most. load.sh runs
# it on its private database after runs 1 and 2, next to the compatible
# platform's 3.4 KB (PostgreSQL heap + TOAST + 18 indexes) and the PostgreSQL
# path's own figure (step 7, the same spans).
# Usage: scripts/bench/storage.sh <database> (ClickHouse of scripts/deps.sh)
set -euo pipefail
db=${1:?database}
[[ $db =~ ^[A-Za-z0-9_]+$ ]] || { echo "storage.sh: bad database name $db" >&2; exit 2; }
ch() { clickhouse-client --port "${CH_PORT:-59000}" -q "$1"; }
parts="FROM system.parts WHERE database = '$db' AND table = 'spans' AND active"
read -r rows n comp disk raw < <(ch "SELECT sum(rows), count(), sum(data_compressed_bytes), sum(bytes_on_disk), sum(data_uncompressed_bytes) $parts FORMAT TSV")
if [ "${rows:-0}" -eq 0 ]; then echo "no spans stored in $db"; exit 0; fi
echo "spans stored: $rows rows in $n active parts"
awk -v r="$rows" -v c="$comp" -v d="$disk" -v u="$raw" 'BEGIN {
  printf "ours: %.0f bytes/span on disk, compressed column data (%.0f with marks, index and checksums; %.0f uncompressed, %.1f× compression)\n", c / r, d / r, u / r, u / c }'
echo "columns taking the most (compressed bytes/span):"
ch "SELECT name, data_compressed_bytes, data_uncompressed_bytes FROM system.columns
    WHERE database = '$db' AND table = 'spans' ORDER BY data_compressed_bytes DESC LIMIT 5 FORMAT TSV" |
  awk -v r="$rows" -F'\t' '{ printf "  %-24s %8.1f (%.1f uncompressed)\n", $1, $2 / r, $3 / r }'
echo "loadgen's spans: LLM application traces of varied text (its realistic corpus); with -corpus fixed, one repeated text that column compression folds away (17 B/span)"
echo "the compatible platform: 3.4 KB/span (PostgreSQL heap + TOAST + indexes, its figure for real spans); step 7 prints the PostgreSQL path's bytes/span for these very spans"
