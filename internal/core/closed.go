package core

import "github.com/relock-go/relock/internal/sentinel"

// ErrClosed is the closed sentinel of package sentinel, which the hub and
// the watchdog return too, so that errors.Is matches one value for all.
var ErrClosed = sentinel.ErrClosed
