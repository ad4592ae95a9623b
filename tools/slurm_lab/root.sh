#!/usr/bin/env bash
# The Debian roots that the Slurm lab's other Slurm series run their daemons
# and clients from (SLURM_LAB_SLURM=20.11, 24.11 or 26.05); each built once and
# cached.
#
#   tools/slurm_lab/root.sh              build the root of $SLURM_LAB_SLURM
#                                        [24.11] if missing or incomplete, then
#                                        print its path (root only)
#   tools/slurm_lab/root.sh run CMD...   run CMD from it (enter_root.sh), e.g.
#                                        SLURM_LAB_SLURM=20.11 root.sh run scontrol --version
#
# One root per series, from the Debian suite that carries it (the table in
# series_row below: Slurm and munge from Debian's package registry), made by
# debootstrap (apt-get installs debootstrap if missing), in
# $SLURM_LAB_ROOT_CACHE/<debianN>-slurm<series>, plus tools/slurm_lab/host_root.c
# compiled in it (the SPANK plugin that sends tasks back to this machine's
# root). The marker file .tfslurm-root in it says it is complete (and which
# plugin source it has); it is written last, after the root was checked, and
# the root is moved into place only then, so an interrupted build is never
# used: the next call starts it again. A changed host_root.c is recompiled in
# place. debootstrap and every chroot here run in a private mount namespace,
# so nothing stays mounted. A lock per root serializes its builds (concurrent
# sessions wait for one build, bounded).
#
# Settings (environment variables):
#   SLURM_LAB_SLURM       the Slurm series: 20.11, 24.11 or 26.05     [24.11]
#   SLURM_LAB_ROOT_CACHE  folder of the cached roots       [/var/cache/tfslurm-lab]
#   SLURM_LAB_MIRROR      Debian mirror for debootstrap    [http://deb.debian.org/debian]
set -Eeuo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

CACHE=${SLURM_LAB_ROOT_CACHE:-/var/cache/tfslurm-lab}
CACHE=${CACHE%/}
MIRROR=${SLURM_LAB_MIRROR:-http://deb.debian.org/debian}
SLURM_SERIES=${SLURM_LAB_SLURM:-24.11}
# series_row SERIES: "SUITE NAME SCRIPT" of the Debian suite that carries that
# Slurm series (NAME: of the root folder; SCRIPT: debootstrap's script for the
# suite, where Debian 12's debootstrap has none of the suite's own name)
series_row() {
    case $1 in
        20.11) echo "bullseye debian11 bullseye";;   # slurm-wlm 20.11.4, munge 0.5.14
        24.11) echo "trixie debian13 trixie";;       # slurm-wlm 24.11.5, munge 0.5.16
        26.05) echo "forky debian14 sid";;           # slurm-wlm 26.05.5, munge 0.5.18
        *) return 1;;
    esac
}
row=$(series_row "$SLURM_SERIES") ||
    die "SLURM_LAB_SLURM must be 20.11, 24.11 or 26.05 for a root (22.05 is this machine's own Slurm) (got '$SLURM_SERIES')"
read -r SUITE DISTRO SCRIPT <<< "$row"
ROOT=$CACHE/$DISTRO-slurm$SLURM_SERIES
BUILD_LOG=$ROOT.build.log
MARK=.tfslurm-root
# slurm daemons and clients, munge; gcc, libc6-dev and libslurm-dev build the plugin
PACKAGES=slurmctld,slurmd,slurm-client,munge,gcc,libc6-dev,libslurm-dev
PLUGIN_SRC=$HERE/host_root.c
PLUGIN=/usr/local/lib/tfslurm-lab/host_root.so
BUILD_TIMEOUT=1500

if [ "${1:-}" = run ]; then
    shift
    [ $# -ge 1 ] || die "usage: root.sh run CMD [ARG...]"
    [ -e "$ROOT/$MARK" ] || die "no complete root in $ROOT: run tools/slurm_lab/root.sh (as root) first"
    exec "$HERE/enter_root.sh" "$ROOT" "$@"
fi
[ $# = 0 ] || die "usage: root.sh [run CMD [ARG...]]"
[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot)"
[[ $CACHE =~ ^/[A-Za-z0-9._/-]+$ ]] || die "SLURM_LAB_ROOT_CACHE must be an absolute path of [A-Za-z0-9._/-] (got '$CACHE')"
plugin_sha=$(sha256sum "$PLUGIN_SRC" | cut -d' ' -f1)

# in_chroot DIR CMD...: CMD in DIR as root directory, /proc mounted, in a private
# mount namespace (the mount goes with it), clean environment
in_chroot() {
    local dir=$1; shift
    unshare --mount --propagation private sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' \
        "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
}

# Any process whose root directory or executable is inside DIR (e.g. a daemon a
# package script started during the build)?
procs_in() {
    local p r
    for p in /proc/[0-9]*; do
        r=$(readlink "$p/root" 2>/dev/null) || continue
        case $r in "$1"|"$1"/*) echo "${p#/proc/}";; esac
    done
}

# compile_plugin DIR: host_root.c -> DIR$PLUGIN (atomically replaced)
compile_plugin() {
    local dir=$1
    mkdir -p "$dir/usr/local/src/tfslurm-lab" "$dir${PLUGIN%/*}"
    cp "$PLUGIN_SRC" "$dir/usr/local/src/tfslurm-lab/host_root.c"
    in_chroot "$dir" gcc -shared -fPIC -O2 -Wall -Wextra -Werror \
        -o "$PLUGIN.new" /usr/local/src/tfslurm-lab/host_root.c >> "$BUILD_LOG" 2>&1 ||
        die "compiling host_root.c in $dir failed (see $BUILD_LOG)"
    mv -f "$dir$PLUGIN.new" "$dir$PLUGIN"
}

complete() { [ -f "$ROOT/$MARK" ] && [ -x "$ROOT/usr/sbin/slurmd" ] && [ -d "$ROOT/host" ]; }

mkdir -p "$CACHE"
exec 8>>"$ROOT.lock"
flock -w "$BUILD_TIMEOUT" 8 || die "another root.sh holds $ROOT.lock for more than $BUILD_TIMEOUT s"

if complete; then
    if ! grep -qx "plugin_sha256=$plugin_sha" "$ROOT/$MARK"; then
        log "host_root.c changed: recompiling the plugin in $ROOT"
        compile_plugin "$ROOT"
        sed -i "s/^plugin_sha256=.*/plugin_sha256=$plugin_sha/" "$ROOT/$MARK"
    fi
    echo "$ROOT"
    exit 0
fi

T0=$(date +%s)
APT_LOG=$CACHE/apt.log
if ! command -v debootstrap >/dev/null; then
    log "installing debootstrap (apt-get; log: $APT_LOG)"
    if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then apt_retry update || true; fi
    apt_retry install -y --no-install-recommends debootstrap ||
        { apt_retry update && apt_retry install -y --no-install-recommends debootstrap; } ||
        die "apt-get install debootstrap failed (see $APT_LOG)"
fi

BUILD=$CACHE/.build-$DISTRO-slurm$SLURM_SERIES
# Leftovers of an interrupted build are unused (no marker); a build whose
# debootstrap finished (.debootstrap-done) is completed, anything else is removed.
for d in "$BUILD" "$ROOT"; do
    [ -e "$d" ] || continue
    [ -z "$(procs_in "$d")" ] || die "processes still run in $d: $(procs_in "$d" | tr '\n' ' ')"
    if findmnt -rn -o TARGET | grep -q "^$d\(/\|$\)"; then
        log "unmounting what an interrupted build left mounted in $d"
        findmnt -rn -o TARGET | grep "^$d\(/\|$\)" | sort -r | while read -r m; do umount -R "$m" 2>/dev/null || true; done
        ! findmnt -rn -o TARGET | grep -q "^$d\(/\|$\)" || die "could not unmount everything in $d"
    fi
    [ "$d" = "$BUILD" ] && [ -f "$d/.debootstrap-done" ] && continue
    rm -rf "${d:?}"
done
if [ ! -f "$BUILD/.debootstrap-done" ]; then
    log "building the $SUITE root with Slurm $SLURM_SERIES in $ROOT (debootstrap from $MIRROR; ~3-5 min; log: $BUILD_LOG)"
    : > "$BUILD_LOG"
    timeout "$BUILD_TIMEOUT" unshare --mount --propagation private \
        debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$BUILD" "$MIRROR" \
        "/usr/share/debootstrap/scripts/$SCRIPT" >> "$BUILD_LOG" 2>&1 || {
        tail -n 20 "$BUILD_LOG" >&2
        die "debootstrap failed (see $BUILD_LOG)"
    }
    left=$(procs_in "$BUILD")
    [ -z "$left" ] || die "processes started by the package scripts run in $BUILD: $left"
    touch "$BUILD/.debootstrap-done"
fi
mkdir -p "$BUILD/host"
touch "$BUILD/etc/hosts"
compile_plugin "$BUILD"
# clients need a configuration even for --version (else they ask DNS for one)
printf 'ClusterName=x\nSlurmctldHost=localhost\n' > "$BUILD/tmp/tfslurm-version.conf"
version=$(in_chroot "$BUILD" SLURM_CONF=/tmp/tfslurm-version.conf srun --version 2>&1) ||
    die "srun --version in the new root failed: $version"
rm -f "$BUILD/tmp/tfslurm-version.conf"
[[ $version == *" $SLURM_SERIES."* ]] || die "the new root has '$version', not Slurm $SLURM_SERIES"
pkgs=$(in_chroot "$BUILD" dpkg-query -W -f '${Package}=${Version} ' slurmctld slurmd slurm-client munge libslurm-dev)
{
    echo "# tools/slurm_lab/root.sh: this root is complete"
    echo "suite=$SUITE"
    echo "mirror=$MIRROR"
    echo "slurm=$version"
    echo "packages=$pkgs"
    echo "plugin=$PLUGIN"
    echo "plugin_sha256=$plugin_sha"
    echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$BUILD/$MARK.new"
mv "$BUILD/$MARK.new" "$BUILD/$MARK"
rm -f "$BUILD/.debootstrap-done"
mv "$BUILD" "$ROOT"
log "root ready in $(( $(date +%s) - T0 )) s: $version ($ROOT)"
echo "$ROOT"
