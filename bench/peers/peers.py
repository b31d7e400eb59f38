#!/usr/bin/python3
"""The core against onnxruntime's CPU attention, timed in one run on the same shapes.

For each shape of BM_CoreForward (f32, B=1, H=8, T=4096, D in {128, 64}, full and causal), and
for several rounds, it runs in turn: the core (build/release/bench/core_bench, one benchmark),
onnxruntime's ONNX `Attention` (opset 23, Q/K/V [B,H,T,D], is_causal) and, for the full shape,
its contrib `MultiHeadAttention` (Q/K/V [B,T,H*D]; attnv found its `unidirectional` flag matching
neither causal corner, so it is timed full only). Alternating keeps the machine's
load (it is shared) the same for all of them; medians over the rounds are printed, with the
ratios, and both per wall second and per CPU second (GFLOP over CPU time / threads, the figure
that other users of the machine do not move).

The AVX-512 and AVX2 FMA peaks (BM_FmaPeakAvx512, BM_FmaPeak) are measured in the same run.

Needs /usr/bin/python3 with python3-onnx, node, and onnxruntime-node (bench/peers/setup.sh).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
B, H, T = 1, 8, 4096
F32 = 1  # DType::f32 in problem/dtype.h, the first argument of BM_CoreForward


def fail(msg):
    print("peers.py: " + msg, file=sys.stderr)
    sys.exit(2)


def write_models(folder, D, causal):
    try:
        import onnx
        from onnx import TensorProto, helper
    except ImportError:
        fail("python3-onnx is missing: run bash bench/peers/setup.sh (and use /usr/bin/python3)")
    models = {}

    def save(name, node, shape, opsets, ir):
        ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in ("Q", "K", "V")]
        out = helper.make_tensor_value_info("Y", TensorProto.FLOAT, shape)
        m = helper.make_model(helper.make_graph([node], name, ins, [out]), opset_imports=opsets)
        m.ir_version = ir  # Debian's onnx 1.12 does not know opset 23; onnxruntime 1.30 does
        path = os.path.join(folder, "%s_d%d_c%d.onnx" % (name, D, causal))
        onnx.save(m, path)
        models[name] = (path, shape)

    save("Attention", helper.make_node("Attention", ["Q", "K", "V"], ["Y"], is_causal=int(causal)),
         [B, H, T, D], [helper.make_opsetid("", 23)], 10)
    if not causal:
        save("MultiHeadAttention",
             helper.make_node("MultiHeadAttention", ["Q", "K", "V"], ["Y"], domain="com.microsoft", num_heads=H),
             [B, T, H * D], [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)], 8)
    return models


def gflop(D, causal=False):
    # The two products over every (query, key) pair, or over the visible ones (causal: T(T+1)/2).
    pairs = T * (T + 1) / 2 if causal else T * T
    return 4.0 * B * H * D * pairs * 1e-9


def run_json(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail("%s failed (exit %d):\n%s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


def core_bench(bench, name_filter):
    out = run_json([bench, "--benchmark_filter=" + name_filter, "--benchmark_format=json"])
    runs = [b for b in out["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
    if len(runs) != 1:
        fail("%s matched %d benchmarks, expected 1" % (name_filter, len(runs)))
    return runs[0]


def ort_calls(node, modules, path, shape, threads, runs):
    out = run_json([node, os.path.join(HERE, "ort_time.js"), modules, path, str(threads), str(runs),
                    ",".join(str(s) for s in shape)])
    return out["calls"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"), help="the build tree (has bench/core_bench)")
    ap.add_argument("--modules", default=os.path.join(ROOT, "build", "peers", "node_modules"),
                    help="node_modules holding onnxruntime-node (bench/peers/setup.sh)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds per shape (medians are printed)")
    ap.add_argument("--ort-runs", type=int, default=3, help="timed onnxruntime calls per round")
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads (the core's benchmark uses 2)")
    ap.add_argument("--d", type=int, nargs="+", default=[128, 64], choices=[128, 64])
    ap.add_argument("--causal", type=int, nargs="+", default=[0, 1], choices=[0, 1])
    ap.add_argument("--isa", type=int, default=0, choices=[0, 1, 2, 3],
                    help="the core's ISA path (BM_CoreForward's fifth argument): 0 the default (ATTNV_CORE_ISA or the widest), 1 portable, 2 avx2, 3 avx512")
    ap.add_argument("--json", help="also write the medians to this file")
    a = ap.parse_args()

    bench = os.path.join(a.build, "bench", "core_bench")
    if not os.access(bench, os.X_OK):
        fail("%s not found: build the release preset first (cmake --build --preset release)" % bench)
    node = "node"
    if not os.path.isdir(os.path.join(a.modules, "onnxruntime-node")):
        fail("onnxruntime-node not found in %s: run bash bench/peers/setup.sh" % a.modules)

    peaks = {}
    for name in ("BM_FmaPeakAvx512", "BM_FmaPeak"):
        out = run_json([bench, "--benchmark_filter=^%s/" % name, "--benchmark_format=json"])
        runs = [b for b in out["benchmarks"] if not b.get("error_occurred")]
        if runs:
            peaks[runs[0].get("label", name)] = runs[0]["best_GFLOPs_cpu"]

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for D in a.d:
            for causal in a.causal:
                models = write_models(tmp, D, causal)
                samples, shares, core_label = {"core": []}, [], "core"
                samples.update({m: [] for m in models})
                for r in range(a.rounds):
                    # Rotate the order each round so no contender always runs first.
                    order = ["core"] + sorted(models)
                    order = order[r % len(order):] + order[:r % len(order)]
                    for who in order:
                        if who == "core":
                            b = core_bench(bench, "^BM_CoreForward/%d/%d/%d/%d/%d/" % (F32, T, D, causal, a.isa))
                            wall = b["real_time"] * {"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "s": 1.0}[b["time_unit"]]
                            samples["core"].append((wall, gflop(D, causal) / b["cpu_useful_GFLOPs"]))
                            shares.append(b["cpu_useful_peak_share"])
                            core_label = b.get("label", "").split()[-1] if b.get("label") else "core"
                        else:
                            path, shape = models[who]
                            for c in ort_calls(node, a.modules, path, shape, a.threads, a.ort_runs):
                                samples[who].append((c["wall_s"], c["cpu_s"] / a.threads))
                med = {w: (statistics.median(s[0] for s in v), statistics.median(s[1] for s in v)) for w, v in samples.items()}
                share = statistics.median(shares)  # against the widest ISA's peak (BM_CoreForward's own counter)
                rows.append({"D": D, "causal": causal, "median_wall_cpu_s": med, "core_cpu_peak_share": share})
                core_wall, core_cpu = med["core"]
                line = "f32 T=%d D=%d %-6s core (%s) %7.1f ms (%.0f useful GFLOP/s per CPU s, %.2f of the peak)" % (
                    T, D, "causal" if causal else "full", core_label, core_wall * 1e3, gflop(D, causal) / core_cpu, share)
                for m in sorted(models):
                    w, c = med[m]
                    line += "\n    onnxruntime %-18s %7.1f ms: core speed / its speed %.2f per wall s, %.2f per CPU s" % (
                        m, w * 1e3, w / core_wall, c / core_cpu)
                print(line, flush=True)
    print("FMA peaks measured in this run (GFLOP/s per CPU s, 2 threads): " +
          ", ".join("%s %.0f" % kv for kv in peaks.items()))
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            json.dump({"peaks": peaks, "threads": a.threads, "rounds": a.rounds, "rows": rows}, f, indent=1)
        os.replace(a.json + ".tmp", a.json)


if __name__ == "__main__":
    main()
