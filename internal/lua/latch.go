package lua

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
	latchTrySetCount = redis.NewScript(latchTrySetCountSrc)
	latchCountDown   = redis.NewScript(latchCountDownSrc)
	latchDelete      = redis.NewScript(latchDeleteSrc)
)

// LatchTrySetCount returns the script that gives a count-down latch
// (Redisson RCountDownLatch) its count, if it has none.
func LatchTrySetCount() *redis.Script { return latchTrySetCount }

// LatchCountDown returns the script that counts a count-down latch down
// by one, opening it at zero.
func LatchCountDown() *redis.Script { return latchCountDown }

// LatchDelete returns the script that deletes a count-down latch's count,
// opening the latch.
func LatchDelete() *redis.Script { return latchDelete }
