package module

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// loopModule is a module with what renumbering must get right: an imported
// function, direct and table calls, an element segment, and a loop.
//
//	(import "env" "seven" (func $seven (result i32)))
//	(func $eight (export "eight") (result i32) (i32.add (call $seven) (i32.const 1)))
//	(func $indirect (export "indirect") (result i32) (call_indirect (type 0) (i32.const 0)))
//	(func $sum (export "sum") (param $n i32) (result i32) (local $s i32)
//	  (loop $l (local.set $s (i32.add (local.get $s) (local.get $n)))
//	           (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
//	  (local.get $s))
//	(table 1 funcref) (elem (i32.const 0) $eight)
func loopModule() []byte {
	vec := func(n int, items ...[]byte) []byte {
		b := binary.AppendUvarint(nil, uint64(n))
		for _, it := range items {
			b = append(b, it...)
		}
		return b
	}
	body := func(locals []byte, code ...byte) []byte {
		b := append(locals, code...)
		b = append(b, 0x0b)
		return append(binary.AppendUvarint(nil, uint64(len(b))), b...)
	}
	typeSec := vec(2,
		[]byte{0x60, 0, 1, 0x7f},       // type 0: () -> i32
		[]byte{0x60, 1, 0x7f, 1, 0x7f}, // type 1: (i32) -> i32
	)
	importSec := vec(1, append(append(appendName(nil, "env"), appendName(nil, "seven")...), 0x00, 0))
	funcSec := vec(3, []byte{0}, []byte{0}, []byte{1})
	tableSec := vec(1, []byte{0x70, 0x00, 1})
	exportSec := vec(3,
		append(appendName(nil, "eight"), 0x00, 1),
		append(appendName(nil, "indirect"), 0x00, 2),
		append(appendName(nil, "sum"), 0x00, 3),
	)
	elemSec := vec(1, []byte{0x00, 0x41, 0x00, 0x0b, 1, 1}) // table 0, offset 0, [func 1]
	codeSec := vec(3,
		body([]byte{0}, 0x10, 0, 0x41, 1, 0x6a), // call $seven; i32.const 1; i32.add
		body([]byte{0}, 0x41, 0, 0x11, 0, 0),    // i32.const 0; call_indirect type 0 table 0
		body([]byte{1, 1, 0x7f}, 0x03, 0x40, // loop
			0x20, 1, 0x20, 0, 0x6a, 0x21, 1, // s = s + n
			0x20, 0, 0x41, 1, 0x6b, 0x22, 0, // n = n - 1 (tee)
			0x0d, 0, // br_if 0
			0x0b,     // end loop
			0x20, 1), // local.get s
	)
	out := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range []struct {
		id   byte
		body []byte
	}{{1, typeSec}, {2, importSec}, {3, funcSec}, {4, tableSec}, {7, exportSec}, {9, elemSec}, {10, codeSec}} {
		out = append(out, s.id)
		out = binary.AppendUvarint(out, uint64(len(s.body)))
		out = append(out, s.body...)
	}
	return out
}

func TestInstrument(t *testing.T) {
	ctx := context.Background()
	for _, fueled := range []bool{false, true} {
		bin := loopModule()
		if fueled {
			var err error
			if bin, err = instrument(bin); err != nil {
				t.Fatal(err)
			}
		}
		rt := wazero.NewRuntime(ctx)
		defer rt.Close(ctx)
		ticks := 0
		if _, err := rt.NewHostModuleBuilder("env").
			NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, s []uint64) { s[0] = 7 }), nil, []api.ValueType{api.ValueTypeI32}).Export("seven").
			Instantiate(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := rt.NewHostModuleBuilder("respike").
			NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(context.Context, api.Module, []uint64) { ticks++ }), nil, nil).Export("tick").
			Instantiate(ctx); err != nil {
			t.Fatal(err)
		}
		m, err := rt.Instantiate(ctx, bin)
		if err != nil {
			t.Fatalf("fueled=%v: %v", fueled, err)
		}
		for _, tc := range []struct {
			fn   string
			args []uint64
			want uint64
		}{{"eight", nil, 8}, {"indirect", nil, 8}, {"sum", []uint64{10000}, 50005000}} {
			res, err := m.ExportedFunction(tc.fn).Call(ctx, tc.args...)
			if err != nil || len(res) != 1 || res[0] != tc.want {
				t.Errorf("fueled=%v: %s%v = %v, %v; want %d", fueled, tc.fn, tc.args, res, err, tc.want)
			}
		}
		if want := map[bool]int{false: 0, true: 10000 / loopFuel}[fueled]; ticks != want {
			t.Errorf("fueled=%v: %d ticks for 10000 iterations, want %d", fueled, ticks, want)
		}
	}
}

func TestInstrumentRefusesUnknownOpcodes(t *testing.T) {
	bin := loopModule()
	// Replace the add in $eight by an opcode that does not exist.
	i := len(bin) - 1
	for ; i > 0 && !(bin[i] == 0x6a && bin[i-1] == 1 && bin[i-2] == 0x41); i-- {
	}
	if i == 0 {
		t.Fatal("no i32.add in the test module")
	}
	bin[i] = 0xc5
	if _, err := instrument(bin); err == nil {
		t.Error("instrument accepted an unknown opcode")
	}
}
