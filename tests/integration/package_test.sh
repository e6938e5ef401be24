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
         ./usr/share/doc/opmap/README.md ./usr/share/doc/opmap/docs/operations.md \
         ./usr/share/doc/opmap/docs/metrics.md ./usr/share/doc/opmap/deploy/README.md; do
  check "contains $f" grep -qxF "$f" <<<"$contents"
done

modes="$(dpkg-deb --contents "$deb")"
check "collector.conf ships 0640 (it may hold the ClickHouse password)" \
  grep -qE '^-rw-r----- root/root .* \./etc/opmap/collector.conf$' <<<"$modes"
check "postinst gives collector.conf to group opmap" bash -c \
  'dpkg-deb --ctrl-tarfile "$0" | tar -xO ./postinst | grep -q "chgrp opmap"' "$deb"

# Every relative link of the installed docs resolves where they are installed.
docroot="$WORK/docroot"
mkdir -p "$docroot"
dpkg-deb -x "$deb" "$docroot"
dead_links="$(python3 - "$docroot/usr/share/doc/opmap" <<'PY'
import os, re, sys
base = sys.argv[1]
for dirpath, _, files in os.walk(base):
    for f in files:
        if not f.endswith(".md"):
            continue
        path = os.path.join(dirpath, f)
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            for m in re.finditer(r"\]\(([^)\s#]+)", line):
                t = m.group(1)
                if not re.match(r"[a-z]+:", t) and not os.path.exists(os.path.join(dirpath, t)):
                    print(f"{os.path.relpath(path, base)}:{n}: {t}")
PY
)"
[[ -z "$dead_links" ]] || echo "$dead_links"
check "every relative link in /usr/share/doc/opmap resolves" test -z "$dead_links"

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

# Upgrade path, through dpkg into a private root (--root with chrootless maintainer scripts:
# they act on DPKG_ROOT, never on this host): an older build of the package (the same files
# at version 0.0.1), a local edit to a conffile and a collector store written by the
# installed collector; then the package of this tree over it. The edit and the store stay,
# the new collector opens the store, and refuses one of a newer schema with a clear error.
up="$WORK/upgrade"
mkdir -p "$up/var/lib/dpkg/updates" "$up/var/lib/dpkg/info"
: >"$up/var/lib/dpkg/status"
dpkg-deb -R "$deb" "$WORK/old"
sed -i 's/^Version: .*/Version: 0.0.1/' "$WORK/old/DEBIAN/control"
dpkg-deb -b "$WORK/old" "$WORK/opmap_0.0.1_amd64.deb" >/dev/null
dpkg_root() {
  dpkg --root="$up" --force-script-chrootless --force-depends --force-confold --log=/dev/null "$@" \
    >>"$WORK/dpkg.log" 2>&1
}
check "dpkg installs the older package into a root" dpkg_root -i "$WORK/opmap_0.0.1_amd64.deb"
check "the older package's postinst created the opmap user in that root" \
  grep -q "^opmap:" "$up/etc/passwd"
echo "# local edit" >>"$up/etc/opmap/collector.conf"
mkdir -p "$up/var/lib/opmap-collector"
store="$up/var/lib/opmap-collector/opmap.db"
collector_opens() {  # starts the collector on a store, waits for "listening", stops it
  local bin="$1" url="$2" log="$3"
  "$bin" --store "$url" --listen 127.0.0.1:0 --metrics-listen "" --insecure-no-auth >"$log" 2>&1 &
  local pid=$! i
  for i in $(seq 1 50); do
    if grep -q "listening on" "$log"; then kill -TERM "$pid"; wait "$pid"; return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then wait "$pid"; return 1; fi
    sleep 0.1
  done
  kill -KILL "$pid"; wait "$pid"; return 1
}
check "the older collector creates its store" \
  collector_opens "$up/usr/bin/opmap-collector" "sqlite:$store" "$WORK/old-collector.log"
before="$(sha256sum "$store" | cut -d' ' -f1)"
check "dpkg upgrades to $version" dpkg_root -i "$deb"
check "the upgrade is version $version" \
  bash -c 'dpkg-query --admindir="$0/var/lib/dpkg" -W -f="\${Version}" opmap | grep -qxF "$1"' "$up" "$version"
check "the local conffile edit survived the upgrade" grep -qx "# local edit" "$up/etc/opmap/collector.conf"
check "the store survived the upgrade untouched" \
  test "$(sha256sum "$store" | cut -d' ' -f1)" = "$before"
check "the upgraded collector opens the store" \
  collector_opens "$up/usr/bin/opmap-collector" "sqlite:$store" "$WORK/new-collector.log"
cp "$store" "$WORK/newer.db"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA user_version=99"); c.commit()' "$WORK/newer.db"
"$up/usr/bin/opmap-collector" --store "sqlite:$WORK/newer.db" --listen 127.0.0.1:0 --metrics-listen "" \
  --insecure-no-auth >"$WORK/newer.log" 2>&1 &
newer_pid=$!
( sleep 10; kill -KILL "$newer_pid" 2>/dev/null ) &
wait "$newer_pid"; newer_rc=$?
check "a store of a newer schema is refused (exit $newer_rc)" test "$newer_rc" -ne 0
check "... with a clear message" grep -q "schema version 99 is newer than this collector supports" "$WORK/newer.log"

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
