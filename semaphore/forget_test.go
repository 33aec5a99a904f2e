package semaphore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/semaphore"
)

// handOver acquires a permit of each of n semaphores named prefix+i on
// from, and releases it on to: what a client acquires is no
// acknowledgement for it to send when another client releases it.
func handOver(t *testing.T, from, to *relock.Client, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		name := prefix + strconv.Itoa(i)
		if _, err := semaphore.New(from, name, nil).TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := semaphore.New(from, name, nil).Acquire(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := semaphore.New(to, name, nil).Release(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
}

// The acquiring client's record of the permits it took, which its next
// call on the semaphore would remove in Redis, used to stay in the
// process for good when that call never came (about 300 B a name),
// after both clients had closed too. It now goes with the client's
// Close, and on its own once the record has expired in Redis (a
// watchdog timeout).
//
// It needs a real redis-server: miniredis runs in this process, and the
// semaphores' keys it keeps would count in the heap the test measures.
func TestAcknowledgementsForgotten(t *testing.T) {
	srv.RequireReal(t)
	const names = 4000
	for _, tc := range []struct {
		name  string
		opts  *relock.Options
		close bool
	}{
		{"at Close", nil, true},
		{"past the watchdog timeout", &relock.Options{WatchdogTimeout: 100 * time.Millisecond}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to := newClient(t, tc.opts), newClient(t, nil)
			prefix := redistest.Key(t) + ":"
			handOver(t, from, to, prefix+"warm:", 100)
			before := redistest.Heap()
			handOver(t, from, to, prefix, names)
			if tc.close {
				if err := from.Close(); err != nil {
					t.Fatal(err)
				}
			}
			grown := redistest.HeapBack(t, before, names*50, names, 5*time.Second)
			t.Logf("heap %+d B after %d names", grown, names)
		})
	}
}
