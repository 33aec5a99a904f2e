package hashlock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/hashlock"
)

// replyError is an error reply as go-redis returns one (a redis.Error).
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

// TestDecode reads every reply shape of the listening locks' acquires.
func TestDecode(t *testing.T) {
	network := errors.New("broken pipe")
	for _, tc := range []struct {
		name    string
		reply   any
		err     error
		want    hashlock.Result
		wantErr error
		refused bool
		bad     bool // an unexpected reply
	}{
		{name: "acquired", reply: int64(1), want: hashlock.Result{Acquired: true}},
		{name: "late", reply: hashlock.LateReply, want: hashlock.Result{Late: true}},
		{name: "taken", reply: []any{int64(250), int64(1)}, want: hashlock.Result{Sleep: 250 * time.Millisecond, Foreign: true}},
		{name: "taken without expiry", reply: []any{int64(-1), int64(0)}, want: hashlock.Result{Sleep: hashlock.NoTTLSleep}},
		{name: "error", err: network, wantErr: network},
		{name: "refused", err: replyError(hashlock.Reacquire), refused: true},
		{name: "short array", reply: []any{int64(250)}, bad: true},
		{name: "not an array", reply: "OK", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := hashlock.Decode(tc.reply, tc.err, 2, hashlock.Waiting)
			switch {
			case tc.bad:
				if err == nil {
					t.Fatalf("Decode(%v) = %+v, want an error", tc.reply, got)
				}
			case tc.refused:
				if err != nil || !errors.Is(got.Refused, relock.ErrNotReentrant) {
					t.Fatalf("Decode(%v) = %+v, %v; want Refused matching ErrNotReentrant", tc.err, got, err)
				}
			case !errors.Is(err, tc.wantErr) || got != tc.want:
				t.Fatalf("Decode(%v, %v) = %+v, %v; want %+v, %v", tc.reply, tc.err, got, err, tc.want, tc.wantErr)
			}
		})
	}
}
