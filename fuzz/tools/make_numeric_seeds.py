#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_numeric (fuzz/corpus/numeric/): a few realistic cases in the
genome format of fuzz/numeric/case_genome.h (header byte codes, read by FuzzedDataProvider from
the end of the data; no explicit value codes, so values come from the seed).
Usage: fuzz/tools/make_numeric_seeds.py fuzz/corpus/numeric"""
import pathlib
import sys

FIELDS = ["dtype", "B", "Hkv", "G", "Tq", "Tk", "Dk", "Dv", "flags", "wl", "wr", "scale", "softcap",
          "layout", "exp_q", "exp_k", "exp_v", "exp_bias", "signs", "mask_density", "kv0", "kv1",
          "s0", "s1", "s2", "s3"]
CAUSAL, BOTTOM_RIGHT, MASK, BIAS, KV_LEN, SOFTCAP, SCALE, WINDOW = (1 << i for i in range(8))
DTYPES = {"f32": 0, "f16": 1, "bf16": 2, "f64": 3}


LONG = [41, 44, 47, 48, 49, 51, 55, 59, 63, 64, 65, 66, 70, 74, 78, 79, 80, 81, 85, 89, 93, 95, 96,
        97, 99, 103, 107, 111, 112, 113, 114, 118, 122, 126, 127, 128, 129, 133, 137, 141, 143, 144,
        145, 148, 151, 155, 159, 160, 161, 162, 166, 170, 174, 175, 176, 177, 181, 185, 189, 191,
        192, 193, 196, 200]  # kLongLengths of case_genome.cpp


def length_of(code, small_max, big_max):
    if code < 192:
        return 1 + code % small_max
    if big_max - small_max <= 64:
        return small_max + 1 + (code - 192) % (big_max - small_max)
    return LONG[code - 192]


def code_for_length(n, small_max, big_max):
    return min(range(256), key=lambda c: abs(length_of(c, small_max, big_max) - n))


def seed(dtype="f32", B=1, Hkv=1, G=1, Tq=4, Tk=7, Dk=8, Dv=8, flags=0, layout=0, **extra):
    h = dict.fromkeys(FIELDS, 0)
    h.update(dtype=DTYPES[dtype], B=B - 1, Hkv=Hkv - 1, G=G - 1, flags=flags, layout=layout,
             Tq=code_for_length(Tq, 40, 200), Tk=code_for_length(Tk, 40, 200),
             Dk=code_for_length(Dk, 16, 72), Dv=code_for_length(Dv, 16, 72), s0=7, s1=11)
    h.update(extra)
    return bytes(reversed([h[f] for f in FIELDS]))


SEEDS = {
    "f32_small": seed(),
    "f16_masked_kvlen_bottom_right": seed("f16", B=2, Tq=3, Tk=17, Dk=16, Dv=4,
                                          flags=MASK | KV_LEN | CAUSAL | BOTTOM_RIGHT,
                                          mask_density=64, kv0=9, kv1=17),
    "bf16_bias_softcap_window": seed("bf16", Tq=9, Tk=33, flags=BIAS | SOFTCAP | WINDOW,
                                     wl=4, wr=2, softcap=40),
    "f64_gqa_gapped": seed("f64", Hkv=2, G=2, Tq=16, Tk=65, Dk=5, Dv=3, layout=2),
    "f32_decode_bthd": seed(Tq=1, Tk=64, Dk=16, Dv=16, layout=1, flags=SCALE, scale=20),
    "f32_fully_masked_rows": seed(Tq=5, Tk=6, flags=MASK, mask_density=230),
    "f32_kvlen_hidden_nan": seed(B=2, Tq=3, Tk=9, flags=KV_LEN, kv0=5, kv1=9, signs=1 << 6),
    "f16_causal_tile_edge": seed("f16", Tq=17, Tk=129, Dk=3, Dv=3, flags=CAUSAL),
}

if __name__ == "__main__":
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, data in SEEDS.items():
        (out / name).write_bytes(data)
