using System;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;

namespace CachedCryptography.WineTests;

/// <summary>
/// The contract tests that cannot run under Wine 8.0 and why, each reported as skipped (never as passed). One compares
/// with a reused stock CBC transform, which Wine's CBC quirk breaks for stock itself (see <see cref="Reason"/>); all the
/// others need stock CFB, which Wine's bcrypt lacks: stock .NET itself fails there (CFB8 with "Unknown error (0xc1000206)",
/// CFB128 with "The current platform does not support the specified feedback size."). CachedAes runs CFB on stock
/// <see cref="Aes"/>, so none of its own code goes untested by this; the ECB/CBC parts of these tests run on Linux and
/// in the Windows CI job. The random tests leave CFB out instead (see BackendData.StockCfbWorks). Applied under Wine only.
/// </summary>
internal static class WineSkips
{
    private const string NoCfb = "needs stock CFB, which Wine 8.0's bcrypt does not provide";

    private const string StockReusedCbcTransform =
        "compares with a stock CBC transform reused after a failed message, and Wine 8.0's CBC quirk (chaining kept in the key) corrupts stock's second message";

    private static readonly HashSet<string> s_needStockCfb = new(StringComparer.Ordinal)
    {
        "BadInputTests.EncryptCfb_byte_array_overload_with_null_arguments_behaves_like_stock",
        "BadInputTests.Int_returning_overload_with_short_destination_throws_ArgumentException",
        "BadInputTests.Destination_too_small_returns_false_and_zero_bytes_written",
        "BadInputTests.Bad_padding_on_decrypt_throws_CryptographicException",
        "BadInputTests.None_with_a_partial_block_on_span_paths_throws_CryptographicException",
    };

    public static string? Reason(string test, object?[] row)
    {
        if (s_needStockCfb.Contains(test))
        {
            return NoCfb;
        }

        // Stock's side of this test must reuse one CBC transform (its state after the failure is what is compared), and
        // stock keeps one CNG key for its transform's life, so Wine 8.0's CBC quirk makes stock's next message wrong. The
        // other transform tests give stock a new transform per message under Wine instead (BackendData).
        if (test == "TransformBadInputTests.Reuse_after_a_failed_TransformFinalBlock_matches_stock" && row.Any(value => value is CipherMode.CBC))
        {
            return StockReusedCbcTransform;
        }

        // Theory rows for CFB (for example the transform tests' configurations).
        return row.Any(value => value is CipherMode.CFB) ? NoCfb : null;
    }
}
