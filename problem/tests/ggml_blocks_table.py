#!/usr/bin/env python3
"""Blocks of ggml's q8_0 and q4_0 formats with every element's value, from the formats'
definitions alone (ggml-common.h: block_q8_0 = {ggml_half d; int8_t qs[32]}, value d * qs[j];
block_q4_0 = {ggml_half d; uint8_t qs[16]}, element j < 16 in the low nibble of qs[j], element
j + 16 in its high nibble, value d * (nibble - 8)). d is an IEEE half, little-endian, decoded
here by its own formula. Prints the table ggml_blocks.tsv holds: format, the block's bytes (hex),
then the 32 values (float.hex). `--check FILE` exits 1 unless FILE is exactly what this prints.
"""
import random
from fractions import Fraction


def half(bits):
    s, e, m = bits >> 15, (bits >> 10) & 31, bits & 1023
    assert e != 31, "the table holds finite scales only"
    mag = Fraction(m, 1024) * Fraction(2) ** -14 if e == 0 else (1 + Fraction(m, 1024)) * Fraction(2) ** (e - 15)
    return -mag if s else mag


def values(fmt, block):
    d = half(block[0] | block[1] << 8)
    if fmt == "q8_0":
        codes = [b - 256 if b > 127 else b for b in block[2:34]]
    else:
        qs = block[2:18]
        codes = [(qs[j] & 15) - 8 for j in range(16)] + [(qs[j] >> 4) - 8 for j in range(16)]
    out = []
    for c in codes:
        v = d * c
        assert Fraction(float(v)) == v
        out.append(float(v).hex())
    return out


def blocks():
    rng = random.Random(41)
    # Scales: 1, -1 (q4_0 writes negative d), the largest half, the smallest subnormal, a normal
    # near the bottom, zero, then random finite halves.
    scales = [0x3C00, 0xBC00, 0x7BFF, 0x0001, 0x0400, 0x0000] + [rng.choice([0, 0x8000]) | rng.randrange(0, 0x7C00) for _ in range(6)]
    for fmt, n in (("q8_0", 32), ("q4_0", 16)):
        for i, d in enumerate(scales):
            if i == 0:
                qs = list(range(256))[:n] if fmt == "q4_0" else [0x80, 0x7F, 0x81, 0xFF, 0x00, 0x01] + [rng.randrange(256) for _ in range(26)]
            else:
                qs = [rng.randrange(256) for _ in range(n)]
            yield fmt, bytes([d & 255, d >> 8] + qs[:n])


def table():
    return "".join(f"{fmt}\t{b.hex()}\t" + " ".join(values(fmt, b)) + "\n" for fmt, b in blocks())


if __name__ == "__main__":
    import table_check
    table_check.main(table(), "ggml_blocks_table.py")
