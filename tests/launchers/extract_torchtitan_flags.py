#!/usr/bin/env python3
"""Lists the command-line overrides torchtitan's trainer accepts for the sections paraplan sets.

usage: extract_torchtitan_flags.py TORCHTITAN_GIT COMMIT > torchtitan_flags.txt

torchtitan (torchtitan/config/README.md) builds a run's Trainer.Config in a Python
function; tyro still reads "--section.field VALUE" overrides, a bool field as
"--section.field" / "--section.no-field", and activation checkpointing as the
subcommand "activation-checkpoint:NAME". This reads the dataclasses ParallelismConfig,
TrainingConfig and CompileConfig of torchtitan/config/configs.py and the subcommand names
of torchtitan/distributed/activation_checkpoint.py with Python's ast and patterns,
importing nothing, and prints one accepted token a line after the provenance. It also
lists the config functions `--module M --config F` can name, as `config:M.F`: the public
top-level functions of torchtitan/models/M/config_registry.py that return a config.
"""
import ast
import re
import subprocess
import sys

SECTIONS = {'ParallelismConfig': 'parallelism', 'TrainingConfig': 'training', 'CompileConfig': 'compile'}


def show(git_dir, commit, path):
    return subprocess.run(['git', '--git-dir', git_dir, 'show', f'{commit}:{path}'], capture_output=True,
                          text=True, check=True).stdout


def main():
    git_dir, commit = sys.argv[1], sys.argv[2]
    tokens = {'--module', '--config'}
    tree = ast.parse(show(git_dir, commit, 'torchtitan/config/configs.py'))
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef) and cls.name in SECTIONS:
            section = SECTIONS[cls.name]
            for stmt in cls.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    if 'Suppress' in ast.unparse(stmt.annotation):
                        continue  # kept off the command line (tyro.conf.Suppress)
                    name = stmt.target.id
                    tokens.add(f'--{section}.{name}')
                    if isinstance(stmt.annotation, ast.Name) and stmt.annotation.id == 'bool':
                        tokens.add(f'--{section}.no-{name}')
    ac = show(git_dir, commit, 'torchtitan/distributed/activation_checkpoint.py')
    for sub in re.findall(r'tyro\.conf\.subcommand\("([a-z-]+)"\)', ac):
        tokens.add(f'activation-checkpoint:{sub}')
    files = subprocess.run(['git', '--git-dir', git_dir, 'ls-tree', '-r', '--name-only', commit, 'torchtitan/models/'],
                           capture_output=True, text=True, check=True).stdout.split()
    for path in files:
        parts = path.split('/')
        if len(parts) == 4 and parts[3] == 'config_registry.py':
            for fn in ast.parse(show(git_dir, commit, path)).body:
                if (isinstance(fn, ast.FunctionDef) and not fn.name.startswith('_') and fn.returns is not None
                        and ast.unparse(fn.returns).endswith('Config')):
                    tokens.add(f'config:{parts[2]}.{fn.name}')
    print(f'# torchtitan command-line overrides: pytorch/torchtitan at commit {commit},')
    print('# torchtitan/config/configs.py (ParallelismConfig, TrainingConfig, CompileConfig) and the')
    print('# activation-checkpoint subcommands of torchtitan/distributed/activation_checkpoint.py;')
    print('# and the config functions of torchtitan/models/*/config_registry.py as config:MODULE.FUNCTION;')
    print('# made by tests/launchers/extract_torchtitan_flags.py. One token a line.')
    for t in sorted(tokens):
        print(t)


if __name__ == '__main__':
    main()
