#!/usr/bin/env bash
# Offline checks of the deployment files (no Docker needed): promtool config/rules and
# rule unit tests when promtool is installed, JSON of the dashboard.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m json.tool grafana/dashboards/paraplan.json >/dev/null && echo "dashboard JSON ok"
if command -v promtool >/dev/null; then
  promtool check rules prometheus/rules.yml
  promtool test rules prometheus/rules_test.yml
else
  echo "promtool not installed (apt-get install prometheus): rule checks skipped"
fi
