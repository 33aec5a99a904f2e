package scripts

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed latch_try_set_count.lua
	latchTrySetCountSrc string
	//go:embed latch_count_down.lua
	latchCountDownSrc string
	//go:embed latch_delete.lua
	latchDeleteSrc string
)

// Count-down latch (Redisson RCountDownLatch) operations. Each replies 1
// when a message is due on the latch's channel. Redisson's channel,
// redisson_countdownlatch__channel__{<name>}, wraps the whole name in
// braces, so for a name with a hash tag of its own it lies in another
// cluster slot than the latch: the scripts then take the latch's key
// alone, and the caller publishes.
var (
	LatchTrySetCount = redis.NewScript(latchTrySetCountSrc)
	LatchCountDown   = redis.NewScript(latchCountDownSrc)
	LatchDelete      = redis.NewScript(latchDeleteSrc)
)
