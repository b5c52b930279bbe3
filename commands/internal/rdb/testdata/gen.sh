#!/bin/sh
# Regenerates dumps/*.bin: DUMP payloads of every encoding, from a real
# redis-server 7.0 (default configuration, except where a CONFIG SET forces
# an encoding). Usage: gen.sh [port] with a scratch redis-server on that
# port (it is flushed). Files named same-* are payloads that rdb.Encode must
# reproduce byte for byte from the decoded value; the others must round
# trip. The fuzz test seeds its corpus from all of them.
set -e
P=${1:-6379}
R="redis-cli -p $P"
cd "$(dirname "$0")"
mkdir -p dumps
$R flushall >/dev/null
$R config set hash-max-listpack-entries 512 >/dev/null
$R config set set-max-intset-entries 512 >/dev/null
$R config set zset-max-listpack-entries 128 >/dev/null
$R config set list-max-listpack-size -2 >/dev/null
dump() { # name key
	$R --no-raw dump "$2" >/dev/null # check it exists
	$R dump "$2" | head -c -1 >"dumps/$1.bin"
}
$R set s:int8 -100 >/dev/null;        dump same-string-int8 s:int8
$R set s:int16 30000 >/dev/null;      dump same-string-int16 s:int16
$R set s:int32 -2000000000 >/dev/null; dump same-string-int32 s:int32
$R set s:int64 9223372036854775807 >/dev/null; dump same-string-int64 s:int64
$R set s:raw "hello world" >/dev/null; dump same-string-raw s:raw
$R set s:empty "" >/dev/null;         dump same-string-empty s:empty
$R set s:lzf "$(printf 'abcabcabcabc%.0s' $(seq 1 40))" >/dev/null; dump same-string-lzf s:lzf
$R set s:nolzf "qwertyuiopasdfghjklzxcvbnm1234567890" >/dev/null; dump same-string-incompressible s:nolzf
$R set s:bin "$(printf 'a\001\002\377b')" >/dev/null; dump same-string-binary s:bin
$R pfadd hll:sparse a b c d e >/dev/null; dump same-hll-sparse hll:sparse
$R pfadd hll:dense $(seq 1 3000) >/dev/null; dump same-hll-dense hll:dense
$R hset h:lp a 1 b hello c -70000 d 3.5 >/dev/null; dump same-hash-listpack h:lp
$R hset h:big a "$(printf 'x%.0s' $(seq 1 65))" >/dev/null; dump hash-hashtable-value h:big
$R config set hash-max-listpack-entries 0 >/dev/null
$R hset h:ht f1 v1 f2 2 f3 v3 >/dev/null; dump hash-hashtable h:ht
$R config set hash-max-listpack-entries 512 >/dev/null
$R sadd set:is 5 -3 100000 7 >/dev/null; dump same-set-intset set:is
$R sadd set:is64 1 9000000000 >/dev/null; dump same-set-intset64 set:is64
$R sadd set:ht a b c 1 >/dev/null; dump set-hashtable set:ht
$R config set set-max-intset-entries 2 >/dev/null
$R sadd set:htint 1 2 3 >/dev/null; dump set-hashtable-ints set:htint
$R config set set-max-intset-entries 512 >/dev/null
$R zadd z:lp 1 a 2.5 b -3 c inf d 1e300 e 0.1 f >/dev/null; dump same-zset-listpack z:lp
$R geoadd geo 13.361389 38.115556 Palermo 15.087269 37.502669 Catania >/dev/null; dump same-geo geo
$R zadd z:sl 1 a 2 b 3 "$(printf 'm%.0s' $(seq 1 65))" >/dev/null; dump same-zset-skiplist z:sl
$R config set zset-max-listpack-entries 0 >/dev/null
$R zadd z:sl2 1.5 a 2 b -inf c >/dev/null; dump zset-skiplist-small z:sl2
$R config set zset-max-listpack-entries 128 >/dev/null
$R rpush l:small a b 1 2 -5000 hello >/dev/null; dump same-list-small l:small
$R rpush l:lzf $(seq 1 50) >/dev/null; dump same-list-lzf l:lzf
$R rpush l:multi $(seq 100000 103000) >/dev/null; dump same-list-multinode l:multi
$R config set list-max-listpack-size 2 >/dev/null
$R rpush l:count a b c d e >/dev/null; dump list-countfill l:count
$R config set list-max-listpack-size -2 >/dev/null
$R lpush l:lpush a b c >/dev/null; dump same-list-lpush l:lpush
$R flushall >/dev/null
