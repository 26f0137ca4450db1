#!/usr/bin/env python3
"""Reads a valgrind memcheck XML report (--xml=yes) of a .NET process and prints the memory errors that involve native
crypto code, one block per error; exits 1 if there is any, 0 if none, 2 if the report is unreadable.

The .NET runtime itself does things memcheck reports although they are deliberate (its garbage collector's writes,
null dereferences it turns into NullReferenceException, its own allocator tricks), so a whole-process error count is
not a verdict. What counts here is every error whose own stack, or the stack that freed or allocated the block it
touched, has a frame in libcrypto (a use of a freed or never-allocated OpenSSL object, or a double free), and every
invalid or mismatched free wherever it happens.

    python3 scripts/memcheck_errors.py report.xml
"""
import sys
import xml.etree.ElementTree as ET

ACCESS_KINDS = {"InvalidRead", "InvalidWrite", "InvalidJump", "Overlap", "InvalidMemPool", "UninitCondition", "UninitValue",
                "SyscallParam", "ClientCheck"}
FREE_KINDS = {"InvalidFree", "MismatchedFree", "FishyValue"}


def frames(stack):
    return [] if stack is None else stack.findall("frame")


def describe(frame):
    obj = (frame.findtext("obj") or "?").rsplit("/", 1)[-1]
    fn = frame.findtext("fn") or "???"
    return f"{fn} ({obj})"


def main(path):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"memcheck: cannot read {path}: {e}")
        return 2

    found = 0
    for error in root.findall("error"):
        kind = error.findtext("kind") or ""
        stacks = error.findall("stack")
        involves_crypto = any("libcrypto" in (f.findtext("obj") or "") for s in stacks for f in frames(s))
        if kind in FREE_KINDS or (kind in ACCESS_KINDS and involves_crypto):
            found += 1
            what = error.findtext("what") or error.findtext("xwhat/text") or kind
            print(f"memcheck error {found}: {kind}: {what}")
            for s in stacks:
                for f in frames(s)[:8]:
                    print(f"    {describe(f)}")
                print("  --")
            aux = error.findtext("auxwhat") or error.findtext("xauxwhat/text")
            if aux:
                print(f"  {aux}")
    print(f"memcheck: {found} memory error(s) involving native crypto code or the allocator's free")
    return 1 if found else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
