package main

import (
	"strconv"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "pfdebug", Arity: 3, Flags: []string{"write", "denyoom", "admin"},
		FirstKey: 2, LastKey: 2, Step: 1, Group: "hyperloglog", Since: "2.8.9",
		Summary: "Internal commands for debugging HyperLogLog values.",
		Run:     runPFDebug,
	})
}

// runPFDebug: PFDEBUG GETREG|DECODE|ENCODING|TODENSE key, as Redis's
// pfdebugCommand. GETREG and TODENSE make a sparse HLL dense (a write
// under the generation read, as Redis changes the value).
func runPFDebug(c *sdk.Ctx) {
	readHLL(c, c.Arg(2))
	c.Exec(pfdebugApply)
}

func pfdebugApply(c *sdk.Ctx) {
	r := c.Result(0)
	if r.Code == codec.NotFound {
		c.Error("ERR The specified key does not exist")
		return
	}
	l, ok := load(c, r)
	if !ok {
		return
	}
	sub := c.Arg(1)
	switch {
	case kit.Fold(sub, "getreg"), kit.Fold(sub, "todense"):
		conv := l.h[4] == encSparse
		h, ok := toDense(own(l.h))
		if !ok {
			c.Error(errCorrupt)
			return
		}
		reply := func(c *sdk.Ctx) {
			if kit.Fold(c.Arg(1), "todense") {
				if conv {
					c.Reply().Int(1)
				} else {
					c.Reply().Int(0)
				}
				return
			}
			var regs [hllRegisters]uint8
			unpackDense(h[hdrSize:], &regs)
			w := c.Reply()
			w.Array(hllRegisters)
			for _, v := range regs {
				w.Int(int64(v))
			}
		}
		if !conv {
			reply(c)
			return
		}
		write(c, c.Arg(2), l, h, runPFDebug, reply)
	case kit.Fold(sub, "decode"):
		if l.h[4] != encSparse {
			c.Error("ERR HLL encoding is not sparse")
			return
		}
		var out []byte
		for p := hdrSize; p < len(l.h); {
			switch op := l.h[p]; {
			case isZero(op):
				out = append(strconv.AppendInt(append(out, "z:"...), int64(zeroLen(op)), 10), ' ')
				p++
			case isXZero(op):
				n := 0
				if p+1 < len(l.h) {
					n = xzeroLen(op, l.h[p+1])
				}
				out = append(strconv.AppendInt(append(out, "Z:"...), int64(n), 10), ' ')
				p += 2
			default:
				out = strconv.AppendInt(append(out, "v:"...), int64(valValue(op)), 10)
				out = append(strconv.AppendInt(append(out, ','), int64(valLen(op)), 10), ' ')
				p++
			}
		}
		for len(out) > 0 && out[len(out)-1] == ' ' {
			out = out[:len(out)-1]
		}
		c.Reply().Bulk(out)
	case kit.Fold(sub, "encoding"):
		if l.h[4] == encSparse {
			c.Reply().Simple("sparse")
		} else {
			c.Reply().Simple("dense")
		}
	default:
		c.Error("ERR Unknown PFDEBUG subcommand '" + string(sub) + "'")
	}
}
