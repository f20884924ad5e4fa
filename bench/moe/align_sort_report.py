#!/usr/bin/env python3
"""Merges bench_align_sort's JSON and align_sort_torch.py's JSON into one result document and
prints the table: per shape, microseconds of each implementation, the floor, and our speed-up over
the torch peer (both CUDA-graph replayed).

Usage: align_sort_report.py CUDA_JSON TORCH_JSON --out MERGED_JSON [--date YYYY-MM-DD]
"""
import argparse
import datetime
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cuda_json")
    ap.add_argument("torch_json")
    ap.add_argument("--out", required=True)
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    args = ap.parse_args()
    with open(args.cuda_json) as f:
        ours = json.load(f)
    with open(args.torch_json) as f:
        peer = json.load(f)
    by_shape = {(c["T"], c["top_k"], c["experts"]): c for c in peer["cases"]}
    rows = []
    header = (f"{'T':>6} {'k':>2} {'E':>4} | {'auto':>8} {'multi':>8} {'1-block':>8} "
              f"{'single':>9} | {'torch-g':>8} {'torch-e':>8} | {'floor':>6} | {'x torch':>7}")
    print(f"align & sort, block {ours['cases'][0]['block_size']}, microseconds "
          f"(copy {ours['copy_gbps']:.0f} GB/s, empty launch {ours['empty_launch_us']:.2f} us)")
    print(header)
    for c in ours["cases"]:
        t = by_shape.get((c["T"], c["top_k"], c["experts"]), {})
        tg = t.get("torch_graph_us", float("nan"))
        row = dict(c)
        row.update({k: v for k, v in t.items() if k.startswith("torch")})
        row["speedup_vs_torch_graph"] = tg / c["auto"]["us"]
        rows.append(row)
        print(f"{c['T']:>6} {c['top_k']:>2} {c['experts']:>4} | {c['auto']['us']:8.2f} "
              f"{c['multi_block']['us']:8.2f} {c['one_block']['us']:8.2f} "
              f"{c['single_block']['us']:9.2f} | {tg:8.2f} {t.get('torch_eager_us', float('nan')):8.2f}"
              f" | {c['floor_us']:6.2f} | {row['speedup_vs_torch_graph']:7.2f}")
    doc = {k: v for k, v in ours.items() if k not in ("cases", "bench")}
    doc.update({"bench": "align_sort", "date": args.date, "torch": peer.get("torch"),
                "torch_timing": peer.get("timing"),
                "torch_mismatches_total": peer.get("mismatches_total"), "cases": rows})
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
