# SPDX-License-Identifier: Apache-2.0
# What the clock group does the same on both VMs (harness/vm/clock.sh on x86-64,
# harness/vm-arm64/clock.sh on arm64), sourced by them. They set, before sourcing:
#   REPO, W (a scratch folder), ROOT (the initramfs being made: $W/root), PEERS_PYTHON, TAG (the
#   lines' prefix: vm-clock or vm-arm64-clock), die (a function), CHRONYD (the host's chronyd, for
#   the NTP server) and, for the cases: boot (CASE INITRD APPEND QEMU-ARGS...), the QEMU arguments
#   of an RTC at a time (rtc_at TIME: its words on stdout), NIC (the ntp case's network card) and
#   boot_none (the case without an RTC, which each machine does its own way).

# An issuer's key (its public half in $ROOT/trust), one time-bound credential (a day either side of
# now) in CRED, and three frames in $ROOT/frames: empty, the credential's QR code, empty.
clock_credential() {
  local now
  now=$(date +%s)
  printf '{"op":"keygen","alg":"ES256","private":"%s","public":"%s"}\n{"op":"sign","private":"%s","alg":"ES256","kid":"issuer-1","claims":{"1":"acme","2":"alice","4":%d,"5":%d,"6":%d}}\n' \
    "$W/es.key" "$ROOT/trust/issuer-1.pem" "$W/es.key" $((now + 86400)) $((now - 86400)) "$now" |
    "$PEERS_PYTHON" "$REPO/Tests/Peers/credentials.py" >"$W/peer.out" || die "the credential peer failed"
  CRED=$(sed -n 2p "$W/peer.out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["text"])') || die "no credential: $(cat "$W/peer.out")"
  python3 - "$REPO/harness/vm" "$ROOT/frames" "$CRED" <<'EOF' || die "the frames were not written"
import sys
sys.path.insert(0, sys.argv[1])
from frames import modules  # zint's modules of the code
here, out, text = sys.argv[1:4]
W, H, SCALE, QUIET = 640, 480, 4, 4
rows = modules(58, text)
n = len(rows) + 2 * QUIET
assert n * SCALE <= min(W, H), "the code does not fit"
def frame(code):
    px = bytearray([220]) * (W * H)
    if code:
        x0, y0 = (W - n * SCALE) // 2, (H - n * SCALE) // 2
        for r, row in enumerate(rows):
            for c, bit in enumerate(row):
                if bit:
                    for dy in range(SCALE):
                        o = (y0 + (r + QUIET) * SCALE + dy) * W + x0 + (c + QUIET) * SCALE
                        px[o:o + SCALE] = bytes([30]) * SCALE
    return b"P5 %d %d 255\n" % (W, H) + bytes(px)
for i, code in enumerate([False, True, False]):
    open("%s/%04d.pgm" % (out, i), "wb").write(frame(code))
EOF
}

# A case's initramfs: the common one ($W/initrd.cpio) and, appended (the kernel unpacks each archive
# in turn), the floor an earlier boot kept.
initrd_with_floor() {  # initrd_with_floor FLOOR OUT
  cp "$W/initrd.cpio" "$2"
  if [ -n "$1" ]; then
    rm -rf "$W/overlay" && mkdir -p "$W/overlay/state" && echo "$1" >"$W/overlay/state/clock-floor"
    (cd "$W/overlay" && find . | cpio -o -H newc --quiet) >>"$2"
  fi
}

# The NTP server on the host: chronyd -x (it serves this machine's clock and never sets it), on a
# free port of 127.0.0.1, reached from the guest over QEMU's user network (10.0.2.2).
SERVER_PID=
start_server() {
  SERVER_PORT=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  printf 'port %s\nbindaddress 127.0.0.1\nlocal stratum 8\nallow 127.0.0.1\ncmdport 0\npidfile %s\n' "$SERVER_PORT" "$W/server.pid" >"$W/server.conf"
  "$CHRONYD" -x -d -f "$W/server.conf" -u root -L 0 >"$W/server.log" 2>&1 &
  SERVER_PID=$!
  sleep 1
  kill -0 "$SERVER_PID" 2>/dev/null || die "the NTP server did not start: $(cat "$W/server.log")"
}
stop_server() { [ -z "$SERVER_PID" ] || kill "$SERVER_PID" 2>/dev/null || true; SERVER_PID=; }

# The cases in the order given (rtc first: its boot keeps the floor that behind and ntp are given);
# then "N passed, M failed", and the status 0 when nothing failed.
run_cases() {  # run_cases CASE...
  local c floor=""
  for c in "$@"; do
    case $c in
      rtc)
        initrd_with_floor "" "$W/initrd-rtc.cpio"
        boot rtc "$W/initrd-rtc.cpio" "" $(rtc_at utc)
        floor=$(sed -n '/^FLOOR-BEGIN$/,/^FLOOR-END$/p' "$LOGS/rtc.log" | sed '1d;$d' | head -1)
        ;;
      behind|ntp)
        # Alone, without the rtc case's boot, a floor kept now (an earlier boot's stand-in).
        [ -n "$floor" ] || { floor=$(date +%s); echo "INFO $TAG: $c: no rtc boot before it: the floor is the host's time now ($floor)"; }
        initrd_with_floor "$floor" "$W/initrd-$c.cpio"
        if [ "$c" = behind ]; then
          boot behind "$W/initrd-behind.cpio" "" $(rtc_at 2001-01-01T00:00:00)
        else
          start_server
          boot ntp "$W/initrd-ntp.cpio" "ntp_port=$SERVER_PORT" $(rtc_at 2001-01-01T00:00:00 network) \
            -netdev user,id=n0,net=10.0.2.0/24 -device "$NIC",netdev=n0
          stop_server
        fi
        ;;
      none)
        initrd_with_floor "" "$W/initrd-none.cpio"
        boot_none "$W/initrd-none.cpio"
        ;;
    esac
  done 2>&1 | tee "$W/summary"
  local passed failed
  passed=$(grep -c '^PASS ' "$W/summary" || true)
  failed=$(grep -c '^FAIL ' "$W/summary" || true)
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
}
