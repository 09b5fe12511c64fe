# SPDX-License-Identifier: Apache-2.0
# kiosk: the two commands a newcomer needs are `make demo` and `make test`; each installs what it
# needs from Debian's archive first (`make deps`, which skips what is already there). The build
# (`make release`, `make deb`, deploy/install.sh) needs Debian's packages only; the Python peers from
# PyPI are installed by the targets that test (`make peers`; see docs/development.md).

SWIFT ?= swift
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin

# The Debian release this is (bookworm, trixie, ...): the packages differ a little between them.
CODENAME ?= $(shell . /etc/os-release 2>/dev/null && echo $$VERSION_CODENAME)

# The C libraries the kiosk links (zbar, libv4l2, libgpiod, libpng, libsystemd, libqrencode for
# the demo's codes, zxing-cpp the second reader) and the one only the tests and kiosk-dev link
# (zint draws the test barcodes and the bench's). The -dev names are the same on bookworm and
# trixie; what they pull in is not (libgpiod2 with the v1 API on bookworm, libgpiod3 with v2 on
# trixie; trixie's t64 runtime names; zxing-cpp 1.4.0 as libzxing2, 2.3.0 as libzxing3).
PACKAGES := pkg-config make libzbar-dev libv4l-dev libgpiod-dev libpng-dev libsystemd-dev libqrencode-dev libzxing-dev libzint-dev
# Debian 13 has its own Swift (swiftlang, 6.0.3); the static link of the release binary needs a
# libstdc++ to link against, which swiftlang does not pull in. Debian 12 has no Swift package:
# there the toolchain comes from swift.org (docs/installing.md, "Build on the Pi").
PACKAGES_trixie := swiftlang libstdc++-14-dev
PACKAGES += $(PACKAGES_$(CODENAME))
# The building's broker, the same names on bookworm (2.0.11) and trixie (2.0.21):
# libmosquitto, the MQTT client library the kiosk links (runtime libmosquitto1)
PACKAGES += libmosquitto-dev
# the broker the MQTT tests start on a loopback port
PACKAGES += mosquitto
# mosquitto_sub, mosquitto_pub and mosquitto_passwd: the tests' consumer and password files
PACKAGES += mosquitto-clients
# openssl: the MQTT tests make their CA and the broker's certificate with it
PACKAGES += openssl
# OpenSSL's headers for the crypto shim (Sources/CCrypto: credentials, OSDP); the kiosk dlopen()s
# libcrypto.so.3 (libssl3 on bookworm, libssl3t64 on trixie) and never links it
PACKAGES += libssl-dev
# zlib's headers for the credentials' capped inflate (Sources/CZlib); libpng-dev pulls
# it in already, named here because the kiosk links libz itself
PACKAGES += zlib1g-dev
# python3-venv: the tests' independent peers from PyPI live in a virtual environment (below; a
# Debian package: installed with the others, used only by `make peers`)
PACKAGES += python3-venv
# kiosk aim's live view is tested in a terminal (AimTests).
PACKAGES += tmux
# libical's headers for the holidays' shim (Sources/CICal); the kiosk dlopen()s
# libical.so.3 (libical3 on bookworm, libical3t64 on trixie) when a rules file names holidays
PACKAGES += libical-dev
# libfaketime: the access rules' end-to-end tests move the release kiosk's wall clock
PACKAGES += faketime
# ALSA's headers for the speaker's shim (Sources/CALSA); the kiosk dlopen()s libasound.so.2
# (libasound2 on bookworm, libasound2t64 on trixie) only when KIOSK_SPEAKER is set
PACKAGES += libasound2-dev
# libevdev's headers for the keypad's shim (Sources/CEvdev); the kiosk dlopen()s libevdev.so.2
# (libevdev2, the same name on bookworm and trixie) only when KIOSK_KEYPAD names an evdev keypad
PACKAGES += libevdev-dev

# Independent implementations the tests check the kiosk against (PyPI, pinned): COSE/CWT
# credentials (cwt, pycose), rotating codes (pyotp, RFC 6238), an OSDP control panel (libosdp),
# iCalendar holidays written by icalendar and expanded by recurring-ical-events, passes for the
# phone (KH1:) encoded by cbor2 (harness/pass/peer.py, with cryptography and cwt); event
# tickets minted by pretix itself (its Sig1TicketSecretGenerator, Tests/Peers/pretix_tickets.py).
# `make peers` puts them in .cache/peers (ignored); the targets that test depend on it (test,
# test-examples, test-sanitizers, test-arm64), the build never does (harness/deploy/no-pypi.sh
# proves it). The tests find its python through KIOSK_PEERS_PYTHON, which `make test` sets.
PEERS := cwt==3.3.0 pycose==1.1.0 pyotp==2.12.1 libosdp==3.2.9 icalendar==7.3.2 recurring-ical-events==3.8.2 jinja2==3.1.6 cbor2==5.9.0
PEERS_DIR := $(CURDIR)/.cache/peers
PEERS_PYTHON := $(PEERS_DIR)/bin/python
# pretix in a venv of its own inside the peers' (.cache/peers/pretix; the tests find its python
# beside KIOSK_PEERS_PYTHON): its webauthn wants cbor2 6, cwt 3.3.0 wants cbor2 5.
PRETIX_PEER := pretix==2026.8.0
PRETIX_PEER_DIR := $(PEERS_DIR)/pretix
PYTHON ?= python3
export KIOSK_PEERS_PYTHON := $(PEERS_PYTHON)

# What `make deb` and `make test-deploy` need besides the build: systemd-analyze (systemd),
# dpkg-deb and dpkg-shlibdeps (dpkg-dev), strip and readelf (binutils), file, lintian; g++ and
# libcamera-dev to build the libcamera plugin from the package's copy of its source.
DEPLOY_PACKAGES := systemd dpkg-dev binutils file lintian g++ libcamera-dev

.PHONY: all deps peers speech-test-deps docs test-docs print-deps test-core test-trixie test-arm64 deploy-deps build release bench bench-memory hot-functions bench-zoom bench-wiegand bench-osdp bench-credentials bench-credentials-arm64 bench-speech bench-screens bench-2d bench-charsets test-examples deb demo test accuracy test-deploy test-no-pypi test-vm test-vm-arm64 bench-arm64 test-sanitizers soak fuzz clean test-pass-browser test-setup-browser test-ha bench-writes bench-passes test-vm-arm64-clock test-powercut builds fuzz-build

all: build

# Installs what is missing of a package list, and nothing else (idempotent).
install_missing = harness/host-packages.sh "make $@" $(1)

# Debian's packages only: never PyPI (the peers are `make peers`).
deps:
	@$(call install_missing,$(PACKAGES))
	@command -v $(SWIFT) >/dev/null || { echo "make deps: no Swift toolchain: on Debian 12 install one from swift.org (docs/installing.md, Build on the Pi)"; exit 1; }

# The Python peers, installed once per pin list (a stamp file names it): the tests' only use of PyPI.
peers:
	@stamp=$(PEERS_DIR)/.pins; \
	if [ "$$(cat $$stamp 2>/dev/null)" != "$(PEERS) $(PRETIX_PEER)" ]; then \
	  echo "make peers: installing $(PEERS) into $(PEERS_DIR), $(PRETIX_PEER) into $(PRETIX_PEER_DIR)"; \
	  rm -rf $(PEERS_DIR) && $(PYTHON) -m venv $(PEERS_DIR) && \
	  $(PEERS_DIR)/bin/python -m pip install -q --disable-pip-version-check $(PEERS) && \
	  $(PYTHON) -m venv $(PRETIX_PEER_DIR) && \
	  $(PRETIX_PEER_DIR)/bin/python -m pip install -q --disable-pip-version-check $(PRETIX_PEER) && \
	  echo "$(PEERS) $(PRETIX_PEER)" > $$stamp; \
	else echo "make peers: $(PEERS_DIR) has $(PEERS) $(PRETIX_PEER)"; fi

# The package list `make deps` installs on this release (or on CODENAME=...), one line.
print-deps:
	@echo $(PACKAGES)

deploy-deps:
	@$(call install_missing,$(DEPLOY_PACKAGES))

build: deps
	$(SWIFT) build

# The Swift runtime is linked in (--static-swift-stdlib): the binary runs without /opt/swift.
RELEASE := -c release --static-swift-stdlib
release: deps
	$(SWIFT) build $(RELEASE)

# The kiosk's frame loop against zbar on every full frame, on generated workloads (docs/measurements/frame-loop.md). BENCH_ARGS=--json for machine-readable output.
bench: release
	$(SWIFT) build $(RELEASE) --product kiosk-dev
	$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk-dev bench $(BENCH_ARGS)
	$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk-dev sharpness

# What KIOSK_ZOOM=1 buys (docs/measurements/frame-loop.md): the smallest QR code read with and without the
# sensor crop, on a simulated 2028x1520 sensor scaled to 640x480.
bench-zoom: release
	$(SWIFT) build $(RELEASE) --product kiosk-dev
	$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk-dev zoom $(BENCH_ARGS)

# What each phone-screen attempt wins and costs (docs/measurements/phone-screens.md):
# the drawn screens of Sources/Scene/ScreenScenes.swift, frame by frame and replayed end to end.
bench-screens: release
	$(SWIFT) build $(RELEASE) --product kiosk-dev
	$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk-dev screens $(BENCH_ARGS)

# The 2D bench (docs/measurements/accuracy.md): 60 drawn Aztec, Data Matrix and
# PDF417 pictures through the kiosk's still path and zxing-cpp alone, then through zxing-cpp 2.x
# from PyPI (pinned here; its own virtual environment in .cache/bench-2d, never the build's).
ZXING_PY := zxing-cpp==2.3.0 pillow==13.0.0
BENCH_2D := $(CURDIR)/.cache/bench-2d
bench-2d: release
	$(SWIFT) build $(RELEASE) --product kiosk-dev
	@stamp=$(BENCH_2D)/venv/.pins; if [ "$$(cat $$stamp 2>/dev/null)" != "$(ZXING_PY)" ]; then \
	  rm -rf $(BENCH_2D)/venv && $(PYTHON) -m venv $(BENCH_2D)/venv && \
	  $(BENCH_2D)/venv/bin/python -m pip install -q --disable-pip-version-check $(ZXING_PY) && echo "$(ZXING_PY)" > $$stamp; fi
	rm -rf $(BENCH_2D)/pictures && mkdir -p $(BENCH_2D)/pictures
	$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk-dev twod --dump $(BENCH_2D)/pictures $(BENCH_ARGS)
	$(BENCH_2D)/venv/bin/python harness/bench-2d/zxing.py $(BENCH_2D)/pictures

# The payload text rule on short legacy texts (docs/measurements/accuracy.md).
bench-charsets: release
	$(SWIFT) build $(RELEASE) --product kiosk-dev
	$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk-dev charsets $(BENCH_ARGS)

# The Wiegand sender's pulse width and bit interval on this machine's clock (docs/door.md, "Use it as
# a door reader"): release build, as on the door.
bench-wiegand: release
	$(SWIFT) build $(RELEASE) --product kiosk-dev
	$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk-dev wiegand-jitter $(BENCH_ARGS)

# The OSDP link's reply time to POLL (docs/measurements/door-features.md): release build, as on the door.
bench-osdp: release
	$(SWIFT) build $(RELEASE) --product kiosk-dev
	$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk-dev osdp-reply $(BENCH_ARGS)

# One credential's verification (ES256, Ed25519), a PIN's check and an idle frame with credentials
# mode on and off (docs/measurements/door-features.md): release build, as on the door.
bench-credentials: release
	$(SWIFT) build $(RELEASE) --product kiosk-dev
	$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk-dev credentials $(BENCH_ARGS)

# What saying a phrase costs (docs/measurements/door-features.md): from a verdict to its first sample
# written to ALSA (`spoke`'s ms) and the CPU a phrase, the default phrases into ALSA's file PCM;
# release build; espeak-ng renders them (a test package: speech-test-deps).
bench-speech: release speech-test-deps
	$(SWIFT) build $(RELEASE) --product kiosk-dev
	$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk-dev speech $(BENCH_ARGS)

# The idle kiosk's memory (docs/design/memory.md): peak RSS of `kiosk run` with the defaults on an
# empty replay, then with KIOSK_MQTT_URL at a loopback broker (harness/memory/idle-rss.sh).
bench-memory: release
	@$(call install_missing,time)
	harness/memory/idle-rss.sh --binary $$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk

# The functions the release kiosk is linked with first (Sources/KioskMain/hot-functions.order; issue
# 23, docs/design/memory.md): callgrind's record of an idle run and a decode (harness/memory/hot-functions.sh).
# Run it when start-up or the frame loop calls other code (make test-deploy says when the list is
# stale). Then, when there is a trixie root (make test-trixie), the names trixie's Swift 6.0.3 adds
# (it builds the arm64 kiosk too): HOT_ADD=--add. SwiftPM does not know the list as an input: the
# kiosk is removed to be linked anew with it.
hot-functions: release
	@$(call install_missing,valgrind)
	bin=$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk && harness/memory/hot-functions.sh --binary $$bin $(HOT_ADD) && rm -f $$bin
	@if [ -z "$(HOT_ADD)" ] && [ -d .cache/trixie ]; then \
	  root=$$(harness/trixie/run.sh --root | tail -1) && \
	  harness/trixie/run.sh -- make -s hot-functions HOT_ADD=--add && \
	  cp $$root/work/kiosk/Sources/KioskMain/hot-functions.order Sources/KioskMain/hot-functions.order; \
	fi
	$(SWIFT) build $(RELEASE) --product kiosk
	harness/memory/hot-windows.py $$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk Sources/KioskMain/hot-functions.order

# The holder's pass page (deploy/pass/) in Debian's headless Chromium, driven by Selenium (a test
# peer, installed into the peers' venv here: it drives /usr/bin/chromedriver, never downloads a
# browser); `pass-page build` copies node-qrcode-generator's qrcode.js; zbarimg reads the
# screenshots; the release kiosk replays them under faketime (harness/pass/browser.py).
PASS_BROWSER_PACKAGES := chromium chromium-driver node-qrcode-generator zbar-tools faketime
PASS_BROWSER_PEER := selenium==4.51.0
test-pass-browser: release peers
	@$(call install_missing,$(PASS_BROWSER_PACKAGES))
	@$(PEERS_PYTHON) -c 'import selenium' 2>/dev/null || $(PEERS_PYTHON) -m pip install -q --disable-pip-version-check $(PASS_BROWSER_PEER)
	rm -rf .cache/pass-browser
	SE_OFFLINE=true $(PEERS_PYTHON) harness/pass/browser.py --out $(CURDIR)/.cache/pass-browser \
	  --kiosk $$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk

# The setup code's phone page (deploy/examples/site-setup) in the same headless Chromium (Selenium,
# the pass page's peer) at two phones' viewports, the network out of reach: offline, no other
# origin, no script, hostile values as text, no secret on it; its screenshots read by zbar (the
# code's bytes, checked by cryptography) and by the release kiosk (harness/setup/browser.py).
# site-setup draws the code with libqrencode (libqrencode4).
SETUP_BROWSER_PACKAGES := chromium chromium-driver zbar-tools libqrencode4
test-setup-browser: release peers
	@$(call install_missing,$(SETUP_BROWSER_PACKAGES))
	@$(PEERS_PYTHON) -c 'import selenium' 2>/dev/null || $(PEERS_PYTHON) -m pip install -q --disable-pip-version-check $(PASS_BROWSER_PEER)
	SE_OFFLINE=true $(PEERS_PYTHON) harness/setup/browser.py --out $(CURDIR)/.cache/setup-browser \
	  --kiosk $$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk

# A real Home Assistant core process (PyPI's homeassistant, pinned in harness/ha/run.sh, in a venv of
# the trixie root: its Python 3.13; bookworm's 3.11 cannot run it) on a real Mosquitto with a live
# release kiosk publishing discovery: the entities it makes, tag_scanned, the Scan and Duress
# events, Open and Mode chosen in Home Assistant, offline (harness/ha/run.sh, check.py). The root is
# harness/trixie/run.sh's ($KIOSK_TRIXIE_CACHE); qrencode draws the replayed codes.
HA_PACKAGES := mosquitto mosquitto-clients qrencode
test-ha: release peers
	@$(call install_missing,$(HA_PACKAGES))
	harness/ha/run.sh --kiosk $$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk

# How small a phone pass (KH1:) reads, by resolution and module size: the reading distance
# (docs/measurements/passes.md). About 20 min at 640x480 and 30 at 1280x720 on 2 busy cores.
bench-passes: release
	$(SWIFT) build $(RELEASE) --product kiosk-dev
	$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk-dev passes $(BENCH_ARGS)

# Bytes the kiosk makes the card write (docs/measurements/card-writes.md): ext4 on a loop device,
# idle, 1,000 plain scans, 1,000 one-time grants (harness/bench-writes/run.sh; root). BEFORE=path
# also measures another kiosk, with the metrics file where the example used to put it.
bench-writes: release peers
	@$(call install_missing,qrencode)
	harness/bench-writes/run.sh
	$(if $(BEFORE),KIOSK=$(BEFORE) LABEL=before METRICS=state harness/bench-writes/run.sh)

# The deploy/examples verdict programs, run for real (harness/examples/run.sh; a few seconds).
test-examples: peers
	harness/examples/run.sh

# build/kiosk_<version>_<arch>.deb for this machine. `make deb ARCH=arm64` on an amd64 machine:
# build/kiosk_<version>_arm64.deb for Raspberry Pi OS trixie, cross-built with trixie's Swift in
# the trixie root against an arm64 sysroot made from Debian's packages (harness/arm64/build.sh;
# cached in .cache/arm64 and .cache/trixie). Any other ARCH builds for this machine, as before.
HOST_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
ifeq ($(ARCH)-$(filter arm64,$(HOST_ARCH)),arm64-)
deb: deploy-deps
	@set -o pipefail; harness/arm64/build.sh --deb | sed -n 's/^deb //p'
else
deb: deploy-deps release
	deploy/build-deb.sh --binary $$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk
endif

# The optimised build: the demo runs in real time, and an unoptimised build of Swift 6.0.3 is too
# slow on a Pi to keep up with the scene's 30 frames a second.
demo: release
	$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk demo

# The speaker's tests (SpeechTests): espeak-ng renders the phrases (the package only recommends it:
# not a build dependency), and an independent recogniser hears what ALSA's file PCM received:
# Debian's pocketsphinx with its US English model: bookworm's Python module (python3-pocketsphinx
# 0.1.15), trixie's program (pocketsphinx_continuous; trixie has no Python module). Test-only: never
# in `make deps`.
SPEECH_TEST_PACKAGES_bookworm := python3-pocketsphinx
SPEECH_TEST_PACKAGES_trixie := pocketsphinx
SPEECH_TEST_PACKAGES := espeak-ng pocketsphinx-en-us $(SPEECH_TEST_PACKAGES_$(CODENAME))
speech-test-deps:
	@$(call install_missing,$(SPEECH_TEST_PACKAGES))

# The end-to-end tests run the optimised binary (as shipped): they check behaviour in real time.
# The suite runs as TEST_JOBS processes side by side (harness/xctest/shards.sh; logs in
# .build/xctest): most of its time is spent waiting on the kiosk in real time, so four processes
# overlap their waits on two cores. Each class goes to the least loaded process by the seconds it
# took last time (harness/xctest/seconds/TIER; one longer than a process's share, test by test);
# TEST_RECORD=1 writes them again.
TEST_JOBS ?= 4
# TEST_ONLY (Module, Module.Class): only those XCTest tests; TEST_PARTS: the other checks run first.
TEST_PARTS ?= test-core test-examples test-docs
test: release peers speech-test-deps $(TEST_PARTS)
	$(SWIFT) build --build-tests
	KIOSK_BINARY=$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk harness/xctest/shards.sh --logs .build/xctest \
	  --jobs $(TEST_JOBS) $(foreach c,$(TEST_ONLY),--only $(c)) $(if $(TEST_RECORD),--record harness/xctest/seconds/$${KIOSK_TEST_TIER:-test}) \
	  -- $$($(SWIFT) build --show-bin-path)/kioskPackageTests.xctest

# Every build the tiers use, made once: the release kiosk, kiosk-dev and the test bundle (CI makes
# them ahead, beside the tests, in the trixie root).
builds: release
	$(SWIFT) build --product kiosk-dev
	$(SWIFT) build --build-tests

# The trixie tier's part of the suite (harness/trixie/run.sh; `harness/trixie/run.sh --all` runs the
# whole of `make test` there): the tests whose outcome can differ on trixie's libraries and Swift
# 6.0.3, and the manual's checks (trixie's groff 1.23 and man-db render the pages as a Pi's do).
# Every test is still built there; these run: libgpiod v2 (GPIOTests), libcamera's loader
# (CameraTests), zxing-cpp 2.x and the photo corpus (ReaderTests, the corpus checks), OpenSSL 3.5
# and libical (CryptoTests, CredentialsTests, the credential and access end-to-end tests with
# Python 3.13's peers; site bundles signed by pycose, verified by OpenSSL 3.5), libmosquitto 2.0.21 (FleetTests), libsystemd 257 (SystemdTests), and the
# pure policy (PolicyTests) as 6.0.3 compiles it, the phone screens' attempts and the safety net's
# glance on zxing-cpp 2.x (ScreenTests, SafetyNetTests), libasound and espeak-ng 1.52 (SpeechTests and
# the spoken verdicts, heard by trixie's pocketsphinx); the demo runs after, end to end.
TEST_TRIXIE := GPIOTests CameraTests ReaderTests CryptoTests CredentialsTests FleetTests PolicyTests \
	DevToolsTests.CorpusTests DevToolsTests.AccuracyCorpusTests KioskTests.CredentialEndToEndTests \
	KioskTests.AccessEndToEndTests KioskTests.SiteBundleEndToEndTests KioskTests.SystemdTests \
	KioskTests.ScreenTests KioskTests.SafetyNetTests SpeechTests KioskTests.SpeechEndToEndTests
test-trixie-part:
	$(MAKE) test TEST_ONLY="$(TEST_TRIXIE)" TEST_PARTS="test-examples test-docs"

# The manual's variables: docs/reference.md's table and the manual page kiosk.conf(5), made from the
# kiosk's own table (`kiosk-dev variables`: Configuration.table) and the meanings in
# docs/man/variables.txt (harness/docs/variables.py). Run it after adding or changing a variable.
KIOSK_DEV_DEBUG = $$($(SWIFT) build --show-bin-path)/kiosk-dev
docs: deps
	$(SWIFT) build --product kiosk-dev
	$(KIOSK_DEV_DEBUG) variables | harness/docs/variables.py write --table -

# The manual's checks (harness/docs/run.sh, seconds once kiosk-dev is built): the variables agree in
# the code, docs/man/variables.txt, docs/reference.md, kiosk.conf(5) and ../shared/docs/interface.md,
# and the manual pages render without a warning (groff -ww, man -l at 80 columns).
test-docs: deps
	@$(call install_missing,groff-base man-db)
	$(SWIFT) build --product kiosk-dev
	harness/docs/run.sh --kiosk-dev $(KIOSK_DEV_DEBUG)

# The core (Sources/Policy: geometry, brightness, the torch, repeat and gate policies, back-off,
# configuration, log text) alone, as a package of its own (Tests/CoreAlone): its tests link no C
# library of the kiosk's, and the check says so.
test-core:
	cd Tests/CoreAlone && $(SWIFT) build --build-tests && $(SWIFT) test --skip-build --disable-swift-testing
	@bundle=$$(cd Tests/CoreAlone && $(SWIFT) build --show-bin-path)/kiosk-corePackageTests.xctest; \
	if ldd "$$bundle" | grep -E 'zbar|v4l|gpiod|png|systemd|qrencode|zint|ZXing'; then echo "test-core: the core's tests link a C library"; exit 1; fi; \
	echo "test-core: the core's tests link no C library of the kiosk's"

# AddressSanitizer and ThreadSanitizer over the whole suite (the beep timer, the hook runner and
# the frame loop share state). Each needs its own build, so they are kept out of `make test`.
# Leak reports are off: at exit the Swift runtime and Foundation leave blocks LeakSanitizer
# counts (a pending beep's weak reference, XCTest's own); leaks are checked by the tests that
# count descriptors and mappings, and by the soak.
test-sanitizers: deps peers
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build/asan
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --skip-build --disable-swift-testing --sanitize=address --scratch-path .build/asan
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build/tsan
	TSAN_OPTIONS=halt_on_error=0 $(SWIFT) test --skip-build --disable-swift-testing --sanitize=thread --scratch-path .build/tsan

# 100,000 frames with codes, camera faults, the buzzer, the torch and a scan program in one
# process (release build): RSS after warm-up must grow by less than 1 MB, descriptors not at all.
soak: deps
	$(SWIFT) build -c release --build-tests -Xswiftc -enable-testing --scratch-path .build/soak
	KIOSK_SOAK=1 $(SWIFT) test -c release --skip-build --disable-swift-testing -Xswiftc -enable-testing \
	  --scratch-path .build/soak --filter SoakTests 2>&1 | grep -E 'soak:|error|Executed'

# libFuzzer on the parsers of outside input (configuration, PGM/PNG, log escaping, OSDP bus bytes,
# credentials: Base45, zlib, CBOR, COSE, CWT, KT1; the access rules and their iCalendar holidays; event
# tickets: pretix_sig1's framing and protobuf), FUZZ_SECONDS
# each. The seeds are in Fuzz/Corpus; what a run learns stays in FUZZ_WORK (kept from run to run,
# the seeds merged in each time); a crash or a failed check is written to Fuzz/Crashes/ and fails
# the target (keep it, and add it to the tests). CI runs it (.ci/run, FUZZ_SECONDS there).
# FUZZ_TARGETS: one SEEDS:EXECUTABLE a target (Fuzz/Corpus/SEEDS, Fuzz/Sources/EXECUTABLE).
FUZZ_SECONDS ?= 60
FUZZ_WORK ?= .build/fuzz
# FUZZ_JOBS: how many targets run side by side (libFuzzer is one thread: one a core).
FUZZ_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
FUZZ_TARGETS := configuration:FuzzConfiguration image:FuzzImageFile log:FuzzLogEscape osdp:FuzzOSDP credential:FuzzCredential command:FuzzCommand access:FuzzAccess holidays:FuzzHolidays ticket:FuzzTicket bundle:FuzzBundle pass:FuzzPass store:FuzzStore phrases:FuzzPhrases setup:FuzzSetup pins:FuzzPins keypad:FuzzKeypad
FUZZ_FLAGS := -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
	-Xcc -fsanitize=fuzzer-no-link,address -Xswiftc -use-ld=lld
fuzz-build: deps
	cd Fuzz && $(SWIFT) build $(FUZZ_FLAGS)
fuzz: fuzz-build
	Fuzz/run.sh "$$(cd Fuzz && $(SWIFT) build $(FUZZ_FLAGS) --show-bin-path)" $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_WORK) $(FUZZ_TARGETS)

# The unit, install.sh and the .deb (harness/deploy/run.sh); builds the release binary once.
# test-deploy also takes the package through dpkg (harness/deploy/dpkg-upgrade.sh: a door's setup
# edit, then upgrades with no one to answer): its setup code is made by site-setup with Debian's
# python3-cbor2 and python3-cryptography (no PyPI), the site's key by openssl.
DEPLOY_TEST_PACKAGES := python3-cbor2 python3-cryptography openssl
test-deploy: deploy-deps release
	@$(call install_missing,$(DEPLOY_TEST_PACKAGES))
	harness/deploy/run.sh --binary $$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk

# The build needs only the build: make release, make deb, deploy/install.sh and, with
# the arm64 SDK cached, make deb ARCH=arm64, with no network at all (a network namespace of their
# own) and every way to PyPI watched (harness/deploy/no-pypi.sh). Where no namespace can be made
# (a container without the right), the stand-ins alone close PyPI, and it says so.
test-no-pypi: deploy-deps
	@if unshare -n true 2>/dev/null; then unshare -n harness/deploy/no-pypi.sh; \
	else echo "test-no-pypi: no network namespace here (unshare -n): PyPI closed by the stand-ins only"; harness/deploy/no-pypi.sh; fi

# The trixie tier: make release, make test and make demo inside a Debian 13 root with trixie's own
# packages (libgpiod v2, swiftlang 6.0.3); the root is cached in .cache/trixie (harness/trixie/run.sh).
test-trixie:
	harness/trixie/run.sh

# The arm64 tier: the .deb of `make deb ARCH=arm64`, its binary run under qemu-user (Cortex-A72)
# on the sysroot's libraries: --version, check, the photo corpus decoded exactly as the amd64 build
# decodes it, the demo, and the XCTest suite cross-built for arm64 (harness/arm64/run.sh).
test-arm64: deploy-deps peers
	harness/arm64/run.sh

# The driver tier: the release kiosk on real V4L2 (vivid) and GPIO (gpio-sim) drivers in a QEMU VM
# booted from Debian's kernel (harness/vm/run.sh; about 1-2 minutes, cached in .cache/vm). It
# installs its own Debian packages (the list is VM_PACKAGES in harness/vm/run.sh).
# VM_ARGS=--gpiod2: in the same boot, the GPIO checks again with the trixie tier's kiosk and libgpiod v2.
test-vm: deps peers
	harness/vm/run.sh --require $(VM_ARGS)

# Power cuts: the release kiosk's state on ext4 over dm-log-writes in QEMU (Debian's kernel,
# .cache/vm), the log replayed to every flush, FUA and mark and between, the kiosk started on each
# point (harness/powercut/run.sh), then the read-only card's boots (harness/powercut/readonly.sh).
# Full by default (about 20 minutes); POWERCUT_ARGS= is CI's bounded set (about 3 minutes).
POWERCUT_ARGS ?= --full
test-powercut: deps peers release
	KIOSK_VM_BINARY=$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk harness/vm/run.sh --powercut --require $(POWERCUT_ARGS)

# The arm64 VM tier: the arm64 .deb (`make deb ARCH=arm64`, built if missing) installed with apt and
# run by systemd in qemu-system-aarch64 (-M virt -cpu cortex-a72, TCG) on trixie's arm64 kernel,
# against vivid, gpio-sim, vimc, snd-aloop and a Mosquitto in the guest (harness/vm-arm64/run.sh; cached in
# .cache/vm-arm64; docs/vm-tests.md); the credentials of its speech check are minted by the peers,
# what the door said is heard on the host by pocketsphinx (speech-test-deps).
test-vm-arm64: deploy-deps peers speech-test-deps
	harness/vm-arm64/run.sh

# The clock with no network on the arm64 VM (harness/vm-arm64/clock.sh): the virt machine's PL031
# at the true time, at 2001 with a kept floor, none at all, and chrony syncing from the host; the
# arm64 kiosk of harness/arm64/build.sh (built if missing).
test-vm-arm64-clock: deploy-deps peers
	harness/vm-arm64/clock.sh

# What a frame costs on an arm64 CPU, counted: instructions per frame of the kiosk, of zbar on
# every full frame and of the floor, under qemu-aarch64 with a per-thread instruction-count
# plugin (harness/bench-arm64/run.sh; BENCH_ARGS=--short for CI's form; docs/measurements/arm64-counts.md ("What a frame
# costs on a Pi").
bench-arm64: deploy-deps
	harness/bench-arm64/run.sh $(BENCH_ARGS)

# One credential's verification on arm64, counted the same way: a KC1 credential's, a pass's of
# each form and a new phone's point, instructions a verification and the ratios to a KC1's; and a
# PIN's check (two scrypt hashes at LOGN 10, 11 and 12) with a Pi 4 core's estimated milliseconds
# (harness/bench-arm64/run.sh --credentials; docs/measurements/door-features.md, arm64-counts.md).
bench-credentials-arm64: deploy-deps
	harness/bench-arm64/run.sh --credentials $(BENCH_ARGS)

# The accuracy table (docs/measurements/accuracy.md): the photo corpus through our decoder and plain zbar,
# at 0 and 90 degrees, release build. CORPUS=DIR for another folder of folders.
CORPUS ?= ../shared/corpus/zxing-blackbox
accuracy: release
	$(SWIFT) build $(RELEASE) --product kiosk-dev
	$$($(SWIFT) build $(RELEASE) --show-bin-path)/kiosk-dev accuracy --corpus $(CORPUS)

clean:
	rm -rf .build
