#!/usr/bin/env python3
"""The torch peer of gcmoe's MoE router (kernels/moe/router_ref.h): fp32 F.linear (TF32 off),
score, biased top-k (or hash-table lookup), gather, renormalize, scale. Same shapes as
bench_routing; timed by CUDA-graph replay and eager, CUDA events, median.

Usage: routing_torch.py --out FILE [--reps 50]
"""
import argparse
import json

import torch
import torch.nn.functional as F

from torch_timing import time_us

FAMILIES = [  # name, hidden, experts, top_k, score, eps, scale, hashed, bias range
    ("glm5.2", 6144, 256, 8, "sigmoid", 1e-20, 2.5, False, (6.817, 7.063)),
    ("deepseek_v4.1", 5120, 384, 6, "sqrtsoftplus", 0.0, 1.5, False, (0.0, 57.0)),
    ("deepseek_v4_hash", 4096, 256, 6, "sqrtsoftplus", 0.0, 1.5, True, None),
]


def route_torch(x, gate, bias, table, token_ids, top_k, score, eps, scale):
    logits = F.linear(x, gate)
    s = torch.sigmoid(logits) if score == "sigmoid" else torch.sqrt(F.softplus(logits))
    if table is not None:
        idx = table[token_ids]
    else:
        idx = torch.topk(s + bias, top_k, dim=-1).indices
    w = s.gather(1, idx)
    w = w / (w.sum(dim=-1, keepdim=True) + eps) * scale
    return idx, w


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=50)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    g = torch.Generator(device="cpu").manual_seed(5)
    cases = []
    for name, hidden, experts, top_k, score, eps, scale, hashed, brange in FAMILIES:
        w = 2.0 / hidden ** 0.5
        gate = ((torch.rand(experts, hidden, generator=g) * 2 - 1) * w).to(dev)
        bias = None
        if brange is not None:
            bias = (torch.rand(experts, generator=g) * (brange[1] - brange[0]) + brange[0]).to(dev)
        table = None
        if hashed:
            table = torch.argsort(torch.rand(129280, experts, device=dev), dim=1)[:, :top_k]
        for tokens in (1, 16, 32, 64, 128, 256, 4096):
            x = (torch.rand(tokens, hidden, generator=g) * 2 - 1).to(dev)
            token_ids = torch.randint(0, 129280, (tokens,), generator=g).to(dev)
            fn = lambda: route_torch(x, gate, bias, table, token_ids, top_k, score, eps,  # noqa
                                     scale)
            per_graph = 5 if tokens >= 4096 else 20
            graph_us = time_us(fn, per_graph, args.reps, True)
            eager_us = time_us(fn, per_graph, args.reps, False)
            cases.append({"family": name, "T": tokens, "torch_graph_us": graph_us,
                          "torch_eager_us": eager_us})
            print(f"torch {name:>16} T={tokens:>5} graph {graph_us:8.2f} us eager {eager_us:8.2f} us",
                  flush=True)
    with open(args.out, "w") as f:
        json.dump({"bench": "routing_torch", "torch": torch.__version__, "reps": args.reps,
                   "cases": cases}, f, indent=2)


if __name__ == "__main__":
    main()
