// Command otel shows what package relockotel records: it takes a lock
// under a span of its own, while a second client's TryLock gives up,
// and prints the spans (the lock's Redis commands among them, through
// redisotel) and the metrics with the OpenTelemetry stdout exporters.
// docs/otel.md shows its output.
//
// It runs on an in-process miniredis; -redis uses a server instead
// (only the key relock-otel-example:lock).
package main

import (
	"context"
	"errors"
	"flag"
	"log"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/relockotel"
)

func main() {
	addr := flag.String("redis", "", "a Redis server's address (default: an in-process miniredis)")
	flag.Parse()
	if *addr == "" {
		mr, err := miniredis.Run()
		if err != nil {
			log.Fatal(err)
		}
		defer mr.Close()
		*addr = mr.Addr()
	}
	if err := run(context.Background(), *addr); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, addr string) (err error) {
	// Spans print as each ends (a syncer keeps them in order); metrics
	// once, collected at the end. An empty resource keeps the host's
	// details out of the output.
	spanOut, err := stdouttrace.New()
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spanOut), sdktrace.WithResource(resource.Empty()),
		sdktrace.WithSampler(sdktrace.ParentBased(rootNamed("checkout"))))
	defer func() { err = errors.Join(err, tp.Shutdown(context.Background())) }()
	metricOut, err := stdoutmetric.New()
	if err != nil {
		return err
	}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(resource.Empty()))
	defer func() { err = errors.Join(err, mp.Shutdown(context.Background())) }()

	obs, err := relockotel.New(&relockotel.Options{MeterProvider: mp, TracerProvider: tp})
	if err != nil {
		return err
	}
	// Two clients, as if two processes: each with its own go-redis
	// client, traced so that the lock's commands are spans too.
	newClient := func() (*relock.Client, error) {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		err := redisotel.InstrumentTracing(rdb, redisotel.WithTracerProvider(tp),
			redisotel.WithDBStatement(false), redisotel.WithCallerEnabled(false), redisotel.WithDialFilter(true))
		if err != nil {
			return nil, err
		}
		// A connection made now keeps its handshake out of the trace.
		if err := rdb.Ping(ctx).Err(); err != nil {
			return nil, err
		}
		return relock.New(rdb, &relock.Options{Observer: obs})
	}
	rc, err := newClient()
	if err != nil {
		return err
	}
	defer rc.Close()
	other, err := newClient()
	if err != nil {
		return err
	}
	defer other.Close()
	stop, err := obs.Watch(rc)
	if err != nil {
		return err
	}
	defer stop()

	const name = "relock-otel-example:lock"
	tctx, span := tp.Tracer("example").Start(ctx, "checkout")
	mu := reentrant.New(rc, name, nil)
	lctx, err := mu.Lock(tctx)
	if err != nil {
		return err
	}
	// The other client gives up at once: an expected end, not an error.
	if _, err := reentrant.New(other, name, nil).TryLock(tctx, 0); !errors.Is(err, relock.ErrNotAcquired) {
		return errors.Join(err, mu.Unlock(lctx))
	}
	if err := mu.Unlock(lctx); err != nil {
		return err
	}
	span.End()

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		return err
	}
	return metricOut.Export(ctx, &rm)
}

// rootNamed samples the root spans of its name: with ParentBased, the
// trace of the example's own span, without the commands that run outside
// it (the clients' pub/sub connections, say).
type rootNamed string

func (r rootNamed) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	d := sdktrace.Drop
	if p.Name == string(r) {
		d = sdktrace.RecordAndSample
	}
	return sdktrace.SamplingResult{Decision: d}
}

func (r rootNamed) Description() string { return "rootNamed(" + string(r) + ")" }
