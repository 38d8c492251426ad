#!/usr/bin/env bash
# Build BLEST's yardstick driver with the device clock (device_clock.cu) beside it:
#   bash benchmarks/yardsticks/blest/build.sh ROOT [OUT_BIN]
# ROOT holds the git repository delbek/blest at ROOT/delbek+blest/repo (as for
# ../shared/tools/blest/build.sh, whose steps this follows with device_clock.cu as the driver's
# source); OUT_BIN defaults to .blest/bfs_blest_device (keep .blest/ out of git).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SHARED="${BLEST_TOOL:-$HERE/../../../../shared/tools/blest}"
MIRROR="${1:?usage: build.sh ROOT [OUT_BIN]}/delbek+blest/repo"
CUDA="${CUDA_HOME:-/usr/local/cuda}"
OUT_BIN="${2:-$PWD/.blest/bfs_blest_device}"; mkdir -p "$(dirname "$OUT_BIN")"
SRC="$(dirname "$OUT_BIN")/src-device"
BUILD="$(dirname "$OUT_BIN")/build-device"
rm -rf "$SRC" "$BUILD"
mkdir -p "$SRC" "$BUILD"
git -C "$MIRROR" archive HEAD | tar -x -C "$SRC"
git -C "$MIRROR" rev-parse HEAD > "$BUILD/blest_commit.txt"
rm -f "$SRC/SuiteSparseMatrixDownloader.hpp"
INC=(-I"$SRC" -I"$SRC/DataStructures" -I"$SRC/BFS" -I"$SRC/Gorder" -I"$SHARED")
for f in Graph Util UnitHeap; do
  g++ -O3 -std=c++20 -fopenmp "${INC[@]}" -c "$SRC/Gorder/$f.cpp" -o "$BUILD/$f.o" &
done
wait
"$CUDA/bin/nvcc" -O3 -std=c++20 --generate-line-info \
  -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
  -Xcompiler -fopenmp "${INC[@]}" -c "$HERE/device_clock.cu" -o "$BUILD/bfs_blest.o"
g++ -o "$OUT_BIN" "$BUILD/bfs_blest.o" "$BUILD/Graph.o" "$BUILD/Util.o" "$BUILD/UnitHeap.o" \
  -fopenmp -static-libstdc++ -static-libgcc -Wl,-Bstatic -lgomp -Wl,-Bdynamic \
  -L"$CUDA/lib64" -Wl,-Bstatic -lcudart_static -Wl,-Bdynamic -ldl -lrt -lpthread -lm
echo "built $OUT_BIN"
