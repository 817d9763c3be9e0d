#!/usr/bin/env bash
# Measures how much anonymous memory loading a large text edge list takes, against the size
# of the CSR it produces (the foundation issue asks for at most about twice the final CSR).
# File-backed pages of the memory-mapped input are page cache, not held memory, so the
# sampler reads RssAnon from /proc, every 20 ms, and keeps the peak.
#
# usage: scripts/measure-load-memory.sh [scale] [edge-factor] [workdir]
set -euo pipefail
scale=${1:-22}
ef=${2:-16}
work=${3:-/tmp/wayfarer-mem}
mkdir -p "$work"
bin=target/release/wayfarer
cargo build --release --quiet
[ -f "$work/rmat$scale.txt" ] || {
    $bin gen rmat --scale "$scale" --edge-factor "$ef" --seed 1 -o "$work/rmat$scale.wfg"
    $bin convert "$work/rmat$scale.wfg" -o "$work/rmat$scale.txt"
}
lines=$(grep -vc '^#' "$work/rmat$scale.txt")
bytes=$(stat -c %s "$work/rmat$scale.txt")
$bin convert "$work/rmat$scale.txt" -o "$work/reloaded.wfg" &
pid=$!
peak=0
while kill -0 $pid 2>/dev/null; do
    kb=$(awk '/^RssAnon:/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
    [ -n "$kb" ] && [ "$kb" -gt "$peak" ] && peak=$kb
    sleep 0.02
done
wait $pid
csr_mib=$($bin info "$work/reloaded.wfg" | awk '/^memory:/ {print $2}')
echo "input: $work/rmat$scale.txt, $lines edges, $((bytes / 1048576)) MiB of text"
echo "final CSR: $csr_mib MiB"
echo "peak anonymous memory while loading: $((peak / 1024)) MiB"
awk -v p="$peak" -v c="$csr_mib" 'BEGIN { printf "ratio: %.2f x the final CSR\n", p / 1024 / c }'
