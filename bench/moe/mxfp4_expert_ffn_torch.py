#!/usr/bin/env python3
"""Torch peers of bench_mxfp4_expert_ffn, run on the GPU machine in the same run
(scripts/gpu/run.sh --run OUT mxfp4_expert_ffn).

expert_ffn_torch.py's peers, scenarios, routings and timing at DeepSeek V4.1-Flash's expert shape
(H 5120, I 2304, 384 experts, top-6; ep1 and ep8_rank, T = 1..256, 4 routings in turn, CUDA-graph
replays):
  - torch._scaled_grouped_mm  (FP8 e4m3 rowwise: per-row activation scales, per-column weight scales)
  - torch._grouped_mm         (bf16)
Torch has no MXFP4 grouped GEMM, so these stream 1.5 B (FP8) and 3 B (bf16) per weight against
the MXFP4 kernel's 0.53 B: the comparison the issue asks for is time at the same shape and T.
Same flags as expert_ffn_torch.py (--out, --reps).
"""
import argparse
import json

import expert_ffn_torch as base

base.H, base.I, base.E, base.TOPK = 5120, 2304, 384, 6
base.Bf16Peer.bytes_per_expert = 3 * base.H * base.I * 2
base.Fp8Peer.bytes_per_expert = 3 * base.H * base.I + 4 * (2 * base.I + base.H)


def main():
    out = argparse.ArgumentParser(add_help=False)
    out.add_argument("--out", required=True)
    out = out.parse_known_args()[0].out
    base.main()
    with open(out) as f:
        doc = json.load(f)
    doc["benchmark"] = "mxfp4_expert_ffn_torch"
    doc["shape"] = {"hidden": base.H, "intermediate": base.I, "experts": base.E, "top_k": base.TOPK}
    with open(out, "w") as f:
        json.dump(doc, f, indent=2)


if __name__ == "__main__":
    main()
