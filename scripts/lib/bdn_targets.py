"""The report's targets: each a quotient of two means of the same run (or one mean, or a column) against a limit."""
from bdn_exports import RUNTIMES, number

CIPHER_OPS = ["EncryptEcb", "DecryptEcb", "EncryptCbc", "DecryptCbc"]
TRANSFORM_LIMITS = [("KeptCreateEncryptor", 0.15), ("ReusedTransform", 0.2), ("KeptCryptoStreamWrite", 0.35),
                    ("KeptCryptoStreamWriteDisposed", 0.35), ("KeptCryptoStreamRead", 0.35),
                    ("KeptCryptoStreamReadDisposed", 0.35), ("NewInstance", 0.45)]


def ns(value):
    return "n/a" if value is None else f"{value:,.1f} ns" if value < 1e4 else f"{value / 1e3:,.2f} µs" if value < 1e6 \
        else f"{value / 1e6:,.2f} ms"


def label(row):
    return f"{row['type']}.{row['method']} {RUNTIMES[row['runtime']]} ({', '.join(f'{k}={v}' for k, v in row['params'].items())})"


def targets(run):
    """Rows [target, measured, from, met]. A target whose rows are not in this run (a subset) is left out."""
    out = []

    def quotient(name, type_name, top, bottom, runtime, limit, at_least, under=None, **params):
        """top ÷ bottom, two rows of one class and runtime; under: the bottom row's parameters where they differ."""
        a, b = run.get(type_name, top, runtime, **params), run.get(type_name, bottom, runtime, **(under or params))
        if a is None or b is None:
            return  # not in this run (a subset)
        value = a and b and a["mean"] and b["mean"] and a["mean"] / b["mean"]
        met = value and (value >= limit if at_least else value <= limit)
        out.append([name, f"{value:.2f}×" if value else "no result",
                    f"{type_name} {ns(a and a['mean'])} ÷ {ns(b and b['mean'])}", "yes" if met else "**no**"])

    for op in CIPHER_OPS:
        quotient(f"Steady {op} 16 B ≥ 8× stock .NET 11", "EcbCbcSteady", "Stock", "Cached", "net11", 8, True,
                 Operation=op, Size=16)
        quotient(f"New instance + one call {op} 16 B ≥ 2× stock .NET 11", "EcbCbcSingle", "Stock", "Cached", "net11", 2,
                 True, Operation=op, Size=16)
    for type_name, ops in [("KwpSteady", ["EncryptKeyWrapPadded", "DecryptKeyWrapPadded"]),
                           ("Rfc3394Steady", ["EncryptKeyWrap", "DecryptKeyWrap"])]:
        for op in ops:
            quotient(f"{op} 32 B ≥ 4× stock .NET 11", type_name, "Stock", "Cached", "net11", 4, True,
                     Operation=op, Length=32)
    for runtime in run.runtimes:
        for shape, limit in TRANSFORM_LIMITS:
            quotient(f"Transforms, {RUNTIMES[runtime]}: {shape} 16 B ≤ {limit}× stock", "TransformShapes", "Cached",
                     "Stock", runtime, limit, False, Shape=shape, Size=16)
        cached = [r for r in run.classes.get("TransformShapes", []) if r["runtime"] == runtime and r["method"] == "Cached"]
        pairs = [(r, run.get("TransformShapes", "Stock", runtime, **r["params"])) for r in cached]
        slower = [label(c) for c, s in pairs if s and c["mean"] and s["mean"] and c["mean"] > s["mean"]]
        heavier = [label(c) for c, s in pairs if s and c["alloc"] is not None and s["alloc"] is not None
                   and c["alloc"] > s["alloc"]]
        if cached:
            out.append([f"Transforms, {RUNTIMES[runtime]}: no shape slower than stock", "; ".join(slower) or "none",
                        "TransformShapes", "**no**" if slower else "yes"])
            out.append([f"Transforms, {RUNTIMES[runtime]}: allocates no more than stock", "; ".join(heavier) or "none",
                        "TransformShapes", "**no**" if heavier else "yes"])
        for op, limit in [("EncryptEcb", 2.0), ("DecryptEcb", 2.0), ("EncryptCbc", 2.5), ("DecryptCbc", 2.5)]:
            quotient(f"Steady {op} 16 B ≤ {limit}× floor, {RUNTIMES[runtime]}", "EcbCbcSteady", "Cached", "Floor",
                     runtime, limit, False, Operation=op, Size=16)
            quotient(f"Steady {op} 16 KiB ≤ 1.1× floor, {RUNTIMES[runtime]}", "EcbCbcSteady", "Cached", "Floor",
                     runtime, 1.1, False, Operation=op, Size=16384)
            quotient(f"New instance + one call {op} 16 B ≤ 0.25× stock, {RUNTIMES[runtime]}", "EcbCbcSingle", "Cached",
                     "Stock", runtime, 0.25, False, Operation=op, Size=16)
        for op in ("EncryptEcb", "EncryptCbc"):
            quotient(f"Shared {op}, {RUNTIMES[runtime]}: 2 threads ≥ 1.8× one thread's throughput", "EcbCbcShared",
                     "SharedCached", "SharedCached", runtime, 1.8, True, {"Operation": op, "Threads": 2},
                     Operation=op, Threads=1)
    shared = [r for r in run.classes.get("EcbCbcShared", []) if r["method"] in ("SharedCached", "LockedCached")]
    if shared:
        bad = [label(r) for r in shared if any(number(r[c]) for c in ("exceptions", "threw", "wrong"))]
        out.append(["Shared instance, SharedCached and LockedCached: no exception, no wrong byte", "; ".join(bad) or "none",
                    "EcbCbcShared: Exceptions, Check threw, Check wrong", "**no**" if bad else "yes"])
    allocating = [label(r) for r in run.rows if r["type"].endswith(("Steady", "Shared")) and "Cached" in r["method"]
                  and r["alloc"]]
    out.append(["CachedAes steady state (Steady, Shared) allocates 0 B per call", "; ".join(allocating) or "all 0 B",
                "Allocated [B]", "**no**" if allocating else "yes"])
    missing = [label(r) for r in run.rows if r["mean"] is None]
    out.append(["Every case has a result", "; ".join(missing) or "all", "", "**no**" if missing else "yes"])
    return out
