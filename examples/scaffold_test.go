package examples

import (
	"bytes"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewCommand runs scripts/new-command.sh into a folder inside this
// module (so the SDK import resolves), then checks what a command author
// will do first: gofmt, go vet (native and wasm), go test, and the wasm
// build.
func TestNewCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module: skipped with -short")
	}
	bash := lookPath(t, "bash")
	goTool := lookPath(t, "go")

	// A leading dot keeps ./... patterns and `make examples` (which builds
	// every examples/*/) away from the folder while the test runs.
	tmp, err := os.MkdirTemp(".", ".scaffold")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	// A name with every allowed kind of character, whose last "_word"
	// would make a file named after it Linux-only.
	const name = "rate-limit.v2_linux"
	dir := "./" + filepath.ToSlash(filepath.Join(tmp, "cmd"))

	out := run(t, "", nil, bash, "../scripts/new-command.sh", name, dir)
	if !strings.Contains(out, "created "+dir) {
		t.Errorf("script output does not say what it created:\n%s", out)
	}
	for _, f := range []string{"main.go", name + "_cmd.go", name + "_cmd_test.go"} {
		src, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if formatted, err := format.Source(src); err != nil || !bytes.Equal(formatted, src) {
			t.Errorf("%s is not gofmt-clean (%v)", f, err)
		}
	}
	run(t, "", nil, goTool, "vet", dir)
	run(t, "", []string{"GOOS=wasip1", "GOARCH=wasm"}, goTool, "vet", dir)
	if out := run(t, "", nil, goTool, "test", "-count=1", "-v", dir); !strings.Contains(out, "--- PASS: TestRateLimitV2Linux/inline=true") {
		t.Errorf("the generated test did not run as expected:\n%s", out)
	}
	wasm := filepath.Join(tmp, name+".wasm")
	run(t, "", []string{"GOOS=wasip1", "GOARCH=wasm"}, goTool, "build", "-buildmode=c-shared", "-o", wasm, dir)
	if b, err := os.ReadFile(wasm); err != nil || !bytes.HasPrefix(b, []byte("\x00asm")) {
		t.Errorf("%s is not a wasm module (%v)", wasm, err)
	}

	// It refuses to overwrite a folder.
	before, _ := os.ReadFile(filepath.Join(dir, "main.go"))
	if out, err := exec.Command(bash, "../scripts/new-command.sh", "other", dir).CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "already exists") {
		t.Errorf("second run into %s: err %v, output:\n%s", dir, err, out)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "main.go")); !bytes.Equal(before, after) {
		t.Error("the second run changed main.go")
	}
}

// TestNewCommandRefusesBadNames checks NAME validation: nothing is created.
func TestNewCommandRefusesBadNames(t *testing.T) {
	bash := lookPath(t, "bash")
	tmp := t.TempDir()
	for _, name := range []string{"", "Upper", "1st", "_x", "-x", ".x", "a b", "a/b", "a;b", "a\nb", "x$y", strings.Repeat("a", 65)} {
		dir := filepath.Join(tmp, "d")
		out, err := exec.Command(bash, "../scripts/new-command.sh", name, dir).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "NAME") {
			t.Errorf("name %q: err %v, output %s", name, err, out)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("name %q: %s was created", name, dir)
			os.RemoveAll(dir)
		}
	}
	if out, err := exec.Command(bash, "../scripts/new-command.sh", "onlyname").CombinedOutput(); err == nil || !strings.Contains(string(out), "usage") {
		t.Errorf("missing DIR: err %v, output %s", err, out)
	}
}

// TestNewCommandStandalone scaffolds outside any Go module: the script
// writes a go.mod that uses this checkout of respike.
func TestNewCommandStandalone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module: skipped with -short")
	}
	bash := lookPath(t, "bash")
	goTool := lookPath(t, "go")
	dir := filepath.Join(t.TempDir(), "mycmd")
	run(t, "", nil, bash, "../scripts/new-command.sh", "mycmd", dir)
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatal(err)
	}
	run(t, dir, nil, goTool, "vet", ".")
	run(t, dir, nil, goTool, "test", "-count=1", ".")
}

func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed: %v", name, err)
	}
	return p
}

// run runs a command in dir ("" = here) with extra environment and fails
// the test if it fails; it returns the combined output.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}
