"""Timing shared by the torch peers of the benchmarks (run on the GPU machine)."""
import statistics

import torch


def time_us(fn, per_graph, reps, graph):
    """Median of `reps` timings of `per_graph` back-to-back calls (graph replay or eager)."""
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        if graph:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, stream=stream):
                for _ in range(per_graph):
                    fn()
            run = g.replay
            for _ in range(3):
                run()
        else:
            def run():
                for _ in range(per_graph):
                    fn()
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(reps):
            start.record(stream)
            run()
            stop.record(stream)
            stop.synchronize()
            times.append(start.elapsed_time(stop) * 1000.0 / per_graph)
    return statistics.median(times)
