#!/usr/bin/env bash
# Checks `make package`'s archive: the binary, the icon and a desktop entry
# that runs it, and that `make install`'s user install puts them in a home.
set -euo pipefail
tarball=${1:?usage: package-check.sh DIST.tar.xz}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$tarball" -C "$tmp"
for f in usr/local/bin/attractorlab usr/local/share/pixmaps/org.attractorlab.app.png \
  usr/local/share/applications/org.attractorlab.app.desktop Makefile; do
  [ -s "$tmp/$f" ] || { echo "package: $f missing from $tarball"; exit 1; }
done
desk="$tmp/usr/local/share/applications/org.attractorlab.app.desktop"
grep -qx 'Exec=attractorlab' "$desk" || { echo "package: the desktop entry does not run attractorlab:"; cat "$desk"; exit 1; }
grep -qx 'Name=Attractor Lab' "$desk" || { echo "package: the desktop entry is not named Attractor Lab"; exit 1; }
grep -q '^Categories=.*Education' "$desk" || { echo "package: no categories in the desktop entry"; exit 1; }
v=$("$tmp/usr/local/bin/attractorlab" version) ||
  { echo "package: the packaged binary does not run"; exit 1; }
echo "package: $v"
mkdir -p "$tmp/home"
HOME="$tmp/home" make -s -C "$tmp" user-install >/dev/null
for f in .local/bin/attractorlab .local/share/applications/org.attractorlab.app.desktop .local/share/icons/org.attractorlab.app.png; do
  [ -s "$tmp/home/$f" ] || { echo "package: user install did not write ~/$f"; exit 1; }
done
echo "package: $tarball ok ($(du -h "$tarball" | cut -f1)), user install ok"
