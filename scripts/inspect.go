package scripts

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
