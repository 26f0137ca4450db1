using System;
using System.Runtime.InteropServices;

namespace CachedCryptography.WineTests;

/// <summary>
/// The calling thread's <c>NT_TIB.ExceptionList</c> (the first field of its TEB, found through
/// <c>NtQueryInformationThread(ThreadBasicInformation)</c>). 64-bit Windows does not use it; Wine's own DLLs do, and
/// under Wine 8.0 a .NET exception that leaves through native runtime frames can leave an entry in it that points into
/// dead stack (see <see cref="Runner"/>): the runner reads it before each test and puts it back after, so one such test
/// cannot make a later one hang. Construct and use on one thread.
/// </summary>
internal sealed unsafe class TebExceptionList
{
    private readonly IntPtr* _list;

    public TebExceptionList()
    {
        if (!NativeLibrary.TryLoad("ntdll.dll", out IntPtr ntdll) || !NativeLibrary.TryGetExport(ntdll, "NtQueryInformationThread", out IntPtr export))
        {
            return;
        }

        var query = (delegate* unmanaged<IntPtr, int, void*, int, int*, int>)export;
        byte* info = stackalloc byte[48]; // THREAD_BASIC_INFORMATION: ExitStatus (padded to 8 bytes), TebBaseAddress, ...
        int length;
        if (query(-2, 0, info, 48, &length) == 0) // the current thread's pseudo-handle; ThreadBasicInformation
        {
            _list = *(IntPtr**)(info + 8);
        }
    }

    public IntPtr Read() => _list == null ? IntPtr.Zero : *_list;

    /// <summary>Puts <paramref name="value"/> back; true if the list had changed.</summary>
    public bool Restore(IntPtr value)
    {
        if (_list == null || *_list == value)
        {
            return false;
        }

        *_list = value;
        return true;
    }
}
