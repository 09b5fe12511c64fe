# SPDX-License-Identifier: Apache-2.0
# Group 13 of the arm64 VM tier, sourced by harness/vm-arm64/guest.sh: setup at the door by a
# signed code (interface 0.6, issue 55), across reboots. The site (harness/vm-arm64/setup-site.sh,
# before NetworkManager at every boot): door-net, WPA2-PSK, served by Debian's hostapd on the second
# of mac80211_hwsim's radios in a network namespace, with dnsmasq and a Mosquitto that takes a
# password; NetworkManager holds the first radio. The codes (harness/vm-arm64/setup-payload.sh, on
# the host): made by the site's tool (deploy/examples/site-setup) or from the spec by cbor2 and
# cryptography (setup-codes.py), each a frame streamed through vivid.
#
#   boot 1, after the other groups (setup_prepare): the site installed, vivid loaded at boot as a
#          camera is, systemd-timesyncd unmasked (as on a Pi); the door made new again (the
#          package's /etc/default/kiosk, nothing else of the earlier groups); reboot
#   boot 2 (live): the new door refuses forged, expired, a program variable, a bad value, another
#          door, outside the window, each changing nothing; takes the site's code: kiosk-setup.path
#          runs `kiosk setup --apply`; it joins door-net, gets an address, its kiosk reaches the
#          broker with the code's password (a scan arrives), the zone and the time servers are the
#          code's; then refuses the code again (used) and another site's; reboot
#   boot 3 (held): all of it holds after the reboot; then the door made new again and a second code
#          written by `kiosk setup --apply --root` into its own root seen at /mnt/card (a bind mount:
#          the files only, as onto an SD card's root); reboot
#   boot 4 (card): that root boots joined: the network, the broker, the zone of the second code
# The stage is a file on the root (the run's copy-on-write overlay), so each boot knows its part.
SP=$P/setup
STAGE=/var/lib/kiosk-vm/setup-stage
SITE="ip netns exec site"
PSK=$(cat $SP/psk 2>/dev/null) PW=$(cat $SP/mqtt-password 2>/dev/null) ADMIN_PW=$(cat $SP/admin-password 2>/dev/null)

uptime_s() { cut -d' ' -f1 /proc/uptime | cut -d. -f1; }
# The door's side of a code, to compare before and after a refusal: its files (path, mode, owner,
# checksum), the zone, NetworkManager's connections, whether kiosk-setup.service ever ran.
door_state() {
  for f in /etc/default/kiosk $(find /etc/kiosk /etc/NetworkManager/system-connections /etc/systemd/system/kiosk.service.d \
                                     /etc/systemd/timesyncd.conf.d -type f 2>/dev/null | sort); do
    echo "$f $(stat -c '%a %U:%G' "$f") $(sha256sum <"$f" | cut -c1-16)"
  done
  echo "localtime $(readlink /etc/localtime) zone $(timedatectl show -p Timezone --value)"
  echo "connections $(nmcli -t -f NAME connection show | sort | tr '\n' ' ')"
  echo "kiosk-setup ran at $(systemctl show -p ExecMainStartTimestampMonotonic --value kiosk-setup.service)"
  echo "handed over: $(ls /run/kiosk/setup 2>/dev/null | tr '\n' ' ')"
}
sjlog() {  # kiosk-setup.service's lines since the mark
  journalctl -q -o cat -u kiosk-setup --after-cursor="$CURSOR"
}
wait_setup_journal() {
  n=$(($2 * 5))
  while [ $n -gt 0 ]; do sjlog | grep -qE "$1" && return 0; sleep 0.2; n=$((n - 1)); done
  return 1
}
station() { iw dev 2>/dev/null | awk '$1 == "Interface" { print $2; exit }'; }
# The door's camera: vivid's loop set to 640x480 GREY before the kiosk holds it, a blank scene.
camera_ready() {
  systemctl stop kiosk
  feed bright-GREY-640x480 GREY 640 480 || { fail "setup: vivid's loop could not be set up"; return 1; }
  mark
  systemctl reset-failed kiosk 2>/dev/null
  systemctl start kiosk
  wait_active 60 || { fail "setup: the kiosk did not become active"; jlog | tail -15 | show; return 1; }
}
# show_code NAME: the code's frame in front of the camera until the kiosk says what it made of it.
show_code() {
  feed_out "$1" || { fail "setup: cannot stream the frame $1"; return 1; }
  wait_journal 'event=setup result=' 40
  st=$?
  feed_out bright-GREY-640x480
  return $st
}
# refused NAME REASON WHAT: the code shown, refused for REASON, and the door as it was.
refused() {
  before=$(door_state)
  mark
  if show_code "$1-GREY-640x480"; then
    sleep 2   # kiosk-setup.path would have started by now had a code been handed over
    line=$(jlog | grep -o 'event=setup result=.*' | head -1)
    after=$(door_state)
    if echo "$line" | grep -qE "result=refused reason=\"?$2\"?( |$)" && [ "$before" = "$after" ]; then
      pass "setup refused $3 ($1): $(echo "$line" | cut -c1-150); the door as it was (files, zone, connections; kiosk-setup.service never started)"
    else
      fail "setup: $3 ($1): want reason=$2 and nothing changed, got: ${line:-no setup line}"
      [ "$before" = "$after" ] || { info "before:"; echo "$before" | show; info "after:"; echo "$after" | show; }
    fi
  else fail "setup: $3 ($1): no setup line within 40 s"; jlog | tail -10 | show; fi
}

# handed NAME OWNER REASON WHAT: a code put straight into the kiosk's hand-over (as a kiosk that
# was broken into could, or another user), not shown to the camera: `kiosk setup --apply` (root,
# started by kiosk-setup.path) checks it again and refuses it, the file consumed, the door as it was.
handed() {
  files() { door_state | grep -v -e '^kiosk-setup ran' -e '^handed over'; }
  before=$(files)
  mark
  install -d -o kiosk -g kiosk -m 750 /run/kiosk/setup
  install -o "$2" -g "$(id -gn "$2")" -m 640 $SP/$1.ks1 /run/kiosk/setup/.new && mv /run/kiosk/setup/.new /run/kiosk/setup/code
  if wait_setup_journal 'event=setup result=' 60; then
    sleep 1
    line=$(sjlog | grep -o 'event=setup result=.*' | head -1)
    if echo "$line" | grep -qE "result=refused reason=\"?$3" && [ ! -e /run/kiosk/setup/code ] && [ "$before" = "$(files)" ]; then
      pass "setup: kiosk setup --apply refused $4: $(echo "$line" | cut -c1-150); the hand-over consumed, the door as it was"
    else fail "setup: $4: want kiosk-setup to refuse it ($3) and change nothing, got: ${line:-no setup line}"; sjlog | tail -5 | show; fi
  else fail "setup: $4: kiosk-setup.service said nothing within 60 s"; systemctl status kiosk-setup.path --no-pager | show; fi
}

# joined STAGE ZONE: the door is on door-net with an address, its zone and time servers are the
# code's, its kiosk reaches the broker with the code's password and a scan arrives there.
joined() {
  dev=$(station)
  n=0
  while [ $n -lt 90 ]; do
    [ "$(nmcli -g GENERAL.STATE device show "$dev" 2>/dev/null | cut -d' ' -f1)" = 100 ] && break
    sleep 1; n=$((n + 1))
  done
  conn=$(nmcli -g GENERAL.CONNECTION device show "$dev" 2>/dev/null)
  ssid=$(iw dev "$dev" link | sed -n 's/^[[:space:]]*SSID: //p')
  if [ "$conn" = kiosk-setup ] && [ "$ssid" = door-net ]; then
    pass "setup ($1): NetworkManager has $dev on door-net (connection $conn, $(iw dev "$dev" link | sed -n 's/^[[:space:]]*\(tx bitrate\|signal\): //p' | head -1 | tr -d '\t')), ${n} s after the checks began"
  else
    fail "setup ($1): $dev not on door-net within 90 s (state $(nmcli -g GENERAL.STATE device show "$dev"), connection '${conn}', ssid '${ssid}')"
    nmcli device status | show; journalctl -q -o cat -u NetworkManager -b | tail -20 | show
  fi
  addr=$(ip -4 -o addr show dev "$dev" | awk '{ print $4 }' | head -1)
  mac=$(cat /sys/class/net/"$dev"/address)
  if echo "$addr" | grep -q '^10\.42\.0\.' && grep -q "${addr%/*}" /run/kiosk-vm-site/leases; then
    pass "setup ($1): $dev has $addr from the site's dnsmasq (its lease: $(grep "${addr%/*}" /run/kiosk-vm-site/leases | cut -d' ' -f2,3))"
  else fail "setup ($1): no address from the site on $dev (${addr:-none}; $mac; leases: $(tr '\n' ';' </run/kiosk-vm-site/leases))"; fi
  zone=$(timedatectl show -p Timezone --value)
  if [ "$zone" = "$2" ] && [ "$(readlink -f /etc/localtime)" = "/usr/share/zoneinfo/$2" ]; then
    pass "setup ($1): the zone is the code's: timedatectl says $zone, /etc/localtime -> $(readlink /etc/localtime), $(date +'%H:%M %Z')"
  else fail "setup ($1): zone $zone, /etc/localtime -> $(readlink /etc/localtime) (want $2)"; fi
  servers=$(timedatectl show-timesync -p SystemNTPServers --value 2>/dev/null)
  if grep -qx 'NTP=10.42.0.1' /etc/systemd/timesyncd.conf.d/kiosk-setup.conf 2>/dev/null && [ "$servers" = 10.42.0.1 ]; then
    pass "setup ($1): the time servers are the code's: the drop-in timesyncd.conf.d/kiosk-setup.conf, and systemd-timesyncd ($(systemctl is-active systemd-timesyncd)) uses $servers"
  else fail "setup ($1): time servers: drop-in '$(grep NTP= /etc/systemd/timesyncd.conf.d/kiosk-setup.conf 2>/dev/null)', timesyncd ($(systemctl is-active systemd-timesyncd)) uses '$servers'"; fi
  # The broker: the kiosk's own connection (mqtt_connected), then a scan, as the site's Mosquitto
  # (no anonymous client) hands it to a subscriber of the site's.
  if wait_journal 'event=mqtt_connected' 60; then
    $SITE timeout 60 mosquitto_sub -h 10.42.0.1 -u site-admin -P "$ADMIN_PW" -t 'kiosk/+/scan' -C 1 -W 60 >/tmp/setup-scan.txt 2>&1 &
    subpid=$!
    sleep 2
    feed_out card-GREY-640x480
    wait $subpid
    feed_out bright-GREY-640x480
    login=$(grep -o "New client connected from ${addr%/*}.*u'door-7')" /run/kiosk-vm-site/mosquitto.log | tail -1)
    if grep -q '"data":"36963"' /tmp/setup-scan.txt && [ -n "$login" ]; then
      pass "setup ($1): the kiosk reached the site's broker with the code's password ($(jlog | grep -o 'event=mqtt_connected .*' | head -1)); Mosquitto: $login; a scan arrived: $(cut -c1-70 /tmp/setup-scan.txt)"
    else fail "setup ($1): no scan at the site's broker: $(cat /tmp/setup-scan.txt); login: ${login:-none}"; tail -5 /run/kiosk-vm-site/mosquitto.log | show; jlog | grep -i mqtt | tail -5 | show; fi
  else
    fail "setup ($1): the kiosk never reached the broker (no mqtt_connected within 60 s)"
    jlog | grep -E 'mqtt|config_error' | tail -10 | show; tail -5 /run/kiosk-vm-site/mosquitto.log | show
  fi
}

# no_secret WHERE: neither the Wi-Fi key nor the broker's password in this boot's journal.
no_secret() {
  journalctl -b -q -o cat >/tmp/journal.txt 2>&1
  if [ -n "$PSK" ] && [ -n "$PW" ] && ! grep -qF -e "$PSK" -e "$PW" /tmp/journal.txt; then
    pass "setup ($1): neither the Wi-Fi key nor the broker's password in this boot's journal ($(wc -l </tmp/journal.txt) lines)"
  else fail "setup ($1): a secret of the code is in the journal"; fi
}

# The door made new again: the package's /etc/default/kiosk, no drop-in, nothing a code set.
new_door() {
  systemctl stop kiosk
  dpkg-deb --fsys-tarfile $P/kiosk_*_arm64.deb | tar -xO ./etc/default/kiosk >/etc/default/kiosk
  rm -rf /etc/kiosk/trust /etc/kiosk/site-key.pem /etc/kiosk/mqtt-password /etc/systemd/system/kiosk.service.d \
         /etc/systemd/timesyncd.conf.d/kiosk-setup.conf
  nmcli connection delete kiosk-setup >/dev/null 2>&1
  rm -f /etc/NetworkManager/system-connections/kiosk-setup.nmconnection
  ln -sf /usr/share/zoneinfo/Etc/UTC /etc/localtime; echo Etc/UTC >/etc/timezone
  systemctl daemon-reload
  ! grep -qE '^[[:space:]]*(export[[:space:]]+)?KIOSK_' /etc/default/kiosk
}

reboot_to() {
  mkdir -p "${STAGE%/*}" && echo "$1" >$STAGE
  info "setup: rebooting for the stage '$1' ($PASSED passed, $FAILED failed in this boot, $(uptime_s) s after it)"
  sync
  systemctl reboot --no-block
  exit 0
}

# ---- boot 1: after the other groups -----------------------------------------------------------------
setup_prepare() {
  [ -d $SP ] || { fail "setup: no setup payload"; finish; }
  modinfo mac80211_hwsim >/dev/null 2>&1 || { fail "setup: no mac80211_hwsim module in $(uname -r)"; finish; }
  mkdir -p /etc/kiosk-vm-site
  cp $SP/psk /etc/kiosk-vm-site/psk && chmod 600 /etc/kiosk-vm-site/psk
  cp $SP/hostapd.conf $SP/mosquitto.conf /etc/kiosk-vm-site/
  mosquitto_passwd -c -b /etc/kiosk-vm-site/passwd door-7 "$PW" && mosquitto_passwd -b /etc/kiosk-vm-site/passwd site-admin "$ADMIN_PW"
  chmod 600 /etc/kiosk-vm-site/passwd
  install -m 755 $SP/setup-site.sh /usr/local/sbin/kiosk-vm-site
  cat >/etc/systemd/system/kiosk-vm-site.service <<'ZZUNIT'
[Unit]
Description=kiosk arm64 VM: the site's door-net (hostapd, dnsmasq, Mosquitto in the namespace "site")
Before=NetworkManager.service
After=systemd-udevd.service systemd-modules-load.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/kiosk-vm-site

[Install]
WantedBy=multi-user.target
ZZUNIT
  systemctl enable kiosk-vm-site.service 2>/dev/null
  # The camera is there at boot, as a USB camera is: vivid with the checks' options.
  echo vivid >/etc/modules-load.d/kiosk-vm.conf
  echo 'options vivid n_devs=1 node_types=0x101 num_inputs=1 input_types=0x3 num_outputs=1 output_types=0x1' >/etc/modprobe.d/kiosk-vm.conf
  # As on a Pi: systemd-timesyncd keeps the time (the image masks it: no network in the other groups).
  rm -f /etc/systemd/system/systemd-timesyncd.service
  systemctl daemon-reload
  if new_door && systemctl is-enabled -q kiosk && systemctl is-enabled -q kiosk-setup.path; then
    pass "setup: the site installed (kiosk-vm-site.service, before NetworkManager), the door made new (the package's /etc/default/kiosk sets no KIOSK_ variable; kiosk and kiosk-setup.path enabled)"
  else fail "setup: the door could not be made new"; grep -E '^[[:space:]]*KIOSK_' /etc/default/kiosk | show; finish; fi
  reboot_to live
}

# ---- boot 2: a new door takes the site's code --------------------------------------------------------
setup_live() {
  info "setup (live): a new door, $(uptime_s) s after boot: kiosk $(systemctl is-active kiosk), kiosk-setup.path $(systemctl is-active kiosk-setup.path), the site $(systemctl is-active kiosk-vm-site) ($(cat /run/kiosk-vm-site/radio 2>/dev/null))"
  dev=$(station)
  seen=$(nmcli -t -f SSID,SECURITY device wifi list --rescan yes 2>/dev/null | grep '^door-net:' | head -1)
  if [ "$(systemctl is-active kiosk-vm-site)" = active ] && [ -n "$seen" ] && [ -n "$dev" ]; then
    pass "setup: the site's door-net ($seen) served by hostapd in the namespace site ($(cat /run/kiosk-vm-site/radio)); NetworkManager holds $dev ($(nmcli -g GENERAL.STATE device show "$dev"))"
  else fail "setup: the site is not up (kiosk-vm-site $(systemctl is-active kiosk-vm-site), door-net seen: '${seen}', station '${dev}')"; journalctl -q -o cat -u kiosk-vm-site -b | tail -10 | show; fi
  camera_ready || finish
  # Refused on the new door, each changing nothing: the first code it takes decides its site.
  refused forged signature "a code signed by another key than the site_key it names"
  refused expired expired "an expired code"
  refused program "refused KIOSK_ON_SCAN" "a code setting a variable that names a program"
  refused badvalue "refused KIOSK_FPS" "a code with a value kiosk check refuses (KIOSK_FPS=999)"
  refused otherdoor "wrong door" "a code for another door"
  # Outside the window: the same site's code, with the window shortened to 60 s (a drop-in: the
  # door stays new) and the boot older than that.
  mkdir -p /etc/systemd/system/kiosk.service.d
  printf '[Service]\nEnvironment=KIOSK_SETUP_WINDOW_S=60\n' >/etc/systemd/system/kiosk.service.d/vm-window.conf
  systemctl daemon-reload
  while [ "$(uptime_s)" -lt 62 ]; do sleep 1; done
  mark; systemctl restart kiosk; wait_active 60
  refused late closed "a code shown outside the window ($(uptime_s) s after boot, KIOSK_SETUP_WINDOW_S=60)"
  rm -f /etc/systemd/system/kiosk.service.d/vm-window.conf; rmdir /etc/systemd/system/kiosk.service.d
  systemctl daemon-reload
  mark; systemctl restart kiosk; wait_active 60
  # The site's code, within the default window (KIOSK_SETUP=boot, 600 s).
  at=$(uptime_s)
  mark
  if show_code good-GREY-640x480 && jlog | grep -q 'event=setup result=taken'; then
    if wait_setup_journal 'event=setup result=' 90 && sjlog | grep 'event=setup result=applied' | grep -qv 'failed='; then
      pass "setup: the site's code taken $at s after boot ($(jlog | grep -o 'event=setup result=taken.*' | head -1 | cut -c1-150)) and applied by kiosk-setup.service: $(sjlog | grep -o 'event=setup result=applied.*' | cut -c1-140)"
      sjlog | grep -E '^(done|left|FAILED)' | sed 's/^/INFO setup | /'
    else fail "setup: kiosk-setup.service did not apply the code"; sjlog | tail -20 | show; systemctl status kiosk-setup --no-pager | show; fi
  else fail "setup: the site's code was not taken $at s after boot"; jlog | tail -15 | show; fi
  joined live Europe/Berlin
  pw_file=$(stat -c '%a %U:%G' /etc/kiosk/mqtt-password 2>/dev/null)
  if [ "$pw_file" = "640 root:kiosk" ] && cmp -s $SP/site-a.pem /etc/kiosk/site-key.pem \
     && grep -qx 'KIOSK_SITE_KEY=/etc/kiosk/site-key.pem' /etc/default/kiosk && grep -qx 'KIOSK_MQTT_PASSWORD_FILE=/etc/kiosk/mqtt-password' /etc/default/kiosk; then
    pass "setup: the site's key pinned (/etc/kiosk/site-key.pem is site A's), the password's file $pw_file, /etc/default/kiosk names both"
  else fail "setup: pinned key or password file wrong (password file '$pw_file')"; grep -E '^KIOSK_' /etc/default/kiosk | show; fi
  no_secret live
  # The root side's own check, the camera bypassed.
  handed forged kiosk signature "a forged code written into the hand-over as the kiosk user"
  handed late nobody malformed "a valid code of the site written into the hand-over by another user (nobody)"
  # Refused on the door now set up.
  refused good used "the site's code shown again"
  refused othersite site "a code of another site (valid for it)"
  reboot_to held
}

# ---- boot 3: it all holds; then an SD card's root written by --root ----------------------------------------
setup_held() {
  info "setup (held): $(uptime_s) s after the reboot; kiosk-setup.service ran this boot: $([ "$(systemctl show -p ExecMainStartTimestampMonotonic --value kiosk-setup)" = 0 ] && echo no || echo yes)"
  camera_ready || finish
  joined "after a reboot" Europe/Berlin
  no_secret "after a reboot"
  # --show changes nothing.
  before=$(door_state)
  kiosk setup --show $SP/sdcard.ks1 >/tmp/show.txt 2>&1
  st=$?
  if [ $st = 0 ] && [ "$before" = "$(door_state)" ] && grep -q 'nothing was changed' /tmp/show.txt && ! grep -qF -e "$PSK" -e "$PW" /tmp/show.txt; then
    pass "setup: kiosk setup --show: exit 0, $(grep -c '^  ' /tmp/show.txt) lines of what it would change (secrets hidden), the door as it was"
  else fail "setup: kiosk setup --show: exit $st"; show /tmp/show.txt; fi
  # The SD card: this door made new again, its root seen at /mnt/card, the second code written
  # there by --root (the files only: NetworkManager's keyfile, the localtime link, the rest).
  new_door || fail "setup: the door could not be made new for the card"
  mkdir -p /mnt/card && mount --bind / /mnt/card
  kiosk setup --apply $SP/sdcard.ks1 --root /mnt/card >/tmp/card.txt 2>&1
  st=$?
  umount /mnt/card
  sed 's/^/INFO card | /' /tmp/card.txt
  if [ $st = 0 ] && [ "$(stat -c '%a %U' /etc/NetworkManager/system-connections/kiosk-setup.nmconnection 2>/dev/null)" = "600 root" ] \
     && [ "$(readlink /etc/localtime)" = /usr/share/zoneinfo/America/New_York ] && ! grep -qF -e "$PSK" -e "$PW" /tmp/card.txt; then
    pass "setup: kiosk setup --apply --root /mnt/card: exit 0, $(grep -c '^done' /tmp/card.txt) steps, $(grep -c '^left' /tmp/card.txt) left for the first boot; the keyfile 0600 root, /etc/localtime -> America/New_York"
  else fail "setup: kiosk setup --apply --root: exit $st"; fi
  reboot_to card
}

# ---- boot 4: the card's root boots joined -------------------------------------------------------------
setup_card() {
  info "setup (card): the root written by --root, $(uptime_s) s after boot"
  camera_ready || finish
  joined "the card's first boot" America/New_York
  if [ "$(systemctl show -p ExecMainStartTimestampMonotonic --value kiosk-setup)" = 0 ]; then
    pass "setup (the card's first boot): joined from the files alone (kiosk-setup.service never ran this boot)"
  else fail "setup (the card's first boot): kiosk-setup.service ran"; fi
  no_secret "the card's first boot"
  finish
}

case $(cat $STAGE 2>/dev/null) in
  live) setup_live ;;
  held) setup_held ;;
  card) setup_card ;;
  *)
    # KIOSK_VM_ARM64_APPEND=vm.setup_only: the package, then straight to this group (to work on it).
    if grep -qw vm.setup_only /proc/cmdline; then
      mkdir -p /tmp/debs && cp $P/kiosk_*_arm64.deb /tmp/debs/
      apt-get install -y -q /tmp/debs/kiosk_*_arm64.deb >/tmp/apt.txt 2>&1 || { fail "apt install"; show /tmp/apt.txt; finish; }
      setup_prepare
    fi ;;
esac
