// Command geo is respike's module of Redis geo commands: GEOADD, GEOPOS,
// GEODIST, GEOHASH, GEOSEARCH, GEOSEARCHSTORE, GEORADIUS,
// GEORADIUSBYMEMBER, GEORADIUS_RO and GEORADIUSBYMEMBER_RO.
//
// Data model: a geo set is a sorted set, exactly as in Redis: the zset
// module's record (bin "t" = "zset", bin "v" = a key-value-ordered map
// member → score, kit's sorted-set layout) whose scores are 52-bit
// interleaved geohashes of the members' positions. So ZRANGE, ZREM, TYPE
// (zset) and the rest of the sorted-set commands work on a geo set, and a
// geo command works on any sorted set, as in Redis. The arithmetic
// (guest-sdk/geo, which the stores use too) is Redis 7.0's, operation for
// operation, so that scores, positions and distances are redis-server's
// to the last digit.
//
// Atomicity: GEOADD is one operate (ZADD's, from kit). GEOPOS, GEOHASH and
// GEODIST read the members' scores in one operate. A search around a
// position (FROMLONLAT, GEORADIUS) reads the score ranges of the covering
// geohash cells in one op (codec.OpMapGeoSearch), with which the store
// keeps only the members inside the area; a search around a member reads
// the member's score first, then the cells: two operates. GEOSEARCHSTORE and the STORE options write the destination
// as kit.DestStore does.
package main

import (
	"math"
	"slices"
	"strconv"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/geo"
	"github.com/respike/respike/guest-sdk/resp"
)

func main() {}

func init() { sdk.Module("geo", "1.0.0") }

// Error texts of the geo commands (Redis 7.0).
const (
	errUnit      = "ERR unsupported unit provided. please use M, KM, FT, MI"
	errNoMember  = "ERR could not decode requested zset member"
	errNegRadius = "ERR radius cannot be negative"
	errNegBox    = "ERR height or width cannot be negative"
)

// parseLonLat parses a longitude and a latitude argument as Redis's
// extractLongLatOrReply: "" and the position, or the error text.
func parseLonLat(lonArg, latArg []byte) (lon, lat float64, msg string) {
	lon, ok1 := kit.ParseDouble(lonArg)
	if !ok1 {
		return 0, 0, kit.NotFloat
	}
	lat, ok2 := kit.ParseDouble(latArg)
	if !ok2 {
		return 0, 0, kit.NotFloat
	}
	if lon < geo.LonMin || lon > geo.LonMax || lat < geo.LatMin || lat > geo.LatMax {
		b := []byte("ERR invalid longitude,latitude pair ")
		b = appendPrintf6(b, lon)
		b = append(b, ',')
		b = appendPrintf6(b, lat)
		return 0, 0, string(b)
	}
	return lon, lat, ""
}

// appendPrintf6 appends f as C's "%f" prints it: six decimals, "inf"
// and "-inf" for the infinities.
func appendPrintf6(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, f, 'f', 6, 64)
}

// parseUnit is extractUnitOrReply: the unit's size in meters, or 0.
func parseUnit(b []byte) float64 {
	switch {
	case kit.Fold(b, "m"):
		return 1
	case kit.Fold(b, "km"):
		return 1000
	case kit.Fold(b, "ft"):
		return 0.3048
	case kit.Fold(b, "mi"):
		return 1609.34
	}
	return 0
}

// appendHuman appends f as Redis's addReplyHumanLongDouble prints it:
// "%.17Lf" of the exact value, trailing zeros and point removed, "-0" as
// "0".
func appendHuman(dst []byte, f float64) []byte {
	start := len(dst)
	return kit.TrimLongDouble(strconv.AppendFloat(dst, f, 'f', 17, 64), start)
}

// replyCoord writes a coordinate: a bulk string in RESP2, a double in
// RESP3, in appendHuman's digits either way.
func replyCoord(c *sdk.Ctx, f float64) {
	var tmp [48]byte
	b := appendHuman(tmp[:0], f)
	w := c.Reply()
	if w.RESP3() {
		w.Raw([]byte{','})
		w.Raw(b)
		w.Raw([]byte{'\r', '\n'})
		return
	}
	w.Bulk(b)
}

// replyDistance writes a distance as Redis 7.0.15's
// addReplyDoubleDistance: a bulk string in both protocols, made by
// fixedpoint_d2string: the distance times 10^4 (a double product), rounded
// half to even (llrint), printed with four decimals. That differs from
// "%.4f" when the product rounds onto a half: 18907132.48265000060…
// prints as 18907132.4826.
func replyDistance(c *sdk.Ctx, d float64) {
	w := c.Reply()
	w.Buf = appendDistBulk(w.Buf, d)
}

// appendDistBulk appends fixed4's digits of d as a bulk string,
// header and all, in one append: a search writes one per member.
func appendDistBulk(dst []byte, d float64) []byte {
	var tmp [32]byte
	end := len(tmp) - 2
	tmp[end], tmp[end+1] = '\r', '\n'
	i := fixed4(&tmp, end, d)
	i = distHeader(&tmp, i, end-i) // at most 20 digits, a sign and a point: 1 or 2 digits
	return append(dst, tmp[i:]...)
}

// appendMemberDist appends a member and its distance as a two-element
// array, as w.Array(2), w.Bulk(member) and replyDistance write them, with
// one growth check: a search answers up to COUNT of them, and each write
// through the reply writer is a call, a check and an append in
// WebAssembly.
func appendMemberDist(dst, member []byte, d float64) []byte {
	m := len(member)
	if m >= 100 {
		w := resp.Writer{Buf: append(dst, "*2\r\n"...)}
		w.Bulk(member)
		return appendDistBulk(w.Buf, d)
	}
	var tmp [32]byte
	end := len(tmp) - 2
	tmp[end], tmp[end+1] = '\r', '\n'
	i := fixed4(&tmp, end, d)
	i = distHeader(&tmp, i, end-i)
	db := tmp[i:]
	need := 5 + 1 + 2 + m + 2 + len(db) // *2\r\n$, length digits, \r\n, member, \r\n, distance
	if m >= 10 {
		need++
	}
	l := len(dst)
	dst = slices.Grow(dst, need)[:l+need]
	out := dst[l:]
	out[0], out[1], out[2], out[3], out[4] = '*', '2', '\r', '\n', '$'
	k := 5
	if m >= 10 {
		out[k] = byte('0' + m/10)
		k++
	}
	out[k], out[k+1], out[k+2] = byte('0'+m%10), '\r', '\n'
	k += 3
	k += copy(out[k:], member)
	out[k], out[k+1] = '\r', '\n'
	copy(out[k+2:], db)
	return dst
}

// distHeader writes a bulk string's header for the n bytes of a distance
// at tmp[i:] before them, and returns where it starts.
func distHeader(tmp *[32]byte, i, n int) int {
	i -= 2
	tmp[i], tmp[i+1] = '\r', '\n'
	if n >= 10 {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
	}
	i--
	tmp[i] = byte('0' + n)
	i--
	tmp[i] = '$'
	return i
}

// fixed4 writes fixedpoint_d2string(…, 4)'s text of d into tmp, ending
// before end, and returns where it starts. The digits are made here:
// strconv's general path costs more than the rest of a reply in
// WebAssembly.
func fixed4(tmp *[32]byte, end int, d float64) int {
	i := end
	if d == 0 {
		i -= 6
		copy(tmp[i:end], "0.0000")
		return i
	}
	n := int64(math.RoundToEven(float64(d * 10000)))
	neg := n < 0
	u := uint64(n)
	if neg {
		u = -u
	}
	if u < 1<<32 {
		// Below 429 km (in the unit): 32-bit digits, whose division by
		// 10 is a multiply and a shift; a 64-bit constant division is a
		// real division in WebAssembly (no 64-bit high multiply).
		// The four decimals straight from two pairs of digits: a loop
		// pays a fuel check per turn in the guest (module.instrument).
		x := uint32(u)
		q := uint32(uint64(x) * 0xD1B71759 >> 45) // x / 10000, exact for every uint32
		fr := x - q*10000
		hi := fr * 5243 >> 19 // fr / 100, exact below 43,699
		lo := fr - hi*100
		i -= 5
		tmp[i] = '.'
		tmp[i+1], tmp[i+2] = digits2[2*hi], digits2[2*hi+1]
		tmp[i+3], tmp[i+4] = digits2[2*lo], digits2[2*lo+1]
		x = q
		for {
			q := uint32(uint64(x) * 0xCCCCCCCD >> 35)
			i--
			tmp[i] = byte('0' + x - q*10)
			x = q
			if x == 0 {
				break
			}
		}
	} else {
		for range 4 {
			i--
			tmp[i] = byte('0' + u%10)
			u /= 10
		}
		i--
		tmp[i] = '.'
		for {
			i--
			tmp[i] = byte('0' + u%10)
			u /= 10
			if u == 0 {
				break
			}
		}
	}
	if neg {
		i--
		tmp[i] = '-'
	}
	return i
}

// digits2 holds "00" to "99".
const digits2 = "0001020304050607080910111213141516171819" +
	"2021222324252627282930313233343536373839" +
	"4041424344454647484950515253545556575859" +
	"6061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// scoresByMember maps the members of a map read (flattened pairs) to
// their scores.
func scoresByMember(kv []codec.Value) map[string]float64 {
	m := make(map[string]float64, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[string(kv[i].Bytes)] = codec.ScoreOf(&kv[i+1])
	}
	return m
}

// readMembers reads the scores of members of the geo set key, with the
// type guard: one operate. With no members it only checks the type.
func readMembers(c *sdk.Ctx, key []byte, members [][]byte, next sdk.Step) {
	call := c.Record(key).Guard(codec.TypeZSet)
	if len(members) == 0 {
		call.MapSize(codec.BinValue)
	} else {
		keys := c.Values(len(members))
		for i, m := range members {
			keys[i] = codec.Bytes(m)
		}
		call.MapGetByKeys(codec.BinValue, codec.ReturnKeyValue, keys)
	}
	c.Exec(next)
}
