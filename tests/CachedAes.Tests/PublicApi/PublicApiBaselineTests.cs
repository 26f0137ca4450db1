using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.PublicApi;

/// <summary>
/// Fails on any change to the public API of the CachedAes assembly that is not also made in the
/// checked-in baseline of the build under test: <c>api/CachedAes.PublicApi.net10.0.txt</c> for lib/net10.0,
/// <c>api/CachedAes.PublicApi.net11.0.txt</c> for lib/net11.0 (the test project's net10.0 and net11.0 runs).
/// </summary>
/// <remarks>
/// After an intended API change, rewrite the baselines (both runs write their own) and review them:
/// <c>CACHEDAES_UPDATE_API_BASELINE=1 dotnet test tests/CachedAes.Tests -c Release --filter FullyQualifiedName~PublicApi</c>,
/// then <c>git diff api/</c>, and commit the file with the change.
/// </remarks>
public sealed class PublicApiBaselineTests
{
    private const string UpdateVariable = "CACHEDAES_UPDATE_API_BASELINE";
    private const string BaselineRelativePath = $"api/CachedAes.PublicApi.net{Runtimes.BuildText}.txt";

    [Fact]
    public void Public_api_matches_the_checked_in_baseline()
    {
        string baselinePath = Path.Combine(FindRepositoryRoot(), BaselineRelativePath);
        string actual = PublicApiListing.Generate(typeof(CachedAes).Assembly);
        string? expected = File.Exists(baselinePath) ? File.ReadAllText(baselinePath).ReplaceLineEndings("\n") : null;

        if (string.Equals(expected, actual, StringComparison.Ordinal))
        {
            return;
        }

        if (Environment.GetEnvironmentVariable(UpdateVariable) == "1")
        {
            File.WriteAllText(baselinePath, actual, new UTF8Encoding(encoderShouldEmitUTF8Identifier: false));
            Assert.Fail(
                $"{BaselineRelativePath} was rewritten ({UpdateVariable}=1). Review it with `git diff api/`, "
                + $"commit it with the change, and run the tests again without {UpdateVariable}.");
        }

        string diff = expected is null ? $"(the baseline file {baselinePath} does not exist)" : Diff(expected, actual);
        Assert.Fail(
            $"The public API of CachedAes differs from {BaselineRelativePath}.\n"
            + "Lines starting with '-' are in the baseline only, '+' in the built assembly only:\n\n"
            + diff
            + $"\n\nIf the change is intended, rewrite the baseline with\n"
            + $"  {UpdateVariable}=1 dotnet test tests/CachedAes.Tests -c Release --filter FullyQualifiedName~PublicApi\n"
            + "then review `git diff api/` and commit it with the change.");
    }

    [Fact]
    public void Listing_spells_known_declarations_as_documented()
    {
        // Hand-written lines for declarations whose shape is fixed by the package's contract, so a
        // broken generator (an empty or garbled listing) cannot go unnoticed by writing a baseline.
        string[] lines = PublicApiListing.Generate(typeof(CachedAes).Assembly).Split('\n');

        Assert.Contains("public sealed class CachedCryptography.CachedAes : System.Security.Cryptography.Aes, System.IDisposable", lines);
        Assert.Contains("  public CachedCryptography.CachedAes.CachedAes()", lines);
        Assert.Contains("  public static CachedCryptography.CachedAes CachedCryptography.CachedAes.Create()", lines);
        Assert.Contains("  public CachedCryptography.CachedAesBackend CachedCryptography.CachedAes.Backend { get; }", lines);
        Assert.Contains(
            "  protected override bool CachedCryptography.CachedAes.TryEncryptEcbCore(System.ReadOnlySpan<byte> plaintext, System.Span<byte> destination, System.Security.Cryptography.PaddingMode paddingMode, out int bytesWritten)",
            lines);
        Assert.Contains("public enum CachedCryptography.CachedAesBackend : int", lines);
        Assert.Contains("  CachedCryptography.CachedAesBackend.StockFallback = 0", lines);
        Assert.Contains("  CachedCryptography.CachedAesBackend.OpenSsl = 1", lines);

        // Internal seams must never appear.
        Assert.DoesNotContain(lines, l => l.Contains("HandleCreations", StringComparison.Ordinal));
        Assert.DoesNotContain(lines, l => l.Contains("PeekCachedHandle", StringComparison.Ordinal));
        Assert.DoesNotContain(lines, l => l.Contains("BlockCipher", StringComparison.Ordinal));
        Assert.DoesNotContain(lines, l => l.Contains("KeyEpoch", StringComparison.Ordinal));
        Assert.DoesNotContain(lines, l => l.Contains("Handles", StringComparison.Ordinal));
    }

    /// <summary>Lines only in <paramref name="expected"/> ('-') or only in <paramref name="actual"/> ('+').</summary>
    private static string Diff(string expected, string actual)
    {
        List<string> before = expected.Split('\n').Where(l => l.Length > 0).ToList();
        List<string> after = actual.Split('\n').Where(l => l.Length > 0).ToList();
        var beforeSet = new HashSet<string>(before, StringComparer.Ordinal);
        var afterSet = new HashSet<string>(after, StringComparer.Ordinal);
        var diff = new StringBuilder();
        foreach (string line in before.Where(l => !afterSet.Contains(l)))
        {
            diff.Append("- ").Append(line.Trim()).Append('\n');
        }

        foreach (string line in after.Where(l => !beforeSet.Contains(l)))
        {
            diff.Append("+ ").Append(line.Trim()).Append('\n');
        }

        return diff.Length == 0 ? "(same lines in another order or with other blank lines)" : diff.ToString().TrimEnd('\n');
    }

    private static string FindRepositoryRoot()
    {
        for (DirectoryInfo? dir = new(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "CachedAes.sln")))
            {
                return dir.FullName;
            }
        }

        throw new InvalidOperationException($"No CachedAes.sln above {AppContext.BaseDirectory}: cannot find {BaselineRelativePath}.");
    }
}
