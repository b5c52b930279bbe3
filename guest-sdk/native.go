//go:build !wasip1

package sdk

// execInline runs a request through the native test host's hook, if it
// set one (sdktest); wasm.go's calls the real host.
func (e *engine) execInline(req []byte) ([]byte, bool) {
	if e.inline == nil {
		return nil, false
	}
	return e.inline(req)
}
