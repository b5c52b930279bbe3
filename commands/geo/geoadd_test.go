package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
	"github.com/respike/respike/host/store"
)

// recorder is a store that keeps the encoding of every request it runs.
type recorder struct {
	store.Store
	reqs [][]byte
}

func (r *recorder) Exec(ctx context.Context, db int, req *codec.Request, res *codec.Response) {
	r.reqs = append(r.reqs, codec.AppendRequest(nil, req))
	r.Store.Exec(ctx, db, req, res)
}

// TestGeoAddFastMatchesGeneral runs GEOADDs of every kind (the common
// form with coordinates runGeoAdd takes and refuses, new and held
// members, options, several members, errors) twice: as the module runs
// them, and with geoAddChain set, where every one-member GEOADD builds
// ZAddCall's request op by op. Every request sent to the store and every
// reply must be the same, byte for byte.
func TestGeoAddFastMatchesGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 16))
	coord := func(limit float64) string {
		switch rng.IntN(12) {
		case 0:
			return strconv.FormatFloat(limit, 'f', -1, 64) // the limit itself
		case 1:
			return strconv.FormatFloat(-limit-1e-6, 'f', 6, 64) // just past it
		case 2:
			return strconv.FormatFloat((rng.Float64()*2-1)*limit, 'e', 5, 64) // not a plain decimal
		case 3:
			return "-0.000000"
		case 4:
			return strconv.FormatFloat((rng.Float64()*2-1)*limit, 'f', 14, 64) // past 15 digits
		}
		return strconv.FormatFloat((rng.Float64()*2-1)*limit, 'f', 1+rng.IntN(8), 64)
	}
	member := func() string {
		n := rng.IntN(400)
		return "member:" + strconv.Itoa(n) + "_________________________"[:n%26]
	}
	var cmds [][]string
	for range 4000 {
		args := []string{"GEOADD", "g" + strconv.Itoa(rng.IntN(3))}
		switch rng.IntN(8) {
		case 0:
			args = append(args, []string{"NX", "XX", "CH", "nx"}[rng.IntN(4)])
		case 1:
			args = append(args, coord(180), coord(85.05112878), member())
		}
		args = append(args, coord(180), coord(85.05112878), member())
		if rng.IntN(40) == 0 {
			args = args[:len(args)-1]
		}
		cmds = append(cmds, args)
		if rng.IntN(30) == 0 {
			cmds = append(cmds, []string{"GEOSEARCH", args[1], "FROMLONLAT", "0", "0", "BYRADIUS", "30000", "km", "WITHHASH", "ASC"})
		}
	}
	run := func(chain bool) (replies []string, reqs [][]byte) {
		geoAddChain = chain
		defer func() { geoAddChain = false }()
		h := sdktest.New()
		rec := &recorder{Store: h.Store}
		h.Store = rec
		h.Do("SET", "g2", "a string") // WRONGTYPE
		for _, c := range cmds {
			replies = append(replies, h.Do(c...))
		}
		return replies, rec.reqs
	}
	fastReplies, fastReqs := run(false)
	chainReplies, chainReqs := run(true)
	if len(fastReqs) != len(chainReqs) {
		t.Fatalf("%d requests, %d with the chain", len(fastReqs), len(chainReqs))
	}
	for i := range fastReqs {
		if !bytes.Equal(fastReqs[i], chainReqs[i]) {
			t.Fatalf("request %d:\n%x\nwith the chain:\n%x", i, fastReqs[i], chainReqs[i])
		}
	}
	added := 0
	for i := range cmds {
		if fastReplies[i] != chainReplies[i] {
			t.Fatalf("%q: %q, with the chain %q", cmds[i], fastReplies[i], chainReplies[i])
		}
		if fastReplies[i] == "(integer) 1" {
			added++
		}
	}
	if added < 500 || len(fastReqs) < 2000 {
		t.Fatalf("only %d members added in %d requests: the test does not exercise the common form", added, len(fastReqs))
	}
}
