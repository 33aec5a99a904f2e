package relock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/nonreentrant"
	"github.com/relock-go/relock/permits"
	"github.com/relock-go/relock/redlock"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
	"github.com/relock-go/relock/spinlock"
)

// An ender is one way a primitive's hold ends, from another goroutine
// than the one watching its context.
type ender struct {
	name  string
	cause error // what context.Cause of the hold's context matches
	end   func(t *testing.T, l relock.Locker, lctx context.Context)
}

// TestEndedBeforeDone: when the context a primitive returned is done,
// the hold is already over everywhere in its client. A goroutine that
// sees <-lctx.Done() finds the Client holding nothing (Stats().Holds),
// and takes the lock again at once with TryLock(ctx, 0), 20 times in a
// row, for every primitive and every way a hold ends.
func TestEndedBeforeDone(t *testing.T) {
	redistest.Parallel(t)
	srv := redistest.Start(t)
	rc := redistest.Relock(t, srv.LockClient(t), nil)
	bg := context.Background()
	lockers := map[string]func(name string) relock.Locker{
		"reentrant":    func(n string) relock.Locker { return reentrant.New(rc, n, nil) },
		"fair":         func(n string) relock.Locker { return fair.New(rc, n, nil) },
		"spinlock":     func(n string) relock.Locker { return spinlock.New(rc, n, nil) },
		"nonreentrant": func(n string) relock.Locker { return nonreentrant.New(rc, n, nil) },
		"rwlock/write": func(n string) relock.Locker { return rwlock.New(rc, n, nil).Writer() },
		"rwlock/read":  func(n string) relock.Locker { return rwlock.New(rc, n, nil).Reader() },
		"reentrant/fixed": func(n string) relock.Locker {
			return reentrant.New(rc, n, &reentrant.Options{Lease: 50 * time.Millisecond})
		},
		"multilock": func(n string) relock.Locker {
			ml := multilock.New(reentrant.New(rc, n+":a", nil), fair.New(rc, n+":b", nil))
			return ml
		},
		"redlock": func(n string) relock.Locker {
			rl := redlock.New([]*relock.Client{rc}, n, nil)
			return rl
		},
	}
	for kind, mk := range lockers {
		enders := []ender{{name: "Unlock", cause: relock.ErrUnlocked, end: func(t *testing.T, l relock.Locker, lctx context.Context) {
			if err := l.Unlock(lctx); err != nil {
				t.Error(err)
			}
		}}}
		if _, ok := mk("x").(interface {
			ForceUnlock(context.Context) (bool, error)
		}); ok && kind != "reentrant/fixed" {
			enders = append(enders, ender{name: "ForceUnlock", cause: relock.ErrLockLost, end: func(t *testing.T, l relock.Locker, _ context.Context) {
				f := l.(interface {
					ForceUnlock(context.Context) (bool, error)
				})
				if _, err := f.ForceUnlock(bg); err != nil {
					t.Error(err)
				}
			}})
		}
		if kind == "reentrant/fixed" {
			enders = []ender{{name: "LeaseEnds", cause: relock.ErrLockLost, end: func(*testing.T, relock.Locker, context.Context) {}}}
		}
		for _, e := range enders {
			t.Run(kind+"/"+e.name, func(t *testing.T) {
				l := mk(t.Name())
				for i := range 20 {
					lctx, err := l.Lock(relock.WithNewOwner(bg))
					if err != nil {
						t.Fatalf("round %d: %v", i, err)
					}
					go e.end(t, l, lctx)
					<-lctx.Done()
					if n := rc.Stats().Holds; n != 0 {
						t.Fatalf("round %d: %d holds on the client once the context is done", i, n)
					}
					if cause := context.Cause(lctx); !errors.Is(cause, e.cause) {
						t.Fatalf("round %d: cause %v, want %v", i, cause, e.cause)
					}
					if kind == "reentrant/fixed" {
						// The server's own expiry follows the client's
						// deadline: wait for it.
						redistest.Eventually(t, time.Second, "the lease's end on the server", func() bool {
							ok, _ := l.(*reentrant.Mutex).IsLocked(bg)
							return !ok
						})
					}
					again, err := l.TryLock(relock.WithNewOwner(bg), 0)
					if err != nil {
						t.Fatalf("round %d: TryLock right after the end: %v", i, err)
					}
					if err := l.Unlock(again); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	}

	t.Run("permits", func(t *testing.T) {
		s := permits.New(rc, redistest.Key(t), nil)
		if _, err := s.TrySetPermits(bg, 1); err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			p, err := s.Acquire(bg)
			if err != nil {
				t.Fatal(err)
			}
			go func() { _ = p.Release(bg) }()
			<-p.Context().Done()
			if n := rc.Stats().Holds; n != 0 {
				t.Fatalf("round %d: %d holds on the client once the permit's context is done", i, n)
			}
			if cause := context.Cause(p.Context()); !errors.Is(cause, relock.ErrUnlocked) {
				t.Fatalf("round %d: cause %v, want relock.ErrUnlocked", i, cause)
			}
			q, err := s.TryAcquire(bg, 0)
			if err != nil {
				t.Fatalf("round %d: TryAcquire right after the release: %v", i, err)
			}
			if err := q.Release(bg); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("election", func(t *testing.T) {
		name := redistest.Key(t)
		e := election.New(rc, name, nil)
		for i := range 20 {
			ctx, cancel := context.WithCancel(bg)
			lead, err := e.Campaign(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			switch i % 2 {
			case 0:
				go cancel()
			default:
				go func() { _ = e.Resign(lead) }()
			}
			<-lead.Done()
			if err := e.Resign(bg); !errors.Is(err, election.ErrNotLeader) {
				t.Fatalf("round %d: Resign after the end: %v, want ErrNotLeader", i, err)
			}
			again, err := e.TryCampaign(bg, "a", time.Second)
			if err != nil {
				t.Fatalf("round %d: Campaign right after the end: %v", i, err)
			}
			if err := e.Resign(again); err != nil {
				t.Fatal(err)
			}
			cancel()
		}
	})
}
