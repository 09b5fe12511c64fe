#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The site a new door joins, for the arm64 VM tier's setup group (harness/vm-arm64/setup.sh): run
# at every boot by kiosk-vm-site.service, before NetworkManager starts, as a site's network is
# there before a door is powered on. The kernel's mac80211_hwsim makes two radios; the second is
# moved into a network namespace of its own, "site", where Debian's hostapd serves door-net
# (WPA2-PSK), dnsmasq hands out addresses (10.42.0.0/24) and a Mosquitto that takes only a user and
# a password listens on 10.42.0.1. NetworkManager in the guest's own namespace holds the first
# radio: the door's Wi-Fi. Settings and secrets: /etc/kiosk-vm-site (written by setup.sh).
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
C=/etc/kiosk-vm-site R=/run/kiosk-vm-site
mkdir -p $R
say() { echo "kiosk-vm-site: $*"; }
modprobe mac80211_hwsim radios=2 || { say "no mac80211_hwsim"; exit 1; }
n=0; while [ "$(ls /sys/class/ieee80211 | wc -l)" -lt 2 ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
udevadm settle
# The second radio (the higher phy number) and its interface go to the site's namespace.
phy=$(ls /sys/class/ieee80211 | sort -V | tail -1)
dev=$(ls /sys/class/ieee80211/$phy/device/net/ | head -1)
[ -n "$dev" ] || { say "no interface on $phy"; exit 1; }
ip netns add site 2>/dev/null
ip link set "$dev" down
iw phy "$phy" set netns name site || { say "iw phy $phy set netns name site failed"; exit 1; }
S="ip netns exec site"
$S ip link set lo up
$S ip addr add 10.42.0.1/24 dev "$dev"
sed -e "s/@IF@/$dev/" -e "s/@PSK@/$(cat $C/psk)/" $C/hostapd.conf >$R/hostapd.conf
chmod 600 $R/hostapd.conf
$S hostapd -B -P $R/hostapd.pid -f $R/hostapd.log $R/hostapd.conf || { say "hostapd failed"; cat $R/hostapd.log; exit 1; }
n=0; while ! $S ip link show "$dev" | grep -q 'state UP' && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
$S dnsmasq --conf-file=/dev/null --user=root --group=root --port=0 --no-resolv --no-hosts \
  --interface="$dev" --bind-interfaces --dhcp-range=10.42.0.10,10.42.0.99,255.255.255.0,1h --dhcp-authoritative \
  --dhcp-leasefile=$R/leases --pid-file=$R/dnsmasq.pid --log-dhcp --log-facility=$R/dnsmasq.log || { say "dnsmasq failed"; exit 1; }
$S mosquitto -d -c $C/mosquitto.conf || { say "mosquitto failed"; exit 1; }
echo "$phy $dev" >$R/radio
say "door-net on $phy ($dev) in namespace site: hostapd, dnsmasq, mosquitto on 10.42.0.1"
