#!/usr/bin/env python3
"""Every code of the four FP8 formats with its value, from the formats' definitions alone.

Written apart from problem/fp8.cpp (other language, exact fractions, the definitions as the OCP
8-bit floating point specification and the fnuz papers state them) so that fp8_test checks
attnv's decoding against something it did not compute. Prints the table fp8_values.tsv holds:
format, code (hex), value (float.hex, or nan / inf / -inf). `--check FILE` exits 1 unless FILE
is exactly what this prints (a ctest runs it, so the checked-in table cannot drift).
"""
from fractions import Fraction

# name: (exponent bits, mantissa bits, bias, kind of specials)
FORMATS = {
    "e4m3fn": (4, 3, 7, "fn"),      # OCP E4M3: S.1111.111 is NaN; no infinity
    "e5m2": (5, 2, 15, "ieee"),     # OCP E5M2: IEEE 754 conventions (inf, NaNs at e = 31)
    "e4m3fnuz": (4, 3, 8, "fnuz"),  # 0x80 is the one NaN; no infinity, no negative zero
    "e5m2fnuz": (5, 2, 16, "fnuz"),
}


def value(fmt, code):
    ebits, mbits, bias, kind = FORMATS[fmt]
    s, e, m = code >> 7, (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    top = (1 << ebits) - 1
    if kind == "fnuz" and code == 0x80:
        return "nan"
    if kind == "fn" and e == top and m == (1 << mbits) - 1:
        return "nan"
    if kind == "ieee" and e == top:
        return "nan" if m else ("-inf" if s else "inf")
    if e == 0:
        mag = Fraction(m, 1 << mbits) * Fraction(2) ** (1 - bias)
    else:
        mag = (1 + Fraction(m, 1 << mbits)) * Fraction(2) ** (e - bias)
    v = -mag if s else mag
    f = float(v)
    assert Fraction(f) == v, (fmt, code)  # exact in a double
    if v == 0 and s:
        return "-0x0.0p+0"
    return f.hex()


def table():
    return "".join(f"{fmt}\t{code:02x}\t{value(fmt, code)}\n" for fmt in FORMATS for code in range(256))


if __name__ == "__main__":
    import table_check
    table_check.main(table(), "fp8_table.py")
