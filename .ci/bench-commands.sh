#!/usr/bin/env bash
# Whole-command times (make bench-commands): each command run as a whole
# process RUNS times after one warm-up, the median and range of its wall
# time beside the floor it is measured against (the work it prints it did,
# or the target docs/performance.md names). Kernels alone are timed by
# `make bench`; a slip outside them shows here.
#
#   .ci/bench-commands.sh BIN            (RUNS=5; TORCH=1 adds the PyTorch reference, ~75 s a run)
set -euo pipefail
bin=$(realpath "$1")
runs=${RUNS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME=$tmp/config XDG_DATA_HOME=$tmp/data LANG=en_US.UTF-8
# The cache (full MNIST, if fetched) is the user's: the commands run on
# what a user's run would. Say which.
probe=$("$bin" reproduce --n 1 --steps 1 --out "$tmp/probe" 2>&1)
if [[ $probe == *"MNIST t10k"* ]]; then
  data="full MNIST (the cache)"
else
  data="the embedded 1,000 test digits"
fi

# median of the numbers on stdin, and the range
stats() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f s (%.2f–%.2f)", m, a[1], a[NR]}'; }
now() { date +%s.%N; }

# time_cmd NAME FLOOR-REGEX -- CMD…: wall times of CMD, and the median of
# the first number the regex finds in its output (its own account of the work).
rows=()
time_cmd() {
  local name=$1 floor=$2; shift 3
  local walls=() inner=()
  for k in $(seq 0 "$runs"); do
    local t0 t1
    t0=$(now)
    "$@" >"$tmp/out" 2>&1 || { echo "bench: $name failed:"; cat "$tmp/out"; exit 1; }
    t1=$(now)
    [ "$k" = 0 ] && continue
    walls+=("$(echo "$t1 - $t0" | bc -l)")
    if [ -n "$floor" ]; then
      inner+=("$(tr '\r' '\n' <"$tmp/out" | grep -oP "$floor" | tail -1)")
    fi
  done
  local w i=""
  w=$(printf '%s\n' "${walls[@]}" | stats)
  [ ${#inner[@]} -gt 0 ] && i=$(printf '%s\n' "${inner[@]}" | stats)
  rows+=("$name|$w|$i")
}

time_cmd "reproduce bsa-p2 mask, 200 × 100" '\d+ steps, \K[0-9.]+(?=s\))' -- \
  "$bin" reproduce --model bsa --patch 2 --task mask --n 200 --steps 100 --out "$tmp/r1" --force
time_cmd "reproduce bsa-p2 noise, 1,000 × 100" '\d+ steps, \K[0-9.]+(?=s\))' -- \
  "$bin" reproduce --model bsa --patch 2 --task noise --n 1000 --steps 100 --out "$tmp/r2" --force
time_cmd "sweep bsa-p2 noise, 10 levels × 200 × 100" 'cells in \K[0-9.]+' -- \
  "$bin" sweep --model bsa-p2 --task noise --levels 0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1 --n 200 --steps 100 --out "$tmp/s" --force
time_cmd "train bsa P = 2, one epoch (10,000 images)" 'lr [0-9.e+-]+ +\K[0-9.]+(?=s)' -- \
  "$bin" train --patch 2 --epochs 1 --out "$tmp/t.safetensors" --force

# The window under Xvfb: the first snapshot drawn, then View → State space
# a second later (ATTRACTORLAB_BENCH=window prints both and quits).
first=() space=() ready=()
for k in $(seq 0 "$runs"); do
  ATTRACTORLAB_BENCH=window timeout 120 xvfb-run -a -s "-screen 0 1280x800x24" "$bin" >"$tmp/win" 2>&1 || { echo "bench: the window failed:"; cat "$tmp/win"; exit 1; }
  [ "$k" = 0 ] && continue
  first+=("$(grep -oP 'first frame \K[0-9.]+' "$tmp/win")")
  space+=("$(grep -oP 'state space drawn \K[0-9.]+' "$tmp/win")")
  ready+=("$(grep -oP 'window ready \K[0-9.]+' "$tmp/win")")
  for v in 10 20 30; do
    grep -oP "playback at $v steps/s: \K[0-9.]+" "$tmp/win" >>"$tmp/steps$v"
    grep -oP "playback at $v steps/s: [0-9.]+ steps/s shown, \K[0-9.]+" "$tmp/win" >>"$tmp/frames$v"
  done
done
rows+=("window: start-up to the first drawn frame|$(printf '%s\n' "${first[@]}" | stats)|$(printf '%s\n' "${ready[@]}" | stats)")
rows+=("window: View → State space until drawn|$(printf '%s\n' "${space[@]}" | stats)|")
# Playback: steps a second shown (the figure is a rate, not seconds).
rate() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f (%.1f–%.1f)", m, a[1], a[NR]}'; }
for v in 10 20 30; do
  rows+=("window: playback asked $v steps/s, steps/s shown|$(rate <"$tmp/steps$v")|$(rate <"$tmp/frames$v") frames/s drawn")
done

# The floor of a bare-model run (P = 2): its score products, N²(d²+d) =
# 196²·72 multiply-adds per image and step, at the rate this machine's
# cores sustain together today (BenchmarkChunkScoresStreamBoth, the median
# of 3). The softmax, the search and the metrics come on top of it.
floors=("" "" "" "")
dir=$(dirname "$0")/..
if command -v go >/dev/null; then
  rate=$(cd "$dir" && GOEXPERIMENT=simd go test -run '^$' -bench 'ChunkScoresStreamBoth$' -count 3 ./models 2>/dev/null |
    grep -oP '[0-9.]+(?= GMAC/s)' | sort -g | sed -n 2p)
  if [ -n "$rate" ]; then
    floor() { echo "$1 * 196 * 196 * 72 / ($rate * 10^9)" | bc -l | xargs printf "%.2f s"; }
    floors=("$(floor $((200 * 100)))" "$(floor $((1000 * 100)))" "$(floor $((10 * 200 * 100)))" "")
    echo "the score products run at $rate G multiply-adds/s on $(nproc) cores together (BenchmarkChunkScoresStreamBoth)"
  fi
fi

echo
echo "Whole processes on $data, $runs runs after a warm-up each, $(nproc) cores, $(date -u +%F):"
echo
echo "| command | whole process: median (min–max) | its own account of the work | floor: its score products alone | target |"
echo "|---|---|---|---|---|"
targets=("≤ 1.5 s; ≥ 10× the PyTorch reference" "≤ 5 s" "" "" "" "≤ 0.3 s" "10 ± 1" "20 ± 2" "30 ± 3")
notes=("the run it prints" "the run it prints" "the cells it prints" "the epoch it prints" "data and models loaded (window ready)" "" "" "" "")
for k in "${!rows[@]}"; do
  IFS='|' read -r name w i <<<"${rows[$k]}"
  echo "| $name | $w | ${i:+$i, }${notes[$k]} | ${floors[$k]:-} | ${targets[$k]} |"
done
if [ "${TORCH:-0}" = 1 ]; then
  py=/usr/bin/python3
  "$py" -c 'import torch' 2>/dev/null || { echo "TORCH=1 needs Debian's python3-torch"; exit 1; }
  dir=$(dirname "$0")/..
  echo
  "$py" "$dir/models/testdata/bsa_torch.py" bench "$dir/assets/weights/bsa-p2.safetensors" 200 100 2
fi
