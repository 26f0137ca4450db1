using CachedCryptography.Seam;

namespace CachedCryptography.Ownership;

/// <summary>The leases an epoch hands out: part of the epoch (they call back into it), kept in a file of their own.</summary>
internal sealed partial class KeyEpoch
{
    /// <summary>A native handle held by one caller; <see cref="Dispose"/> returns it to its epoch. Use it with <c>using</c>.</summary>
    internal readonly ref struct HandleLease
    {
        private readonly KeyEpoch _epoch;
        private readonly ref Slot _slot;

        /// <param name="epoch">The epoch the handle belongs to.</param>
        /// <param name="slot">The slot the caller holds, or a null reference for a handle of the caller's own.</param>
        /// <param name="cipher">The handle, keyed with the epoch's key.</param>
        internal HandleLease(KeyEpoch epoch, ref Slot slot, BlockCipher cipher)
        {
            _epoch = epoch;
            _slot = ref slot;
            Cipher = cipher;
        }

        /// <summary>The handle, keyed with the key of the epoch it came from as of the moment it was taken.</summary>
        public BlockCipher Cipher { get; }

        /// <summary>Whether a handle was taken: false for the empty lease a rent returns when it must retry under the lifecycle lock.</summary>
        public bool IsTaken => Cipher is not null;

        public void Dispose() => _epoch.Return(ref _slot, Cipher);
    }

    /// <summary>The stock instance holding an epoch's key, held by one caller; <see cref="Dispose"/> gives it back. Use it with <c>using</c>.</summary>
    internal readonly ref struct StockLease
    {
        private readonly KeyEpoch _epoch;
        private readonly StockAes _stock;

        internal StockLease(KeyEpoch epoch, StockAes stock)
        {
            _epoch = epoch;
            _stock = stock;
        }

        /// <summary>A stock <see cref="System.Security.Cryptography.Aes"/> holding the key of the epoch it came from.</summary>
        public System.Security.Cryptography.Aes Aes => _stock.Aes;

        public void Dispose() => _epoch.ReturnStock(_stock);
    }
}
