#!/usr/bin/env python3
"""Lists the ConfigContainer override keys Megatron-Bridge's recipe runner accepts for the
sections paraplan sets.

usage: extract_bridge_keys.py BRIDGE_GIT COMMIT MEGATRON_LM_GIT > megatron_bridge_keys.txt

Megatron-Bridge (scripts/training/run_recipe.py, README "Training entry points") applies
trailing KEY=VALUE overrides to the recipe's ConfigContainer: `section.field=value`. The
sections are dataclasses of src/megatron/bridge/training/config.py and
src/megatron/bridge/models/gpt_provider.py that inherit the fields of Megatron-Core's and
Megatron-Training's config dataclasses, read here from the Megatron-LM commit the bridge
pins as its 3rdparty/Megatron-LM submodule. This parses both with Python's ast (importing
nothing), follows each section class's bases through the modules' imports, and prints one
accepted key a line after the provenance.
"""
import ast
import subprocess
import sys

# ConfigContainer section -> the class that types it (bridge module).
SECTIONS = {
    'train': ('megatron.bridge.training.config', 'TrainingConfig'),
    'model': ('megatron.bridge.models.gpt_provider', 'GPTModelProvider'),
    'optimizer': ('megatron.bridge.training.config', 'OptimizerConfig'),
    'ddp': ('megatron.bridge.training.config', 'DistributedDataParallelConfig'),
    'comm_overlap': ('megatron.bridge.training.comm_overlap', 'CommOverlapConfig'),
    'mixed_precision': ('megatron.bridge.training.mixed_precision', 'MixedPrecisionConfig'),
    'dist': ('megatron.bridge.training.config', 'DistributedInitConfig'),
    'checkpoint': ('megatron.bridge.training.config', 'CheckpointConfig'),
}
RUNNER = 'scripts/training/run_recipe.py'


def git(git_dir, *args):
    return subprocess.run(['git', '--git-dir', git_dir, *args], capture_output=True, text=True, check=True).stdout


class Source:
    """Module text by dotted name: the bridge under src/, Megatron-LM at its root."""

    def __init__(self, bridge, commit, megatron, megatron_commit):
        self.roots = [(bridge, commit, 'src/'), (megatron, megatron_commit, '')]
        self.cache = {}

    def module(self, name):
        """(syntax tree, whether it is a package's __init__), or (None, False)."""
        if name in self.cache:
            return self.cache[name]
        found = (None, False)
        for git_dir, commit, prefix in self.roots:
            base = prefix + name.replace('.', '/')
            for path, package in ((base + '.py', False), (base + '/__init__.py', True)):
                try:
                    found = (ast.parse(git(git_dir, 'show', f'{commit}:{path}')), package)
                    break
                except subprocess.CalledProcessError:
                    continue
            if found[0] is not None:
                break
        self.cache[name] = found
        return found


def imports(tree, module, package):
    """Local name -> (module, original name) of a module's `from X import Y as Z`."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module is not None or node.level):
            source = node.module
            if node.level:  # relative to the package (a package's __init__ is its own)
                parts = module.split('.')
                keep = len(parts) - node.level + (1 if package else 0)
                source = '.'.join(parts[:keep] + ([node.module] if node.module else []))
            for alias in node.names:
                out[alias.asname or alias.name] = (source, alias.name)
    return out


def fields(src, module, name, seen):
    """Field names of class `name` in `module` and of its bases, followed through imports."""
    if (module, name) in seen:
        return set()
    seen.add((module, name))
    tree, package = src.module(module)
    if tree is None:
        return set()
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
    imported = imports(tree, module, package)
    if cls is None:  # re-exported: follow the import
        if name in imported:
            return fields(src, *imported[name], seen)
        return set()
    out = set()
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if 'ClassVar' in ast.unparse(stmt.annotation) or stmt.target.id.startswith('_'):
                continue
            out.add(stmt.target.id)
    for base in cls.bases:
        base_name = ast.unparse(base).split('[')[0]
        if '.' in base_name or base_name in ('object', 'Generic', 'ABC', 'Protocol'):
            continue
        if base_name in imported:
            out |= fields(src, *imported[base_name], seen)
        else:
            out |= fields(src, module, base_name, seen)
    return out


def main():
    bridge, commit, megatron = sys.argv[1], sys.argv[2], sys.argv[3]
    submodule = git(bridge, 'ls-tree', commit, '3rdparty/Megatron-LM').split()[2]
    src = Source(bridge, commit, megatron, submodule)
    keys = set()
    for section, (module, name) in SECTIONS.items():
        found = fields(src, module, name, set())
        if not found:
            sys.exit(f'no fields found for {section} ({module}.{name})')
        keys |= {f'{section}.{f}' for f in found}
    keys.add('mixed_precision')  # a recipe name string is accepted in place of the object
    # The runner's own options (argparse option strings of scripts/training/run_recipe.py).
    for node in ast.walk(ast.parse(git(bridge, 'show', f'{commit}:{RUNNER}'))):
        if isinstance(node, ast.Call) and getattr(node.func, 'attr', '') == 'add_argument':
            for a in node.args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith('-'):
                    keys.add(a.value)
    print(f'# Megatron-Bridge ConfigContainer override keys: NVIDIA-NeMo/Megatron-Bridge at commit {commit}')
    print(f'# (src/megatron/bridge/training/config.py, models/gpt_provider.py, training/comm_overlap.py,')
    print(f'# training/mixed_precision.py) with the Megatron-Core / Megatron-Training fields they inherit at')
    print(f'# NVIDIA/Megatron-LM (below), and the option strings of {RUNNER};')
    print(f'# Megatron-LM commit {submodule} (the 3rdparty/Megatron-LM submodule of that commit);')
    print('# made by tests/launchers/extract_bridge_keys.py. One key a line.')
    for k in sorted(keys):
        print(k)


if __name__ == '__main__':
    main()
