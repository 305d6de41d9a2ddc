#!/usr/bin/env bash
# A budget sweep as a pipeline: one plan per budget, as CSV, then one field per call for $(...) capture.
set -euo pipefail

printf '# budgets to plan\n1e8\n350M\n1.3B\n1e10\n1T\n' |
  depthwidth plan --params - --format csv |
  cut -d, -f1,4,6,7,10,11,12   # params,min_depth,width,heads,regime,empirical_depth,empirical_width

for budget in 1e8 1e9 1e10; do
  depth=$(depthwidth plan --params "$budget" --field min_depth)
  width=$(depthwidth plan --params "$budget" --field width)
  echo "budget $budget -> minimal shape ${depth}x${width}"
done
