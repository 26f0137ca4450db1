#!/usr/bin/env python3
"""Reads a valgrind memcheck XML report (--xml=yes) of a .NET process and prints the memory errors that involve native
crypto code or memory CachedAes allocates itself, one block per error; exits 1 if there is any, 0 if none, 2 if the
report is unreadable.

The .NET runtime itself does things memcheck reports although they are deliberate (its garbage collector's writes,
null dereferences it turns into NullReferenceException, its own allocator tricks), so a whole-process error count is
not a verdict. What counts here:
- every error whose own stack, or the stack that freed or allocated the block it touched, has a frame in libcrypto (a
  use of a freed or never-allocated OpenSSL object, or a double free);
- every invalid access to a block that managed code allocated or freed: the C allocator function (malloc, calloc,
  free, ...) in the block's allocation or free stack was called from System.Private.CoreLib (NativeMemory.Alloc,
  AllocZeroed, AlignedAlloc, Free and Marshal.AllocHGlobal call it directly), from libSystem.Native (its
  SystemNative_ shims, which older runtimes went through) or from JIT-compiled code (a frame memcheck cannot place in
  any file). That is where CachedAes keeps its own native memory: the key memory of every key epoch, the CPU backend's
  round keys, the CNG key objects and the temporary buffers of long one-shots. The access itself is in managed code,
  which memcheck cannot name either, so such an error is recognised by the block's stacks. The runtime's own native
  code (libcoreclr) and the garbage collector's heap are not counted: their reports are not verdicts (see above);
- every invalid or mismatched free wherever it happens.

    python3 scripts/memcheck_errors.py report.xml
"""
import sys
import xml.etree.ElementTree as ET

ACCESS_KINDS = {"InvalidRead", "InvalidWrite", "InvalidJump", "Overlap", "InvalidMemPool", "UninitCondition", "UninitValue",
                "SyscallParam", "ClientCheck"}
FREE_KINDS = {"InvalidFree", "MismatchedFree", "FishyValue"}
C_ALLOCATOR = {"malloc", "calloc", "realloc", "free", "memalign", "posix_memalign", "aligned_alloc", "valloc"}
MANAGED_CALLERS = ("System.Private.CoreLib.dll", "libSystem.Native.so")


def managed_block(stack):
    """True when the stack is a block's allocation or free made by managed code (see the module's description)."""
    fs = frames(stack)
    for i, f in enumerate(fs[:-1]):
        if (f.findtext("fn") or "") in C_ALLOCATOR:
            caller = fs[i + 1]
            obj = (caller.findtext("obj") or "").rsplit("/", 1)[-1]
            return obj in MANAGED_CALLERS or (obj == "" and caller.findtext("fn") is None)
    return False



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
        # The stacks after the first are the block's: where it was freed and where it was allocated.
        native_memory_block = any(managed_block(s) for s in stacks[1:])
        if kind in FREE_KINDS or (kind in ACCESS_KINDS and (involves_crypto or native_memory_block)):
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
    print(f"memcheck: {found} memory error(s) involving native crypto code, memory managed code allocated, or the allocator's free")
    return 1 if found else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
