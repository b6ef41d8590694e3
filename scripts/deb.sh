#!/bin/sh
# Builds dist/roomd_VERSION_ARCH.deb with dpkg-deb from a built roomd binary
# (make deb: the release build with the Swift runtime linked in statically,
# so the package needs only Debian's libraries). `make install` lays the files
# out in a staging tree; Depends are the Debian packages that own the shared
# libraries the binary links (dpkg -S over ldd).
#
#   BIN=.build/release/roomd OUT=dist scripts/deb.sh      (make deb)
#   BIN=.build/debug/roomd OUT=/tmp/x COMPRESS=gzip LEVEL=1 scripts/deb.sh   (the test: quick)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${BIN:-$root/.build/release/roomd}
out=${OUT:-$root/dist}
compress=${COMPRESS:-xz}
level=${LEVEL:-9}
[ -x "$bin" ] || { echo "deb.sh: no roomd at $bin (make deb builds it)" >&2; exit 1; }
version=$("$bin" --version | sed -n 's/^roomd \([0-9][0-9.]*\).*/\1/p')
[ -n "$version" ] || { echo "deb.sh: cannot read the version of $bin" >&2; exit 1; }
arch=$(dpkg --print-architecture)
stage=$(mktemp -d "${TMPDIR:-/tmp}/roomd-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
chmod 0755 "$stage"

make -s -C "$root" install DESTDIR="$stage" PREFIX=/usr INSTALL_BIN="$bin" >/dev/null
strip --strip-unneeded "$stage/usr/bin/roomd"
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
 service reads /etc/roomd/roles.json and the secret /etc/roomd/secret.
CONTROL
echo /etc/roomd/roles.json > "$stage/DEBIAN/conffiles"
cat > "$stage/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
if [ "$1" = configure ] && [ ! -e /etc/roomd/secret ]; then
  umask 077
  head -c 48 /dev/urandom | base64 | tr -d '\n' > /etc/roomd/secret
fi
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload >/dev/null 2>&1 || true
fi
echo "roomd: start it with: systemctl enable --now roomd (config /etc/roomd/roles.json, secret /etc/roomd/secret)"
POSTINST
chmod 0755 "$stage/DEBIAN/postinst"
mkdir -p "$out"
deb="$out/roomd_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Z"$compress" -z"$level" --build "$stage" "$deb" >/dev/null
echo "$deb"
