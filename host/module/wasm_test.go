package module

import (
	"encoding/binary"

	"github.com/respike/respike/guest-sdk/codec"
)

// fake describes a handmade module: the ABI's exports over constant data,
// compiled in microseconds where a Go module takes a second (much more
// under -race).
type fake struct {
	abi      int    // what respike_abi returns
	omit     string // an export to leave out
	manifest []byte // what respike_manifest points at
	reply    []byte // what respike_start and respike_resume point at
	initTrap bool   // export an _initialize that traps
	initLoop bool   // export an _initialize that never returns
	// batch > 0 exports a respike_batch that calls respike.reply batch
	// times with the reply, then answers 0 (all done).
	batch int
	// replyInStart makes respike_start call respike.reply, outside a batch.
	replyInStart bool
}

// manifest encodes a manifest of commands with the given names and arity 1.
func manifest(version string, names ...string) []byte {
	m := codec.Manifest{Module: "fake", Version: version}
	for _, n := range names {
		m.Commands = append(m.Commands, codec.CommandInfo{Name: n, Arity: 1})
	}
	return codec.AppendManifest(nil, &m)
}

// doneReply is a guest answer: StatusDone and a RESP reply.
func doneReply(resp string) []byte { return append([]byte{codec.StatusDone}, resp...) }

const (
	manifestAt = 1024
	replyAt    = 1 << 15
)

// wasm returns the module's binary.
func (f fake) wasm() []byte {
	i32, i64 := byte(0x7f), byte(0x7e)
	packed := func(at, n int) []byte {
		return appendSLEB([]byte{0x42}, int64(at)<<32|int64(n)) // i64.const
	}
	funcs := []struct {
		name           string
		params, result []byte
		body           []byte
	}{
		{"respike_abi", nil, []byte{i32}, appendSLEB([]byte{0x41}, int64(f.abi))},
		{"respike_manifest", nil, []byte{i64}, packed(manifestAt, len(f.manifest))},
		{"respike_buf", []byte{i32}, []byte{i32}, appendSLEB([]byte{0x41}, 1<<14)},
		{"respike_start", []byte{i32}, []byte{i64}, packed(replyAt, len(f.reply))},
		{"respike_resume", []byte{i32, i32}, []byte{i64}, packed(replyAt, len(f.reply))},
		{"respike_cancel", []byte{i32}, nil, nil},
	}
	// Calls of the imported respike.reply (function 0) with the reply's
	// RESP bytes.
	replyCalls := func(n int) []byte {
		var b []byte
		for range n {
			b = appendSLEB(append(b, 0x41), int64(replyAt+1))      // i32.const ptr
			b = appendSLEB(append(b, 0x41), int64(len(f.reply)-1)) // i32.const len
			b = append(b, 0x10, 0x00)                              // call 0
		}
		return b
	}
	imports := f.batch > 0 || f.replyInStart
	if f.replyInStart {
		funcs[3].body = append(replyCalls(1), funcs[3].body...)
	}
	if f.batch > 0 {
		funcs = append(funcs, struct {
			name           string
			params, result []byte
			body           []byte
		}{"respike_batch", []byte{i32}, []byte{i64}, append(replyCalls(f.batch), 0x42, 0x00)}) // i64.const 0
	}
	if f.initTrap {
		funcs = append(funcs, struct {
			name           string
			params, result []byte
			body           []byte
		}{"_initialize", nil, nil, []byte{0x00}}) // unreachable
	}
	if f.initLoop {
		funcs = append(funcs, struct {
			name           string
			params, result []byte
			body           []byte
		}{"_initialize", nil, nil, []byte{0x03, 0x40, 0x0c, 0x00, 0x0b}}) // loop br 0 end
	}
	vec := func(n int) []byte { return binary.AppendUvarint(nil, uint64(n)) }
	// With the import, type 0 is reply's and function 0 is reply: the
	// module's own types and functions come after.
	nimp := 0
	typeSec := vec(len(funcs))
	var importSec []byte
	if imports {
		nimp = 1
		typeSec = vec(len(funcs) + 1)
		typeSec = append(typeSec, 0x60, 2, i32, i32, 0)
		importSec = append(vec(1), appendName(appendName(nil, "respike"), "reply")...)
		importSec = append(importSec, 0x00, 0x00) // a function of type 0
	}
	funcSec, codeSec := vec(len(funcs)), vec(len(funcs))
	exportSec := vec(0)
	var exports [][]byte
	for i, fn := range funcs {
		typeSec = append(typeSec, 0x60, byte(len(fn.params)))
		typeSec = append(typeSec, fn.params...)
		typeSec = append(typeSec, byte(len(fn.result)))
		typeSec = append(typeSec, fn.result...)
		funcSec = append(funcSec, byte(i+nimp))
		body := append(append([]byte{0x00}, fn.body...), 0x0b) // no locals, code, end
		codeSec = binary.AppendUvarint(codeSec, uint64(len(body)))
		codeSec = append(codeSec, body...)
		if fn.name != f.omit {
			exports = append(exports, append(appendName(nil, fn.name), 0x00, byte(i+nimp)))
		}
	}
	exports = append(exports, append(appendName(nil, "memory"), 0x02, 0x00))
	exportSec = vec(len(exports))
	for _, e := range exports {
		exportSec = append(exportSec, e...)
	}
	memSec := []byte{1, 0x00, 1} // one memory, min 1 page
	dataSec := vec(2)
	for _, d := range []struct {
		at   int
		data []byte
	}{{manifestAt, f.manifest}, {replyAt, f.reply}} {
		dataSec = append(dataSec, 0x00, 0x41) // active, memory 0, i32.const
		dataSec = appendSLEB(dataSec, int64(d.at))
		dataSec = append(dataSec, 0x0b)
		dataSec = binary.AppendUvarint(dataSec, uint64(len(d.data)))
		dataSec = append(dataSec, d.data...)
	}
	out := []byte("\x00asm\x01\x00\x00\x00")
	for _, sec := range []struct {
		id   byte
		body []byte
	}{{1, typeSec}, {2, importSec}, {3, funcSec}, {5, memSec}, {7, exportSec}, {10, codeSec}, {11, dataSec}} {
		if sec.body == nil {
			continue
		}
		out = append(out, sec.id)
		out = binary.AppendUvarint(out, uint64(len(sec.body)))
		out = append(out, sec.body...)
	}
	return out
}
