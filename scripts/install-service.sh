#!/usr/bin/env bash
# Installs voiced as a system service on Debian/Ubuntu (docs/install.md): the runtime only (no
# developer or test packages) in its own virtual environment /opt/voiced/venv, the config and
# device files in /etc/voiced (never overwritten once there), the user `voiced` (group audio), the
# state folder /var/lib/voiced and the unit voiced.service. Safe to run again: that is how to
# upgrade (the venv is kept and voiced installed into it anew, then a running service restarted).
set -euo pipefail
umask 022 # the service's user reads what root installs here
unset PYTHONPATH PYTHONHOME # the venv is made from, and sees, nothing but itself
REPO=$(cd "$(dirname "$0")/.." && pwd)
source "$REPO/scripts/common.sh"
VOICED_LOG=install-service

usage() {
  cat <<'EOF'
usage: sudo scripts/install-service.sh [OPTIONS]

  --root DIR         install under DIR instead of / (a staged copy, for tests or packaging):
                     no Debian packages, no user, no ownership changes, no systemctl
  --wheels DIR       install the Python packages only from the wheels in DIR (offline)
  --python PYTHON    the interpreter the venv is made from (default /usr/bin/python3, 3.11+)
  --pulse-user USER  sound through USER's PulseAudio/PipeWire server instead of ALSA: installs
                     the drop-in systemd/pulse.conf and the folder /run/voiced-pulse (group audio)
                     for that server's second socket (docs/install.md)
  --no-apt           do not install the Debian packages (check them yourself)
  --start            start the service at the end (a running one is always restarted)
  --dry-run          print what would be done; change nothing
  -h, --help         this text
EOF
}

die() {
  echo "$VOICED_LOG: error: $*" >&2
  exit 1
}

ROOT="" WHEELS="" PYTHON=/usr/bin/python3 PULSE_USER="" APT=1 START=0 DRY=0
[ -x "$PYTHON" ] || PYTHON=python3
while (($#)); do
  case $1 in
    --root) ROOT=${2:?"--root needs a folder"} && shift ;;
    --wheels) WHEELS=${2:?"--wheels needs a folder"} && shift ;;
    --python) PYTHON=${2:?"--python needs an interpreter"} && shift ;;
    --pulse-user) PULSE_USER=${2:?"--pulse-user needs a user name"} && shift ;;
    --no-apt) APT=0 ;;
    --start) START=1 ;;
    --dry-run) DRY=1 ;;
    -h | --help) usage && exit 0 ;;
    *) usage >&2 && die "unknown option $1" ;;
  esac
  shift
done

PREFIX=/opt/voiced
VENV=$PREFIX/venv
ETC=/etc/voiced
STATE=/var/lib/voiced
UNIT=/etc/systemd/system/voiced.service
DROPIN=/etc/systemd/system/voiced.service.d/pulse.conf
TMPFILES=/etc/tmpfiles.d/voiced-pulse.conf
# The Debian packages of the service: the daemon's own (scripts/common.sh), the venv's Python, and
# alsa-utils to find the sound card (aplay -l, arecord -l).
APT_PACKAGES=("${VOICED_RUNTIME_APT[@]}" python3 python3-venv alsa-utils)

if [ -n "$ROOT" ]; then
  mkdir -p "$ROOT" 2>/dev/null || die "--root $ROOT: cannot create that folder"
  ROOT=$(cd "$ROOT" && pwd)
  [ "$ROOT" != / ] || ROOT=""
fi
[ -z "$WHEELS" ] || [ -d "$WHEELS" ] || die "--wheels $WHEELS: not a folder"
[ -z "$WHEELS" ] || WHEELS=$(cd "$WHEELS" && pwd)
SYSTEM=1 # the real system: packages, user, ownership, systemctl
[ -z "$ROOT" ] || SYSTEM=0

step() { echo "$VOICED_LOG: $*"; }
# Runs a command that changes something, or with --dry-run only prints it.
run() {
  if ((DRY)); then
    printf '%s: would run:' "$VOICED_LOG"
    printf ' %q' "$@"
    printf '\n'
  else
    "$@"
  fi
}

if ((SYSTEM)) && ! ((DRY)); then
  [ "$(id -u)" -eq 0 ] || die "run as root (sudo $0), or stage the files with --root DIR"
  [ -d /run/systemd/system ] || die "this system is not running systemd (/run/systemd/system is missing); stage the files with --root DIR"
fi
if ((SYSTEM)) && [ -n "$PULSE_USER" ]; then
  getent passwd "$PULSE_USER" >/dev/null || die "--pulse-user $PULSE_USER: no such user"
fi

# 1. Debian packages
if ((SYSTEM && APT)); then
  if ((DRY)); then
    step "would install the Debian packages that are missing of: ${APT_PACKAGES[*]}"
  else
    voiced_apt_install "${APT_PACKAGES[@]}"
  fi
fi
command -v "$PYTHON" >/dev/null || die "Python $PYTHON not found (apt install python3 python3-venv, or --python)"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
  die "voiced needs Python 3.11 or newer; $PYTHON is $("$PYTHON" -V 2>&1) (give another with --python)"
"$PYTHON" -c 'import ensurepip, venv' 2>/dev/null ||
  die "$PYTHON cannot make a virtual environment (apt install python3-venv)"

# 2. The user the service runs as
if ((SYSTEM)); then
  if ! getent passwd voiced >/dev/null; then
    step "adding the system user voiced (group audio, home $STATE)"
    run useradd --system --user-group --groups audio --home-dir "$STATE" --no-create-home \
      --shell /usr/sbin/nologin --comment "voiced voice assistant" voiced
  elif ! id -nG voiced | tr ' ' '\n' | grep -qx audio; then
    step "adding the user voiced to the group audio"
    run usermod --append --groups audio voiced
  fi
fi

# 3. The runtime: its own venv, voiced installed from this checkout (not editable), the models
pip_args=(-q)
[ -z "$WHEELS" ] || pip_args+=(--no-index --find-links "$WHEELS")
venv_python=$ROOT$VENV/bin/python
want=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
have=$("$venv_python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)
if [ -n "$have" ] && [ "$have" != "$want" ]; then
  step "the venv $ROOT$VENV is Python $have, $PYTHON is $want: making it again"
  run rm -rf "$ROOT$VENV"
  have=""
fi
if [ -z "$have" ]; then
  step "making the virtual environment $ROOT$VENV (Python $want)"
  run rm -rf "$ROOT$VENV"
  run mkdir -p "$ROOT$PREFIX"
  run "$PYTHON" -m venv "$ROOT$VENV"
fi
step "installing voiced and its models (Whisper tiny.en and base, piper en_US-joe-medium) into $ROOT$VENV${WHEELS:+ from $WHEELS}"
# Built from a copy of the sources: nothing is written into the checkout (no build/ folder).
source_copy=$(mktemp -d)
trap 'rm -rf "$source_copy"' EXIT
tar -C "$REPO" --exclude=__pycache__ -cf - pyproject.toml voiced | tar -C "$source_copy" -xf -
export PIP_DISABLE_PIP_VERSION_CHECK=1
run "$venv_python" -m pip install "${pip_args[@]}" --upgrade pip
# --upgrade: voiced itself anew (its dependencies only where it needs newer ones)
run "$venv_python" -m pip install "${pip_args[@]}" --upgrade "$source_copy"
step "joining Whisper base's two parts (once)"
run voiced_join_models "$venv_python"
if [ -n "$ROOT" ]; then
  # Staged for its place at /: the venv's scripts (and pyvenv.cfg) name $VENV, not $ROOT$VENV.
  # Its python runs where it is; its scripts run once the tree is at / (or laid over it).
  step "pointing the venv's scripts at $VENV (their place once installed)"
  if ! ((DRY)); then
    # -r, not -R: bin/python is a link to the system's interpreter, never to be edited
    { grep -rlF --null "$ROOT$VENV" "$ROOT$VENV/bin" "$ROOT$VENV/pyvenv.cfg" || true; } |
      xargs -0 -r sed -i "s|$ROOT$VENV|$VENV|g"
  fi
fi
if ! ((DRY)); then
  "$venv_python" -m voiced --help >/dev/null || die "voiced does not run from $ROOT$VENV ($venv_python -m voiced --help)"
fi
run mkdir -p "$ROOT$PREFIX/models" "$ROOT$PREFIX/share"
# For reference: every setting, the example devices, the PulseAudio drop-in, this guide
run install -m 0644 "$REPO/config.yaml" "$ROOT$PREFIX/share/config.yaml"
run rm -rf "$ROOT$PREFIX/share/devices"
run cp -r "$REPO/devices" "$ROOT$PREFIX/share/devices"
run install -m 0644 "$REPO/systemd/pulse.conf" "$ROOT$PREFIX/share/pulse.conf"
run install -m 0644 "$REPO/docs/install.md" "$ROOT$PREFIX/share/install.md"

# 4. Config and devices: put there once, never overwritten
run mkdir -p "$ROOT$ETC"
if [ -e "$ROOT$ETC/config.yaml" ]; then
  step "kept your $ETC/config.yaml (every setting: $PREFIX/share/config.yaml)"
else
  step "writing $ETC/config.yaml (edit it: your broker, your room, your sound card)"
  run install -m 0644 "$REPO/systemd/config.yaml" "$ROOT$ETC/config.yaml"
fi
if [ -e "$ROOT$ETC/devices" ]; then
  step "kept your $ETC/devices"
else
  step "writing the example devices to $ETC/devices (replace them with yours)"
  run cp -r "$REPO/devices" "$ROOT$ETC/devices"
fi
if [ -e "$ROOT$ETC/env" ]; then
  mode=$(stat -c %a "$ROOT$ETC/env")
  [[ $mode == [0-7]00 ]] || step "warning: $ETC/env holds secrets but is mode $mode; make it private: sudo chmod 600 $ETC/env"
else
  step "writing $ETC/env (mode 0600: the secrets, if any)"
  run install -m 0600 /dev/null "$ROOT$ETC/env"
  if ! ((DRY)); then
    cat >"$ROOT$ETC/env" <<'EOF'
# voiced's secrets, read by systemd (EnvironmentFile=), never put in config.yaml. One a line:
# VOICED_MQTT_PASSWORD=...
# VOICED_LLM_API_KEY=...
# VOICED_WEB_TOKEN=...      (16+ characters; needed when web.host is not loopback)
EOF
  fi
fi

# 5. The state folder (systemd's StateDirectory=voiced makes it too; here it exists for check-config)
run mkdir -p "$ROOT$STATE"
run chmod 0700 "$ROOT$STATE"
if ((SYSTEM)); then
  run chown voiced:voiced "$ROOT$STATE"
fi

# 6. The unit, and the PulseAudio/PipeWire drop-in when asked
step "installing the unit $UNIT"
run install -D -m 0644 "$REPO/systemd/voiced.service" "$ROOT$UNIT"
if [ -n "$PULSE_USER" ]; then
  step "sound through $PULSE_USER's PulseAudio/PipeWire: $DROPIN, /run/voiced-pulse ($TMPFILES)"
  run install -D -m 0644 "$REPO/systemd/pulse.conf" "$ROOT$DROPIN"
  run mkdir -p "$ROOT$(dirname "$TMPFILES")"
  if ! ((DRY)); then
    printf '# the folder of the sound server'\''s second socket, for voiced (docs/install.md)\nd /run/voiced-pulse 0750 %s audio -\n' \
      "$PULSE_USER" >"$ROOT$TMPFILES"
  fi
  if ((SYSTEM)); then
    run systemd-tmpfiles --create "$TMPFILES"
  fi
fi

# 7. systemd
started=0
if ((SYSTEM)); then
  run systemctl daemon-reload
  run systemctl enable voiced.service
  if systemctl --quiet is-active voiced.service 2>/dev/null; then
    step "restarting the running service with what was just installed"
    run systemctl restart voiced.service
    started=1
  elif ((START)); then
    step "starting the service"
    run systemctl start voiced.service
    started=1
  fi
fi

step "done. The config: $ETC/config.yaml, the devices: $ETC/devices/, secrets: $ETC/env"
if [ -n "$PULSE_USER" ]; then
  step "next: give $PULSE_USER's sound server the socket /run/voiced-pulse/native (docs/install.md, \"Sound through PulseAudio or PipeWire\")"
fi
if ((SYSTEM && started)); then
  step "its log: journalctl -u voiced -f"
elif ((SYSTEM)); then
  step "edit the config and devices, then start it: sudo systemctl start voiced; its log: journalctl -u voiced -f"
else
  step "staged under $ROOT for its place at / (the venv's scripts name $VENV); no user, no systemctl"
fi
