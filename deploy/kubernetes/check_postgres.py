#!/usr/bin/env python3
"""Offline check of deploy/kubernetes/paraplan-postgres.yaml (no cluster needed): it
parses, and the facts that make the PostgreSQL mode work hold — a Deployment of >= 2
replicas whose server flags select PostgreSQL with the password from a Secret (not the
URI), gRPC probes, a PodDisruptionBudget that leaves replicas serving, and a Service with
the ports of paraplan.yaml. Exits 0 when all hold, 1 listing what does not, 77 (skip)
without python3-yaml. Run by ctest as deploy.kubernetes_postgres."""
import os
import sys

try:
    import yaml
except ImportError:
    print("skip: python3-yaml not installed")
    sys.exit(77)

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "paraplan-postgres.yaml")
docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
kinds = {d["kind"]: d for d in docs}
errors = []
dep = kinds.get("Deployment")
pdb = kinds.get("PodDisruptionBudget")
svc = next((d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "paraplan"), None)
if not dep:
    errors.append("no Deployment")
else:
    spec = dep["spec"]
    replicas = spec.get("replicas", 1)
    if replicas < 2:
        errors.append(f"Deployment replicas {replicas} < 2")
    pod = spec["template"]["spec"]
    ctr = pod["containers"][0]
    args = ctr.get("args", [])
    db = args[args.index("--db") + 1] if "--db" in args else ""
    if not (db.startswith("postgresql://") or db.startswith("postgres://")):
        errors.append(f"--db {db!r} does not select PostgreSQL")
    userinfo = db.split("://", 1)[-1].split("/", 1)[0]
    if "@" in userinfo and ":" in userinfo.split("@")[0]:
        errors.append("password in the --db URI: use PGPASSWORD from a Secret")
    env = {e["name"]: e for e in ctr.get("env", [])}
    if "secretKeyRef" not in env.get("PGPASSWORD", {}).get("valueFrom", {}):
        errors.append("PGPASSWORD must come from a Secret")
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        if ctr.get(probe, {}).get("grpc", {}).get("port") != 50051:
            errors.append(f"{probe} must be a gRPC probe on 50051")
    if not pod.get("securityContext", {}).get("runAsNonRoot"):
        errors.append("runAsNonRoot missing")
    if pod.get("terminationGracePeriodSeconds") != 30:
        errors.append("terminationGracePeriodSeconds must be 30")
    if any(m["mountPath"] == "/var/lib/paraplan" for m in ctr.get("volumeMounts", [])):
        errors.append("a stateless replica mounts no data volume")
    labels = spec["template"]["metadata"]["labels"]
    if not pdb:
        errors.append("no PodDisruptionBudget")
    else:
        sel = pdb["spec"]["selector"]["matchLabels"]
        if any(labels.get(k) != v for k, v in sel.items()):
            errors.append("PodDisruptionBudget does not select the Deployment's pods")
        if "maxUnavailable" in pdb["spec"]:
            if pdb["spec"]["maxUnavailable"] >= replicas:
                errors.append("PodDisruptionBudget allows every replica down")
        elif pdb["spec"].get("minAvailable", 0) < 1:
            errors.append("PodDisruptionBudget keeps no replica")
if not svc or {p["port"] for p in svc["spec"]["ports"]} != {50051, 9464, 8080}:
    errors.append("Service paraplan must expose 50051, 9464 and 8080 (the HTTP/JSON API)")
if errors:
    print("\n".join(errors))
    sys.exit(1)
print(f"ok: Deployment of {dep['spec']['replicas']} replicas on PostgreSQL, PodDisruptionBudget, Service")
