// Command wasmtest runs a guest package's test binary, built with
// GOOS=wasip1 GOARCH=wasm go test -c, under wazero's optimizing compiler,
// the one the daemon uses: the module's imports from "respike" (exec,
// take, reply, log) are stubs that fail the test if called, so only tests
// and benchmarks that stay in the guest's own code run. It measures what
// a guest's code costs as WebAssembly, which a native `go test -bench`
// does not (Go-compiled wasm runs the same arithmetic several times
// slower, unevenly). scripts/bench-wasm.sh builds and runs it.
//
//	wasmtest BINARY.wasm [test flags...]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: wasmtest BINARY.wasm [test flags...]")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1], os.Args[2:]))
}

func run(path string, args []string) int {
	ctx := context.Background()
	cfg := wazero.NewRuntimeConfig()
	if dir := os.Getenv("WASMTEST_CACHE"); dir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "wasmtest: cache %s: %v\n", dir, err)
			return 1
		}
		cfg = cfg.WithCompilationCache(cache)
	}
	r := wazero.NewRuntimeWithConfig(ctx, cfg)
	defer r.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	stub := func(name string) api.GoModuleFunc {
		return func(context.Context, api.Module, []uint64) {
			panic("wasmtest: the guest called respike " + name + ", which only the daemon provides")
		}
	}
	i32 := api.ValueTypeI32
	if _, err := r.NewHostModuleBuilder("respike").
		NewFunctionBuilder().WithGoModuleFunction(stub("exec"), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).Export("exec").
		NewFunctionBuilder().WithGoModuleFunction(stub("take"), []api.ValueType{i32, i32}, []api.ValueType{i32}).Export("take").
		NewFunctionBuilder().WithGoModuleFunction(stub("reply"), []api.ValueType{i32, i32}, nil).Export("reply").
		NewFunctionBuilder().WithGoModuleFunction(stub("log"), []api.ValueType{i32, i32, i32}, nil).Export("log").
		Instantiate(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "wasmtest: respike stubs: %v\n", err)
		return 1
	}
	bin, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "wasmtest: %v\n", err)
		return 1
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(os.Stderr, "wasmtest: %v\n", err)
		return 1
	}
	mc := wazero.NewModuleConfig().WithArgs(append([]string{path}, args...)...).
		WithStdout(os.Stdout).WithStderr(os.Stderr).
		WithFSConfig(wazero.NewFSConfig().WithDirMount("/", "/")).WithEnv("PWD", wd).
		WithSysWalltime().WithSysNanotime().WithSysNanosleep()
	if _, err := r.InstantiateWithConfig(ctx, bin, mc); err != nil {
		if exit, ok := err.(*sys.ExitError); ok {
			return int(exit.ExitCode())
		}
		fmt.Fprintf(os.Stderr, "wasmtest: %v\n", err)
		return 1
	}
	return 0
}
