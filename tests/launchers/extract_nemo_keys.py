#!/usr/bin/env python3
"""Lists the keys of NeMo 1.x's GPT pretraining config, as Hydra override paths.

usage: extract_nemo_keys.py NEMO_GIT COMMIT > nemo_gpt_config_keys.txt

Reads examples/nlp/language_modeling/conf/megatron_gpt_config.yaml at COMMIT and prints
every key as its dotted path (model.tensor_model_parallel_size, model.optim.name, ...),
after a line giving the provenance. Hydra's struct mode accepts "path=value" only for
these; any other key needs "+path=value". The launcher test checks paraplan's
--emit nemo output against this list.
"""
import subprocess
import sys

import yaml


def paths(node, prefix):
    if isinstance(node, dict):
        for key, value in node.items():
            path = f'{prefix}.{key}' if prefix else str(key)
            yield path
            yield from paths(value, path)


def main():
    git_dir, commit = sys.argv[1], sys.argv[2]
    path = 'examples/nlp/language_modeling/conf/megatron_gpt_config.yaml'
    text = subprocess.run(['git', '--git-dir', git_dir, 'show', f'{commit}:{path}'], capture_output=True, text=True,
                          check=True).stdout
    print(f'# Keys of NVIDIA/NeMo {path} at commit {commit}; made by tests/launchers/extract_nemo_keys.py.')
    for p in sorted(set(paths(yaml.safe_load(text), ''))):
        print(p)


if __name__ == '__main__':
    main()
