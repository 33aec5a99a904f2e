package clustertest_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestForceUnlockNotice: a ForceUnlock on one client tells the holder on
// another at once, through the holder's channel, which is in a slot
// other than the lock's (here on another master): with sharded pub/sub
// the forcing client publishes there after the script (SPUBLISH routed
// by the channel's slot), which a script could not; with global pub/sub
// (PUBLISH) any node does. The gap is logged.
func TestForceUnlockNotice(t *testing.T) {
	c := needCluster(t)
	for _, mode := range []struct {
		name string
		mode relock.PubSubMode
	}{{"sharded", relock.PubSubAuto}, {"global", relock.PubSubGlobal}} {
		t.Run(mode.name, func(t *testing.T) {
			bg := context.Background()
			raw := c.Client(t)
			opts := &relock.Options{PubSub: mode.mode}
			holder := newClient(t, c.LockClient(t), opts)
			notices := redistest.NoticeChannel(holder.ID())
			home, err := raw.MasterForKey(bg, notices)
			if err != nil {
				t.Fatal(err)
			}
			// A lock on another master than the holder's channel.
			var name string
			for i := 0; ; i++ {
				name = redistest.Key(t) + ":" + strconv.Itoa(i)
				node, err := raw.MasterForKey(bg, name)
				if err != nil {
					t.Fatal(err)
				}
				if node.Options().Addr != home.Options().Addr {
					break
				}
			}
			hctx, err := reentrant.New(holder, name, nil).Lock(bg)
			if err != nil {
				t.Fatal(err)
			}
			redistest.AwaitListening(t, raw, holder)
			told := make(chan time.Time, 1)
			context.AfterFunc(hctx, func() { told <- time.Now() })

			forcer := reentrant.New(newClient(t, c.LockClient(t), opts), name, nil)
			began := time.Now()
			if ok, err := forcer.ForceUnlock(bg); err != nil || !ok {
				t.Fatalf("ForceUnlock = %v, %v; want true", ok, err)
			}
			returned := time.Now()
			select {
			case at := <-told:
				t.Logf("holder told %v after ForceUnlock began, %v after it returned", at.Sub(began), at.Sub(returned))
			case <-time.After(wait):
				t.Fatalf("holder not told within %v (its renewal is 10s away)", wait)
			}
			if at := time.Since(began); at > time.Second {
				t.Fatalf("holder told %v after ForceUnlock began, want within 1s", at)
			}
			if cause := context.Cause(hctx); !errors.Is(cause, relock.ErrLockLost) || !strings.Contains(cause.Error(), "force-unlocked") {
				t.Fatalf("holder's cause %v, want ErrLockLost saying it was force-unlocked", cause)
			}
		})
	}
}
