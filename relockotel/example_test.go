package relockotel_test

import (
	"context"
	"fmt"
	"log"
	"slices"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/relockotel"
)

// Wire an Observer between relock and OpenTelemetry. A service passes
// the providers it exports with (or nil, for the global ones); here an
// in-memory reader and span recorder show what one Lock and its Unlock
// record.
func Example() {
	m, err := miniredis.Run() // in your code: your Redis
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()

	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))

	obs, err := relockotel.New(&relockotel.Options{MeterProvider: mp, TracerProvider: tp})
	if err != nil {
		log.Fatal(err)
	}
	rc, err := relock.New(rdb, &relock.Options{Observer: obs})
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()
	stop, err := obs.Watch(rc) // counts of rc.Stats()
	if err != nil {
		log.Fatal(err)
	}
	defer stop()

	mu := reentrant.New(rc, "orders:42", nil)
	err = relock.Do(context.Background(), mu, func(ctx context.Context) error { return nil })
	if err != nil {
		log.Fatal(err)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		log.Fatal(err)
	}
	var lines []string
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch data := m.Data.(type) {
		case metricdata.Histogram[float64]:
			for _, p := range data.DataPoints {
				lines = append(lines, fmt.Sprintf("%s (%s) {%s} count %d", m.Name, m.Unit, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Count))
			}
		case metricdata.Sum[int64]:
			lines = append(lines, fmt.Sprintf("%s (%s) %d", m.Name, m.Unit, data.DataPoints[0].Value))
		}
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	for _, s := range spans.Ended() {
		attrs := attribute.NewSet(s.Attributes()...)
		fmt.Printf("span %s {%s}\n", s.Name(), attrs.Encoded(attribute.DefaultEncoder()))
	}
	// Output:
	// relock.acquire.duration (s) {relock.acquire.outcome=acquired,relock.lock.kind=reentrant,relock.operation.name=Lock} count 1
	// relock.hold.count ({hold}) 0
	// relock.hold.duration (s) {relock.hold.end_cause=unlock,relock.lock.kind=reentrant} count 1
	// relock.subscription.count ({channel}) 0
	// relock.waiter.count ({waiter}) 0
	// span relock.Lock {relock.acquire.attempts=1,relock.acquire.outcome=acquired,relock.lock.kind=reentrant,relock.lock.name=orders:42,relock.operation.name=Lock}
	// span relock.Unlock {relock.lock.kind=reentrant,relock.lock.name=orders:42,relock.operation.name=Unlock}
}
