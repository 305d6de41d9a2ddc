#!/usr/bin/env bash
# Regimes and bounds over a depth x width grid, streamed as CSV; count the shapes per regime.
set -euo pipefail

depthwidth bounds --depth 1:48 --width 256:8192:256 --format csv |
  awk -F, 'NR > 1 { count[$6]++ } END { for (r in count) print r, count[r] }' | sort
