#!/usr/bin/env bash
# The Slurm array of docs/sweeps.md, run as written on a real single-node
# Slurm: Debian's slurmctld, slurmd and munge, installed when missing and
# started here on a private configuration (its own ports, state and spool
# under a temporary directory: a machine's own Slurm, if any, is not
# touched), then stopped. Only the sweep's size is made small (--n 1000 →
# 4 test digits, --steps 100 → 3); the array, the shards, the merge job
# and its dependency are the document's. The merged table must be
# byte-equal to the same sweep run in one process.
#
#   .ci/slurm-check.sh BIN     (as root, or with sudo)
set -euo pipefail
BIN=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DOC=$ROOT/docs/sweeps.md
if [ "$(id -u)" != 0 ]; then
  exec sudo -E "$0" "$@"
fi

need=""
for p in slurmctld slurmd slurm-client munge; do
  dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
  echo "slurm check: installing$need"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
fi

work=$(mktemp -d /tmp/attractorlab-slurm.XXXXXX)
chmod 755 "$work"
started_munge=0
cleanup() {
  for d in slurmd slurmctld; do
    [ -f "$work/$d.pid" ] && kill "$(cat "$work/$d.pid")" 2>/dev/null || true
  done
  if [ "$started_munge" = 1 ] && [ -f "$work/munged.pid" ]; then
    kill "$(cat "$work/munged.pid")" 2>/dev/null || true
  fi
  sleep 1
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "slurm check: $*" >&2
  for f in "$work"/slurmctld.log "$work"/slurmd.log "$work"/run/logs/*; do
    [ -f "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }
  done
  exit 1
}

# munge: the key Debian's package made (made here if missing), one daemon.
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  [ -f /etc/munge/munge.key ] || { mungekey --create --keyfile /etc/munge/munge.key && chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key; }
  mkdir -p /run/munge /var/log/munge /var/lib/munge && chown munge:munge /run/munge /var/log/munge /var/lib/munge
  runuser -u munge -- /usr/sbin/munged --pid-file="$work/munged.pid" 2>/dev/null ||
    runuser -u munge -- /usr/sbin/munged
  started_munge=1
  [ -f "$work/munged.pid" ] || pgrep -n -x munged >"$work/munged.pid"
  munge -n </dev/null | unmunge >/dev/null || fail "munge does not work"
fi

host=$(hostname -s)
mkdir -p "$work/state" "$work/spool" "$work/run"
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=attractorlab-check
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=26817
SlurmdPort=26818
AuthType=auth/munge
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=check Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N "$host" || fail "slurmd did not start"
for i in $(seq 1 60); do
  state=$(sinfo -h -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 1
done
[ "$state" = idle ] || fail "the node is not idle after 60 s (sinfo: '$state')"
echo "slurm check: a single-node Slurm is up ($(nproc) CPUs, $(sinfo -V))"

# The document's job script (the bash block with #SBATCH lines), its
# size made small, and its commands.
awk '/^```bash$/{inb=1; buf=""; next} /^```$/{if (inb && buf ~ /#SBATCH/) {printf "%s", buf; exit} inb=0; next} inb{buf=buf $0 "\n"}' "$DOC" >"$work/run/sweep.sbatch"
grep -q '^#SBATCH --array' "$work/run/sweep.sbatch" || fail "$DOC has no Slurm job script"
sed -i -e 's/--n 1000/--n 4/' -e 's/--steps 100/--steps 3/' "$work/run/sweep.sbatch"
grep -q -- '--n 4 --steps 3' "$work/run/sweep.sbatch" || fail "the job script's --n 1000 --steps 100 changed: update this check"
cd "$work/run"
export PATH=$(dirname "$BIN"):$PATH
ln -s "$BIN" "$work/run/attractorlab" 2>/dev/null || true
export PATH=$work/run:$PATH
mkdir -p logs
array=$(sbatch --parsable sweep.sbatch) || fail "sbatch refused the job script"
merge=$(sbatch --parsable --dependency=afterok:"$array" --wrap "attractorlab sweep merge results/sweep/shard-*-of-10 --out results/sweep-all") ||
  fail "sbatch refused the merge job"
echo "slurm check: array job $array (10 shards), merge job $merge after it"
for i in $(seq 1 300); do
  left=$(squeue -h -j "$array,$merge" 2>/dev/null | wc -l)
  [ "$left" = 0 ] && break
  sleep 1
done
[ "$left" = 0 ] || fail "jobs still queued or running after 300 s: $(squeue -h)"
[ -f results/sweep-all/sweep.csv ] || fail "the merge job wrote no results/sweep-all/sweep.csv"

# The same sweep in one process: byte-equal.
cmd=$(sed -n '/^attractorlab sweep/,/--out/p' sweep.sbatch | tr -d '\\\n' | sed -e 's/--workers "\$SLURM_CPUS_PER_TASK"//' -e 's#--out results/sweep#--out whole#')
eval "$cmd" >/dev/null 2>"$work/whole.log" || fail "the sweep in one process failed: $cmd"
cmp results/sweep-all/sweep.csv whole/sweep.csv || fail "the merged table differs from the sweep run in one process"
rows=$(($(wc -l <whole/sweep.csv) - 1))
echo "slurm check: passed: 10 array tasks and the merge job ran; the merged sweep.csv ($rows cells) is byte-equal to one process's"

# The phase diagram's job script (docs/sweeps.md), its grid made tiny.
awk '/^```bash$/{inb=1; buf=""; next} /^```$/{if (inb && buf ~ /attractorlab phase/) {printf "%s", buf; exit} inb=0; next} inb{buf=buf $0 "\n"}' "$DOC" >"$work/run/phase.sbatch"
grep -q '^#SBATCH --array=0-15' "$work/run/phase.sbatch" || fail "$DOC has no phase job script with --array=0-15"
sed -i -e 's/--array=0-15/--array=0-3/' -e 's/--images [^ ]*/--images 100,1000/' -e 's/--lambda [^ ]*/--lambda 1,5/' \
  -e 's/--seeds [^ ]*/--seeds 0/' -e 's/--updates 2000/--updates 2/' -e 's/--n 200/--n 4/' -e 's/--steps 100/--steps 3/' "$work/run/phase.sbatch"
grep -q -- '--updates 2 --n 4 --steps 3' "$work/run/phase.sbatch" || fail "the phase script's --updates 2000 --n 200 --steps 100 changed: update this check"
array=$(sbatch --parsable phase.sbatch) || fail "sbatch refused the phase job script"
merge=$(sbatch --parsable --dependency=afterok:"$array" --wrap "attractorlab phase merge results/phase/shard-*-of-4 --out results/phase-all") ||
  fail "sbatch refused the phase merge job"
echo "slurm check: phase array job $array (4 shards), merge job $merge after it"
for i in $(seq 1 300); do
  left=$(squeue -h -j "$array,$merge" 2>/dev/null | wc -l)
  [ "$left" = 0 ] && break
  sleep 1
done
[ "$left" = 0 ] || fail "phase jobs still queued or running after 300 s: $(squeue -h)"
[ -f results/phase-all/phase.csv ] || fail "the phase merge job wrote no results/phase-all/phase.csv"
cmd=$(sed -n '/^attractorlab phase/,/--out/p' phase.sbatch | tr -d '\\\n' | sed -e 's/--workers "\$SLURM_CPUS_PER_TASK"//' -e 's#--out results/phase#--out phase-whole#')
eval "$cmd" >/dev/null 2>"$work/phase-whole.log" || fail "the phase grid in one process failed: $cmd"
cmp results/phase-all/phase.csv phase-whole/phase.csv || fail "the merged phase table differs from the grid run in one process"
echo "slurm check: passed: the phase grid's 4 array tasks and merge ran; the merged phase.csv is byte-equal to one process's"
