# kiosk: the two commands a newcomer needs are `make demo` and `make test`; each installs what it
# needs from Debian's archive first (`make deps`, which skips what is already there).

SWIFT ?= swift
export PATH := $(PATH):/opt/swift/usr/bin

# The C libraries the kiosk links (zbar, libv4l2, libgpiod, libpng, libqrencode for the demo's
# codes) and the one only the tests link (zint draws the 1D test barcodes).
PACKAGES := pkg-config libzbar-dev libv4l-dev libgpiod-dev libpng-dev libqrencode-dev libzint-dev

# What `make deb` and `make test-deploy` need besides the build: systemd-analyze (systemd),
# dpkg-deb and dpkg-shlibdeps (dpkg-dev), strip and readelf (binutils), file, lintian.
DEPLOY_PACKAGES := systemd dpkg-dev binutils file lintian

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps deploy-deps build release deb demo test test-deploy clean

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

# Like deps, for DEPLOY_PACKAGES.
deploy-deps:
	@missing=""; \
	for p in $(DEPLOY_PACKAGES); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deploy-deps: installing$$missing"; \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	else \
	  echo "make deploy-deps: all Debian packages present"; \
	fi

build: deps
	$(SWIFT) build

# The Swift runtime is linked in (--static-swift-stdlib): the binary runs without /opt/swift.
release: deps
	$(SWIFT) build -c release --static-swift-stdlib

# build/kiosk_<version>_<arch>.deb
deb: deploy-deps release
	deploy/build-deb.sh --binary $$($(SWIFT) build -c release --static-swift-stdlib --show-bin-path)/kiosk

demo: build
	$$($(SWIFT) build --show-bin-path)/kiosk demo

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-swift-testing

# The unit, install.sh and the .deb (tests/deploy/run.sh); builds the release binary once.
test-deploy: deploy-deps release
	tests/deploy/run.sh --binary $$($(SWIFT) build -c release --static-swift-stdlib --show-bin-path)/kiosk

clean:
	rm -rf .build
