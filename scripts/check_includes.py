#!/usr/bin/env python3
"""Checks that includes run one way (ctest include_layers; exit 1 naming each offence).

1. Inside estimator/, folders are floors (FLOORS below): a source file may include a
   header of its own folder or of a lower floor, never of a floor above or beside it.
   Tests (*_test.cc) and estimator/testing/ may include any floor. No source sits in
   estimator/ itself, and the estimator includes no gRPC, protobuf, SQLite or CLI header.
2. Between top-level folders there is no cycle (server -> report -> proto and
   client -> report -> proto, never client <-> server); tests/, bench/ and fuzz targets
   are leaves that nothing includes.

Usage: check_includes.py [REPO_ROOT]
"""
import os
import re
import sys

FLOORS = {
    "inputs": 0,
    "catalog": 1,
    "system": 1,
    "workloads": 2,
    "iteration": 3,
    "plan": 4,
    "calibration": 4,
}
# Top-level folders whose includes form the executables' graph, and the include
# prefixes that lead into each (generated proto headers live under paraplan/ and grpc/).
TOP = ["estimator", "sim", "store", "proto", "report", "server", "client"]
GENERATED = {"paraplan/": "proto"}
FORBIDDEN_IN_ESTIMATOR = ("grpc", "grpcpp/", "google/protobuf/", "paraplan/v1/", "sqlite3",
                          "server/", "client/", "store/", "proto/", "report/")
INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^">]+)[">]', re.M)
SOURCE = (".h", ".cc", ".hpp", ".cpp")


def sources(root, folder):
    for dirpath, _, files in os.walk(os.path.join(root, folder)):
        for f in files:
            if f.endswith(SOURCE):
                path = os.path.join(dirpath, f)
                yield os.path.relpath(path, root), open(path, encoding="utf-8").read()


def is_test(rel):
    return rel.endswith("_test.cc") or "/testing/" in rel


def check_estimator(root):
    errors = []
    for rel, text in sources(root, "estimator"):
        parts = rel.split("/")
        if len(parts) == 2:
            errors.append(f"{rel}: a source directly in estimator/; put it in a floor folder")
            continue
        floor = parts[1]
        if floor not in FLOORS and floor != "testing":
            errors.append(f"{rel}: folder estimator/{floor}/ is not a floor of {sorted(FLOORS)}")
            continue
        for inc in INCLUDE.findall(text):
            if inc.startswith(FORBIDDEN_IN_ESTIMATOR):
                errors.append(f"{rel}: includes {inc}; the estimator stays free of RPC, store and CLI headers")
            if not inc.startswith("estimator/") or is_test(rel):
                continue
            target = inc.split("/")[1]
            if target == "testing":
                errors.append(f"{rel}: includes {inc}; estimator/testing/ is for tests only")
            elif target == floor:
                continue
            elif target not in FLOORS:
                errors.append(f"{rel}: includes {inc}, outside every floor")
            elif FLOORS[target] >= FLOORS[floor]:
                errors.append(f"{rel}: includes {inc}: estimator/{target}/ is not below estimator/{floor}/")
    return errors


def top_folder_of(inc):
    for prefix, folder in GENERATED.items():
        if inc.startswith(prefix):
            return folder
    head = inc.split("/")[0]
    return head if head in TOP else None


def check_top_level(root):
    edges = {t: set() for t in TOP}
    where = {}
    for folder in TOP:
        for rel, text in sources(root, folder):
            if is_test(rel):
                continue
            for inc in INCLUDE.findall(text):
                target = top_folder_of(inc)
                if target and target != folder:
                    edges[folder].add(target)
                    where.setdefault((folder, target), f"{rel} includes {inc}")
    errors = []
    # A cycle exists iff a depth-first search meets a folder still on its stack.
    state = {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(edges[node]):
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt):] + [nxt]
                steps = [where[(a, b)] for a, b in zip(cycle, cycle[1:])]
                errors.append("folder cycle " + " -> ".join(cycle) + " (" + "; ".join(steps) + ")")
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for t in TOP:
        if t not in state:
            visit(t, [t])
    for leaf in ("tests", "bench"):
        for folder in TOP:
            for rel, text in sources(root, folder):
                for inc in INCLUDE.findall(text):
                    if inc.startswith(leaf + "/"):
                        errors.append(f"{rel}: includes {inc}; {leaf}/ is a leaf nothing includes")
    return errors


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    errors = check_estimator(root) + check_top_level(root)
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} include(s) run the wrong way (see scripts/check_includes.py)")
        return 1
    print("includes run one way: estimator floors and top-level folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
