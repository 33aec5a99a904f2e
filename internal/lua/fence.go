package lua

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed fence_prelude.lua
	fencePrelude string
	//go:embed fence_set.lua
	fenceSetSrc string
	//go:embed fence_hset.lua
	fenceHSetSrc string
	//go:embed fence_xadd.lua
	fenceXAddSrc string
)

// Fenced writes (package fence): each is fence_prelude.lua, which
// documents their common KEYS, ARGV[1] and replies, followed by the
// write's own file. A write goes ahead only when the writer's fencing
// token is at least the last one recorded for its resource, and records
// it, in one atomic step.
var (
	fenceSet  = redis.NewScript(link(fenceSetSrc, fencePrelude))
	fenceHSet = redis.NewScript(link(fenceHSetSrc, fencePrelude))
	fenceXAdd = redis.NewScript(link(fenceXAddSrc, fencePrelude))
)

// FenceSet returns the script that SETs a key (with a TTL, none, or
// KEEPTTL) unless the writer's token is stale.
func FenceSet() *redis.Script { return fenceSet }

// FenceHSet returns the script that HSETs fields of a hash unless the
// writer's token is stale.
func FenceHSet() *redis.Script { return fenceHSet }

// FenceXAdd returns the script that XADDs an entry to a stream unless the
// writer's token is stale, and replies with the entry's ID.
func FenceXAdd() *redis.Script { return fenceXAdd }
