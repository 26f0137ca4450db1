using System;
using System.Security.Cryptography;

namespace CachedCryptography.Tests.Transforms;

/// <summary>One deliberate defect in otherwise stock transforms: the harness must notice each of them.</summary>
public enum TransformMutation
{
    /// <summary>One bit of TransformFinalBlock's result is flipped.</summary>
    FlippedFinalBit,

    /// <summary>TransformBlock also writes the byte after its output.</summary>
    WritesPastOutput,

    /// <summary>A decryptor never holds a block back: TransformBlock's count differs where stock holds back.</summary>
    ReportsHeldBackBlockAsWritten,

    /// <summary>ArgumentExceptions carry a different parameter name.</summary>
    WrongParamName,

    /// <summary>InputBlockSize says 1.</summary>
    WrongInputBlockSize,

    /// <summary>TransformFinalBlock does not return the transform to its IV: the second message differs.</summary>
    NoResetAfterFinal,
}

/// <summary>A test-only <see cref="Aes"/> whose transforms are stock's with one <see cref="TransformMutation"/>.</summary>
internal sealed class MutantAes : Aes
{
    private readonly TransformMutation _mutation;

    public MutantAes(TransformMutation mutation) => _mutation = mutation;

    public override ICryptoTransform CreateEncryptor(byte[] rgbKey, byte[]? rgbIV) => Make(rgbKey, rgbIV, encrypt: true);

    public override ICryptoTransform CreateDecryptor(byte[] rgbKey, byte[]? rgbIV) => Make(rgbKey, rgbIV, encrypt: false);

    public override void GenerateIV() => IV = RandomNumberGenerator.GetBytes(16);

    public override void GenerateKey() => Key = RandomNumberGenerator.GetBytes(KeySize / 8);

    private Transform Make(byte[] key, byte[]? iv, bool encrypt)
    {
        using Aes stock = Create();
        stock.Mode = Mode;
        stock.Padding = Padding;
        stock.FeedbackSize = FeedbackSize;
        return new Transform(_mutation, encrypt ? stock.CreateEncryptor(key, iv) : stock.CreateDecryptor(key, iv));
    }

    private sealed class Transform : ICryptoTransform
    {
        private readonly TransformMutation _mutation;
        private readonly ICryptoTransform _inner;
        private bool _finished;

        public Transform(TransformMutation mutation, ICryptoTransform inner)
        {
            _mutation = mutation;
            _inner = inner;
        }

        public int InputBlockSize => _mutation == TransformMutation.WrongInputBlockSize ? 1 : _inner.InputBlockSize;

        public int OutputBlockSize => _inner.OutputBlockSize;

        public bool CanTransformMultipleBlocks => _inner.CanTransformMultipleBlocks;

        public bool CanReuseTransform => _inner.CanReuseTransform;

        public int TransformBlock(byte[] inputBuffer, int inputOffset, int inputCount, byte[] outputBuffer, int outputOffset)
        {
            int written;
            try
            {
                written = _inner.TransformBlock(inputBuffer, inputOffset, inputCount, outputBuffer, outputOffset);
            }
            catch (ArgumentException e) when (_mutation == TransformMutation.WrongParamName)
            {
                throw new ArgumentException(e.Message, e.ParamName == nameof(inputCount) ? nameof(inputOffset) : nameof(inputCount), e);
            }

            if (_mutation == TransformMutation.WritesPastOutput && outputOffset + written < outputBuffer.Length)
            {
                outputBuffer[outputOffset + written] ^= 0x5A;
            }

            return _mutation == TransformMutation.ReportsHeldBackBlockAsWritten && written < inputCount ? inputCount : written;
        }

        public byte[] TransformFinalBlock(byte[] inputBuffer, int inputOffset, int inputCount)
        {
            byte[] result;
            try
            {
                result = _inner.TransformFinalBlock(inputBuffer, inputOffset, inputCount);
            }
            catch (ArgumentException e) when (_mutation == TransformMutation.WrongParamName)
            {
                throw new ArgumentException(e.Message, e.ParamName == nameof(inputCount) ? nameof(inputOffset) : nameof(inputCount), e);
            }

            // A transform that kept state across messages would get the second and later messages wrong.
            bool flip = _mutation == TransformMutation.FlippedFinalBit || (_mutation == TransformMutation.NoResetAfterFinal && _finished);
            if (flip && result.Length > 0)
            {
                result[0] ^= 0x01;
            }

            _finished = true;
            return result;
        }

        public void Dispose() => _inner.Dispose();
    }
}
