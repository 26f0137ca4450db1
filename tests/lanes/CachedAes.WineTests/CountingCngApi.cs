using System;
using System.Collections.Concurrent;
using System.Threading;
using CachedCryptography.Backends.Cng;

namespace CachedCryptography.WineTests;

/// <summary>
/// The real <c>bcrypt.dll</c> layer with every handle's life counted: providers opened and closed, keys created and
/// destroyed (and the status of each destroy), and closes of handles that were never opened (a pseudo-handle, say).
/// </summary>
internal sealed class CountingCngApi(ICngApi inner) : ICngApi
{
    private readonly ConcurrentDictionary<nint, bool> _openProviders = new();
    private int _providersOpened;
    private int _keysCreated;
    private int _keysDestroyed;
    private int _failedDestroys;
    private int _strayCloses;

    public int ProvidersOpened => _providersOpened;

    public int ProvidersOpen => _openProviders.Count;

    public int KeysCreated => _keysCreated;

    public int KeysDestroyed => _keysDestroyed;

    public int LiveKeys => _keysCreated - _keysDestroyed;

    public int FailedDestroys => _failedDestroys;

    public int StrayCloses => _strayCloses;

    public int OpenAlgorithmProvider(string algorithmId, out nint algorithm)
    {
        int status = inner.OpenAlgorithmProvider(algorithmId, out algorithm);
        if (status == 0)
        {
            Interlocked.Increment(ref _providersOpened);
            _openProviders[algorithm] = true;
        }

        return status;
    }

    public int SetProperty(nint handle, string property, ReadOnlySpan<byte> value) => inner.SetProperty(handle, property, value);

    public int CloseAlgorithmProvider(nint algorithm)
    {
        if (!_openProviders.TryRemove(algorithm, out _))
        {
            Interlocked.Increment(ref _strayCloses);
        }

        return inner.CloseAlgorithmProvider(algorithm);
    }

    public int GetObjectLength(nint algorithm, out int length) => inner.GetObjectLength(algorithm, out length);

    public int GenerateSymmetricKey(nint algorithm, ReadOnlySpan<byte> secret, CngCipher key)
    {
        int status = inner.GenerateSymmetricKey(algorithm, secret, key);
        if (status == 0)
        {
            Interlocked.Increment(ref _keysCreated);
        }

        return status;
    }

    public int Encrypt(nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written) =>
        inner.Encrypt(key, input, iv, output, out written);

    public int Decrypt(nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written) =>
        inner.Decrypt(key, input, iv, output, out written);

    public int DestroyKey(nint key)
    {
        int status = inner.DestroyKey(key);
        Interlocked.Increment(ref _keysDestroyed);
        if (status != 0)
        {
            Interlocked.Increment(ref _failedDestroys);
        }

        return status;
    }
}
