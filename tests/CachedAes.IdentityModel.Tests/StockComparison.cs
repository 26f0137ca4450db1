using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;
using System.Text.RegularExpressions;
using Microsoft.IdentityModel.Abstractions;
using Microsoft.IdentityModel.Logging;
using Microsoft.IdentityModel.Tokens;

namespace CachedCryptography.IdentityModel.Tests;

/// <summary>IdentityModel's log, kept: every entry at every level.</summary>
internal sealed class RecordingLogger : IIdentityLogger
{
    private readonly List<(EventLogLevel Level, string Message)> _entries = [];

    public bool IsEnabled(EventLogLevel eventLogLevel) => true;

    public void Log(LogEntry entry)
    {
        lock (_entries)
        {
            _entries.Add((entry.EventLogLevel, WithoutHeader(entry.Message ?? "")));
        }
    }

    /// <summary>The entries so far, oldest first.</summary>
    public (EventLogLevel Level, string Message)[] Entries
    {
        get
        {
            lock (_entries)
            {
                return [.. _entries];
            }
        }
    }

    /// <summary>The entries that contain <paramref name="text"/>, from it on.</summary>
    public (EventLogLevel, string)[] Matching(string text)
    {
        lock (_entries)
        {
            return [.. _entries.FindAll(e => e.Message.Contains(text, StringComparison.Ordinal))
                .ConvertAll(e => (e.Level, e.Message[e.Message.IndexOf(text, StringComparison.Ordinal)..]))];
        }
    }

    // The first entry of a process starts with a line about IdentityModel's version, the date and PII; the rest is the message.
    private static string WithoutHeader(string message) =>
        message.StartsWith("Microsoft.IdentityModel Version:", StringComparison.Ordinal) && message.IndexOf('\n', StringComparison.Ordinal) is int end and >= 0
            ? message[(end + 1)..]
            : message;
}

/// <summary>What one call did, as far as a caller or IdentityModel's log can tell.</summary>
/// <param name="Result">The result's bytes in hex (or "none"), when the call returned.</param>
/// <param name="Exception">The exception's type, parameter name and inner exception's type, when it threw.</param>
/// <param name="Message">The exception's message.</param>
/// <param name="Log">What IdentityModel logged during the call: level and message of each entry.</param>
internal sealed record Outcome(string? Result, string? Exception, string? Message, string Log)
{
    public override string ToString() =>
        Exception is null ? $"returned {Result}; log [{Log}]" : $"threw {Exception}: \"{Message}\"; log [{Log}]";
}

/// <summary>Runs calls on stock IdentityModel and on CachedAes and records what each did.</summary>
internal static partial class StockComparison
{
    /// <summary>
    /// Runs <paramref name="call"/> with a <see cref="RecordingLogger"/> as IdentityModel's logger (the test assembly runs
    /// its tests one at a time, so no other test logs meanwhile) and records its outcome.
    /// </summary>
    public static Outcome Run(Func<object?> call)
    {
        var log = new RecordingLogger();
        IIdentityLogger before = LogHelper.Logger;
        LogHelper.Logger = log;
        object? result = null;
        Exception? thrown = null;
        try
        {
            result = call();
        }
#pragma warning disable CA1031 // Every exception is an outcome to compare.
        catch (Exception e)
#pragma warning restore CA1031
        {
            thrown = e;
        }
        finally
        {
            LogHelper.Logger = before;
        }

        string entries = string.Join(" | ", log.Entries.Select(e => $"{e.Level}: {e.Message}"));
        return thrown is null
            ? new Outcome(Describe(result), null, null, entries)
            : new Outcome(null, $"{thrown.GetType().FullName} (parameter {(thrown as ArgumentException)?.ParamName ?? "none"}, inner {thrown.InnerException?.GetType().FullName ?? "none"})", thrown.Message, entries);
    }

    private static string Describe(object? result) => result switch
    {
        null => "none",
        byte[] bytes => Convert.ToHexString(bytes),
        AuthenticatedEncryptionResult r => $"{Convert.ToHexString(r.Ciphertext)}/{Convert.ToHexString(r.IV)}/{Convert.ToHexString(r.AuthenticationTag)}",
        _ => result.GetType().FullName!,
    };

    /// <summary>
    /// <paramref name="text"/> without the stack-trace lines of an exception printed inside it (each <c>   at ...</c> line,
    /// up to the line's end or to the closing <c>'.</c> of IdentityModel's message, and .NET's "end of stack trace" lines).
    /// IdentityModel's log writes the line breaks of such a message as the two characters <c>\n</c>: both forms are taken.
    /// </summary>
    public static string WithoutStackFrames(string text) => StackFrame().Replace(text, "");

    [GeneratedRegex(@"(?:\r?\n|\\r\\n|\\n)(?:   at [^\r\n]*?(?=\r?\n|\\n|\\r\\n|'\.(?: \||\r?\n|$))|--- End of stack trace from previous location ---)")]
    private static partial Regex StackFrame();

    /// <summary>
    /// An RFC 7518 section 5.2.2.1 tag, built here from the first <paramref name="half"/> bytes of the content key (the MAC
    /// key) to make inputs that pass the tag check: an input for both providers, never an expected value.
    /// </summary>
    public static byte[] RfcTag(byte[] cek, int half, byte[] aad, byte[] iv, byte[] ciphertext) =>
        TagWithLength(cek, half, aad, iv, ciphertext, 8L * aad.Length);

    /// <summary>The same HMAC with <paramref name="lengthInBits"/> as the AAD's length field (AL).</summary>
    public static byte[] TagWithLength(byte[] cek, int half, byte[] aad, byte[] iv, byte[] ciphertext, long lengthInBits)
    {
        HashAlgorithmName hash = half switch { 16 => HashAlgorithmName.SHA256, 24 => HashAlgorithmName.SHA384, _ => HashAlgorithmName.SHA512 };
        using IncrementalHash hmac = IncrementalHash.CreateHMAC(hash, cek.AsSpan(0, half));
        hmac.AppendData(aad);
        hmac.AppendData(iv);
        hmac.AppendData(ciphertext);
        byte[] al = new byte[8];
        BinaryPrimitives.WriteInt64BigEndian(al, lengthInBits);
        hmac.AppendData(al);
        return hmac.GetHashAndReset().AsSpan(0, half).ToArray();
    }

    /// <summary>Half the content key's length for an AES-CBC-HMAC algorithm: the MAC key's, the AES key's and the tag's.</summary>
    public static int Half(string enc) => enc switch
    {
        SecurityAlgorithms.Aes128CbcHmacSha256 => 16,
        SecurityAlgorithms.Aes192CbcHmacSha384 => 24,
        SecurityAlgorithms.Aes256CbcHmacSha512 => 32,
        _ => throw new ArgumentException(enc, nameof(enc)),
    };
}
