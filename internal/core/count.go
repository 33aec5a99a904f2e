package core

import (
	"fmt"
	"strconv"
)

// MaxCount is the largest count a synchronizer takes: Redis's Lua numbers
// are doubles, which hold integers exactly only up to 2^53, and a script
// comparing a larger count would round it (a semaphore could then hand
// out more permits than it has). relock.MaxCount exports it.
//
// Only arguments are bounded. A count Redis stores may grow past
// MaxCount (releases add up), and stays exact there: the scripts change
// it with INCRBY and DECRBY, which take their argument as a string and
// add in 64 bits, compare it only with an argument of at most MaxCount,
// which rounding cannot cross (see semaphore_acquire.lua), and publish
// and return it as the key's string, never as a Lua number.
const MaxCount = 1 << 53

// CountOK reports whether n's magnitude is at most MaxCount.
func CountOK(n int64) bool { return n >= -MaxCount && n <= MaxCount }

// ReplyInt reads a script's count reply, an integer or, for a count read
// back from its key to stay exact, a decimal string.
func ReplyInt(reply any) (int64, error) {
	switch v := reply.(type) {
	case int64:
		return v, nil
	case string:
		return strconv.ParseInt(v, 10, 64)
	}
	return 0, fmt.Errorf("unexpected reply %v", reply)
}
