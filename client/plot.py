#!/usr/bin/env python3
"""Plots `gcmoe bench` results: latency CDFs and throughput vs latency.

  client/plot.py cdf RESULT.json [RESULT.json ...] [--out cdf.png]
      One panel per metric (TTFT, TPOT, E2EL, ITL): the empirical CDF of every request's latency,
      one line per result file. Reads the per-request CSV that --save-detailed writes beside the
      JSON (same stem, .csv); without it, the JSON's "ttfts"/"itls" arrays (TTFT and ITL only).

  client/plot.py throughput SWEEP.json|RESULT.json ... [--metric tpot] [--out tput.png]
      Output token throughput (x) against the median and p99 of a latency metric (y), one point
      per sweep point (a <stem>-sweep.json from --sweep-max-concurrency/--sweep-request-rate) or
      per result file, labelled with its concurrency or rate.

Needs matplotlib (pip install -r client/requirements-plot.txt); writes PNG (or any format
matplotlib knows from the --out suffix).
"""

import argparse
import csv
import json
import pathlib
import sys

METRICS = {"ttft": "TTFT", "tpot": "TPOT", "e2el": "E2EL", "itl": "ITL"}


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def request_latencies(result_path):
    """metric -> list of per-request milliseconds, for the completed requests of one run."""
    path = pathlib.Path(result_path)
    csv_path = path.with_suffix(".csv")
    values = {name: [] for name in METRICS}
    if csv_path.exists():
        with open(csv_path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                if row["status"] != "OK":
                    continue
                for name in ("ttft", "tpot", "e2el"):
                    if row[f"{name}_ms"]:
                        values[name].append(float(row[f"{name}_ms"]))
                if row["mean_itl_ms"] and int(row["output_tokens"]) > 1:
                    values["itl"].append(float(row["mean_itl_ms"]))
        return values
    result = load_json(path)
    errors = result.get("errors", [])
    for i, ttft in enumerate(result.get("ttfts", [])):
        if i < len(errors) and errors[i]:
            continue
        values["ttft"].append(ttft * 1000.0)
        values["itl"].extend(gap * 1000.0 for gap in result.get("itls", [[]] * (i + 1))[i])
    return values


def label_of(result, fallback):
    if result.get("max_concurrency") is not None:
        return f"concurrency {result['max_concurrency']}"
    if result.get("request_rate") not in (None, "inf"):
        return f"{result['request_rate']} req/s"
    return fallback


def plot_cdf(args, plt):
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    for result_path in args.results:
        values = request_latencies(result_path)
        label = label_of(load_json(result_path), pathlib.Path(result_path).stem)
        for ax, name in zip(axes.flat, METRICS):
            data = sorted(values[name])
            if not data:
                continue
            ys = [(i + 1) / len(data) for i in range(len(data))]
            ax.step(data, ys, where="post", label=label)
    for ax, (name, title) in zip(axes.flat, METRICS.items()):
        ax.set_title(f"{title} CDF")
        ax.set_xlabel(f"{title} (ms)" + (" (per-request mean)" if name == "itl" else ""))
        ax.set_ylabel("fraction of requests")
        ax.set_ylim(0, 1.02)
        ax.grid(True, alpha=0.3)
        if ax.has_data():
            ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def throughput_points(paths, metric):
    """(label, output_throughput, median_ms, p99_ms) per point."""
    points = []
    for path in paths:
        data = load_json(path)
        entries = data["points"] if "points" in data else [data]
        for entry in entries:
            if "error" in entry:
                print(f"plot: skipping failed point {entry.get('file')}: {entry['error']}",
                      file=sys.stderr)
                continue
            median = entry.get(f"median_{metric}_ms")
            p99 = entry.get(f"p99_{metric}_ms")
            if median is None:
                raise SystemExit(f"plot: {path} has no median_{metric}_ms "
                                 f"(was {metric} in --percentile-metrics?)")
            points.append((label_of(entry, pathlib.Path(path).stem),
                           entry["output_throughput"], median, p99))
    return points


def plot_throughput(args, plt):
    points = throughput_points(args.results, args.metric)
    if not points:
        raise SystemExit("plot: no points to draw")
    fig, ax = plt.subplots(figsize=(8, 6))
    xs = [p[1] for p in points]
    ax.plot(xs, [p[2] for p in points], "o-", label=f"median {METRICS[args.metric]}")
    if all(p[3] is not None for p in points):
        ax.plot(xs, [p[3] for p in points], "s--", label=f"p99 {METRICS[args.metric]}")
    for label, x, median, _ in points:
        ax.annotate(label, (x, median), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xlabel("output token throughput (tok/s)")
    ax.set_ylabel(f"{METRICS[args.metric]} (ms)")
    ax.set_title(f"throughput vs {METRICS[args.metric]}")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return fig


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="kind", required=True)
    cdf = sub.add_parser("cdf", help="latency CDFs from result JSON files")
    cdf.add_argument("results", nargs="+")
    cdf.add_argument("--out", default="latency_cdf.png")
    tput = sub.add_parser("throughput", help="throughput vs latency from sweep/result JSON")
    tput.add_argument("results", nargs="+")
    tput.add_argument("--metric", choices=sorted(METRICS), default="tpot")
    tput.add_argument("--out", default="throughput_latency.png")
    args = parser.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("plot: matplotlib is missing: pip install -r client/requirements-plot.txt")
    fig = plot_cdf(args, plt) if args.kind == "cdf" else plot_throughput(args, plt)
    fig.savefig(args.out, dpi=120)
    print(f"plot: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
