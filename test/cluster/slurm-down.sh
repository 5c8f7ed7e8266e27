#!/usr/bin/env bash
# Stops the cluster that slurm-up.sh started in <workdir>: cancels its jobs, `scontrol shutdown`
# (stops slurmctld and slurmd), waits for the processes named in the pid files to exit (killing
# them after a timeout), and stops munged only if slurm-up.sh started it. Safe to run twice, or
# after a failed start. Leaves <workdir> (logs, job outputs) for the caller to inspect or delete.
set -uo pipefail # no -e: tear down as much as possible even when one step fails

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <workdir>" >&2
  exit 2
fi
W=$(cd "$1" 2>/dev/null && pwd) || {
  echo "slurm-down: no such workdir: $1" >&2
  exit 0
}
export SLURM_CONF="$W/slurm.conf"
log() { echo "slurm-down: $*" >&2; }

# A zombie counts as gone: the daemons double-fork, and where PID 1 does not reap orphans (some
# containers and microVMs) an exited daemon stays a zombie that `kill -0` still reports as alive.
alive() { [[ -n "$1" && -r "/proc/$1/stat" && "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" != Z ]]; }
pid_of() { [[ -s "$1" ]] && tr -dc '0-9' <"$1"; }

# Read the pids first: the daemons delete their pid files as they exit.
pids=()
for f in "$W/slurmctld.pid" "$W/slurmd.pid"; do
  pid=$(pid_of "$f") && alive "$pid" && pids+=("$pid")
done
ctld_pid=$(pid_of "$W/slurmctld.pid")

# Only while our own slurmctld runs: otherwise these commands would reach whatever controller
# holds the port (another cluster) and cancel its jobs or shut it down.
if alive "$ctld_pid" && [[ -f "$SLURM_CONF" ]]; then
  # Cancel jobs first: `scontrol shutdown` stops the daemons but leaves running job steps
  # (slurmstepd and the job's processes) behind as orphans.
  jobs=$(timeout 5 squeue -h -o %i 2>/dev/null | sort -u)
  if [[ -n "$jobs" ]]; then
    # shellcheck disable=SC2086 # one id per word
    timeout 5 scancel $jobs 2>/dev/null
    for _ in $(seq 50); do
      [[ -z "$(timeout 5 squeue -h 2>/dev/null)" ]] && break
      sleep 0.2
    done
  fi
  timeout 10 scontrol shutdown >/dev/null 2>&1 || log "scontrol shutdown failed; signalling the daemons"
fi

# Wait up to 15 s for a clean exit, then TERM, then KILL: a test run must never leave daemons
# holding the ports for the next one.
for pid in "${pids[@]}"; do
  for _ in $(seq 75); do alive "$pid" || break; sleep 0.2; done
  if alive "$pid"; then
    log "pid $pid still running; sending TERM"
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 25); do alive "$pid" || break; sleep 0.2; done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null
  fi
done

# (A second cluster started meanwhile reused this munged; stop clusters in reverse order.)
if [[ -f "$W/munged.started" ]]; then
  pid=$(pid_of /run/munge/munged.pid)
  if alive "$pid"; then
    kill -TERM "$pid"
    for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
  fi
  rm -f "$W/munged.started"
fi
log "down ($W)"
