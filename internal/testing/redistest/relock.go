package redistest

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
)

// Linger is the relock.Options.Linger of the tests' clients unless they
// set one: short, so that tests which count subscriptions see idle
// channels go within a fraction of a second, yet long enough that
// contended loops join live channels.
const Linger = 250 * time.Millisecond

// Relock returns a relock client over rdb, closed when tb ends (before
// rdb, when rdb was made for tb too: cleanups run last first). Options
// without a Linger get Linger.
func Relock(tb testing.TB, rdb redis.UniversalClient, opts *relock.Options) *relock.Client {
	tb.Helper()
	var o relock.Options
	if opts != nil {
		o = *opts
	}
	if o.Linger == 0 {
		o.Linger = Linger
	}
	rc, err := relock.New(rdb, &o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { rc.Close() })
	return rc
}
