package core_test

import (
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock/internal/core"
)

// TestCheckWait: a negative wait is ErrInvalidArgument, named with the
// package and the wait; 0 (one attempt) and a positive one pass.
func TestCheckWait(t *testing.T) {
	for _, tc := range []struct {
		wait time.Duration
		want string // "" for no error
	}{
		{-time.Second, "reentrant: negative wait -1s: relock: invalid argument"},
		{-time.Nanosecond, "reentrant: negative wait -1ns: relock: invalid argument"},
		{0, ""},
		{time.Second, ""},
	} {
		err := core.CheckWait("reentrant", tc.wait)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckWait(%v) = %v, want nil", tc.wait, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || !errors.Is(err, core.ErrInvalidArgument)):
			t.Errorf("CheckWait(%v) = %v, want %q matching ErrInvalidArgument", tc.wait, err, tc.want)
		}
	}
}
