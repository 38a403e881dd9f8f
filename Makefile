# guardrun — see README.md.
GO      ?= go
BIN     := bin/guardrun
PKGS    := ./...
FUZZTIME ?= 5s

.PHONY: all deps build test vet cross fuzz bench demo clean

all: build

# System packages the sandbox and the seccomp filter need. Idempotent:
# nothing is installed when everything is present.
APT_PKGS := bubblewrap libseccomp-dev pkg-config gcc make git python3 strace curl python3-pip
deps:
	@missing=""; for p in $(APT_PKGS); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	else echo "system packages present:$(APT_PKGS)"; fi
	$(GO) mod download

build:
	$(GO) build -o $(BIN) ./cmd/guardrun

vet:
	$(GO) vet $(PKGS)
	$(GO) vet -tags guardrun_testhooks ./internal/cli
	GOOS=darwin $(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

cross:
	CGO_ENABLED=0 $(GO) build -o /dev/null ./...
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./cmd/guardrun
	GOOS=darwin $(GO) vet ./...

# The whole suite: vet, cross-builds, unit and integration tests (the
# sandbox tests run as root and as an unprivileged user when run as root),
# then a few seconds of each fuzz target.
test: vet cross
	$(GO) test -count=1 -timeout 12m $(PKGS)
	$(MAKE) fuzz

fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./shellparse
	$(GO) test -run '^$$' -fuzz '^FuzzSplitPattern$$' -fuzztime $(FUZZTIME) ./shellparse
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) ./rules
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./supervisor

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./shellparse ./rules ./approval ./internal/runner ./supervisor ./netproxy ./integration

# Build, then show guardrun deciding and running commands under the
# embedded default config, in a throwaway directory.
demo: deps build
	@./scripts/demo.sh $(abspath $(BIN))

clean:
	rm -rf bin
