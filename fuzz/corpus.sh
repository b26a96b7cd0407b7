#!/usr/bin/env bash
# The corpus is tracked as one archive per target, fuzz/corpus/<target>.tar.gz
# (thousands of small files would be tracked otherwise); fuzz/corpus/<target>/
# is git-ignored, unpacked from the archive for libFuzzer and packed back.
# Usage: fuzz/corpus.sh unpack|pack [TARGET...] (every target when none is
# named). unpack leaves a directory that exists alone; pack writes the
# archive from the directory deterministically (sorted names, fixed mtime,
# owner and modes, no gzip timestamp), so an unchanged corpus gives the same
# bytes. Run pack after `cargo fuzz cmin <target>`.
set -euo pipefail
cd "$(dirname "$0")/corpus"
action=${1:?usage: fuzz/corpus.sh unpack|pack [TARGET...]}
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(ply_ascii ply_binary obj off stl_ascii stl_binary medit tetgen gmsh22 gmsh41 vtk triangle off2d)
fi
for t in "${targets[@]}"; do
    case $action in
    unpack)
        if [ ! -d "$t" ]; then
            tar -xzf "$t.tar.gz"
        fi
        ;;
    pack)
        tar --sort=name --format=gnu --mtime=@0 --owner=0 --group=0 --numeric-owner \
            --mode=u=rwX,go=rX -cf - "$t" | gzip -9n > "$t.tar.gz.tmp"
        mv "$t.tar.gz.tmp" "$t.tar.gz"
        ;;
    *)
        echo "fuzz/corpus.sh: unknown action $action (unpack or pack)" >&2
        exit 2
        ;;
    esac
done
