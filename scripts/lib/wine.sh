# Wine for the scripts that run CachedAes's Windows build (wine-lane.sh, wine-dataprotection.sh, wine-bench.sh).
# Sourced, like apt-install.sh (which it sources from its own folder):
#
#   . "$repo/scripts/lib/wine.sh"
#   wine_install NAME LOGFILE      installs Debian's wine, wine64 and libgnutls30 (only a Recommends of Wine, but
#                                  Wine's bcrypt.dll needs it for AES) when missing; non-zero when it cannot
#   wine_prefix DIR LOGFILE        creates a fresh 64-bit prefix in DIR and exports what every run needs: WINEPREFIX,
#                                  WINEARCH, WINEDEBUG=-all, and DOTNET_EnableWriteXorExecute=0 (.NET's W^X mapping
#                                  does not work under Wine: with it, a .NET 10 process that creates an EventSource,
#                                  as a Meter and so CachedAes do, and keeps some 10,000 objects alive died at its
#                                  first collections with "Internal CLR error (0x80131506)" in
#                                  DynamicResolver+DestroyScout.Finalize, seen 2026-11-27 with a dozen-line program
#                                  that has no CachedAes code; without it, the same program ran to its end); unsets WINEDLLOVERRIDES (mscoree must stay enabled) and
#                                  DISPLAY (nothing needs one); non-zero when wineboot fails
#   wine_windows_version VERSION   makes the current prefix report VERSION (win7, win10, ...)
#   wine_app NAME PROJECT DIR      all three for a program run by hand (wine-bench.sh, wine-probe.sh): installs Wine,
#                                  publishes PROJECT self-contained for win-x64 (CachedAes's net10.0 build) into
#                                  DIR/app, and makes a fresh prefix DIR/prefix that reports Windows 10; on failure
#                                  prints "NAME: " and what failed, and returns non-zero

. "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"

wine_install() {
  if command -v wine >/dev/null 2>&1 && [ -x /usr/lib/wine/wine64 ] && dpkg -s libgnutls30 >/dev/null 2>&1; then
    return 0
  fi
  apt_install "$1" --sudo --log "$2" wine wine64 libgnutls30
}

wine_prefix() {
  export WINEPREFIX="$1" WINEARCH=win64 WINEDEBUG=-all DOTNET_EnableWriteXorExecute=0
  unset WINEDLLOVERRIDES DISPLAY
  wine wineboot --init >"$2" 2>&1 || { tail -n 20 "$2"; return 1; }
  wineserver -w
}

wine_windows_version() {
  wine reg add 'HKCU\Software\Wine' /v Version /t REG_SZ /d "$1" /f >/dev/null 2>&1 && wineserver -w
}

wine_app() {
  local name=$1 project=$2 dir=$3
  wine_install "$name.sh" "$dir/apt.log" || { echo "$name: could not install Wine"; return 1; }
  dotnet publish "$project" -c Release -r win-x64 --self-contained -p:CachedAesTargetFrameworks=net10.0 \
    -o "$dir/app" >"$dir/publish.log" 2>&1 || { tail -30 "$dir/publish.log"; echo "$name: publish failed"; return 1; }
  { wine_prefix "$dir/prefix" "$dir/wineboot.log" && wine_windows_version win10; } || { echo "$name: no Wine prefix"; return 1; }
}
