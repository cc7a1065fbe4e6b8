#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/report.py OUT: the report of a bench run (bench/bench.sh) from OUT/results.jsonl.

Writes OUT/report.txt and OUT/report.md (every figure next to its baseline, the ratio, the
targets met or not), OUT/results.json and OUT/results.csv (every figure: median, spread and
rounds), and PNG plots in OUT/plots/ drawn with gnuplot. Ratios are taken round by round
(a figure and its baseline measured minutes apart on this VM can differ by 2x) and the median
ratio is reported; a figure measured once is divided by its baseline's median. A target is
"met" only against a baseline that measured the machine rather than its load (see judge()).
"""
import csv
import json
import os
import statistics
import subprocess
import sys
from collections import defaultdict

OUT = sys.argv[1]
rows = []
with open(os.path.join(OUT, "results.jsonl")) as f:
    for line in f:
        line = line.strip()
        if line:
            rows.append(json.loads(line))

# (id, size, qps, pairs) -> {round: value}
series = defaultdict(dict)
units = {}
for r in rows:
    key = (r["id"], r["size"], r["qps"], r["pairs"])
    series[key][r["round"]] = r["value"]
    units[key] = r["unit"]


def key(fid, size=0, qps=1, pairs=1):
    return (fid, size, qps, pairs)


def med(k):
    v = list(series.get(k, {}).values())
    return statistics.median(v) if v else None


# A latency baseline's round is usable when its median measured the design, not the load: at
# most STALL_MAX % of its round trips waited 1 ms or more (a scheduler time slice, not a
# wake-up), so the median lies well inside the round trips that did not, and the median is
# within SPREAD_MAX x of the round's minimum. A round that is not usable is left out of every
# ratio; docs/performance.md says why.
STALL_MAX = 25.0
SPREAD_MAX = 5.0
# Across rounds, a baseline whose usable rounds differ by more than this cannot decide a
# target that the median ratio meets and the best round does not.
ROUNDS_SPREAD_MAX = 1.5


def lower_is_better(k):
    return units.get(k) == "us"


def sub(k, what):
    return (k[0] + "." + what,) + k[1:]


def usable_rounds(base_k):
    """Rounds of a baseline fit to judge against, and why the others were not."""
    b = series.get(base_k, {})
    ok, why = [], []
    for r, v in sorted(b.items()):
        st = series.get(sub(base_k, "stalled"), {}).get(r)
        mn = series.get(sub(base_k, "min"), {}).get(r)
        if st is not None and st > STALL_MAX:
            why.append(f"round {r}: {fmt(v)} {units[base_k]}, {st:.0f} % of round trips >= 1 ms")
        elif mn and lower_is_better(base_k) and v > SPREAD_MAX * mn:
            why.append(f"round {r}: median {fmt(v)} = {v / mn:.1f} x its minimum {fmt(mn)}")
        else:
            ok.append(r)
    return ok, why


def base_best(base_k, rounds):
    """The best the machine showed for a baseline in the usable rounds: the lowest latency, or
    the highest throughput of any eighth of a measurement (bv_baseline's _best)."""
    b = series[base_k]
    if lower_is_better(base_k):
        return min(b[r] for r in rounds)
    best = series.get(sub(base_k, "best"), {})
    return max(max(b[r], best.get(r, 0)) for r in rounds)


def ratio(k, base_k):
    """Median of the per-round ratios over the baseline's usable rounds where both were
    measured, else the figure's median over the usable baseline rounds' median."""
    a, b = series.get(k, {}), series.get(base_k, {})
    if not a or not b:
        return None
    rounds, _ = usable_rounds(base_k)
    if not rounds:
        return None
    both = [a[r] / b[r] for r in a if r in rounds and b[r] > 0]
    if len(both) >= 2 or (both and len(a) == 1):
        return statistics.median(both)
    mb = statistics.median(b[r] for r in rounds)
    return statistics.median(a.values()) / mb if mb > 0 else None


def judge(fk, bk, op, thr):
    """(ratio, verdict) of a target. "met" only when the figure meets it both against its
    baseline round by round (median ratio) and against the baseline's best usable round; a
    disturbed baseline makes it "unmeasurable here", never "met"."""
    ok = (lambda r: r >= thr) if op == "ge" else (lambda r: r <= thr)

    def off(r):
        by = (thr / r if op == "ge" else r / thr) if r else float("inf")
        return f"NOT met (off by {by:.2f}x)"

    a = series.get(fk, {})
    if bk is None:
        if not a:
            return None, "not measured"
        r = statistics.median(a.values())
        return r, "met" if ok(r) else off(r)
    b = series.get(bk, {})
    if not a or not b:
        return None, "not measured"
    rounds, why = usable_rounds(bk)
    if not rounds:
        return None, "unmeasurable here: baseline disturbed in every round (" + "; ".join(why) + ")"
    both = [a[r] / b[r] for r in a if r in rounds and b[r] > 0]
    if both:
        r_med = statistics.median(both)
        fig = statistics.median(a[r] for r in a if r in rounds)
    else:	# the figure was measured in other rounds than its usable baseline
        fig = statistics.median(a.values())
        r_med = fig / statistics.median(b[r] for r in rounds)
    r_best = fig / base_best(bk, rounds)
    if not ok(r_med):
        return r_med, off(r_med)
    if ok(r_best) and len(rounds) < 2 and not lower_is_better(bk):
        # a throughput baseline has no stalls to count: only rounds that agree show that the
        # load did not starve it (a uniformly loaded round looks steady within itself)
        return r_med, (f"unmeasurable here: one usable round of the baseline (its spread over "
                       f"rounds is unknown; against that round the ratio meets the target)")
    if ok(r_best):
        return r_med, "met" + (f" (baseline rounds left out: {'; '.join(why)})" if why else "")
    vals = [b[r] for r in rounds]
    spread = max(vals) / min(vals) if min(vals) > 0 else float("inf")
    if spread > ROUNDS_SPREAD_MAX or not lower_is_better(bk):
        return r_med, (f"unmeasurable here: met against the baseline's median, not against its "
                       f"best ({fmt(r_best)}; the baseline varied {spread:.1f}x over rounds, "
                       f"within a round up to its best eighth)")
    return r_med, off(r_best)


def fmt(v, digits=3):
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"{v:.1f}"
    if abs(v) >= 10:
        return f"{v:.2f}"
    return f"{v:.{digits}f}"


# The targets of issue 15: (label, figure, baseline or None, 'ge'/'le', threshold)
TARGETS = [
    ("cx4 ib_write_lat typical vs software-device floor",
     key("cx4.ib_write_lat.lat", 8), key("base.swdev_floor", 8), "le", 1.5),
    ("  the same, engines that sleep when idle (spin_us 1)",
     key("cx4sleep.ib_write_lat.lat", 8), key("base.swdev_floor", 8), "le", 1.5),
    ("  the same, engines at SCHED_FIFO (rt_priority 50) vs the floor at SCHED_FIFO",
     key("cx4rt.ib_write_lat.lat", 8), key("base.swdev_floor_rt", 8), "le", 1.5),
    ("cx4 ib_write_lat typical vs busy-poll UDP half RTT (>= 8 cores)",
     key("cx4.ib_write_lat.lat", 8), key("base.udp_lat", 64), "le", 1.5),
    ("cx4 ib_write_bw 64 KiB vs best UDP loopback",
     key("cx4.ib_write_bw.bw", 65536), key("base.udp_bw", 4096), "ge", 1.5),
    ("cx4 ib_write_bw -s 8 rate vs UDP packet rate",
     key("cx4.ib_write_bw.rate", 8), key("base.udp_pps", 64), "ge", 2.5),
    ("  the same, engines that sleep when idle (spin_us 1)",
     key("cx4sleep.ib_write_bw.rate", 8), key("base.udp_pps", 64), "ge", 2.5),
    ("  the same, engines at SCHED_FIFO (rt_priority 50)",
     key("cx4rt.ib_write_bw.rate", 8), key("base.udp_pps", 64), "ge", 2.5),
    ("ntb ib_write_bw 64 KiB vs memcpy 64 KiB",
     key("ntb.ib_write_bw.bw", 65536), key("base.memcpy", 65536), "ge", 0.9),
    ("ntb ib_write_bw 4 MiB vs memcpy 4 MiB",
     key("ntb.ib_write_bw.bw", 4194304), key("base.memcpy", 4194304), "ge", 0.9),
    ("ntb ib_write_bw -s 8 rate (Mmsg/s)",
     key("ntb.ib_write_bw.rate", 8), None, "ge", 20.0),
    ("ntb ib_write_lat typical vs cache-line ping-pong",
     key("ntb.ib_write_lat.lat", 8), key("base.shm_lat", 8), "le", 1.5),
    ("cx4 ib_write_bw -q 1024 vs -q 1",
     key("cx4.ib_write_bw.qps.bw", 65536, 1024), key("cx4.ib_write_bw.qps.bw", 65536, 1), "ge", 0.8),
    ("ntb ib_write_bw -q 1024 vs -q 1",
     key("ntb.ib_write_bw.qps.bw", 65536, 1024), key("ntb.ib_write_bw.qps.bw", 65536, 1), "ge", 0.8),
    ("cx4 64 pairs aggregate vs 1 pair",
     key("cx4.pairs.bw", 65536, 1, 64), key("cx4.ib_write_bw.bw", 65536), "ge", 0.8),
    ("ntb 64 pairs aggregate vs 1 pair",
     key("ntb.pairs.bw", 65536, 1, 64), key("ntb.ib_write_bw.bw", 65536), "ge", 0.8),
    # issue 10 (bench/rdmacm_bench.sh): connections per second, 99th percentile of a step
    ("cx4 rdma_cm connect rate (cmtime, conn/s)",
     key("cx4.cmtime.connect.rate"), None, "ge", 5000.0),
    ("ntb rdma_cm connect rate (cmtime, conn/s)",
     key("ntb.cmtime.connect.rate"), None, "ge", 5000.0),
    ("cx4 rdma_cm connect p99, RC QPs, 32 in flight (ms)",
     key("cx4.cm_rate.qp.w32.connect.lat_p99"), None, "le", 10.0),
    ("ntb rdma_cm connect p99, RC QPs, 32 in flight (ms)",
     key("ntb.cm_rate.qp.w32.connect.lat_p99"), None, "le", 10.0),
    # issue 11 (bench/scif_bench.sh; its baselines are renamed scif.base.* by bench.sh)
    ("ntb scif_writeto 1 MiB vs memcpy 1 MiB",
     key("ntb.scif_writeto.bw", 1048576), key("scif.base.memcpy", 1048576), "ge", 0.8),
    ("ntb scif 8-byte RTT, median of rounds (us)",
     key("ntb.scif_rtt.lat", 8), None, "le", 2.0),
    ("  the same, best round (us)",
     key("ntb.scif_rtt.lat_best", 8), None, "le", 2.0),
    ("cx4 scif 8-byte half RTT vs ib_send_lat, median of rounds",
     key("cx4.scif_rtt.lat_half", 8), key("cx4.ib_send_lat.lat", 8), "le", 1.2),
    ("  the same, best rounds",
     key("cx4.scif_rtt.lat_half_best", 8), key("cx4.ib_send_lat.lat_best", 8), "le", 1.2),
]

# Which baseline a figure is shown against in the tables.
def baseline_for(fid, size, unit):
    kind = fid.split(".")[0]
    metric = fid.rsplit(".", 1)[-1]
    # only figures in the baseline's own unit: a connection rate is not a packet rate
    if (metric, unit) not in (("bw", "Gb/s"), ("rate", "Mpps")) and not (
            metric.startswith("lat") and unit == "us"):
        return None
    if metric in ("bw",):
        if kind == "ntb":
            return key("base.memcpy", size) if key("base.memcpy", size) in series else None
        return key("base.udp_bw", 4096)
    if metric == "rate":
        return key("base.udp_pps", 64)
    if metric.startswith("lat"):
        if kind == "ntb":
            return key("base.shm_lat", 8)
        return key("base.swdev_floor_rt" if kind == "cx4rt" else "base.swdev_floor", 8)
    return None


lines_txt, lines_md = [], []
log = []
if os.path.exists(os.path.join(OUT, "log.txt")):
    with open(os.path.join(OUT, "log.txt")) as f:
        log = [l.rstrip("\n") for l in f]


def out(txt, md=None):
    lines_txt.append(txt)
    lines_md.append(txt if md is None else md)


out("bridgeverbs bench report", "# bridgeverbs bench report")
out("")
for l in log:
    if l.startswith("# bench on") or l.startswith("# ran in"):
        out(l[2:], "- " + l[2:])
out("")

# Targets
out("Targets (ratios in the same run):", "## Targets (ratios in the same run)")
out("", "")
lines_md.append("| figure | value | baseline | ratio | target | |")
lines_md.append("|---|---|---|---|---|---|")
missing_any = False
for label, fk, bk, op, thr in TARGETS:
    v = med(fk)
    r, verdict = judge(fk, bk, op, thr)
    bv = None
    if bk is not None:
        rounds, _ = usable_rounds(bk)
        bv = statistics.median(series[bk][x] for x in rounds) if rounds else med(bk)
    if r is None and verdict == "not measured":
        missing_any = True
    u = units.get(fk, "")
    bu = units.get(bk, "") if bk else ""
    tgt = f"{'>=' if op == 'ge' else '<='} {thr}" + ("x" if bk else "")
    lines_txt.append(f"  {label:<62} {fmt(v):>9} {u:<6} base {fmt(bv):>9} {bu:<6} "
                     f"ratio {fmt(r):>7}  target {tgt:<8} {verdict}")
    lines_md.append(f"| {label} | {fmt(v)} {u} | {fmt(bv)} {bu} | {fmt(r)} | {tgt} | {verdict} |")
out("")

# Every figure
out("Every figure (median of rounds [min..max], n rounds; ratio to the baseline named):",
    "## Every figure\n\nMedian of the rounds, [min..max], rounds; the ratio is to the baseline named.\n")
lines_md.append("| figure | size | QPs | pairs | value | spread | n | baseline | ratio |")
lines_md.append("|---|---|---|---|---|---|---|---|---|")
records = []
for k in sorted(series, key=lambda k: (k[0].split(".")[0] != "base", k)):
    fid, size, qps, pairs = k
    vals = list(series[k].values())
    m = statistics.median(vals)
    bk = None if fid.startswith("base.") else baseline_for(fid, size, units[k])
    r = ratio(k, bk) if bk else None
    rec = {"id": fid, "size": size, "qps": qps, "pairs": pairs, "unit": units[k],
           "median": m, "min": min(vals), "max": max(vals), "rounds": len(vals),
           "baseline": bk[0] if bk and r is not None else None,
           "baseline_size": bk[1] if bk and r is not None else None,
           "ratio": r}
    records.append(rec)
    bname = f"{bk[0]}@{bk[1]}" if bk and r is not None else ""
    lines_txt.append(f"  {fid:<34} {size:>8} q{qps:<5} p{pairs:<3} {fmt(m):>9} {units[k]:<7} "
                     f"[{fmt(min(vals))}..{fmt(max(vals))}] n={len(vals)}  {bname:<24} {fmt(r)}")
    lines_md.append(f"| {fid} | {size} | {qps} | {pairs} | {fmt(m)} {units[k]} | "
                    f"{fmt(min(vals))}..{fmt(max(vals))} | {len(vals)} | {bname} | {fmt(r)} |")
out("")
# Scale: per kind, the figures as the QPs and the process pairs grow, and per MR
SCALE_QP = [("ib_write_bw -q N (Gb/s)", "ib_write_bw.qps.bw", 65536),
            ("bv_scale WRITE (Gb/s)", "qps.bw", 65536),
            ("bv_scale SEND half RTT (us)", "qps.lat", 8),
            ("QP pairs created/s", "qp_create_rate", 0),
            ("app B/QP", "qp_mem_app", 0),
            ("daemons B/QP", "qp_mem_daemon", 0)]
SCALE_MR = [("MRs registered/s", "mr_reg_rate"), ("MRs deregistered/s", "mr_dereg_rate"),
            ("app B/MR", "mr_mem_app"), ("daemons B/MR", "mr_mem_daemon")]


def scale_section():
    qps = sorted({k[2] for k in series if k[0].endswith((".qps.bw", ".qps.lat", ".qp_create_rate"))})
    pairs = sorted({k[3] for k in series if k[0].endswith(".pairs.bw")})
    if not qps and not pairs:
        return
    out("Scale:", "## Scale\n")
    for kind in ("cx4", "ntb"):
        if qps:
            out(f"  {kind}, QPs per process:", f"{kind}, QPs per process (one process, both devices):\n")
            hdr = ["QPs"] + [c[0] for c in SCALE_QP]
            lines_txt.append("    " + " | ".join(hdr))
            lines_md.append("| " + " | ".join(hdr) + " |")
            lines_md.append("|" + "---|" * len(hdr))
            for n in qps:
                row = [str(n)] + [fmt(med(key(f"{kind}.{fid}", size, n))) for _, fid, size in SCALE_QP]
                lines_txt.append("    " + " | ".join(row))
                lines_md.append("| " + " | ".join(row) + " |")
            out("")
        if pairs:
            out(f"  {kind}, concurrent process pairs (ib_write_bw 64 KiB):",
                f"{kind}, concurrent process pairs (ib_write_bw 64 KiB):\n")
            lines_txt.append("    pairs | aggregate Gb/s | completed")
            lines_md.append("| pairs | aggregate Gb/s | completed |\n|---|---|---|")
            for n in pairs:
                row = [str(n), fmt(med(key(f"{kind}.pairs.bw", 65536, 1, n))),
                       f"{med(key(f'{kind}.pairs.completed', 65536, 1, n)) or 0:.0f} of {n}"]
                lines_txt.append("    " + " | ".join(row))
                lines_md.append("| " + " | ".join(row) + " |")
            out("")
        mr = [(label, med(key(f"{kind}.{fid}", 65536))) for label, fid in SCALE_MR]
        if any(v is not None for _, v in mr):
            out(f"  {kind}, 1,000 MRs of 64 KiB: " + ", ".join(f"{l} {fmt(v)}" for l, v in mr),
                f"{kind}, 1,000 MRs of 64 KiB: " + ", ".join(f"{l} {fmt(v)}" for l, v in mr) + "\n")
    out("")


scale_section()

notes = [l[2:] for l in log if "failed" in l or "not installed" in l]
if notes:
    out("Did not run or failed:", "## Did not run or failed\n")
    for n in notes:
        out("  " + n, "- " + n)

with open(os.path.join(OUT, "report.txt"), "w") as f:
    f.write("\n".join(lines_txt) + "\n")
with open(os.path.join(OUT, "report.md"), "w") as f:
    f.write("\n".join(lines_md) + "\n")
with open(os.path.join(OUT, "results.json"), "w") as f:
    json.dump({"figures": records, "log": log}, f, indent=1)
with open(os.path.join(OUT, "results.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["id", "size", "qps", "pairs", "unit", "median", "min", "max", "rounds",
                "baseline", "baseline_size", "ratio"])
    for r in records:
        w.writerow([r[c] for c in ("id", "size", "qps", "pairs", "unit", "median", "min", "max",
                                   "rounds", "baseline", "baseline_size", "ratio")])

# ---- plots ----
plots = os.path.join(OUT, "plots")
os.makedirs(plots, exist_ok=True)
data = os.path.join(plots, "data")
os.makedirs(data, exist_ok=True)


def curve(name, fid, xfield="size", fixed=None):
    """Writes (x, median, min, max) of a figure over sizes (or qps/pairs); returns path or None."""
    fixed = fixed or {}
    pts = []
    for r in records:
        if r["id"] != fid:
            continue
        if any(r[f] != v for f, v in fixed.items()):
            continue
        if xfield == "size" and not (8 <= r["size"] <= 4194304):
            continue
        pts.append((r[xfield], r["median"], r["min"], r["max"]))
    if not pts:
        return None
    pts.sort()
    path = os.path.join(data, name + ".dat")
    with open(path, "w") as f:
        for p in pts:
            f.write("%s %s %s %s\n" % p)
    return path


def hline(fid, size):
    """A baseline's median over its usable rounds (a disturbed baseline is not drawn)."""
    k = key(fid, size)
    if k not in series:
        return None
    rounds, _ = usable_rounds(k)
    return statistics.median(series[k][r] for r in rounds) if rounds else None


def plot(fname, title, xlabel, ylabel, curves, hlines, logy=False, logx=True):
    cmds = [
        "set terminal pngcairo size 1000,640 font ',10' noenhanced",
        f"set output '{os.path.join(plots, fname)}'",
        f"set title '{title}'", f"set xlabel '{xlabel}'", f"set ylabel '{ylabel}'",
        "set grid", "set key outside right top",
    ]
    if logx:
        cmds.append("set logscale x 2")
        cmds.append("set format x '%.0s%cB'" if xlabel.startswith("message") else "set format x '%g'")
    if logy:
        cmds.append("set logscale y 10")
    parts = []
    for path, label in curves:
        if path:
            parts.append(f"'{path}' using 1:2 with linespoints title '{label}'")
    for v, label in hlines:
        if v is not None:
            parts.append(f"{v} with lines dashtype 2 title '{label} ({fmt(v)})'")
    if not parts:
        return
    cmds.append("plot " + ", ".join(parts))
    try:
        subprocess.run(["gnuplot"], input="\n".join(cmds) + "\n", text=True, check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"report: gnuplot failed for {fname}: {e}", file=sys.stderr)


bw = []
lat = []
rate = []
for kind in ("cx4", "ntb"):
    for p in ("ib_write_bw", "ib_read_bw", "ib_send_bw"):
        bw.append((curve(f"{kind}_{p}", f"{kind}.sweep.{p}.bw"), f"{kind} {p}"))
        rate.append((curve(f"{kind}_{p}_rate", f"{kind}.sweep.{p}.rate"), f"{kind} {p}"))
    for p in ("ib_write_lat", "ib_read_lat", "ib_send_lat"):
        lat.append((curve(f"{kind}_{p}", f"{kind}.sweep.{p}.lat"), f"{kind} {p}"))
bw.append((curve("memcpy", "base.memcpy"), "memcpy (1 CPU)"))
bw.append((curve("pvm", "base.pvm"), "process_vm_writev (1 CPU)"))
plot("bandwidth.png", "Bandwidth against message size", "message size", "Gb/s", bw,
     [(hline("base.udp_bw", 4096), "best UDP loopback"), (hline("base.tcp_bw", 1048576), "TCP loopback stream")],
     logy=True)
plot("latency.png", "Latency (typical half round trip) against message size", "message size", "us", lat,
     [(hline("base.swdev_floor", 8), "software-device floor"),
      (hline("base.swdev_floor_rt", 8), "software-device floor, SCHED_FIFO relays"), (hline("base.udp_lat", 64), "UDP busy-poll"),
      (hline("base.udp_lat_block", 64), "UDP blocking"), (hline("base.shm_lat", 8), "cache-line ping-pong")],
     logy=True)
plot("rate.png", "Message rate against message size", "message size", "M messages/s", rate,
     [(hline("base.udp_pps", 64), "UDP packet rate")], logy=True)
plot("scale_qps.png", "ib_write_bw 64 KiB against QPs", "QPs", "Gb/s",
     [(curve("cx4_qps", "cx4.ib_write_bw.qps.bw", "qps"), "cx4"),
      (curve("ntb_qps", "ntb.ib_write_bw.qps.bw", "qps"), "ntb"),
      (curve("cx4_scale_bw", "cx4.qps.bw", "qps"), "cx4 bv_scale"),
      (curve("ntb_scale_bw", "ntb.qps.bw", "qps"), "ntb bv_scale")], [], logy=True)
plot("scale_pairs.png", "Aggregate ib_write_bw 64 KiB against concurrent process pairs", "pairs", "Gb/s",
     [(curve("cx4_pairs", "cx4.pairs.bw", "pairs"), "cx4"),
      (curve("ntb_pairs", "ntb.pairs.bw", "pairs"), "ntb")], [], logy=True)
plot("scale_lat.png", "SEND ping-pong half round trip against QPs (bv_scale)", "QPs", "us",
     [(curve("cx4_scale_lat", "cx4.qps.lat", "qps"), "cx4"),
      (curve("ntb_scale_lat", "ntb.qps.lat", "qps"), "ntb")], [], logy=True)
sys.exit(0)
