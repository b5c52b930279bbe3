package aerospike

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"

	"github.com/respike/respike/guest-sdk/codec"
)

// Scans walk Aerospike's 4096 partitions in order. A page scans whole
// partitions until it has at least Count keys, so a key that exists for the
// whole scan is returned exactly once, whatever happens to other keys.
//
// The cursor packs the next partition (bits 0-11) and how many partitions
// the next page should scan at once (bits 16-27, learned from the key
// density so far). 0 starts a scan; a page that reaches the last partition
// returns 0.
const (
	partitions   = 4096
	defaultCount = 10
)

func encodeCursor(next, span int) uint64 {
	if next >= partitions {
		return 0
	}
	return uint64(span&0xfff)<<16 | uint64(next&0xfff)
}

func decodeCursor(c uint64) (next, span int) {
	next = int(c & 0xfff)
	span = int(c >> 16 & 0xfff)
	if span == 0 {
		span = 1
	}
	return next, span
}

// nextSpan is the partition count of the next scan call, from the keys found
// in the last one: enough partitions for the keys still wanted, at least
// four times more when none were found.
func nextSpan(span, found, wanted int) int {
	switch {
	case wanted <= 0:
	case found == 0:
		span *= 4
	default:
		span = (wanted*span + found - 1) / found
	}
	return min(max(span, 1), partitions)
}

func (x *execCtx) scanPolicy(withBins bool) *as.ScanPolicy {
	sp := as.NewScanPolicy()
	sp.BasePolicy = x.base(false)
	sp.SendKey = false
	sp.IncludeBinData = withBins
	sp.MaxConcurrentNodes = 0
	// Records past their exact expiry are absent for scans and counts too.
	sp.FilterExpression = x.s.tr.live.get(x.s.nowMs())
	return sp
}

// scan returns one page of keys.
func (x *execCtx) scan(args *codec.ScanArgs, resp *codec.Response) {
	count := int(args.Count)
	if count <= 0 {
		count = defaultCount
	}
	next, span := decodeCursor(args.Cursor)
	var bins []string
	if args.WithType {
		bins = []string{codec.BinType}
	}
	sp := x.scanPolicy(args.WithType)
	for next < partitions && len(resp.Scan.Keys) < count {
		n := min(span, partitions-next)
		before := len(resp.Scan.Keys)
		rs, err := x.c.ScanPartitions(sp, as.NewPartitionFilterByRange(next, n), x.s.cfg.Namespace, x.set, bins...)
		if err != nil {
			x.scanFail(resp, err)
			return
		}
		for r := range rs.Results() {
			if r.Err != nil {
				rs.Close()
				x.scanFail(resp, r.Err)
				return
			}
			k, ok := userKey(r.Record.Key)
			if !ok {
				continue // no user key stored: respike cannot name it
			}
			resp.Scan.Keys = append(resp.Scan.Keys, k)
			if args.WithType {
				var t []byte
				if s, ok := r.Record.Bins[codec.BinType].(string); ok {
					t = []byte(s)
				}
				resp.Scan.Types = append(resp.Scan.Types, t)
			}
		}
		next += n
		span = nextSpan(n, len(resp.Scan.Keys)-before, count-len(resp.Scan.Keys))
	}
	resp.Scan.Cursor = encodeCursor(next, span)
}

func (x *execCtx) scanFail(resp *codec.Response, err error) {
	resp.Scan.Keys, resp.Scan.Types, resp.Scan.Cursor = resp.Scan.Keys[:0], resp.Scan.Types[:0], 0
	if c := classify(err); c != classRecord {
		x.fail(resp, err, c)
		return
	}
	code, msg := errResult(err)
	resp.Code, resp.Msg = code, msg
	if code == codec.OK || code == codec.NotFound {
		resp.Code = codec.BackendError
	}
}

// userKey is the Redis key of a scanned record: its stored user key when it
// is a blob. Records stored without their key, or with a string or integer
// key (another application's), have a digest respike cannot reproduce from
// Redis key bytes, so a scan skips them.
func userKey(k *as.Key) ([]byte, bool) {
	if k == nil || k.Value() == nil {
		return nil, false
	}
	switch v := k.Value().(type) {
	case as.BytesValue:
		return []byte(v), true
	}
	return nil, false
}

// exactCountLimit: below this many records (by the servers' statistics) a
// count is exact, by a scan without bins; above it the statistics answer.
const exactCountLimit = 50000

// count answers ReqCount.
func (x *execCtx) count(resp *codec.Response) {
	est, truncating, err := x.setObjects(x.set)
	if err != nil {
		x.scanFail(resp, err)
		return
	}
	if est > exactCountLimit && !truncating {
		resp.Count = est
		return
	}
	rs, err := x.c.ScanPartitions(x.scanPolicy(false), as.NewPartitionFilterAll(), x.s.cfg.Namespace, x.set)
	if err != nil {
		x.scanFail(resp, err)
		return
	}
	var n int64
	for r := range rs.Results() {
		if r.Err != nil {
			rs.Close()
			x.scanFail(resp, r.Err)
			return
		}
		n++
	}
	resp.Count = n
}

// setObjects estimates the records of a set from the nodes' statistics:
// their object counts (which include replicas) over the replication factor.
// truncating reports a truncate still deleting records (counted until then).
func (x *execCtx) setObjects(set string) (est int64, truncating bool, err error) {
	ns := x.s.cfg.Namespace
	setCmd, nsCmd := "sets/"+ns+"/"+set, "namespace/"+ns
	ip := x.infoPolicy()
	var objects, rf int64
	for _, node := range x.c.GetNodes() {
		info, err := node.RequestInfo(ip, setCmd, nsCmd)
		if err != nil {
			return 0, false, err
		}
		kv := parseInfoPairs(strings.ReplaceAll(info[setCmd], ";", ":"), ':')
		n, _ := strconv.ParseInt(kv["objects"], 10, 64)
		objects += n
		if kv["truncating"] == "true" {
			truncating = true
		}
		nkv := parseInfoPairs(info[nsCmd], ';')
		for _, k := range []string{"effective_replication_factor", "replication-factor"} {
			if r, err := strconv.ParseInt(nkv[k], 10, 64); err == nil && r > 0 {
				rf = r
				break
			}
		}
	}
	if rf > 1 {
		objects /= rf
	}
	return objects, truncating, nil
}

func (x *execCtx) infoPolicy() *as.InfoPolicy {
	return &as.InfoPolicy{Timeout: x.left()}
}

// truncate deletes every record of the database, or of every database.
//
// Aerospike truncates by last-update time, in milliseconds, taken from the
// node's clock when the command arrives, and keeps records updated in that
// very millisecond. respike waits one millisecond first, so that every write
// acknowledged before the request is strictly older than the threshold.
func (x *execCtx) truncate(allDBs bool, resp *codec.Response) {
	sets := []string{x.set}
	if allDBs {
		var err error
		if sets, err = x.respikeSets(); err != nil {
			x.scanFail(resp, err)
			return
		}
	}
	time.Sleep(time.Millisecond)
	ip := x.infoPolicy()
	for _, set := range sets {
		if err := x.c.Truncate(ip, x.s.cfg.Namespace, set, nil); err != nil {
			x.scanFail(resp, err)
			return
		}
	}
}

// respikeSets lists the sets of every database that any node knows.
func (x *execCtx) respikeSets() ([]string, error) {
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(x.s.cfg.Set) + `(_[0-9]+)?$`)
	seen := map[string]bool{}
	var sets []string
	cmd := "sets/" + x.s.cfg.Namespace
	for _, node := range x.c.GetNodes() {
		info, err := node.RequestInfo(x.infoPolicy(), cmd)
		if err != nil {
			return nil, err
		}
		for _, entry := range strings.Split(info[cmd], ";") {
			kv := parseInfoPairs(entry, ':')
			name := kv["set"]
			if name == "" {
				name = kv["set_name"]
			}
			if name != "" && re.MatchString(name) && !seen[name] {
				seen[name] = true
				sets = append(sets, name)
			}
		}
	}
	return sets, nil
}
