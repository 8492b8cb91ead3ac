# Attractor Lab. `make run` opens the app; `make test` runs every test.
# Both install Fyne's Debian build dependencies first if they are missing.

GO        ?= go
# The AVX-512 kernels use Go 1.26's experimental SIMD package and
# assembly. A plain amd64 build (no experiment) runs the assembly ones
# alone (`make test-asm`); the purego tag, like the web build, the
# portable Go ones (`make test-portable`).
SIMD      := GOEXPERIMENT=simd
BIN       := bin/attractorlab
APT_PKGS  := libgl1-mesa-dev libgl1-mesa-dri libx11-dev libxcursor-dev libxrandr-dev \
             libxinerama-dev libxi-dev libxxf86vm-dev
TEST_PKGS := xvfb xdotool imagemagick x11-utils xz-utils chromium nodejs
# make web: Google's Brotli (Debian's brotli), which packs the page's app.
WEB_PKGS  := brotli
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
export LANG := en_US.UTF-8

.PHONY: web serve-web run build deps test-deps test test-portable test-asm test-simd test-race test-wasm test-web test-app test-slurm readme-image e2e data bench bench-commands fuzz fmt lint generate clean package install uninstall

run: build
	./$(BIN)

build: deps
	$(SIMD) $(GO) build -o $(BIN) ./app

deps:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Fyne build dependencies:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

test-deps: deps
	@missing=""; for p in $(TEST_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing test dependencies:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# Every test: vet, the portable build, the SIMD build, the race detector on
# shared memory, and the end-to-end check of the real binary under Xvfb.
# Packages without Fyne's GLFW driver: they test headless. app/ links the
# GLFW driver: its command tests run once, with the SIMD build `make build`
# compiles anyway (a -race build would compile GLFW again, ~4 min). Each
# part says how long it took: CI has 30 minutes for all of them.
LIB_PKGS := ./models/... ./sim/... ./ui/... ./assets/...

test: test-deps
	$(GO) vet $(LIB_PKGS)
	$(GO) vet -tags purego ./models/... ./sim/...
	$(SIMD) $(GO) vet ./...
	@for t in lint test-portable test-asm test-simd test-race test-wasm test-web test-app e2e test-slurm; do \
	  s=$$(date +%s); $(MAKE) --no-print-directory $$t || exit 1; \
	  echo "make $$t: $$(( $$(date +%s) - s )) s"; \
	done

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(SIMD) $(GO) run $(STATICCHECK) ./...
	$(GO) run $(STATICCHECK) $(LIB_PKGS)
	$(GO) run $(STATICCHECK) -tags purego ./models/...

# One `go test`: a hung test fails after 20 minutes rather than Go's 10 (a
# slow or shared machine), every run counted afresh.
GOTEST := $(GO) test -count=1 -timeout 20m

# The portable kernels (those the web build runs), every test of the
# numerics and the simulation.
test-portable:
	$(GOTEST) -tags purego ./models/... ./sim/...

# A plain build's kernels (`go build ./app` without the experiment): the
# assembly ones against their twins.
test-asm:
	$(GOTEST) -short ./models/...

# The AVX-512 kernels against their naive twins (the short tests) and the
# window's every test, its long checks too (every shipped slide, the
# population windows' runs), on the build `make run` uses.
test-simd:
	$(SIMD) $(GOTEST) -short ./models/... ./sim/...
	$(SIMD) $(GOTEST) ./ui/...

# The race detector where memory is shared: the engine goroutine, the
# crews that split a batch, the loaders, and the window's own goroutines
# (the population windows' jobs, the lesson handout's renderer, file
# opening). The window's other tests drive a synchronous engine on the test
# driver's one goroutine: test-simd runs them. Long single-goroutine
# numerics skip under race (raceOn in models and sim).
UI_RACE := TestTrainingWindow|TestEnsembleWindow|TestBasinWindow|TestLessonShotNumbers|TestWindowFileInputs|TestWindowRefusesWhatCheckRefuses

test-race:
	$(SIMD) $(GOTEST) -race -short ./models/... ./sim/... ./assets/...
	$(SIMD) $(GOTEST) -race -short -run '^($(UI_RACE))$$' ./ui/...

# The models' and the simulation's tests as the web build runs them:
# compiled to WebAssembly, run by Node with Go's wasm_exec (GOROOT/lib/wasm);
# and the page's coarse clock for Fyne's caches (ui/fyneclock).
test-wasm:
	PATH="$$PATH:$$($(GO) env GOROOT)/lib/wasm" GOOS=js GOARCH=wasm $(GOTEST) -short ./models/... ./sim/... ./ui/fyneclock/

# The web build in the system's Chromium (headless, software WebGL): the
# page loads and draws, keys, links, lessons, compare, a bad link, the
# download; it logs the transfer size and the timings (docs: README, Web).
# Built with the portable kernels (purego): the runs it does here to compare
# the page's numbers with are timed too, against the bound the page has
# (the desktop's portable build).
test-web: web
	ATTRACTORLAB_WEB=$(CURDIR)/$(WEB) $(GOTEST) -tags purego -v -run '^(TestWebPage.*|TestDocumentedSizes)$$' ./app/internal/webtest/

test-app:
	$(SIMD) $(GOTEST) $$($(GO) list ./app/... | grep -v /internal/webtest)

# The README's picture: the transient-memory lesson's last slide (the dip
# and the fall), rendered headless by `lesson export`.
readme-image: build
	rm -rf /tmp/attractorlab-readme-image
	./$(BIN) lesson export transient-memory --out /tmp/attractorlab-readme-image --size 1280x800 --theme light
	cp /tmp/attractorlab-readme-image/slide-03.png docs/images/dip.png

# The Slurm array of docs/sweeps.md on a real single-node Slurm (Debian's
# slurmctld, slurmd and munge, installed when missing, started on a private
# configuration and stopped; needs root or sudo).
test-slurm: build
	./.ci/slurm-check.sh $(BIN)

e2e: build
	./.ci/e2e.sh $(BIN)
	$(MAKE) package
	./.ci/package-check.sh $(DIST)
	@git diff --quiet -- FyneApp.toml 2>/dev/null || { echo "make package changed FyneApp.toml"; exit 1; }

# Fyne's packaging: a tar.xz with the binary, the icon and a .desktop entry
# (read from FyneApp.toml), and `make install` puts them in ~/.local for
# the current user (the desktop menu finds it there).
FYNE    := fyne.io/tools/cmd/fyne@v1.7.0
VERSION := $(shell sed -n 's/^Version *= *"\(.*\)"/\1/p' FyneApp.toml)
DIST    := dist/attractorlab-$(VERSION)-linux-amd64.tar.xz

package: deps
	@mkdir -p dist/bin && rm -rf dist/stage "Attractor Lab.tar.xz"
	$(SIMD) $(GO) build -trimpath -ldflags "-s -w" -o dist/bin/attractorlab ./app
	@# fyne package counts the build number up in FyneApp.toml: keep ours
	cp FyneApp.toml dist/FyneApp.toml.keep
	$(GO) run $(FYNE) package --os linux --exe dist/bin/attractorlab --icon assets/icon.png; \
	  rc=$$?; mv dist/FyneApp.toml.keep FyneApp.toml; exit $$rc
	mv "Attractor Lab.tar.xz" $(DIST)
	@echo "package: $(DIST)"

install: package
	rm -rf dist/stage && mkdir -p dist/stage && tar -xJf $(DIST) -C dist/stage
	$(MAKE) -C dist/stage user-install
	@echo "installed: ~/.local/bin/attractorlab, in the desktop menu as Attractor Lab"

uninstall:
	@[ -f dist/stage/Makefile ] || { echo "nothing installed from this tree (make install first)"; exit 1; }
	$(MAKE) -C dist/stage user-uninstall

# The web build: a static site in dist/web (index.html, the app's
# WebAssembly and its gzipped copy, wasm_exec.js, the icon, the weights in
# half precision, files.json) that any web server can host. The portable
# kernels run there; no_emoji leaves out Fyne's emoji font (4 MB), which
# the window never draws. Not migrated_fynedo: it saved Fyne's goroutine
# check (an eighth of the page's time stepping) but also swaps Fyne's
# synchronised caches for plain maps, and with it the page died within
# three presentation toggles after a long run (docs/browser.md).
WEB     := dist/web
WEBWASM := dist/attractorlab.wasm
# gonum/plot's Liberation fonts (2.4 MB of the gzipped download) are never
# drawn in the page: the build replaces their module, in a copy of go.mod,
# with one that hands out the Go fonts it links anyway
# (app/internal/webdist/liberation/README.md).
WEBMOD  := dist/web.mod
WEBPORT ?= 8080

web:
	@missing=""; for p in $(WEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing the web build's tools:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@mkdir -p dist
	cp go.mod $(WEBMOD) && cp go.sum $(WEBMOD:.mod=.sum)
	$(GO) mod edit -modfile=$(WEBMOD) -replace codeberg.org/go-fonts/liberation=./app/internal/webdist/liberation
	GOOS=js GOARCH=wasm $(GO) build -modfile=$(WEBMOD) -trimpath -ldflags "-s -w" -tags webweights,no_emoji,no_metadata -o $(WEBWASM) ./app
	$(GO) run ./app/internal/webdist -wasm $(WEBWASM) -exec "$$($(GO) env GOROOT)/lib/wasm/wasm_exec.js" -out $(WEB)

# Serves dist/web on http://localhost:$(WEBPORT)/ (Ctrl-C stops it), as
# docs/browser.md asks of a server: the gzipped app sent with
# Content-Encoding, this build's app cached for good.
serve-web: web
	$(GO) run ./app/internal/webdist -serve $(WEB) -addr 127.0.0.1:$(WEBPORT)

data: build
	./$(BIN) data

# The kernels (go test -bench, 6 runs: compare with benchstat), then the
# whole commands (bench-commands).
bench: bench-commands
	$(SIMD) $(GO) test -run '^$$' -bench . -benchmem -count 6 ./models/... ./sim/...

# Whole-process times of reproduce, sweep, train and the window (start-up,
# View → State space), each beside its floor (docs/performance.md);
# TORCH=1 adds the PyTorch reference (Debian's python3-torch).
bench-commands: build test-deps
	./.ci/bench-commands.sh $(BIN)

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzReadIDX -fuzztime 2m ./sim/mnist
	$(GO) test -run '^$$' -fuzz FuzzReadScenario -fuzztime 2m ./sim
	$(GO) test -run '^$$' -fuzz FuzzReadPlane -fuzztime 2m ./sim
	$(GO) test -run '^$$' -fuzz FuzzParseLink -fuzztime 2m ./sim
	$(GO) test -run '^$$' -fuzz FuzzReadCurveCSV -fuzztime 2m ./sim
	$(GO) test -run '^$$' -fuzz FuzzParseSafetensors -fuzztime 2m ./models
	$(GO) test -run '^$$' -fuzz FuzzParseBSA -fuzztime 2m ./models
	$(GO) test -run '^$$' -fuzz FuzzParseTransformer -fuzztime 2m ./models
	$(GO) test -run '^$$' -fuzz FuzzParseLesson -fuzztime 2m ./sim/lesson
	$(GO) test -run '^$$' -fuzz FuzzReadSweepCSV -fuzztime 2m ./sim/sweep
	$(GO) test -run '^$$' -fuzz FuzzReadManifest -fuzztime 2m ./sim/sweep
	$(GO) test -run '^$$' -fuzz FuzzMerge -fuzztime 2m ./sim/sweep

generate:
	$(GO) generate ./sim/mnist

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin dist
