#!/usr/bin/env bash
# Installs a single-node Slurm (controller, node daemon, client tools) and munge from Debian's
# own packages, for tests and CI. Idempotent: does nothing when everything is already installed.
# Needs root (CI runs as root); test/cluster/slurm-up.sh then starts the daemons.
set -euo pipefail

packages=(slurmctld slurmd slurm-client munge)

missing=()
for pkg in "${packages[@]}"; do
  # `dpkg-query -W` also lists removed-but-configured packages; check the status field instead.
  if [[ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-slurm: already installed (${packages[*]})"
  exit 0
fi

if [[ $EUID -ne 0 ]]; then
  echo "install-slurm: need root to install: ${missing[*]}" >&2
  exit 1
fi

echo "install-slurm: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# --no-install-recommends: 8 packages instead of 42 (no mail server, no docs, no slurmdbd).
apt-get install -y -qq --no-install-recommends "${packages[@]}"

# The Debian packages try to start the daemons through init scripts/systemd; in a container
# without systemd that fails harmlessly, and slurm-up.sh starts them itself with our config.
command -v sbatch >/dev/null
# Not `sinfo --version`: without a slurm.conf every Slurm command first tries DNS SRV lookup and dies.
echo "install-slurm: done (slurm-client $(dpkg-query -W -f='${Version}' slurm-client))"
