#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets: tests/fuzz/corpus/<target>/<name>.{json,bin}.

The seeds are the requests of the server tests, the example files, lines of the public
measurements in ../shared/data and the inputs of the defects of issue 12. Each request
seed is written twice: as proto3 JSON and in the binary wire format (encoded by
`protoc --encode`, so protoc must be on PATH). Run from anywhere; it rewrites the seeds
it makes and leaves other files in corpus/ alone (libFuzzer's own finds are not kept
there: scripts/fuzz.sh writes them to build-fuzz/corpus/).
"""
import json
import pathlib
import subprocess

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SHARED = ROOT.parent / "shared" / "data"
PROTO_DIR = ROOT / "proto"


def textproto(obj, map_fields=("labels",)):
    """The protobuf text format of a JSON object that uses the proto field names."""
    out = []
    for key, value in obj.items():
        if key in map_fields:
            for k, v in value.items():
                out.append(f"{key} {{ key: {json.dumps(k)} value: {json.dumps(v)} }}")
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                out.append(f"{key} {{ {textproto(item)} }}")
            elif isinstance(item, bool):
                out.append(f"{key}: {'true' if item else 'false'}")
            elif isinstance(item, str) and item.isupper() and item.replace("_", "").isalnum():
                out.append(f"{key}: {item}")  # an enum value
            elif isinstance(item, str):
                out.append(f"{key}: {json.dumps(item)}")
            else:
                out.append(f"{key}: {item!r}")
    return " ".join(out)


def encode(message, obj):
    return subprocess.run(
        ["protoc", f"--encode=paraplan.v1.{message}", "-I", str(PROTO_DIR), "paraplan/v1/services.proto"],
        input=textproto(obj).encode(), capture_output=True, check=True).stdout


def write(target, name, data):
    d = HERE / "corpus" / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def both(target, message, name, obj):
    write(target, name + ".json", json.dumps(obj, indent=None))
    write(target, name + ".bin", encode(message, obj))


def jsonl(name):
    return [json.loads(line) for line in (SHARED / name).read_text().splitlines() if line.strip()]


def degrees(config):
    n = 1
    for k in ("data_parallel", "tensor_parallel", "pipeline_parallel", "context_parallel"):
        n *= config.get(k, 1) or 1
    return n


GPT3_CONFIG = {"tensor_parallel": 8, "pipeline_parallel": 8, "data_parallel": 16, "micro_batch_size": 1,
               "global_batch_size": 1536, "recompute": "RECOMPUTE_SELECTIVE", "sequence_parallel": True}
MOE = {"name": "moe-8x", "precision": "PRECISION_BF16",
       "transformer": {"num_layers": 16, "hidden_size": 4096, "num_attention_heads": 32, "num_kv_heads": 8,
                       "seq_length": 4096, "vocab_size": 32000, "gated_mlp": True,
                       "moe": {"num_experts": 8, "top_k": 2, "moe_layer_interval": 1}}}
CNN = json.loads((ROOT / "examples" / "cnn-small.json").read_text())
CNN_CONFIG = json.loads((ROOT / "examples" / "config-cnn-spatial.json").read_text())
RESIDUAL = {"name": "residual", "precision": "PRECISION_FP16", "optimizer": "OPTIMIZER_SGD_MOMENTUM",
            "dataset": {"sample_bytes": 150528, "num_samples": 100000, "location": "DATASET_STAGED",
                        "decode_core_ms_per_sample": 8, "fraction": 0.5},
            "layer_graph": {"sample_shape": [3, 64, 64], "layers": [
                {"name": "stem", "kind": "conv", "input_shape": [3, 64, 64], "output_shape": [32, 32, 32],
                 "kernel_shape": [7, 7], "stride": [2, 2], "padding": [3, 3], "bias": False},
                {"name": "bn", "kind": "norm", "input_shape": [32, 32, 32], "output_shape": [32, 32, 32]},
                {"name": "act", "kind": "relu", "input_shape": [32, 32, 32], "output_shape": [32, 32, 32]},
                {"name": "dw", "kind": "conv", "input_shape": [32, 32, 32], "output_shape": [32, 32, 32],
                 "kernel_shape": [3, 3], "padding": [2, 2], "dilation": [2, 2], "groups": 32},
                {"name": "sum", "kind": "add", "inputs": ["act", "dw"], "input_shape": [32, 32, 32],
                 "output_shape": [32, 32, 32]},
                {"name": "cat", "kind": "concat", "inputs": ["sum", "act"], "input_shape": [32, 32, 32],
                 "output_shape": [64, 32, 32]},
                {"name": "pool", "kind": "pool", "input_shape": [64, 32, 32], "output_shape": [64, 1, 1],
                 "kernel_shape": [32, 32]},
                {"name": "flat", "kind": "flatten", "input_shape": [64, 1, 1], "output_shape": [64]},
                {"name": "drop", "kind": "dropout", "input_shape": [64], "output_shape": [64]},
                {"name": "fc", "kind": "fc", "input_shape": [64], "output_shape": [10]},
                {"name": "loss", "kind": "softmax", "input_shape": [10], "output_shape": [10]}]}}
VOLUME = {"name": "volume", "precision": "PRECISION_FP32",
          "layer_graph": {"sample_shape": [4, 32, 32, 32], "layers": [
              {"name": "c1", "kind": "conv", "input_shape": [4, 32, 32, 32], "output_shape": [16, 32, 32, 32],
               "kernel_shape": [3, 3, 3], "padding": [1, 1, 1]},
              {"name": "a1", "kind": "activation", "input_shape": [16, 32, 32, 32], "output_shape": [16, 32, 32, 32]},
              {"name": "p1", "kind": "pool", "input_shape": [16, 32, 32, 32], "output_shape": [16, 16, 16, 16],
               "kernel_shape": [2, 2, 2]},
              {"name": "f", "kind": "flatten", "input_shape": [16, 16, 16, 16], "output_shape": [65536]},
              {"name": "fc", "kind": "fc", "input_shape": [65536], "output_shape": [4]}]}}
# Issue 12: a layer without output_shape and num_gpus > 0 crashed the spatial check.
CNN_NO_SHAPE = json.loads(json.dumps(CNN))
del CNN_NO_SHAPE["layer_graph"]["layers"][1]["output_shape"]

DGX_A100 = {
    "name": "dgx-a100-80gb", "gpus_per_node": 8, "num_nodes": 560,
    "accelerator": {"name": "A100-SXM4-80GB", "peak_tflops_bf16": 312, "peak_tflops_fp16": 312,
                    "peak_tflops_fp32": 19.5, "memory_gib": 80, "memory_bandwidth_gbytes_per_s": 2039,
                    "busy_power_w": 400, "idle_power_w": 60, "sm_count": 108},
    "network_levels": [
        {"name": "nvlink", "domain_size": 8, "bandwidth_gbytes_per_s": 300, "latency_us": 3,
         "topology": "TOPOLOGY_SWITCH", "oversubscription": 1},
        {"name": "infiniband", "domain_size": 0, "bandwidth_gbytes_per_s": 25, "latency_us": 5,
         "topology": "TOPOLOGY_FAT_TREE", "oversubscription": 1}],
    "host": {"memory_gib": 2048, "pcie_gbytes_per_s": 25}, "storage": {"read_gbytes_per_s": 25},
    "node_power_w": 3300, "price_per_gpu_hour_usd": 5.12}
ABCI_V100 = {
    "name": "abci-v100-16gb", "gpus_per_node": 4, "num_nodes": 1088,
    "accelerator": {"name": "V100-SXM2-16GB", "peak_tflops_fp16": 125, "peak_tflops_fp32": 15.7,
                    "memory_gib": 16, "memory_bandwidth_gbytes_per_s": 900, "busy_power_w": 300,
                    "idle_power_w": 40, "sm_count": 80},
    "network_levels": [
        {"name": "nvlink", "domain_size": 4, "bandwidth_gbytes_per_s": 150, "latency_us": 3},
        {"name": "rack", "domain_size": 136, "bandwidth_gbytes_per_s": 6.25, "latency_us": 5,
         "topology": "TOPOLOGY_FAT_TREE"},
        {"name": "spine", "bandwidth_gbytes_per_s": 6.25, "latency_us": 7, "topology": "TOPOLOGY_FAT_TREE",
         "oversubscription": 3}],
    "host": {"memory_gib": 384, "pcie_gbytes_per_s": 12}, "storage": {"read_gbytes_per_s": 3},
    "node_power_w": 600, "price_per_gpu_hour_usd": 3.06}


def estimate_seeds():
    t = "estimate_request_fuzzer"
    iters = jsonl("korthikanti22_iteration_times.jsonl")
    for i, m in enumerate(iters[:4]):
        req = {k: m[k] for k in ("profile", "workload", "config")}
        if i % 2:
            req["num_gpus"] = degrees(m["config"])
        both(t, "EstimateRequest", f"korthikanti_{i}", req)
    layer = jsonl("korthikanti22_layer_times.jsonl")[0]
    both(t, "EstimateRequest", "korthikanti_layer", {k: layer[k] for k in ("profile", "workload", "config")})
    vtrain = jsonl("vtrain_a100_single_node.jsonl")
    for i in (0, 480, 960, 1439):
        both(t, "EstimateRequest", f"vtrain_{i}", {k: vtrain[i][k] for k in ("profile", "workload", "config")})
    both(t, "EstimateRequest", "gpt3_preset",
         {"profile": "dgx-a100-80gb", "model": "gpt3-175b", "config": GPT3_CONFIG, "num_gpus": 1024})
    both(t, "EstimateRequest", "gpt3_too_many_stages",
         {"profile": "dgx-a100-80gb@1", "model": "gpt3-175b", "config": dict(GPT3_CONFIG, pipeline_parallel=128)})
    both(t, "EstimateRequest", "llama3_70b_cp_offload",
         {"profile": "dgx-h100-80gb", "model": "llama3-70b", "num_gpus": 256,
          "config": {"tensor_parallel": 8, "pipeline_parallel": 4, "context_parallel": 2, "data_parallel": 4,
                     "virtual_pipeline_stages": 5, "micro_batch_size": 1, "global_batch_size": 64,
                     "zero_stage": 1, "flash_attention": True, "offload": {"optimizer": True},
                     "pipeline_schedule": "SCHEDULE_INTERLEAVED_1F1B", "rank_order": "tp-cp-ep-pp-dp"}})
    both(t, "EstimateRequest", "moe_ep",
         {"profile": "dgx-h100-80gb", "workload": MOE, "num_gpus": 16,
          "config": {"expert_parallel": 8, "data_parallel": 8, "tensor_parallel": 2, "micro_batch_size": 2,
                     "global_batch_size": 256, "dp_algorithm": "ALGORITHM_HIERARCHICAL", "cuda_graphs": True}})
    both(t, "EstimateRequest", "cnn_spatial", {"profile": "abci-v100-16gb", "workload": CNN, "config": CNN_CONFIG,
                                               "num_gpus": 16})
    both(t, "EstimateRequest", "cnn_layer_without_output_shape",
         {"profile": "dgx-a100-80gb", "workload": CNN_NO_SHAPE, "config": CNN_CONFIG, "num_gpus": 16})
    # Issue 10: a residual DAG (named inputs), padding, dilation, groups, a spatial cut over
    # two axes, a staged dataset decoded on the CPU.
    both(t, "EstimateRequest", "cnn_residual_cut", {"profile": "abci-v100-16gb", "workload": RESIDUAL,
         "config": {"data_parallel": 2, "spatial_parallel": 4, "spatial_layers": 3, "spatial_axes": 2,
                    "micro_batch_size": 8, "global_batch_size": 16, "recompute": "RECOMPUTE_FULL"}, "num_gpus": 8})
    # Issue 22: MLA with folded experts, DeepEP and recompute modules on an NVL72 rack;
    # a sliding-window MoE over uneven interleaved stages with a CPU-offloaded layer.
    both(t, "EstimateRequest", "deepseek_folded",
         {"profile": "gb200-nvl72", "model": "deepseek-v3", "num_gpus": 256, "framework": "FRAMEWORK_MEGATRON",
          "config": {"tensor_parallel": 2, "pipeline_parallel": 8, "virtual_pipeline_stages": 2, "data_parallel": 16, "expert_parallel": 32,
                     "expert_tensor_parallel": 1, "sequence_parallel": True, "micro_batch_size": 1,
                     "global_batch_size": 256, "recompute": "RECOMPUTE_SELECTIVE",
                     "recompute_modules": ["layernorm", "moe_act", "mla_up_proj"], "zero_stage": 1,
                     "moe_dispatcher": "MOE_DISPATCHER_DEEPEP", "moe_a2a_overlap": True,
                     "offload_modules": ["core_attn", "attn_proj", "expert_fc1"],
                     "flash_attention": True}})
    both(t, "EstimateRequest", "gpt_oss_stages",
         {"profile": "gb300-nvl72", "model": "gpt-oss-120b", "num_gpus": 64,
          "config": {"pipeline_parallel": 4, "virtual_pipeline_stages": 2, "data_parallel": 16,
                     "expert_parallel": 16, "first_pipeline_stage_layers": 8, "last_pipeline_stage_layers": 8,
                     "cpu_offload_layers": 1, "micro_batch_size": 1, "global_batch_size": 64,
                     "pipeline_schedule": "SCHEDULE_INTERLEAVED_1F1B", "flash_attention": True}})
    # Stop 44: query / key norms (Qwen3) under ring attention over 4 ranks.
    both(t, "EstimateRequest", "qk_norm_ring_attention",
         {"profile": "dgx-h100-80gb", "num_gpus": 64,
          "workload": {"name": "qwen3-like", "precision": "PRECISION_BF16",
                       "transformer": {"num_layers": 8, "hidden_size": 4096, "num_attention_heads": 64,
                                       "num_kv_heads": 4, "head_dim": 128, "ffn_hidden_size": 12288,
                                       "gated_mlp": True, "seq_length": 32768, "vocab_size": 151936,
                                       "normalization": "NORMALIZATION_RMSNORM", "dropout": 0,
                                       "qk_layernorm": True}},
          "config": {"tensor_parallel": 2, "context_parallel": 4, "data_parallel": 8, "micro_batch_size": 1,
                     "global_batch_size": 64, "sequence_parallel": True, "flash_attention": True}})
    # A 3-D volume split over three axes.
    both(t, "EstimateRequest", "cnn_3d_axes", {"profile": "abci-v100-16gb", "workload": VOLUME,
         "config": {"spatial_parallel": 8, "spatial_axes": 3, "micro_batch_size": 1, "global_batch_size": 1},
         "num_gpus": 8})


def plan_seeds():
    t = "plan_request_fuzzer"
    base = {"profile": "dgx-a100-80gb", "model": "gpt3-175b"}
    both(t, "PlanRequest", "gpt3_64", dict(base, gpus=[64], global_batch_size=64))
    both(t, "PlanRequest", "gpt3_1024", dict(base, gpus=[1024], global_batch_size=1536, top_k=10))
    both(t, "PlanRequest", "gpt3_two_counts", dict(base, gpus=[4096, 2048], global_batch_size=2048))
    # Issue 12: an unbounded global batch kept a core busy for minutes.
    both(t, "PlanRequest", "gpt3_huge_batch", dict(base, gpus=[1024], global_batch_size=2147483647))
    both(t, "PlanRequest", "llama3_constrained",
         {"profile": "dgx-h100-80gb", "model": "llama3-8b", "gpus": [8, 16], "global_batch_size": 128,
          "objective": "OBJECTIVE_COST", "top_k": 3,
          "constraints": {"max_tensor_parallel": 4, "recompute": ["RECOMPUTE_SELECTIVE", "RECOMPUTE_FULL"],
                          "zero_stage": [1], "sequence_parallel": "FLAG_ON", "memory_headroom_ratio": 0.1,
                          "pipeline_schedule": ["SCHEDULE_1F1B"], "cuda_graphs": True}})
    both(t, "PlanRequest", "moe_energy", {"profile": "dgx-h100-80gb", "workload": MOE, "gpus": [64],
                                          "global_batch_size": 512, "objective": "OBJECTIVE_ENERGY",
                                          "constraints": {"expert_parallel": [4, 8], "allow_offload": True}})
    both(t, "PlanRequest", "qwen3_megatron", {"profile": "dgx-h100-80gb", "model": "qwen3-30b-a3b", "gpus": [64],
                                              "global_batch_size": 256, "framework": "FRAMEWORK_MEGATRON"})
    both(t, "PlanRequest", "cnn", {"profile": "abci-v100-16gb", "workload": CNN, "gpus": [16],
                                   "global_batch_size": 32})
    m = jsonl("korthikanti22_iteration_times.jsonl")[0]
    both(t, "PlanRequest", "korthikanti_8", {"profile": m["profile"], "workload": m["workload"], "gpus": [8],
                                             "global_batch_size": 8})


def profile_seeds():
    t = "profile_fuzzer"
    both(t, "SystemProfile", "dgx_a100", DGX_A100)
    both(t, "SystemProfile", "abci_v100", ABCI_V100)
    calibrated = json.loads(json.dumps(DGX_A100))
    calibrated["calibration"] = {
        "matmul_efficiency": 0.62, "matmul_half_efficiency_gflop": 3, "memory_bound_efficiency": 0.8,
        "overlap_efficiency": 0.7, "iteration_overhead_s": 0.01, "kernel_overhead_us": 4,
        "memory_overhead_fraction": 0.05, "memory_overhead_gib": 2, "attention_efficiency_fwd": 0.33,
        "attention_efficiency_bwd": 0.28, "collective_overhead_us": 10,
        "network": [{"level": "nvlink", "efficiency": 0.8, "latency_us": 4,
                     "bandwidth_curve": [{"bytes": 1048576, "efficiency": 0.3},
                                         {"bytes": 1073741824, "efficiency": 0.85}]}]}
    both(t, "SystemProfile", "dgx_a100_calibrated", calibrated)
    # Stop 32: the attention kernel's and the allocator's own parameters.
    stacks = json.loads(json.dumps(calibrated))
    stacks["calibration"].update({"cudnn_attention_efficiency_fwd": 0.53, "cudnn_attention_efficiency_bwd": 0.45,
                                  "expandable_segments_overhead_fraction": 0.01})
    both(t, "SystemProfile", "pytorch_stacks", stacks)
    # Stop 37: the all-to-all overlap's efficiency and the storage's energy per GB read.
    energy = json.loads(json.dumps(calibrated))
    energy["calibration"]["ep_overlap_efficiency"] = 0.46
    energy["storage"] = {"read_gbytes_per_s": 25, "read_joules_per_gbyte": 4.9, "shared_fs_gbytes_per_s": 100,
                         "shared_fs_joules_per_gbyte": 30}
    both(t, "SystemProfile", "overlap_and_storage_energy", energy)
    # Stop 43: the spread of the GPUs' speed (a job runs at its slowest GPU's pace).
    spread = json.loads(json.dumps(calibrated))
    spread["calibration"]["rank_speed_spread"] = 0.011
    both(t, "SystemProfile", "rank_speed_spread", spread)
    # Stop 44: a fused attention call's fixed work per query tile, in keys.
    tiles = json.loads(json.dumps(calibrated))
    tiles["calibration"].update({"attention_half_keys_fwd": 150, "attention_half_keys_bwd": 700})
    both(t, "SystemProfile", "attention_half_keys", tiles)
    # Stop 47: the softmax's work per score, in head-dimension units.
    softmax = json.loads(json.dumps(calibrated))
    softmax["calibration"].update({"attention_softmax_head_dim_fwd": 22, "attention_softmax_head_dim_bwd": 22,
                                   "cudnn_attention_softmax_head_dim_fwd": 70,
                                   "cudnn_attention_softmax_head_dim_bwd": 37})
    both(t, "SystemProfile", "attention_softmax_head_dim", softmax)
    # Issue 12: a denormal efficiency made every time infinite.
    tiny = json.loads(json.dumps(DGX_A100))
    tiny["calibration"] = {"matmul_efficiency": 5e-324}
    both(t, "SystemProfile", "denormal_efficiency", tiny)
    nan = json.loads(json.dumps(DGX_A100))
    nan["network_levels"][1]["oversubscription"] = "NaN"
    write(t, "nan_oversubscription.json", json.dumps(nan))


def cli_seeds():
    t = "cli_json_fuzzer"
    for f in sorted((ROOT / "examples").glob("*.json")):
        write(t, f.name, f.read_text())
    for name, rows in (("korthikanti22_iteration_times.jsonl", slice(0, 3)),
                       ("korthikanti22_layer_times.jsonl", slice(0, 2)),
                       ("vtrain_a100_single_node.jsonl", slice(100, 103))):
        lines = (SHARED / name).read_text().splitlines()[rows]
        write(t, name, "\n".join(lines) + "\n\n")
    write(t, "profile.json", json.dumps(DGX_A100, indent=2))
    write(t, "estimate_batch.jsonl",
          json.dumps({"profile": "dgx-a100-80gb", "model": "gpt3-175b", "config": GPT3_CONFIG}) + "\n" +
          "{\"profile\": \"x\", \"config\": {\"tensor_parallel\": \"eight\"}}\n")
    # What people get wrong in hand-written files; the text after a NUL stands for the
    # protobuf parser's message in the error locator.
    write(t, "truncated.json", '{"tensor_parallel": 8, "pipeline_parallel": ')
    write(t, "trailing_comma.json", '{"tensor_parallel": 8,\n "data_parallel": 2,\n}')
    write(t, "typo_field.json", '{"tensor_paralel": 8}\x00Cannot find field: tensor_paralel')
    write(t, "wrong_type.json", '{"micro_batch_size": "one"}\x00Invalid value for int32 field: micro_batch_size')
    write(t, "bad_enum.json", '{"recompute": "RECOMPUTE_SOME"}\x00Invalid enum value RECOMPUTE_SOME for enum type')
    write(t, "unicode.json", '{"name": "gpt-\\u00e9\\ud83d\\ude00", "precision": "PRECISION_BF16"}')
    write(t, "numbers.json", '{"training_tokens": -1.5e300, "dataset": {"num_samples": "9223372036854775807"}}')


if __name__ == "__main__":
    estimate_seeds()
    plan_seeds()
    profile_seeds()
    cli_seeds()
