#!/usr/bin/env bash
# Offline checks of the deployment files — everything that does not need a Docker engine
# or a Kubernetes cluster. Run by ctest (deploy.check) and by hand: deploy/check.sh
#
#   1. Grafana dashboard: valid JSON (python3 -m json.tool) and well formed (ids, targets,
#      the $profile variable, only paraplan metric names the server exports).
#   2. Prometheus: promtool check config / check rules / test rules (skipped without promtool;
#      `apt-get install prometheus` provides it).
#   3. YAML of compose, Kubernetes, Grafana provisioning: parses, and the facts that matter
#      hold (skipped without python3-yaml): the SQLite manifest (kubernetes/paraplan.yaml)
#      runs one replica with gRPC probes and its data volume; the PostgreSQL manifest
#      (kubernetes/paraplan-postgres.yaml, checked by kubernetes/check_postgres.py) runs a
#      Deployment of >= 2 stateless replicas with the password from a Secret and a
#      PodDisruptionBudget; both expose the same Service and image; mounted files exist.
#   4. systemd unit: systemd-analyze verify, any warning fails (skipped without systemd-analyze).
#   5. Dockerfile: ENTRYPOINT / EXPOSE / HEALTHCHECK / USER as documented, and, when a build
#      exists, every shared library of the two binaries comes from the runtime stage's
#      packages (skipped without a build or apt metadata). The image itself is NOT built:
#      there is no Docker engine here.
# Exits non-zero if any check fails; a skipped check prints why.
set -uo pipefail
cd "$(dirname "$0")"
DEPLOY_DIR=$(pwd)
BUILD_DIR=${PARAPLAN_BUILD_DIR:-$DEPLOY_DIR/../build}

failures=0
pass() { echo "ok:   $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
skip() { echo "skip: $*"; }
run() {  # run NAME CMD...: passes when CMD exits 0
  local name=$1; shift
  local out
  if out=$("$@" 2>&1); then pass "$name"; else echo "$out"; fail "$name"; fi
}

# The metric names server/metrics.cc exports (histograms with their series suffixes).
METRICS="paraplan_rpc_requests_total paraplan_rpc_duration_seconds paraplan_plan_candidates_evaluated_total
paraplan_plan_candidates_total paraplan_prediction_error_ratio paraplan_prediction_mape_ratio
paraplan_prediction_bias_ratio paraplan_memory_predictions_total paraplan_measurements_ingested_total
paraplan_calibrations_total paraplan_profile_version paraplan_calibration_age_seconds
paraplan_calibration_disagreements"

# ---------------------------------------------------------------- 1. dashboard
if ! command -v python3 >/dev/null; then
  skip "python3 missing: dashboard and YAML checks"
else
  run "dashboard JSON parses (json.tool)" python3 -m json.tool grafana/dashboards/paraplan.json
  run "dashboard structure" env METRICS="$METRICS" python3 - grafana/dashboards/paraplan.json <<'EOF'
import json, os, re, sys
d = json.load(open(sys.argv[1]))
known = set(os.environ["METRICS"].split())
known |= {m + s for m in known for s in ("_bucket", "_sum", "_count")}
errors = []
assert d.get("uid") and d.get("title"), "uid and title"
ids = [p["id"] for p in d["panels"]]
if len(ids) != len(set(ids)):
    errors.append("duplicate panel ids")
variables = {v["name"]: v for v in d["templating"]["list"]}
prof = variables.get("profile")
if not prof or "label_values(paraplan_prediction_mape_ratio, profile)" not in json.dumps(prof.get("query")):
    errors.append("template variable profile must query label_values(paraplan_prediction_mape_ratio, profile)")
titles = []
for p in d["panels"]:
    if p["type"] == "row":
        continue
    titles.append(p["title"])
    if "gridPos" not in p:
        errors.append(f"{p['title']}: no gridPos")
    if not p.get("targets"):
        errors.append(f"{p['title']}: no targets")
    for t in p.get("targets", []):
        expr = t.get("expr", "")
        if expr.count("(") != expr.count(")") or expr.count("{") != expr.count("}"):
            errors.append(f"{p['title']}: unbalanced expr {expr}")
        for name in re.findall(r"\bparaplan_[a-z_]+", expr):
            if name not in known:
                errors.append(f"{p['title']}: unknown metric {name}")
used = json.dumps(d)
for m in os.environ["METRICS"].split():
    if m not in used:
        errors.append(f"no panel shows {m}")
if errors:
    print("\n".join(errors)); sys.exit(1)
print(f"{len(titles)} panels")
EOF
fi

# ---------------------------------------------------------------- 2. Prometheus
if command -v promtool >/dev/null; then
  # check config also loads rule_files (resolved relative to prometheus.yml).
  run "promtool check config prometheus/prometheus.yml" promtool check config prometheus/prometheus.yml
  run "promtool check rules prometheus/rules.yml" promtool check rules prometheus/rules.yml
  run "promtool test rules prometheus/rules_test.yml" promtool test rules prometheus/rules_test.yml
else
  skip "promtool not installed (apt-get install prometheus): Prometheus config/rule checks"
fi
if command -v amtool >/dev/null; then
  run "amtool check-config prometheus/alertmanager.yml" amtool check-config prometheus/alertmanager.yml
else
  skip "amtool not installed (apt-get install prometheus-alertmanager): Alertmanager config check"
fi

# ---------------------------------------------------------------- 3. YAML
if command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null; then
  run "YAML files parse; compose / Kubernetes facts" python3 - <<'EOF'
import os, sys, yaml
errors = []
docs = {}
for path in ["compose.yaml", "kubernetes/paraplan.yaml", "kubernetes/paraplan-postgres.yaml",
             "kubernetes/servicemonitor.yaml",
             "prometheus/prometheus.yml", "prometheus/rules.yml", "prometheus/rules_test.yml",
             "grafana/provisioning/datasources/prometheus.yaml",
             "grafana/provisioning/dashboards/paraplan.yaml"]:
    try:
        docs[path] = [x for x in yaml.safe_load_all(open(path)) if x is not None]
    except Exception as e:  # noqa: BLE001
        errors.append(f"{path}: {e}")
c = docs.get("compose.yaml", [{}])[0]
services = c.get("services", {})
for s in ("paraplan", "prometheus", "alertmanager", "grafana"):
    if s not in services:
        errors.append(f"compose: no service {s}")
prom = yaml.safe_load(open("prometheus/prometheus.yml"))
targets = [t for a in prom.get("alerting", {}).get("alertmanagers", []) for sc in a.get("static_configs", [])
           for t in sc.get("targets", [])]
if "alertmanager:9093" not in targets:
    errors.append("prometheus.yml: alerts are not sent to the compose Alertmanager (alertmanager:9093)")
b = services.get("paraplan", {}).get("build", {})
if not os.path.isfile(os.path.join(b.get("context", "."), b.get("dockerfile", "Dockerfile"))):
    errors.append("compose: paraplan build context/dockerfile do not resolve to deploy/Dockerfile")
for name, svc in services.items():
    for v in svc.get("volumes", []):
        src = v.split(":")[0]
        if src.startswith(".") and not os.path.exists(src):
            errors.append(f"compose: {name} mounts missing {src}")
kinds = {d["kind"]: d for d in docs.get("kubernetes/paraplan.yaml", [])}
sts = kinds.get("StatefulSet")
if not sts:
    errors.append("kubernetes: no StatefulSet")
else:
    spec = sts["spec"]
    if spec.get("replicas") != 1:
        errors.append("kubernetes: StatefulSet must have exactly 1 replica (SQLite is single-writer)")
    pod = spec["template"]["spec"]
    if pod.get("terminationGracePeriodSeconds") != 30:
        errors.append("kubernetes: terminationGracePeriodSeconds must be 30")
    if not pod.get("securityContext", {}).get("runAsNonRoot"):
        errors.append("kubernetes: runAsNonRoot missing")
    ctr = pod["containers"][0]
    for probe in ("readinessProbe", "livenessProbe"):
        if ctr.get(probe, {}).get("grpc", {}).get("port") != 50051:
            errors.append(f"kubernetes: {probe} must be a gRPC probe on 50051")
    mounts = {m["mountPath"] for m in ctr.get("volumeMounts", [])}
    if "/var/lib/paraplan" not in mounts:
        errors.append("kubernetes: /var/lib/paraplan not mounted")
    if not spec.get("volumeClaimTemplates"):
        errors.append("kubernetes: no PVC template")
svc = [d for d in docs.get("kubernetes/paraplan.yaml", []) if d["kind"] == "Service" and d["metadata"]["name"] == "paraplan"]
if not svc or {p["port"] for p in svc[0]["spec"]["ports"]} != {50051, 9464, 8080}:
    errors.append("kubernetes: Service paraplan must expose 50051, 9464 and 8080 (the HTTP/JSON API)")
# The PostgreSQL manifest is the alternative to paraplan.yaml: the same Service, image and
# labels, so that clients, the ServiceMonitor and the dashboards see no difference.
pg = {d["kind"]: d for d in docs.get("kubernetes/paraplan-postgres.yaml", [])}
pg_svc = next((d for d in docs.get("kubernetes/paraplan-postgres.yaml", [])
               if d["kind"] == "Service" and d["metadata"]["name"] == "paraplan"), None)
if not pg_svc or not svc or pg_svc["metadata"]["name"] != "paraplan" or \
        {(p["name"], p["port"]) for p in pg_svc["spec"]["ports"]} != {(p["name"], p["port"]) for p in svc[0]["spec"]["ports"]}:
    errors.append("kubernetes: paraplan-postgres.yaml must define Service paraplan with the ports of paraplan.yaml")
if sts and pg.get("Deployment"):
    image = lambda w: w["spec"]["template"]["spec"]["containers"][0]["image"]
    if image(pg["Deployment"]) != image(sts):
        errors.append("kubernetes: the PostgreSQL Deployment and the StatefulSet must run the same image")
    if pg["Deployment"]["spec"]["template"]["metadata"]["labels"].get("app.kubernetes.io/name") != \
            sts["spec"]["template"]["metadata"]["labels"].get("app.kubernetes.io/name"):
        errors.append("kubernetes: both manifests must label their pods alike (ServiceMonitor, dashboards)")
elif not pg.get("Deployment"):
    errors.append("kubernetes: paraplan-postgres.yaml has no Deployment")
# Calls, not connections, spread over the replicas: a headless Service for gRPC clients.
if not any(d["kind"] == "Service" and d["spec"].get("clusterIP") == "None" and
           any(p["port"] == 50051 for p in d["spec"]["ports"])
           for d in docs.get("kubernetes/paraplan-postgres.yaml", [])):
    errors.append("kubernetes: paraplan-postgres.yaml needs a headless gRPC Service for client-side balancing")
# Releases, not moving tags.
for path in ("compose.yaml", "kubernetes/paraplan.yaml", "kubernetes/paraplan-postgres.yaml"):
    for d in docs.get(path, []):
        text = str(d)
        if "paraplan:latest" in text:
            errors.append(f"{path}: pin the image (paraplan:latest)")
compose_ports = " ".join(docs["compose.yaml"][0]["services"]["paraplan"].get("ports", []))
if ":8080" not in compose_ports:
    errors.append("compose: the HTTP/JSON API port 8080 is not published")
if errors:
    print("\n".join(errors)); sys.exit(1)
EOF
  run "kubernetes/paraplan-postgres.yaml: replicas, Secret, probes, PodDisruptionBudget (check_postgres.py)" \
    python3 kubernetes/check_postgres.py
else
  skip "python3-yaml not installed (apt-get install python3-yaml): YAML checks"
fi

# ---------------------------------------------------------------- 4. systemd
if command -v systemd-analyze >/dev/null; then
  # verify wants ExecStart= to exist: check a copy that points at a binary that does.
  tmp=$(mktemp -d)
  exe=/bin/true
  [ -x "$BUILD_DIR/server/paraplan-server" ] && exe=$(cd "$BUILD_DIR/server" && pwd)/paraplan-server
  sed "s#/usr/local/bin/paraplan-server#$exe#" systemd/paraplan.service > "$tmp/paraplan.service"
  out=$(systemd-analyze verify "$tmp/paraplan.service" 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && [ -z "$out" ]; then pass "systemd-analyze verify systemd/paraplan.service"
  else echo "$out"; fail "systemd-analyze verify systemd/paraplan.service"; fi
  rm -rf "$tmp"
else
  skip "systemd-analyze not installed: systemd unit check"
fi

# ---------------------------------------------------------------- 5. Dockerfile
run "Dockerfile: entrypoint, ports, volume, user, healthcheck" bash -c '
  f=Dockerfile
  grep -q "^FROM debian:12 AS build" $f &&
  grep -q "^FROM debian:12-slim" $f &&
  grep -q -- "-DBUILD_TESTING=OFF" $f &&
  grep -q "^EXPOSE 50051 9464 8080" $f &&
  ! grep -q "libprometheus-cpp-pull" $f &&
  grep -q "^VOLUME \[\"/var/lib/paraplan\"\]" $f &&
  grep -q "^USER 10001" $f &&
  grep -q "CMD \[\"paraplan\", \"--server\", \"127.0.0.1:50051\".*\"health\"\]" $f &&
  grep -q "ENTRYPOINT \[\"paraplan-server\", \"--listen\", \"0.0.0.0:50051\", \"--db\", \"/var/lib/paraplan/paraplan.db\"" $f &&
  grep -q "\"--metrics-listen\", \"0.0.0.0:9464\", \"--http-listen\", \"0.0.0.0:8080\"\]" $f'
if command -v hadolint >/dev/null; then
  run "hadolint Dockerfile" hadolint Dockerfile
fi

# Runtime packages (the apt-get install of the last stage) must cover the binaries' libraries.
runtime_pkgs=$(awk '/^FROM debian:12-slim/{rt=1} rt && /apt-get install/{grab=1} grab{print} grab && !/\\$/{grab=0}' Dockerfile |
  tr ' \\' '\n\n' | grep -E '^lib[a-z0-9+.-]+$' | sort -u)
bins=()
for b in "$BUILD_DIR/server/paraplan-server" "$BUILD_DIR/client/paraplan"; do [ -x "$b" ] && bins+=("$b"); done
if [ ${#bins[@]} -ne 2 ]; then
  skip "no build in $BUILD_DIR: runtime-library coverage of the Dockerfile"
elif ! command -v apt-cache >/dev/null || ! command -v dpkg >/dev/null ||
     ! closure=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
                   --no-replaces --no-enhances $runtime_pkgs 2>/dev/null | grep -v '^ ' | sed 's/:.*//' | sort -u) ||
     [ -z "$closure" ]; then
  skip "no apt metadata (apt-get update): runtime-library coverage of the Dockerfile"
else
  missing=""
  libs=$(ldd "${bins[@]}" 2>/dev/null | awk '/=> \//{print $3}' | sort -u)
  # One dpkg query for all: each library as linked and as resolved (alternatives, /lib -> /usr/lib).
  owners=$(for l in $libs; do echo "$l"; readlink -f "$l"; echo "/usr${l#/usr}"; done | sort -u |
           xargs dpkg -S 2>/dev/null)
  for lib in $libs; do
    real=$(readlink -f "$lib")
    pkg=$(grep -F -e ": $lib" -e ": $real" -e ": /usr${lib#/usr}" <<<"$owners" | head -1 | cut -d: -f1)
    [ -n "$pkg" ] || { echo "note: $lib belongs to no Debian package"; continue; }
    grep -qx "$pkg" <<<"$closure" || missing="$missing $pkg($lib)"
  done
  if [ -z "$missing" ]; then pass "Dockerfile runtime packages cover every shared library of the binaries"
  else fail "Dockerfile runtime stage lacks packages:$missing"; fi
fi

echo "docker: not checked (no Docker engine here): the image and compose.yaml are not built or run"
if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all deploy checks passed"
