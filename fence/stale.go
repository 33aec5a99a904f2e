package fence

import (
	"errors"
	"fmt"

	"github.com/relock-go/relock"
)

// ErrStale reports a write refused because a higher token was recorded
// for its resource: the writer's lock or leadership has passed to
// another, which wrote since. Such a write must not be retried with the
// same token.
var ErrStale = errors.New("fence: stale token")

// A StaleError is the error of a write refused because its token is
// stale. It matches ErrStale.
// A nil *StaleError's Error says so; it still unwraps to ErrStale.
type StaleError struct {
	Resource string
	Token    int64 // the refused token
	Last     int64 // the higher token recorded for Resource
}

func (e *StaleError) Error() string {
	if e == nil {
		return "fence: nil *StaleError"
	}
	return fmt.Sprintf("fence: %q: stale token %d, %d seen", e.Resource, e.Token, e.Last)
}

// Unwrap returns ErrStale.
func (e *StaleError) Unwrap() error { return ErrStale }

// checkToken refuses negative tokens: relock's tokens and terms, and
// Redisson's, count up from 1.
func checkToken(resource string, token int64) error {
	if token < 0 {
		return fmt.Errorf("fence: %q: negative token %d: %w", resource, token, relock.ErrInvalidArgument)
	}
	return nil
}
