namespace CachedCryptography.Seam;

/// <summary>The two AES modes that get cached native handles.</summary>
internal enum BlockCipherMode
{
    Ecb,
    Cbc,
}
