#!/usr/bin/env python3
"""The torch peer of gcmoe's MoE align & sort (kernels/moe/align_sort_shape.h contract), timed on
the GPU like bench_align_sort: same shapes, same routing distribution, CUDA-graph replay and eager.

Algorithm (sort based, no host synchronization, so it captures in a CUDA graph):
  keys = expert id, or E for ids outside [0, E); stable sort of keys -> order (flat indices);
  starts = searchsorted(sorted keys, 0..E) (the bincount, as boundaries); padded segment offsets by
  cumsum; each sorted pair goes to offsets[e] + (its position - starts[e]); padding = N;
  block experts by searchsorted of each block's first row in the padded offsets.
Every case is checked against a numpy reference of the contract before it is timed.

Usage: align_sort_torch.py --out FILE [--block-size 64] [--reps 50]
"""
import argparse
import json

import numpy as np
import torch

from torch_timing import time_us


def capacity_of(n, experts, block):
    rows = n + min(experts, n) * (block - 1)
    return (rows + block - 1) // block * block


def align_sort_torch(topk_ids, experts, block, capacity, max_blocks):
    dev = topk_ids.device
    flat = topk_ids.reshape(-1)
    n = flat.numel()
    valid = (flat >= 0) & (flat < experts)
    keys = torch.where(valid, flat, torch.full_like(flat, experts))
    sorted_keys, order = torch.sort(keys, stable=True)
    bounds = torch.searchsorted(sorted_keys, torch.arange(experts + 1, device=dev, dtype=keys.dtype))
    counts = bounds[1:] - bounds[:-1]
    padded = (counts + block - 1) // block * block
    offsets = torch.zeros(experts + 1, device=dev, dtype=torch.int64)
    offsets[1:] = torch.cumsum(padded, 0)
    key_c = sorted_keys.clamp(max=experts - 1).long()
    rank = torch.arange(n, device=dev, dtype=torch.int64) - bounds[key_c]
    dest = torch.where(sorted_keys < experts, offsets[key_c] + rank,
                       torch.full_like(rank, capacity))
    out = torch.full((capacity + 1,), n, device=dev, dtype=torch.int32)
    out.scatter_(0, dest, order.to(torch.int32))
    rows = torch.arange(max_blocks, device=dev, dtype=torch.int64) * block
    owner = torch.searchsorted(offsets[1:], rows, right=True)
    block_experts = torch.where(rows < offsets[experts], owner, torch.full_like(owner, -1))
    return out[:capacity], block_experts.to(torch.int32), offsets.to(torch.int32), \
        offsets[experts:].to(torch.int32)


def align_sort_numpy(ids, experts, block):
    n = ids.size
    cap = capacity_of(n, experts, block)
    valid = (ids >= 0) & (ids < experts)
    counts = np.bincount(ids[valid], minlength=experts)
    offsets = np.zeros(experts + 1, dtype=np.int64)
    offsets[1:] = np.cumsum((counts + block - 1) // block * block)
    out = np.full(cap, n, dtype=np.int32)
    idx = np.nonzero(valid)[0]
    order = idx[np.argsort(ids[idx], kind="stable")]
    starts = np.concatenate([[0], np.cumsum(counts)])
    for e in range(experts):
        seg = order[starts[e]:starts[e + 1]]
        out[offsets[e]:offsets[e] + seg.size] = seg
    blocks = np.full(cap // block, -1, dtype=np.int32)
    for e in range(experts):
        blocks[offsets[e] // block:offsets[e + 1] // block] = e
    return out, blocks, offsets.astype(np.int32), int(offsets[-1])


def distinct_routing(tokens, top_k, experts, seed, dev):
    """k distinct uniform experts per token (a random permutation prefix per token)."""
    g = torch.Generator().manual_seed(seed)
    scores = torch.rand(tokens, experts, generator=g).to(dev)
    return torch.argsort(scores, dim=1)[:, :top_k].to(torch.int32).cpu()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--block-size", type=int, default=64)
    ap.add_argument("--reps", type=int, default=50)
    args = ap.parse_args()
    block = args.block_size
    dev = torch.device("cuda")
    cases = []
    bad_total = 0
    for tokens in (1, 16, 256, 4096, 16384, 65536):
        for top_k in (6, 8):
            for experts in (256, 384):
                ids_cpu = distinct_routing(tokens, top_k, experts, 1000 + tokens + top_k * experts, dev)
                n = ids_cpu.numel()
                cap = capacity_of(n, experts, block)
                max_blocks = cap // block
                ids = ids_cpu.to(dev)
                got = align_sort_torch(ids, experts, block, cap, max_blocks)
                ref = align_sort_numpy(ids_cpu.numpy().reshape(-1), experts, block)
                bad = int((got[0].cpu().numpy() != ref[0]).sum()) + \
                    int((got[1].cpu().numpy() != ref[1]).sum()) + \
                    int((got[2].cpu().numpy() != ref[2]).sum()) + int(got[3].item() != ref[3])
                bad_total += bad
                per_graph = 20 if n <= 16384 else (5 if n <= 131072 else 2)
                fn = lambda: align_sort_torch(ids, experts, block, cap, max_blocks)  # noqa: E731
                graph_us = time_us(fn, per_graph, args.reps, graph=True)
                eager_us = time_us(fn, per_graph, args.reps, graph=False)
                cases.append({"T": tokens, "top_k": top_k, "experts": experts, "block_size": block,
                              "pairs": n, "torch_graph_us": graph_us, "torch_eager_us": eager_us,
                              "torch_mismatches": bad})
                print(f"torch T={tokens:>5} k={top_k} E={experts} graph {graph_us:8.2f} us  "
                      f"eager {eager_us:8.2f} us  mismatches {bad}", flush=True)
    doc = {"bench": "align_sort_torch", "torch": torch.__version__,
           "gpu": torch.cuda.get_device_name(), "reps": args.reps,
           "timing": "median over reps of (CUDA-graph replay or eager loop of per_graph calls) "
                     "/ per_graph, CUDA events",
           "mismatches_total": bad_total, "cases": cases}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=2)
    print(f"wrote {args.out} (mismatches {bad_total})")
    return 1 if bad_total else 0


if __name__ == "__main__":
    raise SystemExit(main())
