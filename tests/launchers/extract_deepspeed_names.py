#!/usr/bin/env python3
"""Lists what Megatron-DeepSpeed's pretrain_gpt.py and DeepSpeed's ds_config.json accept.

usage: extract_deepspeed_names.py MEGATRON_DEEPSPEED_GIT COMMIT DEEPSPEED_GIT COMMIT > deepspeed_names.txt

Flags: every add_argument flag of Megatron-DeepSpeed's megatron/arguments.py, and the
ones DeepSpeed adds to it (deepspeed.add_config_arguments: _add_core_arguments in
deepspeed/__init__.py). Config keys: the string constants of
deepspeed/runtime/constants.py, deepspeed/runtime/activation_checkpointing/config.py and
deepspeed/runtime/zero/config.py, and the fields (and aliases) of the pydantic models of
deepspeed/runtime/zero/config.py and offload_config.py. Read with patterns and
Python's ast, importing neither. Lines "flag --x" and "key x"; the first lines give the
provenance. The launcher test checks paraplan's --emit deepspeed output against it.
"""
import ast
import re
import subprocess
import sys


def show(git_dir, commit, path):
    return subprocess.run(['git', '--git-dir', git_dir, 'show', f'{commit}:{path}'], capture_output=True,
                          text=True, check=True).stdout


def add_argument_flags(text):
    calls = ' '.join(m.group(0) for m in re.finditer(r'add_argument\([^)]*', text))
    return set(re.findall(r"""['"](--[A-Za-z0-9][A-Za-z0-9_-]*)['"]""", calls))


def string_constants(text):
    keys = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            if all(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets):
                keys.add(node.value.value)
    return keys


def model_fields(text):
    keys = set()
    for cls in ast.walk(ast.parse(text)):
        if not isinstance(cls, ast.ClassDef):
            continue
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                keys.add(stmt.target.id)
                if isinstance(stmt.value, ast.Call):
                    for kw in stmt.value.keywords:
                        if kw.arg == 'alias' and isinstance(kw.value, ast.Constant):
                            keys.add(kw.value.value)
    return keys


def main():
    mds, mds_commit, ds, ds_commit = sys.argv[1:5]
    flags = add_argument_flags(show(mds, mds_commit, 'megatron/arguments.py'))
    init = show(ds, ds_commit, 'deepspeed/__init__.py')
    core = init[init.index('def _add_core_arguments'):]
    core = core[:core.index('\ndef ', 1)]
    flags |= add_argument_flags(core)
    keys = set()
    for path in ('deepspeed/runtime/constants.py', 'deepspeed/runtime/activation_checkpointing/config.py',
                 'deepspeed/runtime/zero/config.py'):
        keys |= string_constants(show(ds, ds_commit, path))
    for path in ('deepspeed/runtime/zero/config.py', 'deepspeed/runtime/zero/offload_config.py'):
        keys |= model_fields(show(ds, ds_commit, path))
    print(f'# Megatron-DeepSpeed pretrain_gpt.py flags: microsoft/Megatron-DeepSpeed at commit {mds_commit},')
    print('# megatron/arguments.py; with DeepSpeed\'s add_config_arguments and ds_config.json keys:')
    print(f'# microsoft/DeepSpeed at commit {ds_commit}. Made by tests/launchers/extract_deepspeed_names.py.')
    for f in sorted(flags):
        print('flag', f)
    for k in sorted(keys):
        if re.fullmatch(r'[a-z][a-z0-9_]*', k):
            print('key', k)


if __name__ == '__main__':
    main()
