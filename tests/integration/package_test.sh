#!/usr/bin/env bash
# The Debian package end to end (issue: ship it): scripts/package.sh --no-build on this
# build tree, then
#   - dpkg-deb --info / --contents: name, version = the binaries' own, Depends from
#     dpkg-shlibdeps, conffiles, every file in its place;
#   - lintian: no errors (E: lines);
#   - extracted into a temporary root: every binary answers --version (the tree's version,
#     build type, CUDA/CUPTI) and --help from there;
#   - systemd-analyze verify --root on the installed units, with the extracted binaries in
#     place (the host's targets and slices copied in for the dependencies), and a negative
#     check: without /usr/bin/opmap-agent it fails.
# usage: package_test.sh BUILD_DIR
set -uo pipefail
BUILD_DIR="$(realpath "$1")"
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/opmap-pkg.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
check() { local what="$1"; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

for tool in dpkg-deb lintian systemd-analyze; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not installed (scripts/setup.sh installs it)"; echo "0 passed, 1 failed"; exit 1; }
done

deb="$("$SRC/scripts/package.sh" --no-build "$BUILD_DIR" "$WORK/out" 2>"$WORK/package.err" | tail -1)"
if [[ ! -f "$deb" ]]; then
  cat "$WORK/package.err"
  echo "FAIL: scripts/package.sh produced no package"
  echo "0 passed, 1 failed"
  exit 1
fi
version="$("$BUILD_DIR/bin/opmap" --version | head -1 | cut -d' ' -f2)"

info="$(dpkg-deb --info "$deb")"
check "package name" grep -q '^ Package: opmap$' <<<"$info"
check "package version $version" grep -qF " Version: $version" <<<"$info"
depends="$(grep "^ Depends:" <<<"$info")"
for lib in "libgrpc++" libsqlite3 libc6 libabsl adduser; do
  check "Depends names $lib (dpkg-shlibdeps)" grep -qF "$lib" <<<"$depends"
done
check "conffiles" bash -c 'dpkg-deb --ctrl-tarfile "$0" | tar -xO ./conffiles | grep -qx /etc/opmap/agent.conf' "$deb"
check "maintainer scripts" bash -c 'dpkg-deb --ctrl-tarfile "$0" | tar -t | grep -q "./postinst" ' "$deb"
check "postinst starts nothing" bash -c '! dpkg-deb --ctrl-tarfile "$0" | tar -xO ./postinst | grep -Eq "systemctl (start|enable|restart)"' "$deb"

contents="$(dpkg-deb --contents "$deb" | awk '{print $6}')"
for f in ./usr/bin/opmap ./usr/bin/opmap-agent ./usr/bin/opmap-collector ./usr/bin/opmap-demo-infer \
         ./usr/lib/opmap/libopmap_inject.so ./usr/lib/systemd/system/opmap-agent.service \
         ./usr/lib/systemd/system/opmap-collector.service ./usr/lib/sysusers.d/opmap.conf \
         ./etc/opmap/agent.conf ./etc/opmap/collector.conf ./etc/opmap/tokens.example \
         ./usr/share/doc/opmap/copyright ./usr/share/doc/opmap/changelog.gz \
         ./usr/share/doc/opmap/operations.md ./usr/share/doc/opmap/metrics.md; do
  check "contains $f" grep -qxF "$f" <<<"$contents"
done

lintian --tag-display-limit 0 "$deb" >"$WORK/lintian.txt" 2>&1
cat "$WORK/lintian.txt"
check "lintian: no errors" bash -c '! grep -q "^E: " "$0"' "$WORK/lintian.txt"

root="$WORK/root"
mkdir -p "$root"
dpkg-deb -x "$deb" "$root"
for b in opmap opmap-agent opmap-collector opmap-demo-infer; do
  out="$("$root/usr/bin/$b" --version 2>&1)"
  check "$b --version says $version" grep -qx "$b $version" <<<"$(head -1 <<<"$out")"
  check "$b --version names build and CUDA/CUPTI" bash -c 'grep -q "^build: " <<<"$0" && grep -q "^CUDA/CUPTI: " <<<"$0"' "$out"
  help="$("$root/usr/bin/$b" --help 2>&1)"; rc=$?
  check "$b --help exits 0" test "$rc" -eq 0
  check "$b --help prints usage" grep -qi "usage" <<<"$help"
done

units="$root/usr/lib/systemd/system"
cp -n /usr/lib/systemd/system/*.target /usr/lib/systemd/system/*.slice "$units/" 2>/dev/null
if systemd-analyze verify --root="$root" "$units/opmap-agent.service" "$units/opmap-collector.service" \
     >"$WORK/verify.txt" 2>&1; then
  ok "systemd-analyze verify on the installed units"
else
  cat "$WORK/verify.txt"
  bad "systemd-analyze verify on the installed units"
fi
mv "$root/usr/bin/opmap-agent" "$WORK/opmap-agent.away"
if systemd-analyze verify --root="$root" "$units/opmap-agent.service" >"$WORK/verify2.txt" 2>&1; then
  bad "verify fails without /usr/bin/opmap-agent (the check can fail)"
else
  ok "verify fails without /usr/bin/opmap-agent (the check can fail)"
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
