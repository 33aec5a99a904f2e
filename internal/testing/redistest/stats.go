package redistest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// CommandCalls returns the calls the server behind rdb has run of each
// command, from INFO commandstats, by lower-case name ("evalsha",
// "wait"). The INFO it sends is counted from the next call on.
func CommandCalls(tb testing.TB, rdb *redis.Client) map[string]int64 {
	tb.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatalf("INFO commandstats: %v", err)
	}
	calls := make(map[string]int64)
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		cmd, isStat := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isStat {
			continue
		}
		n, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		v, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			tb.Fatalf("INFO commandstats line %q: %v", line, err)
		}
		calls[cmd] = v
	}
	return calls
}
