#!/usr/bin/env bash
# Runs fuzz targets for RUNS executions each (default 1000000), seeded with
# and adding to fuzz/corpus/<target>/, two at a time, and prints each run's
# last status line; crashes land in fuzz/artifacts/<target>/. The corpus
# directories are unpacked from fuzz/corpus/<target>.tar.gz when absent and
# packed back into them after the runs (fuzz/corpus.sh).
# Usage: [MAX_LEN=bytes] fuzz/run.sh [RUNS] [TARGET...] (every target when
# none is named; inputs up to MAX_LEN bytes, 8192 unless set).
set -euo pipefail
cd "$(dirname "$0")"
runs=${1:-1000000}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(ply_ascii ply_binary obj off stl_ascii stl_binary medit tetgen gmsh22 gmsh41 vtk triangle off2d)
fi
mkdir -p logs
./corpus.sh unpack "${targets[@]}"
cargo fuzz build
export RAYON_NUM_THREADS=1
run() {
    local t=$1
    local start=$SECONDS
    cargo fuzz run "$t" -- -runs="$runs" -rss_limit_mb=2048 -malloc_limit_mb=256 \
        -timeout=5 -max_len="${MAX_LEN:-8192}" -detect_leaks=0 > "logs/$t.log" 2>&1 || echo "$t: FAILED (logs/$t.log)"
    echo "$t: $((SECONDS - start)) s: $(grep -E '^(#[0-9]+|Done)' "logs/$t.log" | tail -2 | tr '\n' ' ')"
}
for ((i = 0; i < ${#targets[@]}; i += 2)); do
    run "${targets[i]}" &
    if [ $((i + 1)) -lt ${#targets[@]} ]; then run "${targets[i + 1]}" & fi
    wait
done
./corpus.sh pack "${targets[@]}"
