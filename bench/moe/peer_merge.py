"""What the expert-FFN reports share: reading our JSON and the torch peers' JSON, matching each of
our points to its peers, and writing the merged JSON (used by expert_ffn_report.py and
mxfp4_expert_ffn_report.py)."""
import argparse
import json

FP8 = "torch_scaled_grouped_mm_fp8_rowwise"
BF16 = "torch_grouped_mm_bf16"


def load():
    """Parses `ours torch --out FILE`; returns (ours, peers, out path)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("ours")
    parser.add_argument("torch")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    return json.load(open(args.ours)), json.load(open(args.torch)), args.out


class Peers:
    """The torch peers' points by (scenario, tokens per rank)."""

    def __init__(self, peers):
        self.peers = peers
        self.by_key = {}
        for p in peers["points"]:
            self.by_key.setdefault((p["scenario"], p.get("tokens_per_rank")), {})[p["peer"]] = p

    def of(self, point):
        """(fp8 peer, bf16 peer, speed-up of `point` over the faster peer or None)."""
        found = self.by_key.get((point["scenario"], point["tokens_per_rank"]), {})
        fp8, bf16 = found.get(FP8, {}), found.get(BF16, {})
        times = [q["time_us"] for q in (fp8, bf16) if "time_us" in q]
        speedup = min(times) / point["time_us"] if times else None
        return fp8, bf16, speedup


def show(q):
    return f"{q['time_us']:.1f}" if "time_us" in q else "error"


def finish(ours, peers, rows, out):
    """Prints the first peer errors and writes our JSON with the merged points."""
    for e in [p for p in peers["points"] if "error" in p][:4]:
        print(f"peer error ({e['peer']}, {e['scenario']}, T={e.get('tokens_per_rank')}): "
              f"{e['error'][:300]}")
    json.dump({**{k: v for k, v in ours.items() if k != "points"}, "torch": peers.get("torch"),
               "points": rows}, open(out, "w"), indent=2)
