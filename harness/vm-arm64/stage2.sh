#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The guest's first boot (harness/vm-arm64/run.sh boots it with vm.init=/stage2.sh, once): dpkg
# installs the packages mmdebstrap unpacked on the host (their maintainer scripts are arm64
# programs: they run here), then the system is set up for the checks and powered off. The disk
# image is kept as the base of every later run.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t tmpfs tmpfs /run; mount -t tmpfs tmpfs /tmp
echo "STAGE2-START $(cut -d' ' -f1 /proc/uptime)"
n=$(ls /var/cache/apt/archives/*.deb | wc -l)
# Under emulation each fsync is slow and no one reads the manuals here: dpkg neither syncs every
# file it unpacks nor writes the manuals, docs and translations (as Debian's image builders do).
mkdir -p /etc/dpkg/dpkg.cfg.d
cat >/etc/dpkg/dpkg.cfg.d/kiosk-vm <<'EOT'
force-unsafe-io
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
EOT
# As mmdebstrap does in a chroot it can run: everything at once, dependencies forced (the order
# of unpacking is not theirs); then whatever is left unconfigured.
dpkg --install --force-depends --force-confnew /var/cache/apt/archives/*.deb >/var/log/stage2-dpkg.log 2>&1
dpkg --configure -a >>/var/log/stage2-dpkg.log 2>&1
bad=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | grep -v '^ii ' || true)
if [ -n "$bad" ]; then
  echo "STAGE2-FAIL packages not installed: $bad"; tail -40 /var/log/stage2-dpkg.log
  echo o >/proc/sysrq-trigger; sleep 5
fi
echo "STAGE2-PACKAGES $n in $(cut -d' ' -f1 /proc/uptime) s"
rm -f /var/cache/apt/archives/*.deb

cat >/etc/fstab <<'EOT'
/dev/vda / ext4 rw,noatime 0 1
EOT
mkdir -p /mnt/payload
echo kiosk-vm >/etc/hostname
printf '127.0.0.1 localhost\n127.0.1.1 kiosk-vm\n' >/etc/hosts
systemd-machine-id-setup >/dev/null
ln -sf /usr/share/zoneinfo/Etc/UTC /etc/localtime
# Plain Debian leaves /dev/gpiochip* to root: docs/installing.md's rule gives them to the gpio group.
echo 'SUBSYSTEM=="gpio", KERNEL=="gpiochip*", GROUP="gpio", MODE="0660"' >/etc/udev/rules.d/60-gpiochip.rules
# Nothing on the console but the checks; no timers or network waits in a 5-minute life.
for u in serial-getty@ttyAMA0.service getty@tty1.service systemd-firstboot.service apt-daily.timer \
         apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer man-db.timer \
         dpkg-db-backup.timer systemd-timesyncd.service systemd-networkd-wait-online.service \
         systemd-pstore.service; do
  ln -sf /dev/null "/etc/systemd/system/$u"
done
# The second disk is mounted by the unit itself, by its kernel name: under emulation udev takes
# longer than a device timeout to announce it to systemd.
cat >/usr/local/sbin/kiosk-vm-tests <<'EOT'
#!/bin/sh
n=0; while [ ! -b /dev/vdb ] && [ $n -lt 150 ]; do sleep 0.2; n=$((n + 1)); done
mountpoint -q /mnt/payload || mount -o ro /dev/vdb /mnt/payload || { echo "FAIL payload: cannot mount /dev/vdb"; echo "RESULT 0 passed, 1 failed"; systemctl poweroff -ff; }
exec /bin/sh /mnt/payload/guest.sh
EOT
chmod 755 /usr/local/sbin/kiosk-vm-tests
cat >/etc/systemd/system/kiosk-vm-tests.service <<'EOT'
[Unit]
Description=kiosk arm64 VM checks (harness/vm-arm64/guest.sh from the second disk)
After=multi-user.target

[Service]
Type=simple
ExecStart=/usr/local/sbin/kiosk-vm-tests
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyAMA0

[Install]
WantedBy=multi-user.target
EOT
mkdir -p /etc/systemd/system/multi-user.target.wants
ln -sf /etc/systemd/system/kiosk-vm-tests.service /etc/systemd/system/multi-user.target.wants/
sync
mount -o remount,ro / 2>/dev/null
echo STAGE2-DONE
echo o >/proc/sysrq-trigger
sleep 10
