# SPDX-License-Identifier: Apache-2.0
# What the memory scripts share (sourced by idle-rss.sh and hot-functions.sh; they set $work).

empty_frames() {  # empty_frames DIR COUNT: COUNT mid-grey 640x480 PGM frames in DIR, for a replay
  mkdir -p "$1"
  python3 - "$1" "$2" <<'PY'
import sys
frame = b"P5\n640 480\n255\n" + bytes([128]) * (640 * 480)
for i in range(int(sys.argv[2])):
    open("%s/%04d.pgm" % (sys.argv[1], i), "wb").write(frame)
PY
}

start_broker() {  # start_broker: a Mosquitto broker on a free loopback port; sets $port and $broker (its pid)
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  printf 'listener %s 127.0.0.1\nallow_anonymous true\n' "$port" > "$work/mosquitto.conf"
  mosquitto -c "$work/mosquitto.conf" >"$work/mosquitto.log" 2>&1 & broker=$!
  for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
}
