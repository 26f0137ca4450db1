using System;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;
using System.Xml.Linq;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using CachedCryptography.DataProtection;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.AuthenticatedEncryption.ConfigurationModel;
using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Microsoft.AspNetCore.DataProtection.Repositories;
using Microsoft.Extensions.DependencyInjection;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// A real client: ASP.NET Core Data Protection's <c>Protect</c> followed by <c>Unprotect</c> of a payload of
/// <see cref="Size"/> bytes under a key of Data Protection's default configuration (AES-256-CBC with HMACSHA256), as stock
/// runs it (baseline: on Linux its managed encryptor over <see cref="Aes"/>, on Windows its CNG encryptor) and with the
/// package's <c>UseCachedAes()</c> (on Linux the same managed encryptor over <see cref="CachedAes"/>; on Windows the
/// package leaves such keys to the CNG encryptor, so both rows run stock's path there). With <see cref="Keys"/> =
/// <see cref="DataProtectionKeys.ManagedAes"/>, the key is of a managed configuration naming <see cref="Aes"/> (256 bits,
/// HMACSHA256), which Data Protection runs on its managed encryptor on every OS and <c>UseCachedAes()</c> takes over on
/// every OS. Data Protection creates a new algorithm instance for every call, so this measures the new-instance path
/// inside everything else a Protect and an Unprotect do (key derivation, HMAC, random numbers). Until 2026-11-26 the rows
/// were measured with the key naming the algorithm (<c>UseCustomCryptographicAlgorithms</c> with <see cref="Aes"/> or
/// <see cref="CachedAes"/>), which runs the same encryptor over the same two algorithms.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
[QuickSubset(nameof(Size), 32)]
[QuickSubset(nameof(Keys), DataProtectionKeys.Default)]
public class DataProtectionRoundTrip
{
    private static readonly string[] Purpose = ["CachedAes", "benchmark"];

    private ServiceProvider? _services;
    private IDataProtector _protector = null!;
    private byte[] _payload = null!;

    /// <summary>Payload length in bytes.</summary>
    [Params(32, 1024)]
    public int Size { get; set; }

    /// <summary>The configuration the key is made by.</summary>
    [ParamsAllValues]
    public DataProtectionKeys Keys { get; set; }

    /// <summary>A key ring in memory, Data Protection as stock configures it.</summary>
    [GlobalSetup(Target = nameof(Stock))]
    public void SetupStock() => Setup(useCachedAes: false);

    /// <summary>A key ring in memory, with <c>UseCachedAes()</c>.</summary>
    [GlobalSetup(Target = nameof(Cached))]
    public void SetupCached() => Setup(useCachedAes: true);

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

    private void Setup(bool useCachedAes)
    {
        var services = new ServiceCollection();
        IDataProtectionBuilder builder = services.AddDataProtection().SetApplicationName("CachedAes.Benchmarks");
        if (Keys == DataProtectionKeys.ManagedAes)
        {
            builder.UseCustomCryptographicAlgorithms(new ManagedAuthenticatedEncryptorConfiguration
            {
                EncryptionAlgorithmType = typeof(Aes),
                EncryptionAlgorithmKeySize = 256,
                ValidationAlgorithmType = typeof(HMACSHA256),
            });
        }

        if (useCachedAes)
        {
            builder.UseCachedAes();
        }

        var repository = new MemoryXmlRepository();
        services.Configure<KeyManagementOptions>(options => options.XmlRepository = repository);
        _services = services.BuildServiceProvider();
        _protector = _services.GetRequiredService<IDataProtectionProvider>().CreateProtector(Purpose);

        _payload = new byte[Size];
        new Random(Size).NextBytes(_payload);
        if (!_protector.Unprotect(_protector.Protect(_payload)).AsSpan().SequenceEqual(_payload))
        {
            throw new InvalidOperationException($"Data Protection (UseCachedAes: {useCachedAes}) did not round-trip.");
        }

        // The key Data Protection just created is stock's either way: its default one, or the managed configuration's.
        string keyXml = string.Concat(repository.GetAllElements().Select(e => e.ToString()));
        string expected = Keys == DataProtectionKeys.Default ? "AES_256_CBC" : "algorithm=\"Aes\"";
        if (!keyXml.Contains(expected, StringComparison.Ordinal) || keyXml.Contains("CachedAes", StringComparison.Ordinal))
        {
            throw new InvalidOperationException($"The key is not stock's {Keys} one: {keyXml}");
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

/// <summary>The configuration a <see cref="DataProtectionRoundTrip"/> key is made by.</summary>
public enum DataProtectionKeys
{
    /// <summary>Data Protection's default (AES-256-CBC with HMACSHA256): its CNG encryptor on Windows, its managed one elsewhere.</summary>
    Default,

    /// <summary>A managed configuration naming <see cref="Aes"/> (256 bits, HMACSHA256): its managed encryptor everywhere.</summary>
    ManagedAes,
}
