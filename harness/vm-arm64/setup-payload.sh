# SPDX-License-Identifier: Apache-2.0
# The setup group's payload (harness/vm-arm64/setup.sh), sourced by harness/vm-arm64/run.sh on the
# host: $PL/setup holds two sites' public keys, the codes and their frames, the site's settings and
# this run's secrets (a Wi-Fi key, the door's and the site's broker passwords: random, never
# printed). The site's codes are made by its own tool, deploy/examples/site-setup (the one an
# admin runs: secrets from files); those a door must refuse, which that tool will not make, from
# the spec by cbor2 and cryptography (setup-codes.py). Each code's frame: its QR code drawn by zint
# from its bytes, 3 pixels a module inside the default ROI of a 640x480 GREY frame, checked here
# with the host's `kiosk decode` when one is built.
SD=$PL/setup
mkdir -p "$SD"
SC=$HERE/setup-codes.py
"$PEER" "$SC" keygen "$W/site-a.key" "$SD/site-a.pem" && "$PEER" "$SC" keygen "$W/site-b.key" "$SD/site-b.pem" \
  || die "setup: the sites' keys were not made"
secret() { head -c 32 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c "$1"; }
umask 077
secret 24 >"$SD/psk"; secret 20 >"$SD/mqtt-password"; secret 20 >"$SD/admin-password"
umask 022
# The site's codes: what a new door needs to join, the broker's password, a zone, a time server.
site_code() {  # site_code NAME TZ
  "$PEER" "$REPO/deploy/examples/site-setup" make --key "$W/site-a.key" --out "$W/$1" --door kiosk-vm \
    --ssid door-net --psk-file "$SD/psk" --tz "$2" --ntp 10.42.0.1 --mqtt-password-file "$SD/mqtt-password" \
    --env KIOSK_MQTT_URL=mqtt://10.42.0.1:1883 --env KIOSK_MQTT_USER=door-7 --hours 2 >"$W/$1.log" 2>&1 \
    || { cat "$W/$1.log"; die "setup: site-setup make $1 failed"; }
  cp "$W/$1.ks1" "$SD/$1.ks1"
}
site_code good Europe/Berlin
site_code late Europe/Berlin   # the same, a cti of its own: shown outside the window
site_code sdcard America/New_York   # written by --root onto the card
# The codes a door refuses.
now=$(date +%s)
cti() { head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
spec_code() {  # spec_code NAME SIGNER NAMED CLAIMS-JSON (iat, exp, cti added unless given)
  local claims=$4
  case $claims in *'"iat"'*) ;; *) claims="{\"iat\": $((now - 60)), \"exp\": $((now + 7200)), ${claims#\{}" ;; esac
  claims="{\"cti\": \"$(cti)\", ${claims#\{}"
  "$PEER" "$SC" code "$W/site-$2.key" "$SD/$1.ks1" "$claims" "$W/site-$3.key" || die "setup: the code $1 was not made"
}
wifi="\"wifi\": {\"ssid\": \"door-net\", \"psk\": \"not-the-site-key-0\"}"
spec_code forged b a "{\"door\": \"kiosk-vm\", $wifi, \"tz\": \"Asia/Tokyo\", \"env\": {\"KIOSK_MQTT_URL\": \"mqtt://10.66.0.1\"}}"
spec_code expired a a "{\"iat\": $((now - 7200)), \"exp\": $((now - 3600)), \"door\": \"kiosk-vm\", \"tz\": \"Asia/Tokyo\"}"
spec_code program a a "{\"door\": \"kiosk-vm\", \"tz\": \"Asia/Tokyo\", \"env\": {\"KIOSK_ON_SCAN\": \"/usr/bin/id\"}}"
spec_code badvalue a a "{\"door\": \"kiosk-vm\", \"tz\": \"Asia/Tokyo\", \"env\": {\"KIOSK_FPS\": \"999\"}}"
spec_code otherdoor a a "{\"door\": \"door-99\", \"tz\": \"Asia/Tokyo\"}"
spec_code othersite b b "{\"door\": \"kiosk-vm\", $wifi, \"tz\": \"Asia/Tokyo\"}"
HOST_KIOSK=
for k in "$REPO/.build/release/kiosk" "$REPO/.build/debug/kiosk"; do [ -x "$k" ] && { HOST_KIOSK=$k; break; }; done
for c in good late sdcard forged expired program badvalue otherdoor othersite; do
  python3 "$SC" frame "$SD/$c.ks1" "$PL/frames/$c-GREY-640x480.raw" "$W/$c.pgm" >/dev/null || die "setup: no frame for $c"
  if [ -n "$HOST_KIOSK" ]; then
    "$HOST_KIOSK" decode "$W/$c.pgm" 2>&1 | grep -q "a setup code of $(stat -c %s "$SD/$c.ks1") bytes" \
      || die "setup: the host's kiosk does not read the frame of $c"
  fi
done
cat >"$SD/hostapd.conf" <<'ZZHOSTAPD'
# The site's access point (harness/vm-arm64/setup-site.sh fills in the interface and the key).
interface=@IF@
driver=nl80211
ssid=door-net
hw_mode=g
channel=6
wpa=2
wpa_key_mgmt=WPA-PSK
rsn_pairwise=CCMP
wpa_passphrase=@PSK@
ZZHOSTAPD
cat >"$SD/mosquitto.conf" <<'ZZMOSQ'
# The site's broker: a user and a password, or nothing.
pid_file /run/kiosk-vm-site/mosquitto.pid
user root
persistence false
listener 1883 10.42.0.1
allow_anonymous false
password_file /etc/kiosk-vm-site/passwd
log_dest file /run/kiosk-vm-site/mosquitto.log
connection_messages true
ZZMOSQ
cp "$HERE/setup.sh" "$HERE/setup-site.sh" "$SD/"
stamp "setup payload: 2 sites' keys, $(ls "$SD"/*.ks1 | wc -l) codes (site-setup and cbor2/cryptography), their frames${HOST_KIOSK:+, each read by kiosk decode on the host}"
