package lua

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

//go:embed inspect_read.lua
var inspectReadSrc string

// InspectRead reads one lock's whole state, every lock type's keys at
// once, and writes nothing: package inspect's view for operators. Its
// header documents KEYS, ARGV and the reply.
var inspectRead = redis.NewScript(inspectReadSrc)

// InspectRead returns the script that reads one lock's whole state, every
// lock type's keys at once, and writes nothing: package inspect's view for
// operators.
func InspectRead() *redis.Script { return inspectRead }

//go:embed inspect_sync.lua
var inspectSyncSrc string

var inspectSync = redis.NewScript(inspectSyncSrc)

// InspectSync returns the script that reads the synchronizers kept under
// one name (semaphore, expirable permits, latch, election) and writes
// nothing: package inspect's view for operators.
func InspectSync() *redis.Script { return inspectSync }
