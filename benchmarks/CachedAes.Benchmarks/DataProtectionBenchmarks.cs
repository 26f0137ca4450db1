using System;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;
using System.Xml.Linq;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.AuthenticatedEncryption.ConfigurationModel;
using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Microsoft.AspNetCore.DataProtection.Repositories;
using Microsoft.Extensions.DependencyInjection;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// A real client: ASP.NET Core Data Protection's <c>Protect</c> followed by <c>Unprotect</c> of a payload of
/// <see cref="Size"/> bytes, configured with stock <see cref="Aes"/> (baseline) or with <see cref="CachedAes"/> as its
/// encryption algorithm (AES-256-CBC with HMACSHA256). Data Protection creates a new algorithm instance for every
/// call, so this measures the new-instance path inside everything else a Protect and an Unprotect do (key
/// derivation, HMAC, random numbers).
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
[QuickSubset(nameof(Size), 32)]
public class DataProtectionRoundTrip
{
    private static readonly string[] Purpose = ["CachedAes", "benchmark"];

    private ServiceProvider? _services;
    private IDataProtector _protector = null!;
    private byte[] _payload = null!;

    /// <summary>Payload length in bytes.</summary>
    [Params(32, 1024)]
    public int Size { get; set; }

    /// <summary>A key ring in memory whose one key names stock <see cref="Aes"/>.</summary>
    [GlobalSetup(Target = nameof(Stock))]
    public void SetupStock() => Setup(typeof(Aes));

    /// <summary>A key ring in memory whose one key names <see cref="CachedAes"/>.</summary>
    [GlobalSetup(Target = nameof(Cached))]
    public void SetupCached() => Setup(typeof(CachedAes));

    /// <summary>Disposes the service provider.</summary>
    [GlobalCleanup]
    public void Cleanup() => _services?.Dispose();

    /// <summary>Data Protection with stock <see cref="Aes"/> (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock() => RoundTrip();

    /// <summary>Data Protection with <see cref="CachedAes"/>.</summary>
    [Benchmark]
    public int Cached() => RoundTrip();

    private int RoundTrip() => _protector.Unprotect(_protector.Protect(_payload)).Length;

    private void Setup(Type encryptionAlgorithm)
    {
        var services = new ServiceCollection();
        services.AddDataProtection()
            .SetApplicationName("CachedAes.Benchmarks")
            .UseCustomCryptographicAlgorithms(new ManagedAuthenticatedEncryptorConfiguration
            {
                EncryptionAlgorithmType = encryptionAlgorithm,
                EncryptionAlgorithmKeySize = 256,
                ValidationAlgorithmType = typeof(HMACSHA256),
            });
        var repository = new MemoryXmlRepository();
        services.Configure<KeyManagementOptions>(options => options.XmlRepository = repository);
        _services = services.BuildServiceProvider();
        _protector = _services.GetRequiredService<IDataProtectionProvider>().CreateProtector(Purpose);

        _payload = new byte[Size];
        new Random(Size).NextBytes(_payload);
        if (!_protector.Unprotect(_protector.Protect(_payload)).AsSpan().SequenceEqual(_payload))
        {
            throw new InvalidOperationException($"Data Protection with {encryptionAlgorithm.Name} did not round-trip.");
        }

        // The key Data Protection just created must name the algorithm under test (the key ring records it).
        string keyXml = string.Concat(repository.GetAllElements().Select(e => e.ToString()));
        string expected = encryptionAlgorithm == typeof(Aes) ? "\"Aes\"" : "CachedAes";
        if (!keyXml.Contains(expected, StringComparison.Ordinal))
        {
            throw new InvalidOperationException($"The key does not name {encryptionAlgorithm.Name}: {keyXml}");
        }
    }

    /// <summary>A key ring that lives in memory only (no files, no key encryption: a benchmark's throwaway key).</summary>
    private sealed class MemoryXmlRepository : IXmlRepository
    {
        private readonly List<XElement> _elements = [];

        public IReadOnlyCollection<XElement> GetAllElements()
        {
            lock (_elements)
            {
                return [.. _elements.Select(e => new XElement(e))];
            }
        }

        public void StoreElement(XElement element, string friendlyName)
        {
            lock (_elements)
            {
                _elements.Add(new XElement(element));
            }
        }
    }
}
