package redistest

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
)

// Relock returns a relock client over rdb, closed when tb ends (before
// rdb, when rdb was made for tb too: cleanups run last first).
func Relock(tb testing.TB, rdb redis.UniversalClient, opts *relock.Options) *relock.Client {
	tb.Helper()
	rc, err := relock.New(rdb, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { rc.Close() })
	return rc
}
