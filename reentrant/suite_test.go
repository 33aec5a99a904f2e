package reentrant_test

import (
	"context"
	"errors"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/reentrant"
)

// TestSuite runs the behaviour suite every lock type shares.
func TestSuite(t *testing.T) {
	locktest.Run(t, srv, locktest.Reentrant)
}

// TestTokenErrors: Token needs Fencing and a hold.
func TestTokenErrors(t *testing.T) {
	rc := newClient(t, nil)
	ctx := relock.WithNewOwner(context.Background())
	if _, err := reentrant.New(rc, "tok", nil).Token(ctx); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("Token without Fencing = %v, want ErrInvalidArgument", err)
	}
	if _, err := reentrant.New(rc, "tok", &reentrant.Options{Fencing: true}).Token(ctx); !errors.Is(err, relock.ErrNotHeld) {
		t.Errorf("Token without a hold = %v, want ErrNotHeld", err)
	}
	if _, err := reentrant.New(nil, "tok", &reentrant.Options{Fencing: true}).Token(ctx); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("Token on a nil client = %v, want ErrInvalidArgument", err)
	}
}
