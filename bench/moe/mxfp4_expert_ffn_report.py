#!/usr/bin/env python3
"""Merges bench_mxfp4_expert_ffn's JSON with its torch peers' (mxfp4_expert_ffn_torch.py) into one
JSON and prints the table: our time, the floor, % of the copy ceiling, the stream-only probe (the
kernel's own feed without decode or MMA) and the peers."""
import argparse
import json

FP8 = "torch_scaled_grouped_mm_fp8_rowwise"
BF16 = "torch_grouped_mm_bf16"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ours")
    parser.add_argument("torch")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    ours = json.load(open(args.ours))
    peers = json.load(open(args.torch))
    by_key = {}
    for p in peers["points"]:
        by_key.setdefault((p["scenario"], p.get("tokens_per_rank")), {})[p["peer"]] = p
    print(f"copy ceiling {ours['copy_gbps']:.0f} GB/s")
    print(f"{'scenario':<9} {'T':>4} {'experts':>7} {'floor_us':>9} {'mxfp4_us':>9} {'of_copy':>7} "
          f"{'stream_us':>9} {'fp8_peer_us':>11} {'bf16_peer_us':>12} {'vs_best_peer':>12}")
    rows = []
    for p in ours["points"]:
        key = (p["scenario"], p["tokens_per_rank"])
        fp8 = by_key.get(key, {}).get(FP8, {})
        bf16 = by_key.get(key, {}).get(BF16, {})
        peer_times = [q["time_us"] for q in (fp8, bf16) if "time_us" in q]
        best = min(peer_times) if peer_times else None
        speedup = best / p["time_us"] if best else None
        stream = p.get("kernels", {}).get("stream_only", {})

        def show(q):
            return f"{q['time_us']:.1f}" if "time_us" in q else "error"
        print(f"{p['scenario']:<9} {p['tokens_per_rank']:>4} {p['active_experts']:>7.1f} "
              f"{p['floor_us']:>9.1f} {p['time_us']:>9.1f} {100 * p['fraction_of_copy']:>6.0f}% "
              f"{show(stream) if stream else '-':>9} {show(fp8):>11} {show(bf16):>12} "
              f"{(f'{speedup:.2f}x' if speedup else 'n/a'):>12}")
        rows.append({**p, "fp8_peer": fp8, "bf16_peer": bf16, "speedup_vs_best_peer": speedup})
    for e in [p for p in peers["points"] if "error" in p][:4]:
        print(f"peer error ({e['peer']}, {e['scenario']}, T={e.get('tokens_per_rank')}): "
              f"{e['error'][:300]}")
    json.dump({**{k: v for k, v in ours.items() if k != "points"}, "torch": peers.get("torch"),
               "points": rows}, open(args.out, "w"), indent=2)


if __name__ == "__main__":
    main()
