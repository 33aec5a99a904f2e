package multilock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/reentrant"
)

// TestCloseEndsWait: a MultiLock waiting for its second member when the
// members' client closes returns ErrClosed at once, and the member it had
// taken is released, not left to its lease.
func TestCloseEndsWait(t *testing.T) {
	bg := context.Background()
	base := redistest.Key(t)
	raw := servers[0].Client(t)
	rc := newClients(t, nil)[0]
	other := newClients(t, nil)[0]
	// "b" is held elsewhere; "a" sorts first, so the MultiLock takes it
	// and then waits for "b".
	hold := reentrant.New(other, base+":b", nil)
	hctx, err := hold.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Unlock(hctx)
	ml := multilock.New(reentrant.New(rc, base+":a", nil), reentrant.New(rc, base+":b", nil))
	errc := make(chan error, 1)
	go func() {
		_, err := ml.Lock(bg)
		errc <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for raw.Exists(bg, base+":a").Val() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("MultiLock did not take its first member")
		}
		time.Sleep(10 * time.Millisecond)
	}
	closed := time.Now()
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, relock.ErrClosed) {
			t.Fatalf("MultiLock.Lock after Close = %v, want ErrClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("MultiLock.Lock still waiting 2s after Close")
	}
	t.Logf("MultiLock.Lock returned %v after Close began", time.Since(closed))
	if raw.Exists(bg, base+":a").Val() != 0 {
		t.Fatalf("member taken before Close still locked (PTTL %v)", raw.PTTL(bg, base+":a").Val())
	}
}
