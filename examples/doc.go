// Package examples holds command modules written the way an outside author
// writes them, one folder each, and the tests that keep the "Write a
// command" tutorial (README.md) and the scaffold (scripts/new-command.sh)
// true: every Go block of the tutorial must be an excerpt of a file here,
// and the scaffold's output must be gofmt-clean, vet-clean, pass its test
// and build to wasm.
package examples
