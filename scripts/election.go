package scripts

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed election_elect.lua
	electionElectSrc string
	//go:embed election_proclaim.lua
	electionProclaimSrc string
	//go:embed election_resign.lua
	electionResignSrc string
	//go:embed election_leader.lua
	electionLeaderSrc string
	//go:embed election_observe.lua
	electionObserveSrc string
)

// Leader election operations. An election's candidates queue on a fair
// lock; its holder records itself in the leader hash with a term drawn
// from a counter that is never reset, and every change is announced on
// the election's channel and appended to its log, which observers read.
// The headers of the .lua files document each
// one's KEYS, ARGV and replies.
var (
	ElectionElect    = redis.NewScript(electionElectSrc)
	ElectionProclaim = redis.NewScript(electionProclaimSrc)
	ElectionResign   = redis.NewScript(electionResignSrc)
	ElectionLeader   = redis.NewScript(electionLeaderSrc)
	ElectionObserve  = redis.NewScript(electionObserveSrc)
)
