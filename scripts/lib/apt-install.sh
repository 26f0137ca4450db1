# Installs missing Debian packages with apt-get. Sourced (not run) by the scripts that need tools, each of which finds
# it from its own location, so every script still runs alone from any working directory:
#
#   . "$repo/scripts/lib/apt-install.sh"
#   apt_install NAME [--sudo] [--log FILE] [PACKAGE...]
#
# NAME (the calling script's name) starts every message. With no PACKAGE it does nothing. It says on standard error
# what it installs; an install that fails is tried once more after `apt-get update`. It returns non-zero, with the
# reason on standard error, when it cannot install: no apt-get, not root (with --sudo: not root and no sudo), or
# apt-get failed. The caller decides what that means (most exit with status 2).
#   --sudo      when not root, run apt-get through sudo instead of giving up
#   --log FILE  apt-get's own output goes to FILE (its last 20 lines are shown on failure) instead of standard error
# Works under `set -e`, `set -u` and without them.

apt_install() {
  local name=$1
  shift
  local use_sudo=0 log=
  while [ $# -gt 0 ]; do
    case "$1" in
      --sudo) use_sudo=1 ;;
      --log) log=$2; shift ;;
      *) break ;;
    esac
    shift
  done
  [ $# -eq 0 ] && return 0
  local packages=("$@")

  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$name: missing ${packages[*]}, and there is no apt-get to install them" >&2
    return 1
  fi

  # sudo resets the environment, so the variable goes through env.
  local run=(env DEBIAN_FRONTEND=noninteractive)
  if [ "$(id -u)" -ne 0 ]; then
    if [ "$use_sudo" -eq 0 ] || ! command -v sudo >/dev/null 2>&1; then
      echo "$name: missing ${packages[*]}; install them (Debian: apt-get install ${packages[*]})" >&2
      return 1
    fi
    run=(sudo "${run[@]}")
  fi

  echo "$name: installing ${packages[*]} with apt-get" >&2
  local status=0
  if [ -n "$log" ]; then
    _apt_install_run "${run[@]}" -- "${packages[@]}" >"$log" 2>&1 || status=$?
  else
    _apt_install_run "${run[@]}" -- "${packages[@]}" >&2 || status=$?
  fi

  if [ "$status" -ne 0 ]; then
    [ -n "$log" ] && tail -n 20 "$log" >&2
    echo "$name: installing ${packages[*]} with apt-get failed${log:+ (its output: $log)}" >&2
    return 1
  fi
}

# _apt_install_run RUNNER... -- PACKAGE...: the install, and on failure one update and a second install.
_apt_install_run() {
  local run=()
  while [ "$1" != -- ]; do
    run+=("$1")
    shift
  done
  shift
  "${run[@]}" apt-get install -y -qq --no-install-recommends "$@" \
    || { "${run[@]}" apt-get update -qq && "${run[@]}" apt-get install -y -qq --no-install-recommends "$@"; }
}
