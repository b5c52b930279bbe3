package module

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Loop fuel: how a looping guest is stopped cheaply.
//
// wazero's WithCloseOnContextDone makes every loop header leave native code
// for Go to check whether the module was closed, and starts a goroutine per
// call to close it when the context is done. A Go guest compiles every
// function into a loop (its resumable control flow), so that check runs on
// nearly every guest function call: measured here it made a GET through a Go
// guest about four times as expensive, and the goroutine added ~1.5 µs of CPU
// and 3 allocations per call.
//
// Instead the host rewrites each module before compiling it: every loop
// header decrements a mutable i32 global, and when it reaches zero refills it
// and calls the host function respike.tick. In native code that is a few
// instructions per iteration; once every loopFuel iterations the guest
// enters Go, where the Go scheduler and garbage collector can preempt it (a
// guest that never left native code would block every stop-the-world) and
// where tick stops the call if the watchdog has claimed it. A loop-free
// stretch of wasm is finite, so every call reaches a tick or returns.

// loopFuel is the number of loop iterations between ticks: small enough that
// a tick comes every few tens of microseconds, large enough that its cost
// (~0.1 µs) is noise.
const loopFuel = 4096

var errInstrument = errors.New("cannot instrument")

// instrument returns bin with loop fuel added: a new imported function
// respike.tick ()→() (which shifts every defined function's index by one), a
// new mutable i32 global, and the countdown at every loop header.
func instrument(bin []byte) ([]byte, error) {
	if len(bin) < 8 || string(bin[:4]) != "\x00asm" || binary.LittleEndian.Uint32(bin[4:8]) != 1 {
		return nil, errors.New("not a WebAssembly 1.0 binary")
	}
	type section struct {
		id   byte
		body []byte
	}
	var secs []section
	r := &reader{b: bin, off: 8}
	for r.off < len(r.b) && r.err == nil {
		id := r.byte1()
		n := r.u32()
		secs = append(secs, section{id, r.take(int(n))})
	}
	if r.err != nil {
		return nil, fmt.Errorf("malformed module: %w", r.err)
	}

	// First pass: count types, imported functions and globals.
	var nTypes, nFuncImports, nGlobalImports, nGlobals uint32
	for _, s := range secs {
		r := &reader{b: s.body}
		switch s.id {
		case 1:
			nTypes = r.u32()
		case 2:
			n := r.u32()
			for i := uint32(0); i < n && r.err == nil; i++ {
				r.name()
				r.name()
				switch kind := r.byte1(); kind {
				case 0: // func
					r.u32()
					nFuncImports++
				case 1: // table
					r.refType()
					r.limits()
				case 2: // memory
					r.limits()
				case 3: // global
					r.valType()
					r.byte1()
					nGlobalImports++
				case 4: // tag
					r.byte1()
					r.u32()
				default:
					r.fail()
				}
			}
		case 6:
			nGlobals = r.u32()
		}
		if r.err != nil {
			return nil, fmt.Errorf("malformed section %d: %w", s.id, r.err)
		}
	}
	ins := &instrumenter{
		tick:   nFuncImports,
		global: nGlobalImports + nGlobals,
	}

	out := make([]byte, 0, len(bin)+len(bin)/4) // room for the countdowns
	out = append(out, bin[:8]...)
	emit := func(id byte, body []byte) {
		out = append(out, id)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
	tickType := nTypes
	// Sections that may be absent are added at their place in the order.
	added := map[byte]bool{}
	addMissing := func(before byte) {
		// order of known sections: 1 2 3 4 5 13 6 7 8 9 12 10 11
		order := []byte{1, 2, 3, 4, 5, 13, 6, 7, 8, 9, 12, 10, 11}
		rank := func(id byte) int {
			for i, o := range order {
				if o == id {
					return i
				}
			}
			return len(order)
		}
		for _, id := range []byte{1, 2, 6} {
			if !added[id] && rank(id) < rank(before) {
				added[id] = true
				switch id {
				case 1:
					emit(1, ins.appendTickType(nil, 0, nil))
				case 2:
					emit(2, ins.appendTickImport(nil, tickType, 0, nil))
				case 6:
					emit(6, ins.appendFuelGlobal(nil, 0, nil))
				}
			}
		}
	}
	for _, s := range secs {
		if s.id != 0 {
			addMissing(s.id)
		}
		var body []byte
		var err error
		switch s.id {
		case 0:
			body = ins.custom(s.body)
			if body == nil {
				continue // a name section we could not renumber: drop it
			}
		case 1:
			added[1] = true
			r := &reader{b: s.body}
			n := r.u32()
			body = ins.appendTickType(nil, n, r.rest())
		case 2:
			added[2] = true
			r := &reader{b: s.body}
			n := r.u32()
			body = ins.appendTickImport(nil, tickType, n, r.rest())
		case 6:
			added[6] = true
			body, err = ins.globals(s.body)
		case 7:
			body, err = ins.exports(s.body)
		case 8:
			r := &reader{b: s.body}
			f := r.u32()
			if r.err != nil {
				return nil, r.err
			}
			body = binary.AppendUvarint(nil, uint64(ins.fn(f)))
		case 9:
			body, err = ins.elements(s.body)
		case 10:
			body, err = ins.code(s.body)
		default:
			body = s.body
		}
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", s.id, err)
		}
		emit(s.id, body)
	}
	addMissing(0xff) // after all sections: whatever is still missing
	return out, nil
}

type instrumenter struct {
	tick   uint32 // index of the respike.tick import
	global uint32 // index of the fuel global
}

// fn maps an old function index to the new one.
func (ins *instrumenter) fn(i uint32) uint32 {
	if i >= ins.tick {
		return i + 1
	}
	return i
}

func (ins *instrumenter) appendTickType(dst []byte, n uint32, rest []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(n+1))
	dst = append(dst, rest...)
	return append(dst, 0x60, 0, 0) // func () -> ()
}

func (ins *instrumenter) appendTickImport(dst []byte, typ, n uint32, rest []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(n+1))
	dst = append(dst, rest...)
	dst = appendName(dst, "respike")
	dst = appendName(dst, "tick")
	dst = append(dst, 0)
	return binary.AppendUvarint(dst, uint64(typ))
}

func (ins *instrumenter) appendFuelGlobal(dst []byte, n uint32, rest []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(n+1))
	dst = append(dst, rest...)
	dst = append(dst, 0x7f, 1, 0x41) // i32, mutable, i32.const
	dst = appendSLEB(dst, loopFuel)
	return append(dst, 0x0b)
}

// appendSLEB appends v in signed LEB128.
func appendSLEB(dst []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(dst, c)
		}
		dst = append(dst, c|0x80)
	}
}

func appendName(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func (ins *instrumenter) globals(b []byte) ([]byte, error) {
	r := &reader{b: b}
	n := r.u32()
	var body []byte
	for i := uint32(0); i < n && r.err == nil; i++ {
		start := r.off
		r.valType()
		r.byte1()
		body = append(body, r.b[start:r.off]...)
		body = ins.expr(r, body)
	}
	if r.err != nil {
		return nil, r.err
	}
	return ins.appendFuelGlobal(nil, n, body), nil
}

func (ins *instrumenter) exports(b []byte) ([]byte, error) {
	r := &reader{b: b}
	n := r.u32()
	out := binary.AppendUvarint(nil, uint64(n))
	for i := uint32(0); i < n && r.err == nil; i++ {
		out = appendName(out, r.name())
		kind := r.byte1()
		idx := r.u32()
		if kind == 0 {
			idx = ins.fn(idx)
		}
		out = append(out, kind)
		out = binary.AppendUvarint(out, uint64(idx))
	}
	return out, r.err
}

func (ins *instrumenter) elements(b []byte) ([]byte, error) {
	r := &reader{b: b}
	n := r.u32()
	out := binary.AppendUvarint(nil, uint64(n))
	for i := uint32(0); i < n && r.err == nil; i++ {
		flags := r.u32()
		out = binary.AppendUvarint(out, uint64(flags))
		if flags > 7 {
			return nil, fmt.Errorf("element segment flags %d", flags)
		}
		active, explicitTable, exprs := flags&1 == 0, flags&2 != 0, flags&4 != 0
		if active && explicitTable {
			out = binary.AppendUvarint(out, uint64(r.u32())) // table index
		}
		if active {
			out = ins.expr(r, out) // offset
		}
		if !active || explicitTable {
			out = append(out, r.byte1()) // elemkind 0x00, or a reftype
		}
		m := r.u32()
		out = binary.AppendUvarint(out, uint64(m))
		for j := uint32(0); j < m && r.err == nil; j++ {
			if exprs {
				out = ins.expr(r, out)
			} else {
				out = binary.AppendUvarint(out, uint64(ins.fn(r.u32())))
			}
		}
	}
	return out, r.err
}

// expr copies a constant expression up to and including its end.
func (ins *instrumenter) expr(r *reader, out []byte) []byte {
	for r.err == nil {
		op := r.byte1()
		if op == 0x0b {
			return append(out, op)
		}
		out = ins.instr(r, op, out)
	}
	return out
}

func (ins *instrumenter) code(b []byte) ([]byte, error) {
	r := &reader{b: b}
	n := r.u32()
	out := make([]byte, 0, len(b)+len(b)/4)
	out = binary.AppendUvarint(out, uint64(n))
	var fn []byte
	for i := uint32(0); i < n && r.err == nil; i++ {
		size := r.u32()
		body := &reader{b: r.take(int(size))}
		if r.err != nil {
			break
		}
		start := body.off
		for nl := body.u32(); nl > 0 && body.err == nil; nl-- {
			body.u32()
			body.valType()
		}
		fn = append(fn[:0], body.b[start:body.off]...)
		for body.off < len(body.b) && body.err == nil {
			fn = ins.instr(body, body.byte1(), fn)
		}
		if body.err != nil {
			return nil, fmt.Errorf("function %d: %w", i, body.err)
		}
		out = binary.AppendUvarint(out, uint64(len(fn)))
		out = append(out, fn...)
	}
	return out, r.err
}

// instr copies one instruction whose opcode op has been read, renumbering
// function indices and adding the fuel countdown after a loop header.
func (ins *instrumenter) instr(r *reader, op byte, out []byte) []byte {
	start := r.off - 1
	switch {
	case op == 0x03: // loop
		r.blockType()
		out = append(out, r.b[start:r.off]...)
		return ins.appendCountdown(out)
	case op == 0x10 || op == 0x12 || op == 0xd2: // call, return_call, ref.func
		out = append(out, op)
		return binary.AppendUvarint(out, uint64(ins.fn(r.u32())))
	case op == 0x02 || op == 0x04 || op == 0x06: // block, if, try
		r.blockType()
	case op == 0x1f: // try_table
		r.blockType()
		for n := r.u32(); n > 0 && r.err == nil; n-- {
			switch r.byte1() {
			case 0, 1: // catch, catch_ref: tag, label
				r.u32()
				r.u32()
			case 2, 3: // catch_all, catch_all_ref: label
				r.u32()
			default:
				r.fail()
			}
		}
	case op <= 0x01, op == 0x05, op == 0x0a, op == 0x0b, op == 0x0f, op == 0x19, op == 0x1a, op == 0x1b, op == 0xd1:
		// no immediate
	case op == 0x07, op == 0x08, op == 0x09, op == 0x0c, op == 0x0d, op == 0x18, op >= 0x20 && op <= 0x26:
		r.u32() // tag, label, local, global or table index
	case op == 0x0e: // br_table
		for n := r.u32(); n > 0 && r.err == nil; n-- {
			r.u32()
		}
		r.u32()
	case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect
		r.u32()
		r.u32()
	case op == 0x1c: // select t*
		for n := r.u32(); n > 0 && r.err == nil; n-- {
			r.valType()
		}
	case op >= 0x28 && op <= 0x3e:
		r.memArg()
	case op == 0x3f || op == 0x40: // memory.size, memory.grow
		r.u32()
	case op == 0x41 || op == 0x42: // i32.const, i64.const
		r.leb()
	case op == 0x43:
		r.take(4)
	case op == 0x44:
		r.take(8)
	case op >= 0x45 && op <= 0xc4:
		// numeric, no immediate
	case op == 0xd0: // ref.null
		r.heapType()
	case op == 0xfc:
		switch sub := r.u32(); {
		case sub <= 7:
		case sub == 8 || sub == 10 || sub == 12 || sub == 14: // two indices
			r.u32()
			r.u32()
		case sub == 9 || sub == 11 || sub == 13 || sub >= 15 && sub <= 17:
			r.u32()
		default:
			r.fail()
		}
	case op == 0xfd: // SIMD
		switch sub := r.u32(); {
		case sub <= 11 || sub == 92 || sub == 93:
			r.memArg()
		case sub == 12 || sub == 13:
			r.take(16)
		case sub >= 21 && sub <= 34:
			r.byte1()
		case sub >= 84 && sub <= 91:
			r.memArg()
			r.byte1()
		case sub <= 0xff:
		default:
			r.fail()
		}
	case op == 0xfe: // threads
		switch sub := r.u32(); {
		case sub == 3:
			r.byte1()
		case sub <= 2 || sub >= 0x10 && sub <= 0x4e:
			r.memArg()
		default:
			r.fail()
		}
	default:
		r.err = fmt.Errorf("%w: unknown opcode 0x%02x", errInstrument, op)
		r.off = len(r.b)
	}
	return append(out, r.b[start:r.off]...)
}

// appendCountdown appends: fuel -= 1; if fuel == 0 { fuel = loopFuel; tick() }.
func (ins *instrumenter) appendCountdown(out []byte) []byte {
	g := func(op byte) {
		out = append(out, op)
		out = binary.AppendUvarint(out, uint64(ins.global))
	}
	g(0x23)                       // global.get
	out = append(out, 0x41, 1)    // i32.const 1
	out = append(out, 0x6b)       // i32.sub
	g(0x24)                       // global.set
	g(0x23)                       // global.get
	out = append(out, 0x45)       // i32.eqz
	out = append(out, 0x04, 0x40) // if (no result)
	out = append(out, 0x41)       // i32.const loopFuel
	out = appendSLEB(out, loopFuel)
	g(0x24)                 // global.set
	out = append(out, 0x10) // call tick
	out = binary.AppendUvarint(out, uint64(ins.tick))
	return append(out, 0x0b) // end
}

// custom renumbers the functions of a "name" section and copies other
// custom sections; it returns nil to drop a name section it cannot parse.
func (ins *instrumenter) custom(b []byte) []byte {
	r := &reader{b: b}
	name := r.name()
	if r.err != nil || name != "name" {
		return b
	}
	out := appendName(nil, name)
	for r.off < len(r.b) && r.err == nil {
		id := r.byte1()
		sub := r.take(int(r.u32()))
		if id == 1 || id == 2 { // function names, local names: keyed by function index
			s := &reader{b: sub}
			n := s.u32()
			body := binary.AppendUvarint(nil, uint64(n))
			for i := uint32(0); i < n && s.err == nil; i++ {
				body = binary.AppendUvarint(body, uint64(ins.fn(s.u32())))
				if id == 1 {
					body = appendName(body, s.name())
					continue
				}
				m := s.u32()
				body = binary.AppendUvarint(body, uint64(m))
				for j := uint32(0); j < m && s.err == nil; j++ {
					body = binary.AppendUvarint(body, uint64(s.u32()))
					body = appendName(body, s.name())
				}
			}
			if s.err != nil {
				return nil
			}
			sub = body
		}
		out = append(out, id)
		out = binary.AppendUvarint(out, uint64(len(sub)))
		out = append(out, sub...)
	}
	if r.err != nil {
		return nil
	}
	return out
}

// reader decodes the wasm binary format; the first error sticks and moves
// the offset to the end.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errors.New("unexpected byte or end of input")
	}
	r.off = len(r.b)
}

func (r *reader) byte1() byte {
	if r.off >= len(r.b) {
		r.fail()
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *reader) take(n int) []byte {
	if n < 0 || r.off+n > len(r.b) {
		r.fail()
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) rest() []byte {
	s := r.b[r.off:]
	r.off = len(r.b)
	return s
}

func (r *reader) u32() uint32 {
	v, n := binary.Uvarint(r.b[min(r.off, len(r.b)):])
	if n <= 0 || v > 1<<32-1 {
		r.fail()
		return 0
	}
	r.off += n
	return uint32(v)
}

// leb skips a LEB128 number, signed or not.
func (r *reader) leb() {
	for i := 0; i < 10; i++ {
		if c := r.byte1(); c&0x80 == 0 {
			return
		}
	}
	r.fail()
}

func (r *reader) name() string { return string(r.take(int(r.u32()))) }

// valType, heapType and blockType read a type: one byte for a type code,
// a LEB128 type index otherwise.
func (r *reader) valType()   { r.leb() }
func (r *reader) refType()   { r.leb() }
func (r *reader) heapType()  { r.leb() }
func (r *reader) blockType() { r.leb() }

func (r *reader) limits() {
	flags := r.byte1()
	r.u32()
	if flags&1 != 0 {
		r.u32()
	}
}

func (r *reader) memArg() {
	if align := r.u32(); align&0x40 != 0 { // multi-memory: a memory index follows
		r.u32()
	}
	r.leb() // offset: u32, or u64 with memory64
}
