package examples

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	snippetMarker = regexp.MustCompile(`^<!-- snippet: ([A-Za-z0-9_./-]+\.go) -->$`)
	localLink     = regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)
	makeTarget    = regexp.MustCompile(`^make ([a-z-]+)`)
)

// TestTutorialSnippets checks that every Go block of README.md is preceded
// by a <!-- snippet: FILE --> line and appears, as whole consecutive lines,
// in FILE (relative to this folder). The files are compiled and tested with
// the rest of examples/, so the tutorial cannot show code that does not
// build or that differs from what is tested.
func TestTutorialSnippets(t *testing.T) {
	lines := readLines(t, "README.md")
	blocks := 0
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```go") {
			continue
		}
		start := i + 1
		end := start
		for end < len(lines) && lines[end] != "```" {
			end++
		}
		if end == len(lines) {
			t.Fatalf("README.md:%d: unterminated code block", i+1)
		}
		block := lines[start:end]
		i = end
		blocks++

		m := []string(nil)
		if start >= 2 {
			m = snippetMarker.FindStringSubmatch(lines[start-2])
		}
		if m == nil {
			t.Errorf("README.md:%d: a Go block must follow a line <!-- snippet: FILE --> naming the file it is taken from", start)
			continue
		}
		src, err := os.ReadFile(filepath.FromSlash(m[1]))
		if err != nil {
			t.Errorf("README.md:%d: %v", start, err)
			continue
		}
		if len(block) == 0 {
			t.Errorf("README.md:%d: empty Go block", start)
			continue
		}
		text := "\n" + string(src)
		if !strings.Contains(text, "\n"+strings.Join(block, "\n")+"\n") {
			t.Errorf("README.md:%d: the Go block is not a verbatim excerpt of %s (first line %q); update one or the other",
				start, m[1], block[0])
		}
	}
	if blocks == 0 {
		t.Fatal("README.md has no Go blocks: the test is looking at the wrong file")
	}
}

// TestTutorialLinks checks that the tutorial's relative links and the make
// targets its shell blocks use exist.
func TestTutorialLinks(t *testing.T) {
	lines := readLines(t, "README.md")
	makefile := "\n" + strings.Join(readLines(t, "../Makefile"), "\n")
	inShell := false
	for n, line := range lines {
		if strings.HasPrefix(line, "```") {
			inShell = line == "```sh"
			continue
		}
		if inShell {
			if m := makeTarget.FindStringSubmatch(line); m != nil && !strings.Contains(makefile, "\n"+m[1]+":") {
				t.Errorf("README.md:%d: make target %q is not in the Makefile", n+1, m[1])
			}
			continue
		}
		for _, m := range localLink.FindAllStringSubmatch(line, -1) {
			if strings.Contains(m[1], "://") {
				continue
			}
			if _, err := os.Stat(filepath.FromSlash(m[1])); err != nil {
				t.Errorf("README.md:%d: broken link: %v", n+1, err)
			}
		}
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
