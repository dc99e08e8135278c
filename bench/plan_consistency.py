#!/usr/bin/env python3
"""Checks the planner against the estimator through the real CLI: every plan a search
ranks is what an estimate of its configuration answers, and a constraint never finds a
faster best plan than the unconstrained search.

usage: plan_consistency.py --cli PATH/TO/paraplan --server HOST:PORT [--searches N] [--seed S]

Draws N random searches (seeded) over model presets, built-in profiles, GPU counts,
global batches, frameworks, CUDA graphs and offloading; for each, estimates the (up to
four) ranked plans' configurations under the same profile, model and framework and
compares iteration time and memory (to 1e-9), then searches again with tensor
parallelism pinned to another degree and checks that its best plan is no faster. Prints
each disagreement and a count; exits 1 when there is one.
"""
import argparse, json, random, subprocess, sys

from paraplan_batch import estimate_batch

MODELS = ['gpt3-175b', 'llama3-8b', 'llama3-70b', 'mixtral-8x7b', 'qwen3-30b-a3b', 'gpt-oss-120b', 'deepseek-v3',
          'megatron-22b', 'llama3.1-405b', 'qwen3-235b-a22b']
PROFILES = ['dgx-a100-80gb', 'dgx-h100-80gb', 'dgx-h200-141gb', 'dgx-b200-180gb', 'gb200-nvl72']
FRAMEWORKS = {'any': 'FRAMEWORK_UNSPECIFIED', 'megatron': 'FRAMEWORK_MEGATRON', 'nemo': 'FRAMEWORK_NEMO',
              'deepspeed': 'FRAMEWORK_DEEPSPEED', 'torchtitan': 'FRAMEWORK_TORCHTITAN',
              'pytorch-fsdp': 'FRAMEWORK_PYTORCH_FSDP'}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cli', required=True)
    ap.add_argument('--server', default='127.0.0.1:50051')
    ap.add_argument('--searches', type=int, default=40)
    ap.add_argument('--seed', type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    bad = checked = constrained = 0
    for _ in range(a.searches):
        model, profile, fw = rng.choice(MODELS), rng.choice(PROFILES), rng.choice(sorted(FRAMEWORKS))
        gpus = rng.choice([8, 16, 32, 64, 128, 256, 512])
        gbs = gpus * rng.choice([1, 2, 4, 8])
        args = [a.cli, '--server', a.server, '-o', 'json', '--timeout', '120', 'plan', '--profile', profile, '--model',
                model, '--gpus', str(gpus), '--global-batch', str(gbs), '--top', '4', '--framework', fw]
        if rng.random() < 0.3:
            args.append('--cuda-graphs')
        if rng.random() < 0.3:
            args.append('--allow-offload')
        what = '%s on %d %s, global batch %d, %s' % (model, gpus, profile, gbs, fw)
        out = subprocess.run(args, capture_output=True, text=True)
        if out.returncode != 0:
            continue  # nothing fits, or the framework refuses the model: no plan to check
        plans = json.loads(out.stdout)['plans']
        requests = [{'profile': profile, 'model': model, 'config': p['config'], 'framework': FRAMEWORKS[fw]}
                    for p in plans]
        for p, e in zip(plans, estimate_batch(a.cli, a.server, requests)):
            checked += 1
            if 'error' in e:
                bad += 1
                print('planned but refused: %s: %s' % (what, e['error']['message']))
                continue
            t, m = p['iteration_time_s'], p['memory']['total_bytes']
            if abs(t / e['iteration_time_s'] - 1) > 1e-9 or abs(m / e['memory']['total_bytes'] - 1) > 1e-9:
                bad += 1
                print('plan and estimate differ: %s: %.6g vs %.6g s, %.4g vs %.4g GiB' %
                      (what, t, e['iteration_time_s'], m / 2**30, e['memory']['total_bytes'] / 2**30))
        tp = rng.choice([t for t in (1, 2, 4, 8) if t != plans[0]['config']['tensor_parallel']])
        pinned = subprocess.run(args + ['--tp', str(tp)], capture_output=True, text=True)
        if pinned.returncode == 0:
            constrained += 1
            best = json.loads(pinned.stdout)['plans'][0]['iteration_time_s']
            if best < plans[0]['iteration_time_s'] * (1 - 1e-9):
                bad += 1
                print('TP %d found a faster plan: %s: %.6g < %.6g s' % (tp, what, best, plans[0]['iteration_time_s']))
    print('%d plans checked against their estimates, %d searches with TP pinned: %d disagreements' %
          (checked, constrained, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
