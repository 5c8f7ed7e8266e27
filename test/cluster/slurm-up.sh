#!/usr/bin/env bash
# Starts a throwaway single-node Slurm cluster (munged, slurmctld, slurmd) whose config, state,
# spool, pid files and logs all live in <workdir>; for tests and CI, as root, without systemd.
# Verified on Debian 12, Slurm 22.05; test/slurm.test.ts uses it (docs/contributing.md "What `npm test` needs").
#
#   eval "$(test/cluster/slurm-up.sh /tmp/slurm)"   # or: source /tmp/slurm/env
#   sbatch ...; test/cluster/slurm-down.sh /tmp/slurm
#
# stdout carries only the `export SLURM_CONF=...` line (also written to <workdir>/env), so the
# output can be eval'd; progress and diagnostics go to stderr. On failure it prints `sinfo -R` and
# the daemon logs, stops whatever it started, and exits non-zero.
# Env: SLURM_UP_TIMEOUT (seconds to wait for an idle node, default 30),
#      SLURMCTLD_PORT / SLURMD_PORT (default: Slurm's 6817 / 6818, or the next free pair).
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <workdir>" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
W=$(cd "$1" && pwd) # absolute: slurm.conf paths and SLURM_CONF must not depend on the cwd
if [[ "$W" =~ [[:space:]] ]]; then
  echo "slurm-up: workdir must not contain whitespace (slurm.conf cannot quote paths): $W" >&2
  exit 2
fi
conf="$W/slurm.conf"
timeout_s=${SLURM_UP_TIMEOUT:-30}
log() { echo "slurm-up: $*" >&2; }

if [[ $EUID -ne 0 ]]; then
  # SlurmUser=root and munged's key/socket under /etc and /run: this recipe needs root.
  log "must run as root"
  exit 1
fi
for cmd in munged mungekey munge unmunge runuser slurmctld slurmd sinfo scontrol; do
  command -v "$cmd" >/dev/null || {
    log "$cmd not found; run test/cluster/install-slurm.sh"
    exit 1
  }
done

mkdir -p "$W/state" "$W/spool" "$W/log"

# Pitfall: with its port taken (another cluster, or a previous run still up), slurmctld forks,
# then dies on "Address already in use", and every client command silently talks to the OTHER
# controller on that port: jobs run there and the test passes against the wrong cluster. So pick
# free ports, and check below that the controller answering is ours.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [[ -n "${SLURMCTLD_PORT:-}${SLURMD_PORT:-}" ]]; then
  ctld_port=${SLURMCTLD_PORT:-6817}
  slurmd_port=${SLURMD_PORT:-6818}
  for port in "$ctld_port" "$slurmd_port"; do
    if listening "$port"; then
      log "port $port is in use (another Slurm? stop it with slurm-down.sh <its workdir>)"
      exit 1
    fi
  done
else
  ctld_port=6817
  while listening "$ctld_port" || listening $((ctld_port + 1)); do
    ctld_port=$((ctld_port + 2))
    ((ctld_port < 6900)) || {
      log "no free port pair in 6817-6899"
      exit 1
    }
  done
  slurmd_port=$((ctld_port + 1))
fi
cpus=$(nproc)
# RealMemory: without it the node has 1 MB and any `sbatch --mem=...` is rejected at submission.
# 90% of MemTotal: a value above what slurmd detects would drain the node ("Low RealMemory").
real_mem=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)

cat >"$conf" <<CONF
# Written by test/cluster/slurm-up.sh: one node, everything under $W.
ClusterName=ci
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
# cgroup plugins fail in containers ("freezer not mounted") and drain the node.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Schedule at once instead of batching submissions (the default delays cost seconds per test).
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
MpiDefault=none
MailProg=/bin/true
# A node that was down comes back by itself when its slurmd registers.
ReturnToService=2
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
NodeName=localhost CPUs=$cpus RealMemory=$real_mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$conf"

diagnose() {
  log "FAILED: $*"
  {
    echo "--- sinfo -R"
    timeout 5 sinfo -R 2>&1 || true
    echo "--- sinfo"
    timeout 5 sinfo 2>&1 || true
    # Harmless noise in these logs: "can not load PMIx library", "Could not open job state file"
    # (a fresh StateSaveLocation), munged's "Unauthorized credential for client UID=0".
    for f in "$W"/log/*.log /var/log/munge/munged.log; do
      [[ -f "$f" ]] || continue
      n=40
      [[ "$f" == */munged.log ]] && n=15 # shared by every run on this machine
      echo "--- $f (last $n lines)"
      tail -n "$n" "$f"
    done
  } >&2
  "$here/slurm-down.sh" "$W" >&2 || true
  exit 1
}

# munged: reuse one that already answers (a dev machine's system munge); otherwise start our own
# and leave a marker so slurm-down.sh stops only what we started.
if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  log "munged already running; reusing it"
else
  if [[ ! -s /etc/munge/munge.key ]]; then
    mkdir -p /etc/munge
    mungekey -c -k /etc/munge/munge.key
  fi
  # munged refuses a key or directories that are not owned by its user, or writable by others.
  chown munge:munge /etc/munge /etc/munge/munge.key
  chmod 0700 /etc/munge
  chmod 0400 /etc/munge/munge.key
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  chmod 0755 /run/munge # clients (sbatch, slurmd) must reach the socket
  runuser -u munge -- munged || diagnose "munged did not start"
  touch "$W/munged.started"
  for _ in $(seq 50); do
    munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break
    sleep 0.1
  done
  munge -n </dev/null | unmunge >/dev/null || diagnose "munged does not answer"
fi

# -c: start from empty state even when <workdir> is reused (no stale jobs or drained node).
slurmctld -c -f "$conf" || diagnose "slurmctld did not start"
slurmd -f "$conf" -N localhost || diagnose "slurmd did not start"

# Wait for the node to register and become idle (well under 2 s normally). Even then, the first
# job after a start waits ~3 s for the controller's first scheduling pass; later ones start at once.
deadline=$((SECONDS + timeout_s))
state=""
while ((SECONDS < deadline)); do
  state=$(timeout 5 sinfo -h -o %t 2>/dev/null || true)
  [[ "$state" == "idle" ]] && break
  sleep 0.2
done
[[ "$state" == "idle" ]] || diagnose "node not idle after ${timeout_s}s (state: '${state:-no answer}')"
answering=$(timeout 5 scontrol show config 2>/dev/null | awk '$1 == "StateSaveLocation" { print $3 }')
[[ "$answering" == "$W/state" ]] || diagnose "the controller on port $ctld_port is not ours (its StateSaveLocation: '$answering')"

printf 'export SLURM_CONF=%q\n' "$conf" >"$W/env"
log "up: $cpus CPUs, ${real_mem} MB, ports $ctld_port/$slurmd_port; SLURM_CONF=$conf"
cat "$W/env"
