package e2e

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/respike/respike/host/block"
	"github.com/respike/respike/host/store/fault"
	"github.com/respike/respike/host/store/memory"
)

// The outage drill on the embedded store: clients keep writing while the
// store hangs, loses answers, refuses, hangs again and comes back. Every
// command must answer (a reply or a Redis error) within the store timeout,
// the proxy must serve again without a restart, and every write it
// acknowledged must be there afterwards. scripts/outage-drill.sh runs the
// same drill against a real Aerospike server that is stopped and started.

// outageTimeout is the injected store's timeout: what a request waits on a
// backend that stopped answering, as Aerospike's total_timeout.
const outageTimeout = 250 * time.Millisecond

// replySlack is what a reply may take beyond the store timeout: the
// proxy's own work and the scheduling of a loaded 2-core machine (more
// under the race detector). A hang would be unbounded.
func replySlack() time.Duration {
	if raceEnabled {
		return 2 * time.Second
	}
	return 750 * time.Millisecond
}

// tally counts one client's view of one key: writes acknowledged, and
// writes answered with an error (which may or may not have applied).
type tally struct {
	acked, errored int64
}

// outageClient is one load client's record of what it was told.
type outageClient struct {
	incr               map[string]*tally // by counter key
	list               tally
	setAcked           string   // the value of the last acknowledged SET
	setMaybe           []string // values of errored SETs since it
	replies, errs      int64
	maxLatency         map[string]time.Duration // by command
	afterRecovery      int64                    // commands answered after the store came back
	afterRecoveryFails int64
	failures           []string // what must not happen (non-Redis errors, wrong values)
}

// count records an INCR of key: acknowledged or not.
func (o *outageClient) count(key string, acked bool) {
	n := o.incr[key]
	if n == nil {
		n = &tally{}
		o.incr[key] = n
	}
	if acked {
		n.acked++
	} else {
		n.errored++
	}
}

func (o *outageClient) fail(format string, args ...any) {
	if len(o.failures) < 10 {
		o.failures = append(o.failures, fmt.Sprintf(format, args...))
	}
}

// answered checks one reply: its latency, and that an error is a Redis
// error reply, not an I/O error (a hang surfaces as the client's read
// timeout, far above the store's).
func (o *outageClient) answered(what string, took time.Duration, err error, recovered bool) bool {
	o.replies++
	o.maxLatency[what] = max(o.maxLatency[what], took)
	if took > outageTimeout+replySlack() {
		o.fail("%s answered after %v, beyond the %v store timeout + %v", what, took, outageTimeout, replySlack())
	}
	if recovered {
		o.afterRecovery++
	}
	if err == nil || errors.Is(err, redis.Nil) {
		return true
	}
	o.errs++
	if recovered {
		o.afterRecoveryFails++
	}
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		o.fail("%s: not a Redis error reply: %v", what, err)
		return false
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "ERR backend ") && !strings.Contains(msg, "store") {
		o.fail("%s: unexpected error %q", what, msg)
	}
	return false
}

func TestOutageDrill(t *testing.T) {
	needModules(t, "strings", "list")
	ctx := context.Background()
	fs := fault.New(memory.New(memory.Options{Databases: 16}), outageTimeout)
	b, err := newBackendOn(ctx, fs, env.modDir, env.cacheDir, env.logger, block.DefaultPollInterval, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	d := serve(t, testConfig(), b)

	const clients = 8
	const pipelined = 2 // of the clients, those that send pipelines of INCRs
	const pipeDepth = 8
	const afterRecovery = 60 // commands each client runs once the store is back

	baseGoroutines := runtime.NumGoroutine()
	var maxGoroutines atomic.Int64

	// Requests, not seconds: the drill lasts as long as its load needs,
	// however slow the machine. Two hangs (the second after the store was
	// refusing, as when a restarting server accepts connections before it
	// answers), lost answers, refusals.
	fs.Run(
		fault.Phase{Mode: fault.Up, Requests: 400},
		fault.Phase{Mode: fault.Hang, Requests: 48},
		fault.Phase{Mode: fault.Lost, Requests: 120},
		fault.Phase{Mode: fault.Down, Requests: 400},
		fault.Phase{Mode: fault.Hang, Requests: 16},
		fault.Phase{Mode: fault.Lost, Requests: 40},
	)
	recovered := fs.Done()

	results := make([]*outageClient, clients)
	var wg sync.WaitGroup
	for i := range clients {
		o := &outageClient{incr: map[string]*tally{}, maxLatency: map[string]time.Duration{}}
		results[i] = o
		c := client(t, d.Addr, func(opt *redis.Options) { opt.PoolSize = 1 })
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctr, lst, str := "outage:ctr:"+strconv.Itoa(i), "outage:list:"+strconv.Itoa(i), "outage:str:"+strconv.Itoa(i)
			for n := 0; o.afterRecovery < afterRecovery; n++ {
				back := false
				select {
				case <-recovered:
					back = true
				default:
				}
				for g := int64(runtime.NumGoroutine()); ; {
					if m := maxGoroutines.Load(); g <= m || maxGoroutines.CompareAndSwap(m, g) {
						break
					}
				}
				// A deadline far above the store's timeout: a command that
				// hangs fails the test here instead of hanging it.
				cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				if i < pipelined {
					start := time.Now()
					// Distinct keys: the pipeline's commands wait on the
					// store together, so it too answers within one timeout.
					cmds, _ := c.Pipelined(cctx, func(p redis.Pipeliner) error {
						for j := range pipeDepth {
							p.Incr(cctx, ctr+":"+strconv.Itoa(j))
						}
						return nil
					})
					took := time.Since(start)
					for j, cmd := range cmds {
						o.count(ctr+":"+strconv.Itoa(j), o.answered("pipelined INCR", took, cmd.Err(), back))
					}
					cancel()
					continue
				}
				var err error
				start := time.Now()
				switch n % 4 {
				case 0, 2:
					err = c.Incr(cctx, ctr).Err()
					o.count(ctr, o.answered("INCR", time.Since(start), err, back))
				case 1:
					v := strconv.Itoa(n)
					err = c.Set(cctx, str, v, 0).Err()
					if o.answered("SET", time.Since(start), err, back) {
						o.setAcked, o.setMaybe = v, o.setMaybe[:0]
					} else {
						o.setMaybe = append(o.setMaybe, v)
					}
					start = time.Now()
					got, err := c.Get(cctx, str).Result()
					if o.answered("GET", time.Since(start), err, back) {
						if errors.Is(err, redis.Nil) {
							got = ""
						}
						if got != o.setAcked && !slices.Contains(o.setMaybe, got) {
							o.fail("GET %s = %q, want the last acknowledged SET %q or one errored after it %v", str, got, o.setAcked, o.setMaybe)
						}
					}
				case 3:
					err = c.RPush(cctx, lst, n).Err()
					if o.answered("RPUSH", time.Since(start), err, back) {
						o.list.acked++
					} else {
						o.list.errored++
					}
				}
				cancel()
			}
		}()
	}
	wg.Wait()

	// The counts are read through a fresh client once the store is Up.
	c := client(t, d.Addr)
	var total struct {
		outageClient
		incr tally
	}
	total.maxLatency = map[string]time.Duration{}
	for i, o := range results {
		for _, f := range o.failures {
			t.Errorf("client %d: %s", i, f)
		}
		if o.afterRecoveryFails > 0 {
			t.Errorf("client %d: %d of %d commands failed after the store came back", i, o.afterRecoveryFails, o.afterRecovery)
		}
		for ctr, n := range o.incr {
			v, err := c.Get(ctx, ctr).Int64()
			if err != nil && !errors.Is(err, redis.Nil) {
				t.Fatalf("GET %s: %v", ctr, err)
			}
			if v < n.acked || v > n.acked+n.errored {
				t.Errorf("%s = %d: %d INCRs acknowledged, %d errored: an acknowledged write is lost or a write counted twice", ctr, v, n.acked, n.errored)
			}
			total.incr.acked += n.acked
			total.incr.errored += n.errored
		}
		lst := "outage:list:" + strconv.Itoa(i)
		if i >= pipelined {
			n, err := c.LLen(ctx, lst).Result()
			if err != nil {
				t.Fatalf("LLEN %s: %v", lst, err)
			}
			if n < o.list.acked || n > o.list.acked+o.list.errored {
				t.Errorf("LLEN %s = %d: %d RPUSHes acknowledged, %d errored", lst, n, o.list.acked, o.list.errored)
			}
		}
		total.replies += o.replies
		total.errs += o.errs
		for what, d := range o.maxLatency {
			total.maxLatency[what] = max(total.maxLatency[what], d)
		}
	}
	counts := fs.Counts()
	if counts[fault.Hang] == 0 || counts[fault.Down] == 0 || counts[fault.Lost] == 0 {
		t.Fatalf("the outage did not happen: requests per mode %v", counts)
	}
	if total.errs == 0 {
		t.Errorf("no command answered an error during the outage")
	}
	// Each client has at most one command in flight, a pipelining one at
	// most pipeDepth: nothing piles up in the proxy while the store hangs.
	if m := fs.MaxInflight(); m > clients-pipelined+pipelined*pipeDepth {
		t.Errorf("%d store requests in flight at once, more than the clients' commands", m)
	}
	if g := maxGoroutines.Load(); g > int64(baseGoroutines)+int64(clients*8+100) {
		t.Errorf("goroutines grew from %d to %d during the outage", baseGoroutines, g)
	}
	t.Logf("replies %d, errors %d, INCR acknowledged %d errored %d, max reply latency %v (store timeout %v), store requests per mode %v, most in flight %d, goroutines %d → max %d",
		total.replies, total.errs, total.incr.acked, total.incr.errored, total.maxLatency, outageTimeout, counts, fs.MaxInflight(), baseGoroutines, maxGoroutines.Load())
}
