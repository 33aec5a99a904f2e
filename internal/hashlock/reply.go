package hashlock

import (
	"fmt"

	"github.com/relock-go/relock/internal/transport"
)

// Taken is the array of integers an acquire script replies when the
// lock is taken, as read by Decode; unused places are 0.
type Taken [3]int64

// Decode reads an acquire's reply and error as the scripts of the locks
// whose waiters listen reply them (acquire.lua, fenced_acquire.lua,
// nonreentrant_acquire.lua, fair_acquire.lua): the error Reacquire
// refuses the wait (Reentry), another error fails the attempt, 1 is
// acquired, LateReply late, and an array of n integers (n at most 3)
// says the lock is taken, which read turns into the Result.
func Decode(reply any, err error, n int, read func(Taken) Result) (Result, error) {
	if err != nil {
		if r, ok := Reentry(err); ok {
			return r, nil
		}
		return Result{}, err
	}
	if transport.OneReply(reply) {
		return Result{Acquired: true}, nil
	}
	if reply == LateReply {
		return Result{Late: true}, nil
	}
	var t Taken
	r, ok := reply.([]any)
	if !ok || len(r) != n || n > len(t) {
		return Result{}, fmt.Errorf("unexpected acquire reply %v", reply)
	}
	for i, v := range r {
		t[i], _ = v.(int64)
	}
	return read(t), nil
}

// Waiting reads the {PTTL, foreign} of acquire.lua and
// nonreentrant_acquire.lua: a registered waiter's Sleep (Registered),
// and whether a holder or waiter ahead is a Redisson client.
func Waiting(t Taken) Result {
	return Result{Sleep: Registered(t[0]), Foreign: t[1] == 1}
}
