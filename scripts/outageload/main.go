// Command outageload is the load of scripts/outage-drill.sh: clients that
// INCR counters of their own through respike until SIGINT or SIGTERM, each
// counting the INCRs acknowledged and those answered with an error (which
// may or may not have applied). On the signal it stops, reads every
// counter back (retrying while the store still fails) and checks that
// acknowledged ≤ value ≤ acknowledged + errored: an acknowledged write
// that is missing is lost. It prints one JSON report on stdout and exits 1
// when a check fails.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// slowReply is a reply slower than -slow: when its command was sent and
// how long it took.
type slowReply struct {
	SentUnixMs int64   `json:"sent_unix_ms"`
	TookMs     float64 `json:"took_ms"`
	Err        string  `json:"error,omitempty"`
}

type clientStats struct {
	key                 string
	acked, errored      int64
	ioErrors            int64 // not a Redis error reply: a timeout or a broken connection
	maxLatency          time.Duration
	firstErr, lastErr   time.Time
	slow                int64 // replies slower than -slow
	slowAt              []slowReply
	errorsByText        map[string]int64
	latencies           []time.Duration
	latenciesDuringErrs []time.Duration
}

// Report is what the tool prints.
type Report struct {
	Clients          int              `json:"clients"`
	Acked            int64            `json:"acked"`
	Errored          int64            `json:"errored"`
	IOErrors         int64            `json:"io_errors"`
	Slow             int64            `json:"replies_slower_than_limit"`
	SlowLimitMs      float64          `json:"slow_limit_ms"`
	MaxLatencyMs     float64          `json:"max_latency_ms"`
	P99LatencyMs     float64          `json:"p99_latency_ms"`
	OutageMaxMs      float64          `json:"outage_max_latency_ms"`
	FirstErrorUnixMs int64            `json:"first_error_unix_ms"`
	LastErrorUnixMs  int64            `json:"last_error_unix_ms"`
	Errors           map[string]int64 `json:"errors"`
	SlowReplies      []slowReply      `json:"slow_replies,omitempty"`
	Lost             int64            `json:"lost_acknowledged"`
	Extra            int64            `json:"beyond_acknowledged_plus_errored"`
	VerifyRetries    int              `json:"verify_retries"`
	OK               bool             `json:"ok"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "respike's address")
	clients := flag.Int("clients", 16, "clients, each on a counter of its own")
	prefix := flag.String("prefix", "outage:"+strconv.FormatInt(time.Now().Unix(), 36), "counter key prefix")
	deadline := flag.Duration("deadline", 30*time.Second, "client deadline per command: far above the store timeout, so a hang shows")
	slow := flag.Duration("slow", 3*time.Second, "a reply slower than this counts as slow (set it to the store timeout plus slack)")
	flush := flag.Bool("flushall", false, "FLUSHALL once verified")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stats := make([]*clientStats, *clients)
	var wg sync.WaitGroup
	for i := range stats {
		st := &clientStats{key: *prefix + ":" + strconv.Itoa(i), errorsByText: map[string]int64{}}
		stats[i] = st
		c := redis.NewClient(&redis.Options{Addr: *addr, PoolSize: 1, MaxRetries: -1, Protocol: 2,
			DialTimeout: 2 * time.Second, ReadTimeout: *deadline, WriteTimeout: *deadline})
		defer c.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				cctx, cancel := context.WithTimeout(context.Background(), *deadline)
				start := time.Now()
				err := c.Incr(cctx, st.key).Err()
				took := time.Since(start)
				cancel()
				st.latencies = append(st.latencies, took)
				st.maxLatency = max(st.maxLatency, took)
				if took > *slow {
					st.slow++
					if len(st.slowAt) < 5 {
						r := slowReply{SentUnixMs: start.UnixMilli(), TookMs: ms(took)}
						if err != nil {
							r.Err = errClass(err.Error())
						}
						st.slowAt = append(st.slowAt, r)
					}
				}
				if err == nil {
					st.acked++
					continue
				}
				st.errored++
				now := time.Now()
				if st.firstErr.IsZero() {
					st.firstErr = now
				}
				st.lastErr = now
				st.latenciesDuringErrs = append(st.latenciesDuringErrs, took)
				var rerr redis.Error
				if errors.As(err, &rerr) {
					st.errorsByText[errClass(err.Error())]++
				} else {
					st.ioErrors++
					st.errorsByText["io: "+errClass(err.Error())]++
					// A broken connection: go-redis dials again on the next
					// command; pace the retries.
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()

	rep := Report{Clients: *clients, Errors: map[string]int64{}, SlowLimitMs: ms(*slow), OK: true}
	var all, outage []time.Duration
	for _, st := range stats {
		rep.Acked += st.acked
		rep.Errored += st.errored
		rep.IOErrors += st.ioErrors
		rep.Slow += st.slow
		rep.MaxLatencyMs = max(rep.MaxLatencyMs, ms(st.maxLatency))
		rep.SlowReplies = append(rep.SlowReplies, st.slowAt...)
		for k, v := range st.errorsByText {
			rep.Errors[k] += v
		}
		if !st.firstErr.IsZero() && (rep.FirstErrorUnixMs == 0 || st.firstErr.UnixMilli() < rep.FirstErrorUnixMs) {
			rep.FirstErrorUnixMs = st.firstErr.UnixMilli()
		}
		rep.LastErrorUnixMs = max(rep.LastErrorUnixMs, st.lastErr.UnixMilli())
		all = append(all, st.latencies...)
		outage = append(outage, st.latenciesDuringErrs...)
	}
	rep.P99LatencyMs = ms(percentile(all, 0.99))
	rep.OutageMaxMs = ms(percentile(outage, 1))
	if rep.LastErrorUnixMs < 0 {
		rep.LastErrorUnixMs = 0
	}

	// Verify: read every counter, retrying while the store still fails.
	c := redis.NewClient(&redis.Options{Addr: *addr, MaxRetries: -1, Protocol: 2, ReadTimeout: *deadline})
	defer c.Close()
	for _, st := range stats {
		var v int64
		for {
			n, err := c.Get(context.Background(), st.key).Int64()
			if err == nil || errors.Is(err, redis.Nil) {
				v = n
				break
			}
			rep.VerifyRetries++
			if rep.VerifyRetries > 600 {
				fmt.Fprintln(os.Stderr, "outageload: cannot read the counters back:", err)
				os.Exit(2)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if v < st.acked {
			rep.Lost += st.acked - v
			rep.OK = false
			fmt.Fprintf(os.Stderr, "outageload: %s = %d, %d INCRs acknowledged: %d lost\n", st.key, v, st.acked, st.acked-v)
		}
		if v > st.acked+st.errored {
			rep.Extra += v - st.acked - st.errored
			rep.OK = false
			fmt.Fprintf(os.Stderr, "outageload: %s = %d, more than %d acknowledged + %d errored\n", st.key, v, st.acked, st.errored)
		}
	}
	if rep.IOErrors > 0 || rep.Slow > 0 {
		rep.OK = false
	}
	if *flush {
		if err := c.FlushAll(context.Background()).Err(); err != nil {
			fmt.Fprintln(os.Stderr, "outageload: FLUSHALL:", err)
		}
	}
	out, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Println(string(out))
	if !rep.OK {
		os.Exit(1)
	}
}

// errClass is an error's text without what varies (addresses, times).
func errClass(s string) string {
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[min(len(ds)-1, int(float64(len(ds))*p))]
}
