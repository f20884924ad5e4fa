#!/usr/bin/env python3
"""Torch peers of bench_expert_ffn, run on the GPU machine in the same run (scripts/gpu/run.sh ... expert_ffn).

Same model shape and routing distribution (GLM-5.2: H 6144, I 2048, 256 experts, top-8; scenarios
ep1 and ep8_rank), the same expert FFN (L1 gate/up, SwiGLU, L2 down) through
  - torch._grouped_mm           (bf16 weights and activations)
  - torch._scaled_grouped_mm    (FP8 e4m3 rowwise: per-row activation scales, per-column weight
                                 scales, h requantized per row between the two GEMMs)
timed as CUDA-graph replays (median of events) over 4 routings in turn, like the C++ benchmark.
A peer that raises is recorded with its error, never silently dropped.
"""
import argparse
import json

import torch

from torch_timing import time_us

H, I, E, TOPK, RANKS, ROT = 6144, 2048, 256, 8, 8, 4
TOKENS = [1, 2, 4, 8, 16, 32, 64, 128, 256]


def routing(global_tokens, local, seed):
    g = torch.Generator().manual_seed(seed)
    scores = torch.rand(global_tokens, E, generator=g)
    experts = scores.topk(TOPK, dim=1).indices.flatten()
    experts = experts[experts < local]
    counts = torch.bincount(experts, minlength=local)
    return counts


def offsets_for(counts, align):
    padded = ((counts + align - 1) // align) * align if align > 1 else counts
    return torch.cumsum(padded, 0).to(torch.int32).cuda(), int(padded.sum())


def rowwise_fp8(x):
    amax = x.abs().amax(dim=1, keepdim=True).float().clamp(min=1e-10)
    scale = amax / 448.0
    return (x.float() / scale).clamp(-448, 448).to(torch.float8_e4m3fn), scale.squeeze(1)


class Bf16Peer:
    name = "torch_grouped_mm_bf16"
    bytes_per_expert = 3 * H * I * 2

    def __init__(self, local):
        # mat_b [G, K, N] column-major (made as [G, N, K] and transposed), as the kernels prefer.
        self.w1 = (torch.randn(local, 2 * I, H, device="cuda", dtype=torch.bfloat16) * 0.02).transpose(1, 2)
        self.w2 = (torch.randn(local, H, I, device="cuda", dtype=torch.bfloat16) * 0.02).transpose(1, 2)

    def make(self, rows, offs):
        x = torch.randn(rows, H, device="cuda", dtype=torch.bfloat16)

        def fn():
            gu = torch._grouped_mm(x, self.w1, offs=offs)
            h = torch.nn.functional.silu(gu[:, :I]) * gu[:, I:]
            return torch._grouped_mm(h, self.w2, offs=offs)
        return fn


class Fp8Peer:
    name = "torch_scaled_grouped_mm_fp8_rowwise"
    bytes_per_expert = 3 * H * I + 4 * (2 * I + H)

    def __init__(self, local):
        self.w1 = (torch.randn(local, 2 * I, H, device="cuda") * 0.02).to(torch.float8_e4m3fn).transpose(1, 2)
        self.w2 = (torch.randn(local, H, I, device="cuda") * 0.02).to(torch.float8_e4m3fn).transpose(1, 2)
        self.s1 = torch.rand(local, 2 * I, device="cuda") * 1e-3 + 1e-4
        self.s2 = torch.rand(local, H, device="cuda") * 1e-3 + 1e-4

    def make(self, rows, offs):
        xq, xs = rowwise_fp8(torch.randn(rows, H, device="cuda", dtype=torch.bfloat16))

        def fn():
            gu = torch._scaled_grouped_mm(xq, self.w1, xs, self.s1, offs=offs, out_dtype=torch.bfloat16)
            h = torch.nn.functional.silu(gu[:, :I]) * gu[:, I:]
            hq, hs = rowwise_fp8(h)
            return torch._scaled_grouped_mm(hq, self.w2, hs, self.s2, offs=offs, out_dtype=torch.bfloat16)
        return fn


def measure(peer, scenario, tokens, reps):
    ep1 = scenario == "ep1"
    local = E if ep1 else E // RANKS
    global_tokens = tokens if ep1 else tokens * RANKS
    last_error = None
    for align in (1, 16):  # some versions want 16-row aligned groups; padding is what users do
        try:
            fns, experts, rows = [], 0.0, 0.0
            for r in range(ROT):
                counts = routing(global_tokens, local, 1000 * tokens + r)
                offs, total = offsets_for(counts, align)
                experts += float((counts > 0).sum()) / ROT
                rows += float(counts.sum()) / ROT
                fns.append(peer.make(max(total, 1), offs))

            def all_rotations():
                for f in fns:
                    f()
            us = time_us(all_rotations, 1, reps, graph=True) / ROT
            gbps = experts * peer.bytes_per_expert / (us * 1e-6) / 1e9
            return {"peer": peer.name, "scenario": scenario, "tokens_per_rank": tokens,
                    "rows": rows, "active_experts": experts, "group_alignment": align,
                    "time_us": us, "weight_gbps": gbps}
        except Exception as error:  # noqa: BLE001 - recorded in the JSON
            last_error = f"{type(error).__name__}: {error}"
    return {"peer": peer.name, "scenario": scenario, "tokens_per_rank": tokens, "error": last_error}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    points = []
    for scenario in ("ep1", "ep8_rank"):
        local = E if scenario == "ep1" else E // RANKS
        for peer_type in (Fp8Peer, Bf16Peer):
            try:
                peer = peer_type(local)
            except Exception as error:  # noqa: BLE001
                points.append({"peer": peer_type.name, "scenario": scenario, "error": str(error)})
                continue
            for tokens in TOKENS:
                point = measure(peer, scenario, tokens, args.reps)
                points.append(point)
                print(json.dumps(point), flush=True)
            del peer
            torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump({"benchmark": "expert_ffn_torch", "torch": torch.__version__,
                   "device": torch.cuda.get_device_name(), "points": points}, f, indent=2)


if __name__ == "__main__":
    main()
