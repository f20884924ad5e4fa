#!/usr/bin/env python3
"""Merges bench_expert_ffn's JSON with its torch peers' into one JSON and prints the table."""
from peer_merge import Peers, finish, load, show


def main():
    ours, peers, out = load()
    matched = Peers(peers)
    rows = []
    print(f"copy ceiling {ours['copy_gbps']:.0f} GB/s")
    print(f"{'scenario':<9} {'T':>4} {'experts':>7} {'floor_us':>9} {'mma_us':>8} {'wgmma_us':>8} "
          f"{'pdl_us':>8} {'rows_us':>8} {'best_us':>8} {'of_copy':>7} "
          f"{'fp8_peer_us':>11} {'bf16_peer_us':>12} {'vs_best_peer':>12}")
    for p in ours["points"]:
        fp8, bf16, speedup = matched.of(p)
        kern = p.get("kernels", {})

        def kernel_us(name):
            return f"{kern[name]['time_us']:.1f}" if name in kern else "-"
        print(f"{p['scenario']:<9} {p['tokens_per_rank']:>4} {p['active_experts']:>7.1f} "
              f"{p['floor_us']:>9.1f} {kernel_us('mma_sync'):>8} {kernel_us('wgmma'):>8} "
              f"{kernel_us('wgmma_pdl'):>8} {kernel_us('wgmma_pdl_rows'):>8} {p['time_us']:>8.1f} "
              f"{100 * p['fraction_of_copy']:>6.0f}% "
              f"{show(fp8):>11} {show(bf16):>12} "
              f"{(f'{speedup:.2f}x' if speedup else 'n/a'):>12}")
        rows.append({**p, "fp8_peer": fp8, "bf16_peer": bf16, "speedup_vs_best_peer": speedup})
    finish(ours, peers, rows, out)


if __name__ == "__main__":
    main()
