#!/usr/bin/python3
"""Writes the .npy files and the exchange folder in this directory with real NumPy.

Run once by hand (needs python3-numpy); the outputs are committed so that io_tests never needs
NumPy. The expected values are restated in io/tests/numpy_files_test.cpp.
"""
import io
import json
import os
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
NP = os.path.join(HERE, "numpy")
os.makedirs(NP, exist_ok=True)


def save(name, arr, version=None):
    path = os.path.join(NP, name)
    with open(path, "wb") as f:
        np.lib.format.write_array(f, arr, version=version, allow_pickle=True)


six = np.arange(6, dtype="<f8").reshape(2, 3) / 7.0
save("f64_2x3.npy", six)
save("f32_scalar.npy", np.array(0.1, dtype="<f4"))
save("f16_special.npy", np.array([1.0, -0.0, 2.0**-24, 65504.0, np.inf, -np.inf, np.nan, 0.333251953125],
                                 dtype="<f2"))
save("bool_2x2.npy", np.array([[True, False], [False, True]]))
save("u1_3.npy", np.array([0, 1, 255], dtype="|u1"))
save("i4_3.npy", np.array([-2147483648, 0, 2147483647], dtype="<i4"))
save("i8_3.npy", np.array([-(2**63), 5, 2**63 - 1], dtype="<i8"))
save("u2_3.npy", np.array([0x3F80, 0xC000, 0x7F80], dtype="<u2"))  # bf16 bits of 1, -2, inf
save("f64_2x3_v2.npy", six, version=(2, 0))
save("f64_2x3_v3.npy", six, version=(3, 0))
save("f64_empty_0x3.npy", np.zeros((0, 3), dtype="<f8"))
save("f64_big_endian.npy", six.astype(">f8"))
save("f64_fortran.npy", np.asfortranarray(six))
save("object.npy", np.array([1, "a", None], dtype=object))
save("structured.npy", np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
save("complex.npy", np.zeros(2, dtype="<c16"))

# A whole exchange folder written the way the docs tell a NumPy user to.
EX = os.path.join(HERE, "numpy_exchange")
rng = np.random.default_rng(20261121)
B, Hq, Hkv, Tq, Tk, Dk, Dv = 2, 4, 2, 3, 5, 8, 4
cases = []

c0 = os.path.join(EX, "f16_masked")
os.makedirs(c0, exist_ok=True)
np.save(os.path.join(c0, "q.npy"), rng.standard_normal((B, Hq, Tq, Dk)).astype(np.float16))
np.save(os.path.join(c0, "k.npy"), rng.standard_normal((B, Hkv, Tk, Dk)).astype(np.float16))
np.save(os.path.join(c0, "v.npy"), rng.standard_normal((B, Hkv, Tk, Dv)).astype(np.float16))
mask = np.tril(np.ones((Tq, Tk), dtype=bool), k=2)
np.save(os.path.join(c0, "mask.npy"), mask)
np.save(os.path.join(c0, "kv_len.npy"), np.array([5, 3], dtype=np.int32))
np.save(os.path.join(c0, "dout.npy"), rng.standard_normal((B, Hq, Tq, Dv)).astype(np.float16))
cases.append({"id": "numpy/f16_masked", "dir": "f16_masked", "dtype": "f16", "B": B, "Hq": Hq, "Hkv": Hkv,
              "Tq": Tq, "Tk": Tk, "Dk": Dk, "Dv": Dv, "scale": None, "softcap": None, "causal": False,
              "alignment": "top_left", "window": [-1, -1], "mask": True, "bias": False, "kv_len": True,
              "dout": True, "meta": {"writer": "numpy", "seed": 20261121}})


def to_bf16_f32(x):
    """Round float32 values to bf16 (nearest even) and return them as float32."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16
    return b.astype(np.uint32).view(np.float32)


c1 = os.path.join(EX, "bf16_bias")
os.makedirs(c1, exist_ok=True)
q = to_bf16_f32(rng.standard_normal((1, 2, 2, 4)).astype(np.float32))
np.save(os.path.join(c1, "q.npy"), (q.view(np.uint32) >> 16).astype("<u2"))  # raw bf16 bits
np.save(os.path.join(c1, "k.npy"), to_bf16_f32(rng.standard_normal((1, 1, 3, 4)).astype(np.float32)))
np.save(os.path.join(c1, "v.npy"), to_bf16_f32(rng.standard_normal((1, 1, 3, 4))).astype(np.float64))
bias = np.array([[0.0, -np.inf, 0.5], [-1.0, 0.0, -np.inf]], dtype=np.float32)
np.save(os.path.join(c1, "bias.npy"), bias)
cases.append({"id": "numpy/bf16_bias", "dir": "bf16_bias", "dtype": "bf16", "B": 1, "Hq": 2, "Hkv": 1,
              "Tq": 2, "Tk": 3, "Dk": 4, "Dv": 4, "scale": 0.5, "softcap": 30.0, "causal": True,
              "alignment": "bottom_right", "window": [1, 0], "mask": False, "bias": True, "kv_len": False,
              "dout": False})

with open(os.path.join(EX, "manifest.json"), "w") as f:
    json.dump({"format": "attnv-exchange", "version": 1, "cases": cases}, f, indent=1)

# Every value of the exchange tensors as exact decimal text ("case/file v v v ..."), so the
# test can compare element by element without NumPy.
with open(os.path.join(HERE, "numpy_exchange_values.txt"), "w") as f:
    for case in ("f16_masked", "bf16_bias"):
        for name in sorted(os.listdir(os.path.join(EX, case))):
            a = np.load(os.path.join(EX, case, name))
            if a.dtype == np.uint16:
                a = (a.astype(np.uint32) << 16).view(np.float32)
            vals = a.astype(np.float64).ravel() if a.dtype.kind == "f" else a.astype(np.int64).ravel()
            f.write(case + "/" + name + " " + " ".join(repr(float(v)) if a.dtype.kind == "f" else str(int(v))
                                                      for v in vals) + "\n")
