using System.Security.Cryptography;
using CachedCryptography.Ownership;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Ownership;

/// <summary>
/// The one-shots give their lease back without an exception handler (<c>CachedAes.OneShots.cs</c>), so a call that
/// throws between rent and return (only running out of memory for a temporary can) leaves its slot held for good
/// (docs/design-notes.md, table S, S3). The reclaimer must then still give back every handle of the dropped epoch, that
/// one included, and must not fail.
/// </summary>
public class AbandonedSlotTests
{
    [Fact]
    public void A_dropped_epochs_slot_left_held_by_a_call_that_threw_is_given_back()
    {
        CipherBackend backend = BackendData.Backend("PlatformDefault");
        byte[] key = RandomNumberGenerator.GetBytes(32);
        var slots = new HandleSlots(backend.CachedKeys);

        // A call's slot: held, its handle in it, never let go.
        ref Slot abandoned = ref slots.Inline(BlockCipherMode.Ecb, encrypting: true);
        Assert.True(abandoned.TryHold());
        abandoned.Set(backend.Create(BlockCipherMode.Ecb, encrypting: true, key));

        // An idle handle beside it.
        ref Slot idle = ref slots.Inline(BlockCipherMode.Cbc, encrypting: false);
        Assert.True(idle.TryHold());
        idle.Set(backend.Create(BlockCipherMode.Cbc, encrypting: false, key));
        idle.Let();

        Assert.Equal(2, slots.GiveBackDropped());
        Assert.Null(slots.EcbEncrypt.Handle);
        Assert.Equal(0, slots.EcbEncrypt.Busy);
        Assert.Null(slots.CbcDecrypt.Handle);
        Assert.Equal(0, slots.CbcDecrypt.Busy);
    }
}
