#!/usr/bin/env python3
"""Merges bench_mxfp4_expert_ffn's JSON with its torch peers' (mxfp4_expert_ffn_torch.py) into one
JSON and prints the table: our time (the default column, the same with L2 by programmatic
dependent launch, with L2 acquiring L1's rows by the rows handshake, and the fastest of the three,
the headline), the floor, % of the copy ceiling, the
stream-only probe (the kernel's own feed without decode or MMA), the SM clock our kernel ran at
(the 700 W cap lowers it: bench/NOTES.md v5.5) and the peers."""
from peer_merge import Peers, finish, load, show


def main():
    ours, peers, out = load()
    matched = Peers(peers)
    print(f"copy ceiling {ours['copy_gbps']:.0f} GB/s")
    print(f"{'scenario':<9} {'T':>4} {'experts':>7} {'floor_us':>9} {'mxfp4_us':>9} {'pdl_us':>9} "
          f"{'rows_us':>9} {'best_us':>9} {'of_copy':>7} "
          f"{'stream_us':>9} {'sm_MHz':>6} {'fp8_peer_us':>11} {'bf16_peer_us':>12} {'vs_best_peer':>12}")
    rows = []
    for p in ours["points"]:
        fp8, bf16, speedup = matched.of(p)
        kern = p.get("kernels", {})
        stream = kern.get("stream_only", {})
        default = kern.get("mxfp4", p)
        pdl = kern.get("mxfp4_pdl", {})
        by_rows = kern.get("mxfp4_pdl_rows", {})
        clock = p.get("clock", {})
        mhz = f"{clock['sm_mhz_mean']:.0f}" if clock.get("samples") else "-"
        print(f"{p['scenario']:<9} {p['tokens_per_rank']:>4} {p['active_experts']:>7.1f} "
              f"{p['floor_us']:>9.1f} {default['time_us']:>9.1f} {show(pdl) if pdl else '-':>9} "
              f"{show(by_rows) if by_rows else '-':>9} "
              f"{p['time_us']:>9.1f} {100 * p['fraction_of_copy']:>6.0f}% "
              f"{show(stream) if stream else '-':>9} {mhz:>6} {show(fp8):>11} {show(bf16):>12} "
              f"{(f'{speedup:.2f}x' if speedup else 'n/a'):>12}")
        rows.append({**p, "fp8_peer": fp8, "bf16_peer": bf16, "speedup_vs_best_peer": speedup})
    finish(ours, peers, rows, out)


if __name__ == "__main__":
    main()
