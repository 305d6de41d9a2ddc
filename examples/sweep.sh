#!/usr/bin/env bash
# A budget sweep as a pipeline: one plan per budget, as CSV, then one field per call for $(...) capture.
set -euo pipefail

# pick columns by name from the CSV header (no cell of these columns holds a comma)
columns() { awk -F, -v want="$1" 'NR == 1 { n = split(want, w, ","); for (i = 1; i <= NF; i++) at[$i] = i }
  { line = ""; for (j = 1; j <= n; j++) line = line (j > 1 ? "," : "") $at[w[j]]; print line }'; }

printf '# budgets to plan\n1e8\n350M\n1.3B\n1e10\n1T\n' |
  depthwidth plan --params - --format csv |
  columns budget.value,threshold.min_depth,threshold.width,threshold.heads,threshold.regime,rule.empirical_depth,rule.empirical_width

for budget in 1e8 1e9 1e10; do
  depth=$(depthwidth plan --params "$budget" --field threshold.min_depth)
  width=$(depthwidth plan --params "$budget" --field threshold.width)
  echo "budget $budget -> minimal shape ${depth}x${width}"
done
