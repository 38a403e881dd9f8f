# guardrun — see README.md.
GO      ?= go
BIN     := bin/guardrun
PKGS    := ./...
FUZZTIME ?= 2m

# Every fuzz target, as package:Target. `make fuzz` runs each for
# FUZZTIME; add new targets here.
FUZZ_TARGETS := \
	./shellparse:FuzzParse \
	./shellparse:FuzzSplitPattern \
	./rules:FuzzLoad \
	./supervisor:FuzzDecode \
	./internal/serve:FuzzDecodeRequest \
	./internal/sys/ipc:FuzzMessage \
	./internal/testing/bashoracle:FuzzBashOracle

.PHONY: all deps build test unit vet cross fuzz fuzz-list bench demo screenshots conformance clean e2e-agents

all: build

# System packages the sandbox and the seccomp filter need (libseccomp-dev
# and libc6-dev also hold the static libraries of the static build), and
# those the tests drive (zsh as a shell program, locales for a charset
# in which bash reads bytes differently, chromium for guardrun web's page). Idempotent: nothing is installed
# when everything is present.
APT_PKGS := bubblewrap libseccomp-dev libc6-dev pkg-config gcc make git python3 strace tmux util-linux curl python3-pip zsh locales chromium
deps:
	@missing=""; for p in $(APT_PKGS); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	else echo "system packages present:$(APT_PKGS)"; fi
	$(GO) mod download

# On Linux the binary is linked statically (libseccomp.a from
# libseccomp-dev, no dynamic loader at each start: about 1.5 ms of every
# command); STATIC=0 links dynamically. osusergo,netgo keep glibc's NSS,
# which cannot be linked statically, out.
STATIC ?= 1
ifeq ($(shell uname -s)$(STATIC),Linux1)
BUILDFLAGS := -tags osusergo,netgo -ldflags '-linkmode external -extldflags -static'
endif
build:
	$(GO) build $(BUILDFLAGS) -o $(BIN) ./cmd/guardrun

# staticcheck and deadcode at pinned versions, built by go run from the
# module proxy (and the build cache after the first run): neither is a
# dependency of the module.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE    ?= $(GO) run golang.org/x/tools/cmd/deadcode@v0.52.0

# staticcheck runs for this platform only: on another GOOS it takes what
# only this platform's files use for unused. deadcode fails on a function
# the binary never reaches unless scripts/deadcode.allow names it, and on
# an entry there that is reachable again.
vet:
	$(GO) vet $(PKGS)
	$(GO) vet -tags guardrun_testhooks ./internal/cli ./internal/request
	GOOS=darwin $(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(STATICCHECK) $(PKGS)
	./scripts/deadcode.sh $(DEADCODE)

cross:
	CGO_ENABLED=0 $(GO) build -o /dev/null ./...
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./cmd/guardrun
	GOOS=darwin $(GO) vet ./...

# The gating suite: vet, cross-builds, unit and integration tests (the
# sandbox tests run as root and as an unprivileged user when run as root).
# `go test` replays the checked-in fuzz corpora (testdata/fuzz); it does
# no mutation fuzzing, so the result does not depend on chance.
test: vet cross fuzz-list
	$(GO) test -count=1 -timeout 12m $(PKGS)

# The pure packages (parsing, policy, the command table, profiles and
# their renderers, the BPF of the seccomp filter, the import fence): no
# sandbox, no root, done in seconds. A quick check while working; `make
# test` runs these with everything else, and the test that runs real
# commands under strace to check the prediction (rules).
UNIT_PKGS := ./shellparse ./cmdsem ./rules ./sandbox ./approval ./seatbelt ./internal/trust ./internal/layers
unit:
	$(GO) test -count=1 -skip '^TestPredictionHoldsRealRuns$$' $(UNIT_PKGS)
	$(GO) test -count=1 -skip '^TestKernel' ./seccomp
	$(GO) test -count=1 -run '^(TestArgs|TestPlaceholders|TestEnv)' ./bwrap

# The real agent CLIs (Claude Code, Codex, Gemini CLI, at the versions
# scripts/agents-install.sh pins, some 850 MB installed once into
# ~/.cache/guardrun/agents) driven by a fake model through guardrun
# hook, integrate and supervise. Without the npm registry the tests say
# so and skip; GUARDRUN_REQUIRE_AGENTS=1 (CI) makes that a failure.
e2e-agents:
	@./scripts/agents-install.sh >/dev/null || { st=$$?; \
	  if [ $$st -eq 3 ] && [ "$${GUARDRUN_REQUIRE_AGENTS:-}" != 1 ]; then \
	    echo "e2e-agents: the npm registry cannot be reached; the agent tests are skipped"; exit 0; fi; exit $$st; }
	GUARDRUN_E2E_AGENTS=1 $(GO) test -count=1 -timeout 8m -run '^TestAgents' ./internal/testing/fakemodel ./integration

# guardrun mcp against MCP clients others wrote: the conformance suite's
# server scenarios and the inspector's CLI, at the versions
# scripts/mcp-tools-install.sh pins (with Node.js 22 from npm, installed
# once into ~/.cache/guardrun/mcp-tools; docs/mcp.md has the results).
# Without the npm registry the tests say so and skip;
# GUARDRUN_REQUIRE_AGENTS=1 (CI) makes that a failure.
conformance:
	@./scripts/mcp-tools-install.sh >/dev/null || { st=$$?; \
	  if [ $$st -eq 3 ] && [ "$${GUARDRUN_REQUIRE_AGENTS:-}" != 1 ]; then \
	    echo "conformance: the npm registry cannot be reached; the MCP client tests are skipped"; exit 0; fi; exit $$st; }
	GUARDRUN_E2E_MCP=1 $(GO) test -count=1 -timeout 8m -run '^TestMCP(Conformance|Inspector)$$' ./integration

# Mutation fuzzing: every target in FUZZ_TARGETS for FUZZTIME each. A
# failing input is written to the package's testdata/fuzz/<Target>/;
# fix the bug and commit the input with the fix.
fuzz:
	@failed=""; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "fuzz $$pkg $$name for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg || failed="$$failed $$t"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzzing failed:$$failed"; exit 1; fi

# Fails when a Fuzz function exists that FUZZ_TARGETS does not list.
fuzz-list:
	@found=$$(grep -rho --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . | sed 's/^func //' | sort -u); \
	listed=$$(for t in $(FUZZ_TARGETS); do echo $${t##*:}; done | sort -u); \
	if [ "$$found" != "$$listed" ]; then \
	  echo "FUZZ_TARGETS in the Makefile does not list every fuzz target:"; \
	  echo "found:  " $$found; echo "listed: " $$listed; exit 1; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./shellparse ./rules ./approval ./runner ./landlock ./supervisor ./internal/sys/ipc ./netproxy ./internal/checkpoint ./integration

# Build, then show guardrun deciding and running commands under the
# embedded default config, in a throwaway directory.
demo: deps build
	@./scripts/demo.sh $(abspath $(BIN))

# The pictures of guardrun web's page in docs/ (linked from the README),
# taken by the browser test at desktop and phone width.
screenshots:
	GUARDRUN_SCREENSHOTS=$(abspath docs) $(GO) test -count=1 -run '^TestWebScreenshots$$' ./integration

clean:
	rm -rf bin
