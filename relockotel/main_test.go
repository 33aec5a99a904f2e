package relockotel_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/relockotel"
)

// TestMain fails the run if goroutines leaked.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// waitLimit bounds every wait for an event; the tests' timing bounds are
// generous, as the machine may be loaded.
const waitLimit = 10 * time.Second

// env is a test's redis-server and an Observer recording into the SDK's
// in-memory reader and span recorder.
type env struct {
	addr   string
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	obs    *relockotel.Observer
}

// newEnv starts a server and an Observer with Options.LockNameAttribute
// names, for t.
func newEnv(t *testing.T, names bool) *env {
	t.Helper()
	e := &env{
		addr:   startRedis(t),
		reader: sdkmetric.NewManualReader(),
		spans:  tracetest.NewSpanRecorder(),
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(e.reader))
	e.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(e.spans))
	t.Cleanup(func() {
		ctx := context.Background()
		if err := mp.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if err := e.tp.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	var err error
	e.obs, err = relockotel.New(&relockotel.Options{MeterProvider: mp, TracerProvider: e.tp, LockNameAttribute: names})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// redis returns a go-redis client of the server, closed when t ends.
func (e *env) redis(t *testing.T) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: e.addr})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// client returns a relock Client with opts, closed when t ends. Set
// opts.Observer to e.obs for an observed one.
func (e *env) client(t *testing.T, opts *relock.Options) *relock.Client {
	t.Helper()
	rc, err := relock.New(e.redis(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	return rc
}

// observed returns a relock Client with e's Observer and watchdog
// timeout wd (0: the default), closed when t ends.
func (e *env) observed(t *testing.T, wd time.Duration) *relock.Client {
	t.Helper()
	return e.client(t, &relock.Options{Observer: e.obs, WatchdogTimeout: wd})
}

// collect returns the metrics recorded so far, by name.
func (e *env) collect(t *testing.T) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := e.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	ms := make(map[string]metricdata.Aggregation)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			ms[m.Name] = m.Data
		}
	}
	return ms
}

// histogram returns the data point of the histogram name whose
// attributes are exactly attrs.
func histogram(t *testing.T, ms map[string]metricdata.Aggregation, name string, attrs ...attribute.KeyValue) (metricdata.HistogramDataPoint[float64], bool) {
	t.Helper()
	want := attribute.NewSet(attrs...)
	var zero metricdata.HistogramDataPoint[float64]
	data, ok := ms[name]
	if !ok {
		return zero, false
	}
	h, ok := data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s is a %T, want a float64 histogram", name, data)
	}
	for _, p := range h.DataPoints {
		if p.Attributes.Equals(&want) {
			return p, true
		}
	}
	return zero, false
}

// points returns the data points of the int64 counter or up-down
// counter name: which one it is, the test names.
func points(t *testing.T, ms map[string]metricdata.Aggregation, name string) []metricdata.DataPoint[int64] {
	t.Helper()
	switch data := ms[name].(type) {
	case nil:
		return nil
	case metricdata.Sum[int64]:
		if data.IsMonotonic != !strings.HasSuffix(name, ".count") {
			t.Fatalf("%s: monotonic %v, want a counter, or an up-down counter named *.count", name, data.IsMonotonic)
		}
		return data.DataPoints
	default:
		t.Fatalf("%s is a %T, want an int64 sum", name, data)
		return nil
	}
}

// value returns the value of the int64 counter or up-down counter name at the
// data point whose attributes are exactly attrs.
func value(t *testing.T, ms map[string]metricdata.Aggregation, name string, attrs ...attribute.KeyValue) (int64, bool) {
	t.Helper()
	want := attribute.NewSet(attrs...)
	for _, p := range points(t, ms, name) {
		if p.Attributes.Equals(&want) {
			return p.Value, true
		}
	}
	return 0, false
}

// ended returns the ended spans named name.
func (e *env) ended(name string) []sdktrace.ReadOnlySpan {
	var spans []sdktrace.ReadOnlySpan
	for _, s := range e.spans.Ended() {
		if s.Name() == name {
			spans = append(spans, s)
		}
	}
	return spans
}

// attr returns the attribute key of s.
func attr(s sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// commands is a go-redis hook that counts the commands run under each
// span.
type commands struct {
	mu    sync.Mutex // guards spans
	spans map[trace.SpanID]int
}

func (c *commands) record(ctx context.Context, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.spans == nil {
		c.spans = make(map[trace.SpanID]int)
	}
	c.spans[trace.SpanContextFromContext(ctx).SpanID()] += n
}

// under returns the commands run under the span id.
func (c *commands) under(id trace.SpanID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spans[id]
}

func (c *commands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.record(ctx, 1)
		return next(ctx, cmd)
	}
}

func (c *commands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.record(ctx, len(cmds))
		return next(ctx, cmds)
	}
}

// eventually waits until cond holds, failing t after waitLimit.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(waitLimit); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, waitLimit)
		}
	}
}
