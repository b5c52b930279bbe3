# respike — see README.md. Every target works on a fresh machine with Go;
# tests and benchmarks also need redis-server and redis-tools (Debian),
# which .ci/run installs.

GO       ?= go
BIN      := bin/respike
# Every folder under commands/ except shared code is a module.
FAMILIES := $(filter-out internal,$(notdir $(patsubst %/,%,$(wildcard commands/*/))))
MODULES  := $(FAMILIES:%=commands/%.wasm)
# Go examples: every examples/<name> with a main.go (examples/cstrings is C).
EXAMPLES := $(patsubst %/main.go,%,$(wildcard examples/*/main.go))
WASMENV  := GOOS=wasip1 GOARCH=wasm

.PHONY: run build commands examples examples-c test vet bench bench-go bench-guest new-command clean

## run: build the daemon and every module, start on 127.0.0.1:6379 with the embedded store
run: build commands
	./$(BIN) -config proxy.toml

## build: the daemon
build:
	$(GO) build -o $(BIN) ./cmd/respike

## commands: every commands/<family> module to commands/<family>.wasm
commands: $(MODULES)

commands/%.wasm: FORCE
	$(WASMENV) $(GO) build -buildmode=c-shared -o $@ ./commands/$*

## examples: every examples/<name> to examples/<name>/<name>.wasm
examples:
	@for d in $(EXAMPLES); do \
		n=$$(basename $$d); echo "build $$d/$$n.wasm"; \
		$(WASMENV) $(GO) build -buildmode=c-shared -o $$d/$$n.wasm ./$$d || exit 1; \
	done

## examples-c: examples/cstrings, the module written in C (Debian: apt-get install clang lld)
examples-c:
	clang --target=wasm32 -O2 -mbulk-memory -nostdlib -Wall -Wextra -pedantic -Werror \
		-Wl,--no-entry -o examples/cstrings/cstrings.wasm examples/cstrings/cstrings.c

## vet: formatting and go vet, native and wasm
vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "not gofmt-formatted:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(WASMENV) $(GO) vet ./guest-sdk/... ./commands/... $(if $(EXAMPLES),./examples/...)

## test: every test, with the race detector; the server's own tests also
## without it, as the daemon runs (raw socket I/O, rawio_linux.go)
test: vet
	$(GO) test -race -count=1 -timeout 30m ./...
	$(GO) test -count=1 ./host/server

## bench: Go benchmarks, then redis-benchmark against respike and redis-server side by side
bench: bench-go build commands
	./scripts/bench.sh

bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./guest-sdk/... ./host/...

## bench-guest: GET/SET/INCR from the Go module and from the C module (examples/cstrings) on one daemon, beside redis-server
bench-guest: build commands examples-c
	./scripts/bench-guest.sh

## new-command: scaffold a module with a working command and its test, e.g. make new-command NAME=hello [DIR=examples/hello]
new-command:
	@test -n "$(NAME)" || { echo "usage: make new-command NAME=yourcommand [DIR=folder]"; exit 2; }
	./scripts/new-command.sh "$(NAME)" "$(or $(DIR),examples/$(NAME))"

clean:
	rm -rf bin commands/*.wasm examples/*/*.wasm

FORCE:
