package transport

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestEnded: an error of a call whose context ended matches the sentinel
// and the context's error, keeps Redis's side, and keeps what an error
// wrapping the context's says (a call never sent) without repeating the
// sentinel.
func TestEnded(t *testing.T) {
	sentinel := errors.New("not acquired")
	ctx, cancel := context.WithCancel(context.Background())
	if err := Ended(ctx, sentinel, errors.New("x")); err.Error() != "x" {
		t.Fatalf("ctx live: %v, want the error as it is", err)
	}
	cancel()
	unsent := notSent{context.Canceled}
	for _, tc := range []struct {
		err  error
		want string
		sent bool
	}{
		{nil, "not acquired: context canceled", true},
		{context.Canceled, "not acquired: context canceled", true},
		{errors.New("i/o timeout"), "not acquired: context canceled: i/o timeout", true},
		{unsent, "not acquired: context canceled (before the call was sent)", false},
		{fmt.Errorf("%w: %w", sentinel, unsent), "not acquired: context canceled (before the call was sent)", false},
	} {
		err := Ended(ctx, sentinel, tc.err)
		if err.Error() != tc.want || !errors.Is(err, sentinel) || !errors.Is(err, context.Canceled) || NotSent(err) == tc.sent {
			t.Errorf("Ended(%v) = %v (NotSent %v), want %q (NotSent %v)", tc.err, err, NotSent(err), tc.want, !tc.sent)
		}
	}
}
