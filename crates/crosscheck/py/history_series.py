"""Series for `perflab crosscheck history`, and Apache Otava's change points on them.

Generates every pattern family of the otava-test-data package (its own generators, at the
parameters its web explorer offers by default: the noise levels are the package's), for
each length and seed asked, runs Otava's documented API (otava.analysis.compute_change_points
at its defaults: window 50, p 0.001) on each, and writes one JSON document to stdout:
{"otava_version", "series": [{family, length, seed, data, truth, otava}]}.
perflab scores both detectors itself, so the matching rule is written once (in Rust).
"""
import json
import sys
from importlib.metadata import version

import numpy as np
import otava_test_data as g
from otava.analysis import compute_change_points


def families(length, seed):
    # Noise levels and shapes are the package's explorer defaults; placement is the
    # generators' own default (middle, a third, evenly spread).
    return {
        "step": g.step_function(length, 100.0, 120.0, sigma=5.0, seed=seed),
        "regression-fix": g.regression_fix(
            length, 100.0, 130.0, regression_duration=min(20, length // 3), sigma=5.0, seed=seed
        ),
        "outlier": g.outlier(length, 100.0, 150.0, sigma=5.0, seed=seed),
        "banding": g.banding(length, 100.0, 105.0, sigma=2.0, seed=seed),
        "variance-change": g.variance_change(length, 100.0, 2.0, 10.0, seed=seed),
        "phase-change": g.phase_change(length, 10.0, 100.0, 20, sigma=2.0, seed=seed),
        "multiple-changes": g.multiple_changes(length, sigma=5.0, seed=seed),
        "constant": g.constant(length, 100.0),
        "noise-normal": g.noise_normal(length, 100.0, 5.0, seed=seed),
        "noise-uniform": g.noise_uniform(length, 90.0, 110.0, seed=seed),
    }


def otava_indices(data):
    points, _weak = compute_change_points(list(map(float, data)))
    return sorted(int(cp.index) for cp in points)


def main(argv):
    lengths = [int(x) for x in argv[1].split(",")] if len(argv) > 1 else [50, 500]
    seeds = [int(x) for x in argv[2].split(",")] if len(argv) > 2 else [1, 2, 3, 4, 5]
    out = []
    for length in lengths:
        for seed in seeds:
            for family, ts in families(length, seed).items():
                data = np.asarray(ts.data, dtype=float)
                out.append({
                    "family": family,
                    "length": length,
                    "seed": seed,
                    "data": [float(v) for v in data],
                    "truth": sorted(int(i) for i in ts.get_change_point_indices()),
                    "otava": otava_indices(data),
                })
    json.dump({"otava_version": version("apache-otava"), "series": out}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv)
