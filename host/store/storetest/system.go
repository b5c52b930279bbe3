package storetest

import (
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
)

// System area cases run before TruncateAll, which must stay last.
func init() {
	last := cases[len(cases)-1]
	cases = append(cases[:len(cases)-1:len(cases)-1], testCase{"SystemArea", testSystemArea}, last)
}

// testSystemArea: store.SystemDB holds records of its own, apart from
// every numbered database, with the same operations (what host/fleet
// uses: puts of blobs, map puts and removes, headers), and a truncate of
// all databases leaves it alone.
func testSystemArea(e *env) {
	sys := e.on(store.SystemDB)
	sys.ok(sys.rec("k").Put(codec.BinValue, b("system")))
	e.missing("k")
	e.ok(e.rec("k").Put(codec.BinValue, b("db0")))
	sys.eq("system record", sys.get("k", codec.BinValue), b("system"))

	g1 := sys.ok(sys.rec("m").MapPut("m", codec.MapOrderKey, []codec.Value{b("a"), b("1")})).Generation
	g2 := sys.ok(sys.rec("m").MapPut("m", codec.MapOrderKey, []codec.Value{b("b"), b("2")})).Generation
	if g2 <= g1 {
		e.t.Fatalf("generation after a second map put %d, after the first %d", g2, g1)
	}
	h := sys.ok(sys.rec("m").Header())
	e.eqInt("header generation", int64(h.Generation), int64(g2))
	sys.ok(sys.rec("m").MapRemoveByKeys("m", codec.ReturnNone, []codec.Value{b("a")}))
	sys.eq("map after a remove", sys.get("m", "m"), codec.Map(b("b"), b("2")))

	e.exec(&codec.Request{Kind: codec.ReqTruncate, AllDBs: true})
	e.missing("k")
	sys.eq("system record after a truncate of every database", sys.get("k", codec.BinValue), b("system"))
	sys.ok(sys.rec("k").Delete())
	sys.ok(sys.rec("m").Delete())
	sys.missing("k")
}
