#!/bin/sh
# enter_root.sh ROOT CMD [ARG...]: run CMD with ROOT (a Debian root that
# root.sh built) as its root directory, keeping the PID (everything execs).
#
# It first makes a new mount namespace (a slave of the current one: nothing
# mounted here is seen outside, and it all goes away with the last process in
# it), and there mounts in ROOT:
#   /proc, /sys and /dev (the current ones), a private tmpfs on /run;
#   this machine's root at /host (the SPANK plugin host_root.so chroots every
#   task back there, so tasks run this machine's Python);
#   this machine's data folders at the same paths: every top-level folder that
#   is not part of the system (/tmp, /root, /home, /work, /srv, ...), plus the
#   folders listed in SLURM_LAB_BIND (colon separated, e.g. a clone under
#   /usr/local), so that the lab folder, the working directory and script
#   paths are the same inside and outside;
#   the current /etc/hosts (in the lab: the lab's hosts file) on /etc/hosts.
# CMD then runs in the same working directory (/ if it is not visible in ROOT).
# Slurm's SLURM_CONF and every other variable pass through unchanged.
[ $# -ge 2 ] || { echo "usage: enter_root.sh ROOT CMD [ARG...]" >&2; exit 2; }
[ -f "$1/.tfslurm-root" ] || { echo "enter_root.sh: $1 is not a complete lab root (no .tfslurm-root; run tools/slurm_lab/root.sh)" >&2; exit 2; }
# shellcheck disable=SC2016
exec unshare --mount --propagation slave sh -c '
    r=$1; shift
    set -e
    mount --rbind / "$r/host"
    mount -t proc proc "$r/proc"
    mount --rbind /sys "$r/sys"
    mount --rbind /dev "$r/dev"
    mount -t tmpfs -o mode=755,size=16m tfslurm-run "$r/run"
    for d in /*; do
        [ -d "$d" ] && [ ! -L "$d" ] || continue
        case $d in
            /bin|/boot|/dev|/etc|/host|/lib|/lib32|/lib64|/libx32|/lost+found|/proc|/run|/sbin|/sys|/usr|/var) continue;;
        esac
        mkdir -p "$r$d"
        mount --rbind "$d" "$r$d"
    done
    IFS=:
    for d in ${SLURM_LAB_BIND:-}; do
        case $d in /*) ;; *) continue;; esac
        [ -d "$d" ] && [ ! -L "$d" ] || continue
        [ "$(stat -c %d:%i "$d")" = "$(stat -c %d:%i "$r$d" 2>/dev/null)" ] && continue
        mkdir -p "$r$d"
        mount --rbind "$d" "$r$d"
    done
    unset IFS
    mount --bind /etc/hosts "$r/etc/hosts"
    wd=$(pwd)
    [ -d "$r$wd" ] || wd=/
    exec unshare --root="$r" --wd="$wd" -- "$@"
' enter_root.sh "$@"
