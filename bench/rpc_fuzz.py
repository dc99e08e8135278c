#!/usr/bin/python3
"""Fuzz campaign through a running paraplan-server: mutated requests on the wire.

usage: bench/rpc_fuzz.py --server HOST:PORT [--requests N] [--threads T] [--seed S]
                         [--server-pid PID] [--deadline-s D]

Each request is a valid seed (Estimate, Plan, ListModels, GetProfile, IngestMeasurements,
GetAccuracy, Calibrate dry run; text format encoded by Debian's `protoc --encode` from
proto/) sent as is or mutated at the byte level: flipped bytes, a truncation, inserted
random bytes, a splice of two seeds, or a field's varint set to an extreme. Calls go
through grpcio with raw bytes, so the server's own parsing and validation see them, with
a deadline of --deadline-s. Prints the answers by status code, throughput and, with
--server-pid, the server's resident memory at the start, its peak (sampled every second)
and at the end. Exit 1 when the server stops answering, dies, or answers UNKNOWN (an
escaped exception) or DATA_LOSS. Never run it against a server whose data you keep: its
mutated ingests are stored when they happen to be valid.
"""
import argparse
import collections
import os
import random
import subprocess
import sys
import threading
import time

import grpc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEASUREMENT = ('id: "fuzz-seed" profile: "dgx-a100-80gb" iteration_time_s: 1.3 '
               'workload { name: "GPT-22B" precision: PRECISION_FP16 transformer { num_layers: 48 '
               'hidden_size: 6144 num_attention_heads: 64 ffn_hidden_size: 24576 seq_length: 2048 '
               'vocab_size: 51200 } } config { tensor_parallel: 8 micro_batch_size: 4 global_batch_size: 4 '
               'recompute: RECOMPUTE_FULL }')
SEEDS = [
    ('/paraplan.v1.Planner/Estimate', 'EstimateRequest',
     'profile: "dgx-a100-80gb" model: "gpt3-175b" config { tensor_parallel: 8 pipeline_parallel: 8 '
     'data_parallel: 16 micro_batch_size: 1 global_batch_size: 1536 sequence_parallel: true }'),
    ('/paraplan.v1.Planner/Plan', 'PlanRequest',
     'profile: "dgx-a100-80gb" model: "gpt3-175b" gpus: 64 global_batch_size: 512 top_k: 3'),
    ('/paraplan.v1.Planner/ListModels', 'ListModelsRequest', ''),
    ('/paraplan.v1.Profiles/GetProfile', 'GetProfileRequest', 'name: "dgx-a100-80gb"'),
    ('/paraplan.v1.Measurements/IngestMeasurements', 'IngestMeasurementsRequest',
     f'measurements {{ {MEASUREMENT} }}'),
    ('/paraplan.v1.Measurements/GetAccuracy', 'GetAccuracyRequest', 'profile: "dgx-a100-80gb"'),
    ('/paraplan.v1.Measurements/Calibrate', 'CalibrateRequest', 'profile: "dgx-a100-80gb" dry_run: true'),
]
EXTREMES = [b'\x00', b'\x7f', b'\xff\xff\xff\xff\x0f', b'\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01',
            b'\x80\x80\x80\x80\x08']


def encode(message, text):
    protos = ['proto/paraplan/v1/services.proto', 'proto/paraplan/v1/network.proto']
    return subprocess.run(['protoc', '-Iproto', f'--encode=paraplan.v1.{message}', *protos], input=text.encode(),
                          capture_output=True, check=True, cwd=ROOT).stdout


def mutate(rng, data, seeds):
    kind = rng.randrange(6)
    b = bytearray(data)
    if kind == 0 or not b:
        return bytes(b)
    if kind == 1:
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind == 2:
        del b[rng.randrange(len(b)):]
    elif kind == 3:
        at = rng.randrange(len(b) + 1)
        b[at:at] = rng.randbytes(rng.randint(1, 32))
    elif kind == 4:
        other = rng.choice(seeds)[2]
        b = b[:rng.randrange(len(b) + 1)] + other[rng.randrange(len(other) + 1):]
    else:  # a varint after some tag byte set to an extreme
        at = rng.randrange(len(b))
        b[at + 1:at + 2] = rng.choice(EXTREMES)
    return bytes(b)


def rss_mib(pid):
    try:
        with open(f'/proc/{pid}/status') as f:
            for line in f:
                if line.startswith('VmRSS:'):
                    return int(line.split()[1]) // 1024
    except OSError:
        return None
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--server', required=True)
    ap.add_argument('--requests', type=int, default=100000)
    ap.add_argument('--threads', type=int, default=8)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--server-pid', type=int)
    ap.add_argument('--deadline-s', type=float, default=2.0)
    a = ap.parse_args()

    seeds = [(method, message, encode(message, text)) for method, message, text in SEEDS]
    channel = grpc.insecure_channel(a.server, options=[('grpc.max_receive_message_length', 64 << 20)])
    calls = {m: channel.unary_unary(m, request_serializer=None, response_deserializer=None) for m, _, _ in seeds}
    codes = collections.Counter()
    lock = threading.Lock()
    next_index = [0]
    start_rss = rss_mib(a.server_pid) if a.server_pid else None
    peak = [start_rss or 0]
    done = threading.Event()

    def sample():
        while not done.wait(1.0):
            r = rss_mib(a.server_pid)
            if r is not None:
                peak[0] = max(peak[0], r)

    def work(t):
        rng = random.Random(a.seed * 1000 + t)
        while True:
            with lock:
                if next_index[0] >= a.requests:
                    return
                next_index[0] += 1
            method, _, data = rng.choice(seeds)
            try:
                calls[method](mutate(rng, data, seeds), timeout=a.deadline_s)
                code = 'OK'
            except grpc.RpcError as e:
                code = e.code().name
            with lock:
                codes[(method.rsplit('/', 1)[1], code)] += 1

    began = time.monotonic()
    sampler = threading.Thread(target=sample, daemon=True)
    if a.server_pid:
        sampler.start()
    workers = [threading.Thread(target=work, args=(t,)) for t in range(a.threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    seconds = time.monotonic() - began
    done.set()
    try:
        grpc.channel_ready_future(channel).result(timeout=5)
        health = calls['/paraplan.v1.Planner/ListModels'](seeds[2][2], timeout=5) is not None
    except (grpc.RpcError, grpc.FutureTimeoutError):
        health = False
    end_rss = rss_mib(a.server_pid) if a.server_pid else None

    by_code = collections.Counter()
    for (method, code), n in sorted(codes.items()):
        print(f'{method:20s} {code:20s} {n}')
        by_code[code] += n
    print(f'requests={a.requests} seconds={seconds:.1f} per_s={a.requests / seconds:.0f} '
          + ' '.join(f'{c}={n}' for c, n in sorted(by_code.items())))
    if a.server_pid:
        print(f'rss_mib start={start_rss} peak={peak[0]} end={end_rss}')
    bad = by_code['UNKNOWN'] + by_code['DATA_LOSS']
    alive = health and (not a.server_pid or end_rss is not None)
    print(f'server_answers_after={"yes" if alive else "NO"} unknown_or_data_loss={bad}')
    return 0 if alive and bad == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
