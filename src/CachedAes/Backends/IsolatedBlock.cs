using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends;

/// <summary>
/// A 16-byte block that a handle writes on every call (OpenSSL's CBC chaining block), with
/// 64 bytes of padding on each side, so that no cache line holding it holds anything else. Two handles made one after
/// another sit side by side in memory, and handles are cached and pooled: two threads can later use them at once, and if
/// both blocks shared a line, every call would take the line from the other core (the same effect, measured on an
/// instance's shared slots: docs/design-notes.md, "Cache lines of their own"). The one way a backend isolates such a block.
/// </summary>
[StructLayout(LayoutKind.Explicit, Size = Padding + BlockCipher.BlockSize + Padding)]
internal struct IsolatedBlock
{
    private const int Padding = 64;

    /// <summary>The block.</summary>
    [FieldOffset(Padding)]
    public Vector128<byte> Value;

    /// <summary>The block's 16 bytes, for a native call that reads or writes them.</summary>
    [UnscopedRef]
    public Span<byte> Bytes => MemoryMarshal.AsBytes(MemoryMarshal.CreateSpan(ref Value, 1));
}
