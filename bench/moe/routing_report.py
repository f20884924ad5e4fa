#!/usr/bin/env python3
"""Merges bench_routing's and routing_torch.py's JSON; prints the table.

Usage: routing_report.py CUDA_JSON TORCH_JSON --out MERGED_JSON [--date YYYY-MM-DD]
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
    ours = json.load(open(args.cuda_json))
    peer = json.load(open(args.torch_json))
    by = {(c["family"], c["T"]): c for c in peer["cases"]}
    print(f"router, microseconds (copy {ours['copy_gbps']:.0f} GB/s)")
    print(f"{'family':>16} {'T':>5} | {'gcmoe':>8} | {'torch-g':>8} {'torch-e':>8} | "
          f"{'floor':>6} | {'x torch':>7} | bad")
    rows = []
    for c in ours["cases"]:
        t = by.get((c["family"], c["T"]), {})
        row = dict(c)
        row.update(t)
        tg = t.get("torch_graph_us", float("nan"))
        row["speedup_vs_torch_graph"] = tg / c["gcmoe_us"]
        rows.append(row)
        print(f"{c['family']:>16} {c['T']:>5} | {c['gcmoe_us']:8.2f} | {tg:8.2f} "
              f"{t.get('torch_eager_us', float('nan')):8.2f} | {c['floor_us']:6.2f} | "
              f"{row['speedup_vs_torch_graph']:7.2f} | {c['mismatched_tokens']}")
    doc = {k: v for k, v in ours.items() if k not in ("cases", "bench")}
    doc.update({"bench": "routing", "date": args.date, "torch": peer.get("torch"), "cases": rows})
    json.dump(doc, open(args.out, "w"), indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
