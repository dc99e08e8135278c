#!/usr/bin/env python3
"""Lists the command-line flags Megatron-LM's pretrain_gpt.py accepts, from its source.

usage: extract_megatron_flags.py GIT_DIR COMMIT > megatron_lm_flags.txt

Megatron-LM builds its parser in megatron/training/arguments.py: flags written out in
add_argument calls, and groups generated from dataclasses (ArgumentGroupFactory in
megatron/training/argument_utils.py: a field becomes --field-name, a bool defaulting to
True becomes --no-field-name and --disable-field-name, and argparse_meta's arg_names
replace the generated names; listed fields are excluded). This reads both without
importing Megatron (no torch here): the literal flags by pattern, the dataclasses with
Python's ast, following base classes. The output starts with its provenance; the
launcher test checks every flag paraplan emits against it.
"""
import ast
import re
import subprocess
import sys


def show(git_dir, commit, path):
    return subprocess.run(['git', '--git-dir', git_dir, 'show', f'{commit}:{path}'], capture_output=True,
                          text=True, check=True).stdout


def find_class(git_dir, commit, name):
    out = subprocess.run(['git', '--git-dir', git_dir, 'grep', '-l', f'^class {name}\\b', commit, '--', '*.py'],
                         capture_output=True, text=True).stdout.split()
    for hit in out:
        path = hit.split(':', 1)[1]
        tree = ast.parse(show(git_dir, commit, path))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return path, node
    raise SystemExit(f'class {name} not found')


def literal(node):
    try:
        return ast.literal_eval(node)
    except Exception:
        return None


def field_flags(stmt):
    """Flags of one annotated dataclass field."""
    name = stmt.target.id
    default = None
    meta_names = None
    value = stmt.value
    if isinstance(value, ast.Call) and getattr(value.func, 'id', getattr(value.func, 'attr', '')) == 'field':
        for kw in value.keywords:
            if kw.arg == 'default':
                default = literal(kw.value)
            if kw.arg == 'metadata' and isinstance(kw.value, ast.Dict):
                for k, v in zip(kw.value.keys, kw.value.values):
                    if literal(k) == 'argparse_meta' and isinstance(v, ast.Dict):
                        for mk, mv in zip(v.keys, v.values):
                            if literal(mk) == 'arg_names':
                                meta_names = literal(mv)
    elif value is not None:
        default = literal(value)
    if meta_names:
        return name, list(meta_names)
    flag = name.replace('_', '-')
    if default is True:
        return name, [f'--no-{flag}', f'--disable-{flag}']
    return name, [f'--{flag}']


def dataclass_flags(git_dir, commit, name, exclude, seen=None):
    seen = seen if seen is not None else set()
    _, cls = find_class(git_dir, commit, name)
    flags = {}
    for base in cls.bases:
        base_name = getattr(base, 'id', None)
        if base_name and base_name not in seen and base_name[0].isupper():
            seen.add(base_name)
            try:
                flags.update(dataclass_flags(git_dir, commit, base_name, exclude, seen))
            except (SystemExit, subprocess.CalledProcessError):
                pass  # a base outside the repository (object, ABC, ...)
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and not stmt.target.id.startswith('__'):
            field, names = field_flags(stmt)
            if field not in exclude:
                flags[field] = names
    return flags


def main():
    git_dir, commit = sys.argv[1], sys.argv[2]
    args_py = show(git_dir, commit, 'megatron/training/arguments.py')
    tree = ast.parse(args_py)
    flags = set(re.findall(r"""['"](--[a-z0-9][a-z0-9-]*)['"]""", ' '.join(
        m.group(0) for m in re.finditer(r'add_argument\([^)]*', args_py))))
    # Each factory: its dataclass and its exclude list (a literal, or the list assigned to
    # a name earlier in the same function).
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef):
            continue
        names = {}
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                names[node.targets[0].id] = literal(node.value)
        for node in ast.walk(func):
            if isinstance(node, ast.Call) and getattr(node.func, 'id', '') == 'ArgumentGroupFactory':
                cls = node.args[0].id
                exclude = []
                for kw in node.keywords:
                    if kw.arg == 'exclude':
                        exclude = literal(kw.value) if not isinstance(kw.value, ast.Name) else names.get(kw.value.id)
                for names_of_field in dataclass_flags(git_dir, commit, cls, set(exclude or [])).values():
                    flags.update(names_of_field)
    print(f'# Flags of Megatron-LM pretrain_gpt.py: NVIDIA/Megatron-LM at commit {commit},')
    print('# megatron/training/arguments.py (add_argument calls and ArgumentGroupFactory dataclasses),')
    print('# extracted by tests/launchers/extract_megatron_flags.py. One flag a line.')
    for f in sorted(flags):
        print(f)


if __name__ == '__main__':
    main()
