#!/usr/bin/env bash
# How many pytest-xdist workers `make test` starts: one more than the cores this shell may use, at most 8.
# The cores: nproc (the CPU affinity), lowered to a cgroup CPU quota if one is set (a container limited with
# --cpus sees every core of its host in nproc). More workers than that only compete for the same cores.
set -u
root=${CGROUP_ROOT:-/sys/fs/cgroup}  # another root only for this script's test (tests/test_install.py)
cores=$(nproc 2>/dev/null || echo 1)
quota_cores() {  # $1 quota, $2 period (microseconds): the quota in whole cores, rounded up; nothing if none
  if [ "$1" -gt 0 ] 2>/dev/null && [ "$2" -gt 0 ] 2>/dev/null; then echo $(( ($1 + $2 - 1) / $2 )); fi
}
limit=""
if [ -r "$root/cpu.max" ]; then  # cgroup v2: "max 100000" (none) or "200000 100000" (two cores)
  read -r quota period < "$root/cpu.max"
  limit=$(quota_cores "$quota" "$period")
elif [ -r "$root/cpu/cpu.cfs_quota_us" ] && [ -r "$root/cpu/cpu.cfs_period_us" ]; then  # v1: a quota of -1 is none
  limit=$(quota_cores "$(cat "$root/cpu/cpu.cfs_quota_us")" "$(cat "$root/cpu/cpu.cfs_period_us")")
fi
if [ -n "$limit" ] && [ "$limit" -lt "$cores" ]; then cores=$limit; fi
workers=$((cores + 1))
if [ "$workers" -gt 8 ]; then workers=8; fi
echo "$workers"
