#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The boundary between driver code and the device models (docs/reliability.md, "The boundary").

Driver code - cx4d, ntbd, the providers - reaches a device only through BAR0 loads and stores,
DMA memory and interrupts (the cx4 bus, devices/cx4/bus/cx4_bus.h), or through the NTB HAL
(devices/ntb/hal/ntb_hal.h, modelled on Linux ntb.h). This test fails when driver code

  * includes a header of a model's internals (devices/cx4/model/*.h, devices/ntb/model/*.h),
    except that cx4d's bus.c may include cx4_model.h, the model backend's open();
  * references a symbol that a model library defines, other than what its API allows: for the
    cx4 model only cx4_model_open (the backend's probe), for the NTB model the functions and
    objects declared in ntb_hal.h.

The symbol check reads the object files the build made (nm), so it holds whatever the source
looks like (a prototype written by hand, a macro). Before checking, it proves that it can fail:
an object that calls cx4_model_get_stats and a source that includes cx4_model_ctl.h must be
refused.

    boundary_check.py SRCDIR --model NAME ARCHIVE API_HEADER|- [ALLOWED ...] [--model ...] \\
                      --driver NAME SRC_DIR OBJECT... [--driver ...]

Every driver is checked against every model. Arguments may be ;-lists (CMake generator
expressions).
"""
import os
import re
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def nm(paths, flags):
    out = subprocess.run(["nm", "-P"] + flags + list(paths), check=True, capture_output=True,
                         text=True).stdout
    syms = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and not f[0].endswith(":"):
            syms.add(f[0])
    return syms


def model_symbols(archive):
    return nm([archive], ["-g", "--defined-only"])


def api_names(header):
    if header == "-":
        return set()
    with open(header) as f:
        return set(re.findall(r"\b([a-z_][a-z0-9_]*)\b", f.read()))


def check_objects(driver, objects, model, defined, allowed):
    used = nm(objects, ["-u"]) if objects else set()
    bad = sorted(s for s in used & defined if s not in allowed)
    return ["%s: references %s of the %s model (not its API)" % (driver, s, model) for s in bad]


def split_args(argv):
    out = []
    for a in argv:
        out += [x for x in a.split(";") if x]
    return out


def model_headers(srcdir):
    hdrs = {}
    for m in ("devices/cx4/model", "devices/ntb/model"):
        for h in os.listdir(os.path.join(srcdir, m)):
            if h.endswith(".h"):
                hdrs.setdefault(h, []).append(m)
    return hdrs


def check_sources(srcdir, rel_dir, hdrs):
    errors = []
    root = os.path.join(srcdir, rel_dir)
    for dirpath, _, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, srcdir)
            with open(path, errors="replace") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                base = os.path.basename(inc)
                if "/model/" in inc or base in hdrs:
                    if rel == "devices/cx4/daemon/bus.c" and inc == "cx4_model.h":
                        continue  # the model backend's open(), as the kernel's probe
                    errors.append('%s: includes "%s", a header of a model\'s internals' %
                                  (rel, inc))
    return errors


def selftest(srcdir, cx4_archive, hdrs):
    with tempfile.TemporaryDirectory() as t:
        c = os.path.join(t, "bad.c")
        o = os.path.join(t, "bad.o")
        with open(c, "w") as f:
            f.write('#include "cx4_model_ctl.h"\nint bad(void);\n'
                    "int bad(void) { return cx4_model_get_stats(0, 0); }\n")
        subprocess.run(["cc", "-c", "-I", os.path.join(srcdir, "devices/cx4/model"),
                        "-I", os.path.join(srcdir, "devices/cx4/bus"),
                        "-I", os.path.join(srcdir, "kernel-abi"), c, "-o", o], check=True)
        objs = check_objects("selftest", [o], "cx4", model_symbols(cx4_archive),
                             {"cx4_model_open"})
        srcs = check_sources(t, ".", hdrs)
        if not objs or not srcs:
            sys.exit("boundary_check: the self-test was not refused (%s, %s): the check is "
                     "broken" % (objs, srcs))


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    srcdir = argv[1]
    models, drivers = {}, []
    args = split_args(argv[2:])
    while args:
        kind = args.pop(0)
        group = []
        while args and not args[0].startswith("--"):
            group.append(args.pop(0))
        if kind == "--model":
            name, archive, header, allowed = group[0], group[1], group[2], set(group[3:])
            models[name] = (archive, model_symbols(archive), api_names(header) | allowed)
        elif kind == "--driver":
            drivers.append((group[0], group[1], group[2:]))
        else:
            sys.exit("boundary_check: unknown argument " + kind)
    hdrs = model_headers(srcdir)
    selftest(srcdir, models["cx4"][0], hdrs)
    errors = []
    seen_dirs = set()
    for name, src_dir, objects in drivers:
        if not objects:
            errors.append("%s: no object files to check" % name)
        for model, (_, defined, allowed) in models.items():
            errors += check_objects(name, objects, model, defined, allowed)
        if src_dir not in seen_dirs:
            seen_dirs.add(src_dir)
            errors += check_sources(srcdir, src_dir, hdrs)
    for e in errors:
        print("FAIL:", e)
    if errors:
        sys.exit(1)
    print("boundary_check: %d drivers (%d objects) use no model internals, %d model symbols "
          "checked" % (len(drivers), sum(len(d[2]) for d in drivers),
                       sum(len(m[1]) for m in models.values())))


if __name__ == "__main__":
    main(sys.argv)
