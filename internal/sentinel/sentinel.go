// Package sentinel holds the sentinel errors that relock's lowest
// packages (internal/hub, internal/renew) return and that internal/core
// and the public packages re-export, so that errors.Is matches one value
// whichever package a caller names. It imports nothing of relock's.
package sentinel

import "errors"

// ErrClosed reports use of something closed: a relock Client, a pubsub
// Hub or a Watchdog. relock.ErrClosed, pubsub.ErrClosed and
// watchdog.ErrClosed are this value.
var ErrClosed = errors.New("relock: closed")
