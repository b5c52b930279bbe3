package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/respike/respike/host/config"
	"github.com/respike/respike/host/metrics"
)

// scrape fetches /metrics and parses it with Prometheus's own text parser.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// sample returns the metric of fam whose labels include want.
func sample(t *testing.T, fams map[string]*dto.MetricFamily, fam string, want map[string]string) *dto.Metric {
	t.Helper()
	f := fams[fam]
	if f == nil {
		t.Fatalf("no metric family %s", fam)
	}
next:
	for _, m := range f.Metric {
		for k, v := range want {
			found := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m
	}
	t.Fatalf("no %s with labels %v", fam, want)
	return nil
}

func TestMetricsEndpoint(t *testing.T) {
	needModules(t, "strings")
	d := newDaemon(t, func(*config.Config) {})
	web := httptest.NewServer(metrics.Handler(metrics.Sources{Server: d.Server, Runtime: env.backend.Runtime,
		Store: env.backend.Store}))
	defer web.Close()

	ctx := context.Background()
	c := client(t, d.Addr)
	for i := 0; i < 25; i++ {
		if err := c.Set(ctx, "metrics:k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Do(ctx, "HSET", "metrics:k", "f", "v").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
		t.Fatalf("HSET on a string: %v", err)
	}
	fams := scrape(t, web.URL)

	set := sample(t, fams, "respike_command_calls_total", map[string]string{"command": "set"})
	if v := set.GetCounter().GetValue(); v < 25 {
		t.Fatalf("respike_command_calls_total{command=set} = %v, want >= 25", v)
	}
	h := sample(t, fams, "respike_command_duration_seconds", map[string]string{"command": "set"}).GetHistogram()
	if h.GetSampleCount() < 25 || h.GetSampleSum() <= 0 || len(h.Bucket) < len(metrics.DurationBuckets) {
		t.Fatalf("set duration histogram: count %d sum %v buckets %d", h.GetSampleCount(), h.GetSampleSum(), len(h.Bucket))
	}
	if last := h.Bucket[len(metrics.DurationBuckets)-1].GetCumulativeCount(); last < 25 {
		t.Fatalf("set runs under 10 s: %d", last)
	}
	if v := sample(t, fams, "respike_command_failed_calls_total", map[string]string{"command": "hset"}).GetCounter().GetValue(); v < 1 {
		t.Fatalf("hset failed calls %v", v)
	}
	if v := sample(t, fams, "respike_error_replies_total", map[string]string{"code": "WRONGTYPE"}).GetCounter().GetValue(); v < 1 {
		t.Fatalf("WRONGTYPE replies %v", v)
	}
	if v := sample(t, fams, "respike_connected_clients", nil).GetGauge().GetValue(); v < 1 {
		t.Fatalf("connected clients %v", v)
	}
	if v := sample(t, fams, "respike_net_input_bytes_total", nil).GetCounter().GetValue(); v <= 0 {
		t.Fatalf("bytes in %v", v)
	}
	sample(t, fams, "respike_module_info", map[string]string{"module": "strings"})
	sample(t, fams, "respike_module_guest_seconds_total", map[string]string{"module": "strings"})
	if v := sample(t, fams, "respike_module_instances", map[string]string{"module": "strings"}).GetGauge().GetValue(); v < 1 {
		t.Fatalf("strings instances %v", v)
	}
	if v := sample(t, fams, "respike_module_memory_bytes", map[string]string{"module": "strings"}).GetGauge().GetValue(); v <= 0 {
		t.Fatalf("strings memory %v", v)
	}
	sample(t, fams, "respike_module_instance_releases_total", map[string]string{"module": "strings", "reason": "idle"})
	if v := sample(t, fams, "respike_store_up", nil).GetGauge().GetValue(); v != 1 {
		t.Fatalf("store_up %v", v)
	}
	sample(t, fams, "go_goroutines", nil)

	for path, want := range map[string]string{"/healthz": "ok\n", "/readyz": "ready\n"} {
		resp, err := http.Get(web.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != want {
			t.Fatalf("GET %s: %s %q", path, resp.Status, body)
		}
	}
}
