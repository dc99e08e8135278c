#!/usr/bin/env bash
# Starts a real paraplan-server on a free loopback port with a temporary SQLite file,
# runs a check through the real CLI, and always stops the server.
#   run_validation.sh SERVER CLI SHARED            validate_public.py on Korthikanti's runs
#                                                  (its own bar: MAPE <= 5 %, max 10 %)
#   run_validation.sh SERVER CLI SHARED paradl     ParaDL's 36 runs as a regression guard:
#     every run answered, uncalibrated MAPE at most 35 % (33.04 % since the measured JPEG
#     decode rate, 37.64 % before), and a dry-run calibration on them that lowers the
#     in-sample error and names its model gap
set -euo pipefail
server=$1 cli=$2 shared=$3 mode=${4:-korthikanti}
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$server" --listen "127.0.0.1:$port" --db "$dir/paraplan.db" --metrics-listen "" \
  --auto-calibrate-after 0 >"$dir/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 1 100); do
  "$cli" --server "127.0.0.1:$port" profiles list >/dev/null 2>&1 && break
  sleep 0.1
done
if [[ $mode != paradl ]]; then
  python3 "$shared/tools/validate_public.py" --cli "$cli" --server "127.0.0.1:$port"
  exit
fi

runs=$shared/data/paradl_abci_small.jsonl
# validate_public.py's own bar is for Korthikanti's runs; here its table is read.
python3 "$shared/tools/validate_public.py" --cli "$cli" --server "127.0.0.1:$port" --file "$runs" \
  >"$dir/table.txt" || true
cat "$dir/table.txt"
python3 - "$dir/table.txt" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r'MAPE ([0-9.]+)%  max [0-9.]+%  over (\d+) runs', text)
if not m:
    sys.exit('paradl: no MAPE line')
mape, runs = float(m.group(1)), int(m.group(2))
unanswered = [l for l in text.splitlines() if l.startswith('paradl_') and ' - ' in l]
if runs != 36 or unanswered:
    sys.exit('paradl: %d runs, %d unanswered' % (runs, len(unanswered)))
if mape > 35:
    sys.exit('paradl: uncalibrated MAPE %.2f %% is above the 35 %% guard' % mape)
print('paradl: 36 runs answered, uncalibrated MAPE %.2f %% (guard 35 %%)' % mape)
EOF
"$cli" --server "127.0.0.1:$port" ingest "$runs" | tail -1
"$cli" --server "127.0.0.1:$port" --timeout 300 calibrate --profile abci-v100-16gb --dry-run >"$dir/fit.txt"
python3 - "$dir/fit.txt" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r'fitted on 36 measurements .*MAPE ([0-9.]+)% -> ([0-9.]+)%', text)
if not m or float(m.group(2)) >= float(m.group(1)):
    sys.exit('paradl: the calibration did not lower the in-sample error:\n' + text[:2000])
if 'model gap:' not in text:
    sys.exit('paradl: the report names no model gap:\n' + text[:2000])
print('paradl: calibration in sample %s %% -> %s %%, model gap named' % (m.group(1), m.group(2)))
EOF
