#!/usr/bin/python3
"""A readable NumPy attention kernel that answers the cases of `attnv cases export`.

    /usr/bin/python3 attention.py DIR [--bug NAME]

For every case of DIR/manifest.json it reads q, k, v (and mask, bias, kv_len, dout), computes
the attention of docs/semantics.md in float64 and writes out.npy and lse.npy (and dq.npy, dk.npy, dv.npy
when the case has dout.npy) into the case folder, in the storage dtype, each file written to a
temporary name and renamed so attnv never reads half a file.

Features: GQA (query head h reads KV head h // G), causal with top-left or bottom-right
alignment, per-batch kv_len, sliding window, boolean mask, additive bias (-inf hides a key),
masks and biases per batch and per head ([B|1, Hq|1, Tq, Tk] files),
softcap, custom scale, attention sinks (sinks.npy [Hq]: a logit per head in every row's
denominator, a key of value 0; the backward then writes dsinks.npy), ALiBi (alibi.npy [Hq]: every
logit gets -m_h |j - p_i|, p_i the query's position under the alignment), packed variable-length
sequences (cu_seqlens_q.npy, cu_seqlens_k.npy [S+1]: each query sees only its own sequence's keys,
positions and alignment local to the sequence; with kv_len.npy, [S] then, sequence s uses only its
first kv_len[s] keys and aligns bottom-right to them: FlashAttention's seqused_k); a row with no visible key
gives O = 0 and LSE = -inf (with a sink: O = 0 and LSE = the sink). Hidden keys are
removed with np.where, never multiplied by 0: a hidden key may hold NaN or inf (0 * inf = NaN).

--bug plants one known bug, to see `attnv cases check` catch it:
    causal_off_by_one   the causal rule j <= p_i + 1
    no_max              exp(s) instead of exp(s - max): overflows on large logits
    truncate_bf16       outputs truncated to bf16 instead of rounded
    dsink_sign_flipped  the sinks' gradient with the wrong sign (+P_sink D)
    alibi_wrong_corner  ALiBi distances from the other alignment's p_i
    varlen_global_alignment  packed sequences: own keys only, but p_i aligned by the packed
                        corner (i, or i + Tk - Tq) instead of per sequence
    seqused_aligned_to_stored_keys  packed sequences with kv_len [S]: keys past kv_len[s] hidden,
                        but bottom-right aligned to the sequence's stored keys, not the used ones
"""
import argparse
import json
import os
import sys

import numpy as np

BUGS = ("causal_off_by_one", "no_max", "truncate_bf16", "dsink_sign_flipped", "alibi_wrong_corner",
        "varlen_global_alignment", "seqused_aligned_to_stored_keys")


def load(folder, name, required=True):
    path = os.path.join(folder, name + ".npy")
    if not os.path.exists(path):
        if required:
            sys.exit(f"attention.py: {path} missing")
        return None
    a = np.load(path)
    if a.dtype == np.uint16:  # raw bf16 bit patterns
        a = (a.astype(np.uint32) << 16).view(np.float32)
    return a


def planes(x):
    """A mask or bias as [B|1, Hq|1, Tq, Tk]: a [Tq, Tk] file is one plane for every batch and head;
    a 4-d file (manifest mask_batch .. bias_heads) has extent 1 where it is shared, so NumPy's
    broadcasting gives every (b, h) its own plane."""
    return x[None, None] if x.ndim == 2 else x


def sequence_of(cu, n):
    """[n]: the packed sequence s holding each of n rows, cu[s] <= row < cu[s+1] (empty ones skipped)."""
    return np.searchsorted(cu, np.arange(n), side="right") - 1


def position(case, kv_len, alignment=None, packed=None, bug=None):
    """[B, 1, Tq, 1]: the query's position p_i (top-left i, bottom-right i + kv_len[b] - Tq).
    Packed sequences (packed = (cu_q, cu_k, used)): query i' = i - cu_q[s] of sequence s sits at
    p_i' = i' or i' + used[s] - len_q[s] among its own keys (used[s]: the keys it uses, kv_len[s]
    or all of them), i.e. at cu_k[s] + p_i' among the packed keys, so j - p_i is the local
    distance j' - p_i' for every key of the sequence."""
    i = np.arange(case["Tq"])[None, None, :, None]
    n = kv_len[:, None, None, None]
    top_left = (alignment or case["alignment"]) == "top_left"
    if packed is None or bug == "varlen_global_alignment":
        return i if top_left else i + n - case["Tq"]
    cu_q, cu_k, used = packed
    if bug == "seqused_aligned_to_stored_keys":
        used = cu_k[1:] - cu_k[:-1]
    s = sequence_of(cu_q, case["Tq"])
    local = np.arange(case["Tq"]) - cu_q[s]
    if not top_left:
        local = local + used[s] - (cu_q[s + 1] - cu_q[s])
    return (cu_k[s] + local)[None, None, :, None]


def visible(case, kv_len, bias, mask, bug, packed=None):
    """[B, 1 or Hq, Tq, Tk] boolean: which keys each query row of each batch (and head) sees (SPEC)."""
    j = np.arange(case["Tk"])[None, None, None, :]
    if packed is None:
        vis = j < kv_len[:, None, None, None]
    else:  # replacing padding: a query sees only the keys its own sequence uses
        cu_q, cu_k, used = packed
        sk = sequence_of(cu_k, case["Tk"])
        same = sequence_of(cu_q, case["Tq"])[:, None] == sk[None, :]
        in_use = np.arange(case["Tk"]) - cu_k[sk] < used[sk]
        vis = (same & in_use[None, :])[None, None]
    p = position(case, kv_len, packed=packed, bug=bug)
    if case["causal"]:
        vis = vis & (j <= p + (1 if bug == "causal_off_by_one" else 0))
    wl, wr = case["window"]
    # Sides go up to 2^63 - 1: p - wl and p + wr would wrap around in int64, the distances cannot.
    if wl >= 0:
        vis = vis & (p - j <= wl)
    if wr >= 0:
        vis = vis & (j - p <= wr)
    if mask is not None:
        vis = vis & planes(mask.astype(bool))
    if bias is not None:
        vis = vis & (planes(bias) != -np.inf)
    return vis


def alibi_bias(case, kv_len, slopes, bug, packed=None):
    """[B, Hq, Tq, Tk]: ALiBi's -m_h |j - p_i|, an additive term like a bias (with packed
    sequences the local distance |j' - p_i'| on the keys a query sees; the others are hidden)."""
    alignment = case["alignment"]
    if bug == "alibi_wrong_corner":
        alignment = "bottom_right" if alignment == "top_left" else "top_left"
    j = np.arange(case["Tk"])[None, None, None, :]
    return -slopes[None, :, None, None] * np.abs(j - position(case, kv_len, alignment, packed, bug))


def scores(case, q, k, bias, G):
    """[B, Hq, Tq, Tk] logits: scale q.k, softcap, bias (with ALiBi's term). Also the raw ones (for
    the softcap's derivative)."""
    scale = case["scale"] if case["scale"] is not None else 1.0 / np.sqrt(case["Dk"])
    kq = np.repeat(k, G, axis=1)  # repeat_interleave: query head h reads KV head h // G
    with np.errstate(invalid="ignore", over="ignore"):
        raw = scale * np.einsum("bhid,bhjd->bhij", q, kq)
        s = raw
        if case["softcap"] is not None:
            c = case["softcap"]
            s = c * np.tanh(raw / c)
        if bias is not None:
            s = s + planes(bias)
    return s, raw, scale


def forward(case, q, k, v, vis, bias, bug, sinks=None):
    G = case["Hq"] // case["Hkv"]
    s, raw, scale = scores(case, q, k, bias, G)
    vis4 = vis  # [B, 1 or Hq, Tq, Tk]: broadcast over heads where the mask and bias are shared
    s = np.where(vis4, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    any_visible = vis4.any(axis=-1, keepdims=True)
    if sinks is not None:  # the sink joins the max and the sum as a key of value 0
        z = sinks[None, :, None, None]
        m = np.where(any_visible, np.maximum(m, z), z)
        any_visible = np.ones_like(any_visible)
    m_safe = np.where(any_visible, m, 0.0)
    if bug == "no_max":
        m_safe = np.zeros_like(m_safe)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.where(vis4, np.exp(s - m_safe), 0.0)
        l = e.sum(axis=-1, keepdims=True)
        if sinks is not None:
            l = l + np.exp(z - m_safe)
        p = np.where(vis4, e / np.where(l > 0, l, 1.0), 0.0)
        vq = np.repeat(v, G, axis=1)
        # sum_j P_ij v_j over visible j only: a hidden V row may hold inf.
        prod = np.where(vis4[..., None], p[..., None] * vq[:, :, None, :, :], 0.0)
        out = prod.sum(axis=-2)
        lse = np.where(any_visible, m_safe + np.log(l), -np.inf)[..., 0]
    return out, lse, p, raw, scale


def backward(case, q, k, v, dout, vis, p, raw, scale):
    """dQ, dK, dV of sum(dO * O) (SPEC, textbook form); dK and dV sum over the G query heads."""
    B, Hq, Hkv = case["B"], case["Hq"], case["Hkv"]
    G = Hq // Hkv
    vis4 = vis
    kq, vq = np.repeat(k, G, axis=1), np.repeat(v, G, axis=1)
    with np.errstate(invalid="ignore", over="ignore"):
        dp = np.where(vis4, np.einsum("bhid,bhjd->bhij", dout, vq), 0.0)
        D = (p * dp).sum(axis=-1, keepdims=True)
        ds = p * (dp - D)
        if case["softcap"] is not None:
            c = case["softcap"]
            ds = ds * np.where(vis4, 1.0 - np.tanh(raw / c) ** 2, 0.0)
        dq = scale * np.where(vis4[..., None], ds[..., None] * kq[:, :, None, :, :], 0.0).sum(axis=-2)
    dk = scale * np.einsum("bhij,bhid->bhjd", ds, q)
    dv = np.einsum("bhij,bhid->bhjd", p, dout)
    fold = lambda t: t.reshape(B, Hkv, G, *t.shape[2:]).sum(axis=2)  # noqa: E731
    return dq, fold(dk), fold(dv)


def round_bf16(x, truncate=False):
    """float64 -> bf16 values in a float32 array, rounded once (to nearest, ties to even)."""
    x = np.asarray(x, dtype=np.float64)
    finite = np.isfinite(x) & (x != 0)
    _, e = np.frexp(np.where(finite, x, 1.0))
    quantum = np.ldexp(1.0, np.maximum(e, -125) - 8)  # 8 significant bits; subnormals below 2^-126
    r = (np.trunc if truncate else np.rint)(x / quantum) * quantum
    r = np.where(np.abs(r) > 3.3895313892515355e38, np.copysign(np.inf, x), r)
    return np.where(finite, r, x).astype(np.float32)


def to_storage(x, dtype, bug):
    if dtype == "f64":
        return x.astype(np.float64)
    if dtype == "f32":
        return x.astype(np.float32)
    if dtype == "f16":
        return x.astype(np.float16)  # NumPy rounds float64 -> float16 directly (no double rounding)
    return round_bf16(x, truncate=bug == "truncate_bf16")  # bf16 values, stored as <f4


def save(folder, name, array):
    tmp = os.path.join(folder, "." + name + ".npy.tmp")
    with open(tmp, "wb") as f:
        np.save(f, np.ascontiguousarray(array))
    os.replace(tmp, os.path.join(folder, name + ".npy"))


def answer(root, case, bug):
    folder = os.path.join(root, case["dir"])
    q, k, v = (load(folder, n).astype(np.float64) for n in ("q", "k", "v"))
    mask = load(folder, "mask") if case["mask"] else None
    bias = load(folder, "bias").astype(np.float64) if case["bias"] else None
    kv_len = load(folder, "kv_len").astype(np.int64) if case["kv_len"] else np.full(case["B"], case["Tk"])
    packed = None
    if case.get("varlen_sequences", 0) > 0:  # B == 1: the sequences share the one batch entry
        cu_q, cu_k = (load(folder, n).astype(np.int64) for n in ("cu_seqlens_q", "cu_seqlens_k"))
        # kv_len.npy is then [S], the keys each sequence uses (seqused_k); the batch has them all.
        used = kv_len if case["kv_len"] else cu_k[1:] - cu_k[:-1]
        packed = (cu_q, cu_k, used)
        kv_len = np.full(case["B"], case["Tk"])
    vis = visible(case, kv_len, bias, mask, bug, packed)
    sinks = load(folder, "sinks").astype(np.float64) if case.get("sinks") else None
    if case.get("alibi"):  # after the visibility: ALiBi moves logits, never hides a key
        term = alibi_bias(case, kv_len, load(folder, "alibi").astype(np.float64), bug, packed)
        bias = term if bias is None else planes(bias) + term
    out, lse, p, raw, scale = forward(case, q, k, v, vis, bias, bug, sinks)
    dtype = case["dtype"]
    save(folder, "out", to_storage(out, dtype, bug))
    save(folder, "lse", lse.astype(np.float64 if dtype == "f64" else np.float32))
    if case["dout"]:
        dout = load(folder, "dout").astype(np.float64)
        for name, g in zip(("dq", "dk", "dv"), backward(case, q, k, v, dout, vis, p, raw, scale)):
            save(folder, name, to_storage(g, dtype, bug))
        if sinks is not None:
            # dsinks_h = -sum over (b, i) of P_sink D_i, P_sink = exp(z_h - L), D_i = dO_i . O_i.
            p_sink = np.exp(sinks[None, :, None] - lse)
            D = (dout * out).sum(axis=-1)
            sign = 1.0 if bug == "dsink_sign_flipped" else -1.0
            save(folder, "dsinks", to_storage(sign * (p_sink * D).sum(axis=(0, 2)), dtype, bug))


def main():
    ap = argparse.ArgumentParser(description="Answer the cases of an attnv exchange folder with NumPy.")
    ap.add_argument("dir", help="folder written by `attnv cases export`")
    ap.add_argument("--bug", choices=BUGS, help="plant a known bug (to see attnv catch it)")
    a = ap.parse_args()
    with open(os.path.join(a.dir, "manifest.json")) as f:
        manifest = json.load(f)
    for case in manifest["cases"]:
        answer(a.dir, case, a.bug)
    print(f"attention.py: answered {len(manifest['cases'])} case(s) in {a.dir}" + (f" (bug: {a.bug})" if a.bug else ""))


if __name__ == "__main__":
    main()
