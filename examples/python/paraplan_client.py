#!/usr/bin/env python3
"""A Python client of paraplan's gRPC API, with stubs made by Debian's protoc.

Generate the stubs once (Debian 12: apt-get install protobuf-compiler protobuf-compiler-grpc
python3-grpcio python3-protobuf grpc-proto), from the repository root:

    mkdir -p py
    protoc -I proto -I /usr/share/grpc-proto/grpc --python_out=py --grpc_out=py \
        --plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin \
        proto/paraplan/v1/*.proto proto/google/rpc/error_details.proto \
        /usr/share/grpc-proto/grpc/reflection/v1alpha/reflection.proto
    PYTHONPATH=py python3 examples/python/paraplan_client.py 127.0.0.1:50051

(The reflection proto is compiled from inside grpc/, so its module is
reflection.v1alpha.reflection_pb2 and does not collide with the grpc package.)

It estimates GPT-3 175B on 1,024 A100s, shows how a refused request names its field (the
google.rpc.BadRequest detail of the status), and lists the server's services by gRPC
reflection. Prints one line per step; exits 1 if a step did not go as described.
"""
import sys

import grpc

from google.rpc import error_details_pb2
from reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from paraplan.v1 import services_pb2, services_pb2_grpc, types_pb2


def estimate(channel):
    planner = services_pb2_grpc.PlannerStub(channel)
    req = services_pb2.EstimateRequest(profile="dgx-a100-80gb", model="gpt3-175b")
    req.config.tensor_parallel = 8
    req.config.pipeline_parallel = 8
    req.config.data_parallel = 16
    req.config.micro_batch_size = 1
    req.config.global_batch_size = 1536
    req.config.sequence_parallel = True
    req.config.flash_attention = True
    req.config.recompute = types_pb2.RECOMPUTE_SELECTIVE
    e = planner.Estimate(req, timeout=30).estimate
    print(f"estimate: {e.iteration_time_s:.3f} s per iteration on {e.num_gpus} GPUs, "
          f"{e.memory.total_bytes / 2**30:.1f} GiB per GPU, MFU {100 * e.mfu:.1f} %")
    return e.iteration_time_s > 0


def refused(channel):
    planner = services_pb2_grpc.PlannerStub(channel)
    req = services_pb2.EstimateRequest(profile="dgx-a100-80gb", model="gpt3-175b")
    req.config.tensor_parallel = 7  # does not divide GPT-3's 96 heads
    req.config.global_batch_size = 8
    try:
        planner.Estimate(req, timeout=30)
    except grpc.RpcError as e:
        details = dict(e.trailing_metadata() or ()).get("grpc-status-details-bin")
        status = error_details_pb2.Status.FromString(details) if details else None
        bad = error_details_pb2.BadRequest()
        if status is None or not status.details or not status.details[0].Unpack(bad):
            print(f"refused: {e.code().name} without a BadRequest detail: {e.details()}")
            return False
        v = bad.field_violations[0]
        print(f"refused: {e.code().name}, field {v.field}: {v.description}")
        return e.code() == grpc.StatusCode.INVALID_ARGUMENT and v.field == "config.tensor_parallel"
    print("refused: the server accepted TP 7")
    return False


def reflection(channel):
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    call = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=30)
    names = []
    for response in call:  # the stream ends after the one answer; its status must be OK
        names += [s.name for s in response.list_services_response.service]
    print(f"reflection: {', '.join(sorted(names))} (stream ended {call.code().name})")
    return call.code() == grpc.StatusCode.OK and "paraplan.v1.Planner" in names


def main():
    target = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051"
    with grpc.insecure_channel(target) as channel:
        ok = [step(channel) for step in (estimate, refused, reflection)]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
