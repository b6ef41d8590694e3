#!/bin/sh
# Builds dist/roomd_VERSION_ARCH.deb with dpkg-deb from a built roomd binary
# (make deb: the release build with the Swift runtime linked in statically,
# so the package needs only Debian's libraries). `make install` lays the files
# out in a staging tree; Depends are the Debian packages that own the shared
# libraries the binary links (dpkg -S over ldd). BIN is packaged as it is:
# nothing is built here (`make deb` without BIN builds the release binary).
#
#   BIN=.build/release/roomd OUT=dist scripts/deb.sh      (make deb)
#   BIN=.build/debug/roomd OUT=/tmp/x COMPRESS=gzip LEVEL=1 scripts/deb.sh   (the test: quick)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${BIN:-$root/.build/release/roomd}
out=${OUT:-$root/dist}
compress=${COMPRESS:-xz}
level=${LEVEL:-9}
[ -f "$bin" ] && [ -x "$bin" ] || { echo "deb.sh: no roomd at $bin (make deb builds it)" >&2; exit 1; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")   # make -C runs in the repository
version=$("$bin" --version | sed -n 's/^roomd \([0-9][0-9.]*\).*/\1/p')
[ -n "$version" ] || { echo "deb.sh: cannot read the version of $bin" >&2; exit 1; }
arch=$(dpkg --print-architecture)
stage=$(mktemp -d "${TMPDIR:-/tmp}/roomd-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
chmod 0755 "$stage"

# Every path given, so that none comes from the caller's environment: the
# maintainer scripts below know /etc/roomd. No secret in the package: each
# machine's own is made by the postinst.
make -s -C "$root" install DESTDIR="$stage" PREFIX=/usr SYSCONFDIR=/etc UNITDIR=/usr/lib/systemd/system \
  MAKE_SECRET=no BIN="$bin" >/dev/null
[ ! -e "$stage/etc/roomd/secret" ] || { echo "deb.sh: a secret in the staging tree" >&2; exit 1; }
strip --strip-unneeded "$stage/usr/bin/roomd"
gzip -9n "$stage/usr/share/man/man1/roomd.1"   # Debian ships man pages compressed
# Debian's own documentation files: copyright and a changelog (lintian wants both).
# Copyright notice: lintian wants one line starting with "Copyright".
doc="$stage/usr/share/doc/roomd"
cat > "$doc/copyright" <<COPY
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: roomd
Source: the roomd repository

Files: *
Copyright: the roomd authors
License: see the roomd repository
COPY
printf 'roomd (%s) unstable; urgency=medium\n\n  * Built with scripts/deb.sh.\n\n -- roomd maintainers <maintainers@roomd.invalid>  %s\n' \
  "$version" "$(date -R)" | gzip -9n > "$doc/changelog.gz"   # a native package: changelog.gz

# Depends: the package of every shared library outside the Swift toolchain.
depends=$(ldd "$bin" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
  dpkg -S "$lib" 2>/dev/null || dpkg -S "$(readlink -f "$lib")" 2>/dev/null || true
done | cut -d: -f1 | sort -u | grep -v '^libc6$' | paste -sd, - | sed 's/,/, /g')
mkdir -p "$stage/DEBIAN"
cat > "$stage/DEBIAN/control" <<CONTROL
Package: roomd
Version: $version
Architecture: $arch
Maintainer: roomd maintainers <maintainers@roomd.invalid>
Depends: libc6${depends:+, $depends}
Section: net
Priority: optional
Installed-Size: $(du -sk "$stage/usr" | cut -f1)
Homepage: https://roomd.invalid/
Description: real-time room signalling daemon (JSON-RPC over WebSocket)
 roomd runs rooms of peers with roles, tracks, chat, polls and HLS state
 for live shows with guest call-in, over one WebSocket per peer. The
 service reads /etc/roomd/roles.json and the secret /etc/roomd/secret
 (created on install, removed on purge).
CONTROL
echo /etc/roomd/roles.json > "$stage/DEBIAN/conffiles"
# The maintainer scripts. The secret: the postinst creates /etc/roomd/secret
# (48 random bytes in base64, mode 0600, as `make install` does) when there is
# none; `apt remove` keeps it with the config (a reinstall finds the tokens
# still valid), `apt purge` removes it, then /etc/roomd when nothing else is
# left there. Paths start with $DPKG_ROOT (dpkg --root; empty on a machine's
# own dpkg); systemctl only runs on the machine's own root.
cat > "$stage/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
secret="${DPKG_ROOT:-}/etc/roomd/secret"
if [ "$1" = configure ] && [ ! -e "$secret" ]; then
  (set -C; umask 077; head -c 48 /dev/urandom | base64 | tr -d '\n' > "$secret")
fi
if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload >/dev/null 2>&1 || true
fi
echo "roomd: start it with: systemctl enable --now roomd (config /etc/roomd/roles.json, secret /etc/roomd/secret)"
POSTINST
cat > "$stage/DEBIAN/prerm" <<'PRERM'
#!/bin/sh
set -e
# Removing the package stops the service (its binary is about to go); an
# upgrade leaves it running. deb-systemd-invoke (init-system-helpers) is what
# debhelper's scripts use: it honours policy-rc.d.
if [ "$1" = remove ] && [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ] \
    && command -v deb-systemd-invoke >/dev/null; then
  deb-systemd-invoke stop roomd.service >/dev/null 2>&1 || true
fi
PRERM
cat > "$stage/DEBIAN/postrm" <<'POSTRM'
#!/bin/sh
set -e
if [ "$1" = purge ]; then
  rm -f "${DPKG_ROOT:-}/etc/roomd/secret"
  rmdir "${DPKG_ROOT:-}/etc/roomd" 2>/dev/null || true
fi
if [ "$1" = remove ] || [ "$1" = purge ]; then
  if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload >/dev/null 2>&1 || true
  fi
fi
POSTRM
chmod 0755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm" "$stage/DEBIAN/postrm"
mkdir -p "$out"
deb="$out/roomd_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Z"$compress" -z"$level" --build "$stage" "$deb" >/dev/null
echo "$deb"
