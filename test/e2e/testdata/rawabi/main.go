// Command rawabi implements the module ABI (docs/abi.md) by hand, without
// the guest SDK, to answer what the SDK never would: answers and store
// requests pointing outside its memory, or malformed. The hostile-module
// suite (test/e2e/hostile_test.go) loads it.
package main

import (
	"unsafe"

	"github.com/respike/respike/guest-sdk/codec"
)

func main() {}

var (
	manifest = codec.AppendManifest(nil, &codec.Manifest{Module: "rawabi", Version: "1", Commands: []codec.CommandInfo{
		{Name: "rawok", Arity: 1, Summary: "Replies OK."},
		{Name: "rawbadanswer", Arity: 1, Summary: "Answers a range outside its memory."},
		{Name: "rawbadrequest", Arity: 1, Summary: "Returns a store request outside its memory."},
		{Name: "rawbadstatus", Arity: 1, Summary: "Answers an unknown status."},
		{Name: "rawshortpending", Arity: 1, Summary: "Answers a truncated pending answer."},
	}})
	buf    = make([]uint64, 1024) // the message buffer, 8-aligned
	answer []byte
)

func addr(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

func pack(b []byte) uint64 { return addr(b)<<32 | uint64(len(b)) }

func bufBytes() []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8) }

//go:wasmexport respike_abi
func abi() uint32 { return codec.ABIVersion }

//go:wasmexport respike_manifest
func wasmManifest() uint64 { return pack(manifest) }

//go:wasmexport respike_buf
func wasmBuf(n uint32) uint32 {
	if int(n) > len(buf)*8 {
		buf = make([]uint64, (n+7)/8)
	}
	return uint32(addr(bufBytes()))
}

//go:wasmexport respike_start
func wasmStart(n uint32) uint64 {
	st := codec.StartAt(bufBytes()[:n])
	if st == nil {
		return 0
	}
	switch st.Cmd {
	case 2: // rawbadanswer
		return 0xffff_0000<<32 | 4096
	case 3: // rawbadrequest: pending, handle 1, request at 4 GiB - 16
		answer = []byte{codec.StatusPending, 1, 0, 0, 0, 0xf0, 0xff, 0xff, 0xff}
	case 4: // rawbadstatus
		answer = []byte{0x7f, 'x'}
	case 5: // rawshortpending
		answer = []byte{codec.StatusPending, 1, 0}
	default:
		answer = append([]byte{codec.StatusDone}, "+OK\r\n"...)
	}
	return pack(answer)
}

//go:wasmexport respike_resume
func wasmResume(handle, n uint32) uint64 {
	answer = append([]byte{codec.StatusDone}, "+OK\r\n"...)
	return pack(answer)
}

//go:wasmexport respike_cancel
func wasmCancel(handle uint32) {}
