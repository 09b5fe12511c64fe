# kiosk: the two commands a newcomer needs are `make demo` and `make test`; each installs what it
# needs from Debian's archive first (`make deps`, which skips what is already there).

SWIFT ?= swift
export PATH := $(PATH):/opt/swift/usr/bin

# The C libraries the kiosk links (zbar, libv4l2, libgpiod, libpng, libqrencode for the demo's
# codes) and the one only the tests link (zint draws the 1D test barcodes).
PACKAGES := pkg-config libzbar-dev libv4l-dev libgpiod-dev libpng-dev libqrencode-dev libzint-dev

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build release demo test test-vm clean

all: build

deps:
	@missing=""; \
	for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	else \
	  echo "make deps: all Debian packages present"; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

demo: build
	$$($(SWIFT) build --show-bin-path)/kiosk demo

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-swift-testing

# The driver tier: the release kiosk on real V4L2 (vivid) and GPIO (gpio-sim) drivers in a QEMU VM
# booted from Debian's kernel (tests/vm/run.sh; about 1-2 minutes, cached in .cache/vm). It
# installs its own Debian packages (the list is VM_PACKAGES in tests/vm/run.sh).
test-vm: deps
	tests/vm/run.sh --require

clean:
	rm -rf .build
