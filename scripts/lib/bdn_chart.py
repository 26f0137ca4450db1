"""The report's chart: a kept instance's one-shots against size, stock and CachedAes on each runtime and the floor, one
panel per operation, drawn by gnuplot from the exported means (the PNG, and its .dat and .gp beside it)."""
import os
import subprocess

PANELS = [("EcbCbcSteady", "Size", op) for op in ("EncryptEcb", "DecryptEcb", "EncryptCbc", "DecryptCbc")] + \
    [("KwpSteady", "Length", op) for op in ("EncryptKeyWrapPadded", "DecryptKeyWrapPadded")]
SERIES = [("Stock", "net10", "stock .NET 10", "lw 2 pt 7 lc rgb '#d62728'"),
          ("Stock", "net11", "stock .NET 11", "lw 2 pt 6 lc rgb '#ff7f0e'"),
          ("Cached", "net10", "CachedAes .NET 10", "lw 2 pt 5 lc rgb '#1f77b4'"),
          ("Cached", "net11", "CachedAes .NET 11", "lw 2 pt 4 dt 3 lc rgb '#17becf'"),
          ("Floor", "net10", "floor (P/Invoke, .NET 10)", "lw 2 pt 9 dt 2 lc rgb '#2ca02c'")]


def chart(run, png, label):
    """Returns the PNG's path, or None when the run has no Steady rows."""
    panels = []
    for type_name, size, op in PANELS:
        points = {}
        for r in run.classes.get(type_name, []):
            if r["params"].get("Operation") == op and size in r["params"]:
                points.setdefault(int(r["params"][size]), {})[(r["method"], r["runtime"])] = r["mean"]
        if points:
            panels.append((op, [f"{n} " + " ".join("NaN" if points[n].get(s[:2]) is None else f"{points[n][s[:2]]:.3f}"
                                                   for s in SERIES) for n in sorted(points)]))
    if not panels:
        return None
    base = os.path.splitext(png)[0]
    with open(base + ".dat", "w") as f:
        f.write("\n\n\n".join("\n".join(lines) for _, lines in panels) + "\n")
    columns = 3 if len(panels) > 4 else 2
    rows = (len(panels) + columns - 1) // columns
    title = "CachedAes vs stock Aes.Create() vs the native floor: steady one-shot, ns per call (log scales)"
    gp = [f"set terminal pngcairo size {560 * columns},{400 * rows + 70} font 'sans,10'",
          f"set output '{os.path.basename(png)}'", "set datafile missing 'NaN'", "set logscale xy",
          "set format y '%.0s%c'", "set ytics nomirror", "set grid xtics ytics lc rgb '#dddddd'",
          "set key bottom right box opaque", "set xlabel 'plaintext size (bytes)'", "set ylabel 'ns per call'",
          f"set multiplot layout {rows},{columns} title \"{title}{chr(92) + 'n' + label if label else ''}\" font 'sans,13'"]
    for index, (op, lines) in enumerate(panels):
        plots = [f"{repr(os.path.basename(base) + '.dat') if i == 0 else repr('')} index {index} using 1:{i + 2} "
                 f"with linespoints {style} title '{name}'" for i, (_, _, name, style) in enumerate(SERIES)]
        gp += ["set xtics nomirror", f"set title '{op}' font 'sans,11'", "plot " + ", ".join(plots)]
    gp.append("unset multiplot")
    with open(base + ".gp", "w") as f:
        f.write("\n".join(gp) + "\n")
    subprocess.run(["gnuplot", os.path.basename(base) + ".gp"], cwd=os.path.dirname(os.path.abspath(png)), check=True)
    return png
