package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/sdktest"
)

func TestPushPop(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			lpushx l a => (integer) 0
			exists l => (integer) 0
			lpush l a b c => (integer) 3
			rpush l d e => (integer) 5
			lrange l 0 -1 => ["c" "b" "a" "d" "e"]
			lpushx l z => (integer) 6
			rpushx l y => (integer) 7
			llen l => (integer) 7
			type l => list
			lpop l => "z"
			rpop l => "y"
			lpop l 2 => ["c" "b"]
			rpop l 2 => ["e" "d"]
			lpop l 0 => []
			lpop l 9 => ["a"]
			exists l => (integer) 0
			lpop l => (nil)
			lpop l 2 => (nil)
			lpop l -1 => (error) ERR value is out of range, must be positive
			set s v => OK
			lpush s a => (error) WRONGTYPE Operation against a key holding the wrong kind of value
			lpop s => (error) WRONGTYPE Operation against a key holding the wrong kind of value
			llen s => (error) WRONGTYPE Operation against a key holding the wrong kind of value
		`)
	})
}

func TestReadsAndEdits(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			rpush l a b c d e => (integer) 5
			lrange l 1 -2 => ["b" "c" "d"]
			lrange l -2 10 => ["d" "e"]
			lrange l -4 2 => ["b" "c"]
			lrange l 3 1 => []
			lindex l -1 => "e"
			lindex l 5 => (nil)
			lset l 1 B => OK
			lset l 5 x => (error) ERR index out of range
			lset l -6 x => (error) ERR index out of range
			lset nokey 0 x => (error) ERR no such key
			linsert l before c x => (integer) 6
			linsert l after e y => (integer) 7
			linsert l after zz y => (integer) -1
			lrange l 0 -1 => ["a" "B" "x" "c" "d" "e" "y"]
			rpush l a a => (integer) 9
			lrem l -1 a => (integer) 1
			lrem l 1 a => (integer) 1
			lrange l 0 -1 => ["B" "x" "c" "d" "e" "y" "a"]
			lpos l e => (integer) 4
			lpos l a count 0 => [(integer) 6]
			ltrim l 1 -2 => OK
			lrange l 0 -1 => ["x" "c" "d" "e" "y"]
			ltrim l -2 -1 => OK
			lrange l 0 -1 => ["e" "y"]
			ltrim l 5 9 => OK
			exists l => (integer) 0
		`)
	})
}

func TestMoves(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			rpush a 1 2 3 => (integer) 3
			lmove a b left right => "1"
			rpoplpush a b => "3"
			lrange a 0 -1 => ["2"]
			lrange b 0 -1 => ["3" "1"]
			lmove b b left right => "3"
			lrange b 0 -1 => ["1" "3"]
			lmove b b right right => "3"
			lmove a b right left => "2"
			exists a => (integer) 0
			lmove a b left left => (nil)
			lmpop 2 a b right count 5 => ["b" ["3" "1" "2"]]
			lmpop 2 a b right => (nil)
		`)
	})
}
