package lua

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
	electionElect    = redis.NewScript(electionElectSrc)
	electionProclaim = redis.NewScript(electionProclaimSrc)
	electionResign   = redis.NewScript(electionResignSrc)
	electionLeader   = redis.NewScript(electionLeaderSrc)
	electionObserve  = redis.NewScript(electionObserveSrc)
)

// ElectionElect returns the script that makes the holder of an
// election's lock (a fair lock) its leader, with a new term.
func ElectionElect() *redis.Script { return electionElect }

// ElectionProclaim returns the script that changes the leader's value,
// keeping its term.
func ElectionProclaim() *redis.Script { return electionProclaim }

// ElectionResign returns the script that ends a leadership, before its
// lock is released.
func ElectionResign() *redis.Script { return electionResign }

// ElectionLeader returns the script that reads an election's leader.
func ElectionLeader() *redis.Script { return electionLeader }

// ElectionObserve returns the script that reads what an election's
// observer has not seen yet, from the election's log.
func ElectionObserve() *redis.Script { return electionObserve }
