package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// serverError is an error as Redis replies it.
type serverError string

func (e serverError) Error() string { return string(e) }
func (serverError) RedisError()     {}

// TestConnectError tells a refused login from a refusal of another kind
// and from a server out of reach.
func TestConnectError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{serverError("WRONGPASS invalid username-password pair or user is disabled."), "authentication to Redis at h:1 failed: WRONGPASS"},
		{fmt.Errorf("dial: %w", serverError("NOAUTH Authentication required.")), "authentication to Redis at h:1 failed: dial: NOAUTH"},
		{serverError("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"), "authentication to Redis at h:1 failed: ERR AUTH"},
		{serverError("NOPERM User op has no permissions to run the 'ping' command"), "the Redis server at h:1 refused the connection: NOPERM"},
		{serverError("LOADING Redis is loading the dataset in memory"), "the Redis server at h:1 refused the connection: LOADING"},
		{errors.New("dial tcp h:1: connect: connection refused"), "cannot reach Redis at h:1: dial tcp"},
	} {
		if got := connectError("h:1", tc.err).Error(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("connectError(%v) = %q, want %q...", tc.err, got, tc.want)
		}
	}
}
