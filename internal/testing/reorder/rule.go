package reorder

import (
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// A Rule decides, for each complete command read from a client
// connection, what the proxy does with it. The proxy calls its rule one
// command at a time, in Seq order, on its own goroutines: a rule must
// return promptly and must not wait for the proxy (Quiet, Close); it may
// call SetRule and Release. A nil Rule forwards everything at once.
type Rule func(c Cmd) Action

// A Cmd is a command as the proxy read it from a client connection.
type Cmd struct {
	// Conn is the client connection's number, from 1, in accept order.
	Conn int
	// Seq is the command's number on the proxy, from 1, across
	// connections, in the order the proxy read them.
	Seq int
	// Args are the command's arguments as sent ("evalsha", sha,
	// numkeys, keys..., args...). For an inline command they are the
	// line split at spaces, quotes not interpreted.
	Args []string
}

// Name returns the command's name in lower case ("evalsha").
func (c Cmd) Name() string {
	if len(c.Args) == 0 {
		return ""
	}
	return strings.ToLower(c.Args[0])
}

// An Action is what the proxy does with a command. The zero Action
// forwards it at once and passes its reply back.
type Action struct {
	// Hold delays the command by this long, from when the proxy read
	// it, before it is forwarded to the server. Every later command of
	// the same connection waits for it too: a connection's commands
	// reach the server in the order they were sent. 0 forwards it at
	// once (after the held commands before it).
	Hold time.Duration
	// DropReply forwards the command and, when the server's reply to
	// it arrives, closes the client connection instead of passing the
	// reply on: the command ran, its caller never hears of it. The
	// replies to the connection's later commands are discarded too.
	DropReply bool
}

// Seeded returns a Rule driven by seed, for explorers. For each command
// that match accepts (every command when match is nil) it holds the
// command with probability pHold, for a duration drawn uniformly from
// [0, maxHold], and independently drops its reply with probability
// pDrop; other commands get the zero Action. Each matched command draws
// the same three numbers from a PCG source seeded with seed, so the rule
// returns the same Actions for the same sequence of Cmds. The rule is
// safe for concurrent use.
func Seeded(seed int64, match func(Cmd) bool, pHold, pDrop float64, maxHold time.Duration) Rule {
	var mu sync.Mutex // guards rng
	rng := rand.New(rand.NewPCG(uint64(seed), 0x72656f72646572))
	span := uint64(max(maxHold, 0)) + 1
	return func(c Cmd) Action {
		if match != nil && !match(c) {
			return Action{}
		}
		mu.Lock()
		hold, d, drop := rng.Float64(), rng.Uint64N(span), rng.Float64()
		mu.Unlock()
		var a Action
		if hold < pHold {
			a.Hold = time.Duration(d)
		}
		a.DropReply = drop < pDrop
		return a
	}
}
