using System;
using System.Diagnostics.CodeAnalysis;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.Intrinsics;

/// <summary>
/// The opt-in backend over the processor's own AES instructions through .NET's hardware intrinsics: AES-NI on x86/x64,
/// the Armv8 AES instructions on 64-bit Arm. Managed code, outside any FIPS boundary; there is no software AES behind
/// it: where the instructions are missing it does not exist (<see cref="TryCreate"/>), and the platform backend is used.
/// </summary>
internal static class IntrinsicsBackend
{
    /// <summary>A backend over this processor's AES instructions, or false with the reason when it has none.</summary>
    public static bool TryCreate([NotNullWhen(true)] out CipherBackend? backend, [NotNullWhen(false)] out string? reason)
    {
        if (X86AesInstructions.IsSupported)
        {
            backend = new IntrinsicsBackend<X86AesInstructions>();
        }
        else if (ArmAesInstructions<ArmV8Instructions>.IsSupported)
        {
            backend = new IntrinsicsBackend<ArmAesInstructions<ArmV8Instructions>>();
        }
        else
        {
            backend = null;
            reason = "this processor has no AES instructions that .NET exposes (System.Runtime.Intrinsics.X86.Aes and System.Runtime.Intrinsics.Arm.Aes are both unsupported here)";
            return false;
        }

        reason = null;
        return true;
    }
}

/// <summary>Makes <see cref="IntrinsicsCipher{T}"/> handles with <typeparamref name="T"/>'s instructions, and counts their live schedules.</summary>
internal sealed class IntrinsicsBackend<T> : CipherBackend
    where T : struct, IAesInstructions
{
    private readonly LiveCount _liveSchedules = new();

    /// <summary>A backend; only made where <typeparamref name="T"/>'s instructions exist.</summary>
    public IntrinsicsBackend()
    {
        if (!T.IsSupported)
        {
            throw new PlatformNotSupportedException($"{T.Name} is not supported on this processor.");
        }
    }

    public override CachedAesBackend Kind => CachedAesBackend.CpuIntrinsics;

    public override string Description => $"{T.Name}, managed code outside any FIPS boundary";

    /// <summary>Schedules allocated by this backend's handles and not yet zeroed and freed.</summary>
    internal int LiveSchedules => _liveSchedules.Value;

    protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key) =>
        new IntrinsicsCipher<T>(this, mode, encrypting, key);

    internal void OnScheduleAllocated() => _liveSchedules.Add(1);

    internal void OnScheduleFreed() => _liveSchedules.Add(-1);
}
