package rwlock_test

import (
	"testing"

	"github.com/relock-go/relock/internal/testing/locktest"
)

// TestWriterSuite runs the behaviour suite every lock type shares on the
// write side, an exclusive reentrant lock.
func TestWriterSuite(t *testing.T) { locktest.Run(t, srv, locktest.RWWriter) }

// TestReaderSuite runs the read side's behaviour suite: shared reads,
// writers waiting for the last reader, wake-ups, reentrancy and downgrade,
// and exclusion between the sides.
func TestReaderSuite(t *testing.T) { locktest.RunReaders(t, srv) }
