package renew_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/renew"
)

// A short lease beside leases of the watchdog's timeout, as an election
// with a TTL of its own has.
const (
	slease    = time.Second
	sinterval = slease / 3
)

// shortRenewal is renewal for a lease of its own timeout.
func shortRenewal(name, field string, lease time.Duration) renew.Renewal {
	r := renewal(name, field, lease)
	r.Timeout = lease
	return r
}

// A keyRound is one pipeline: when it started and the keys it renewed.
type keyRound struct {
	at   time.Time
	keys map[string]bool
}

// A keyHook records the keys of every pipeline of renewals.
type keyHook struct {
	mu     sync.Mutex
	rounds []keyRound
}

func (h *keyHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *keyHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *keyHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r := keyRound{at: time.Now(), keys: map[string]bool{}}
		for _, c := range cmds {
			// EVALSHA sha numkeys key...: one key each here.
			if args := c.Args(); strings.HasPrefix(c.Name(), "eval") && len(args) > 3 {
				r.keys[fmt.Sprint(args[3])] = true
			}
		}
		if len(r.keys) > 0 {
			h.mu.Lock()
			h.rounds = append(h.rounds, r)
			h.mu.Unlock()
		}
		return next(ctx, cmds)
	}
}

// since returns the rounds that started at or after t.
func (h *keyHook) since(t time.Time) []keyRound {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []keyRound
	for _, r := range h.rounds {
		if !r.at.Before(t) {
			out = append(out, r)
		}
	}
	return out
}

// A lease of its own timeout is renewed every third of it, in rounds of
// its own, and a lease of the watchdog's timeout beside it every
// interval of that, riding along with the short lease's rounds rather
// than costing rounds of its own; neither TTL ever drops below its lease
// less an interval (and the ride's slack). Once the short lease stops,
// the rounds come every vinterval again.
func TestVirtualMixedTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rdb, _, w := bubble(t)
		h := &keyHook{}
		rdb.AddHook(h)
		if err := scriptsLoaded(rdb); err != nil {
			t.Fatal(err)
		}
		lfield, lsent := hold(t, rdb, "long", vlease)
		sfield, ssent := hold(t, rdb, "short", slease)
		l := newLosses()
		if _, err := w.Watch(renewal("long", lfield, vlease), lsent, l.lost); err != nil {
			t.Fatal(err)
		}
		short, err := w.Watch(shortRenewal("short", sfield, slease), ssent, l.lost)
		if err != nil {
			t.Fatal(err)
		}
		const span = time.Minute
		step := sinterval / 4
		for time.Since(ssent) < span {
			settle(step)
			if ttl := m.TTL("short"); ttl < slease-sinterval || ttl > slease {
				t.Fatalf("short lease's TTL %v at %v, want in [%v, %v]", ttl, time.Since(ssent), slease-sinterval, slease)
			}
			if ttl := m.TTL("long"); ttl < vlease-vinterval-vinterval/10 || ttl > vlease {
				t.Fatalf("long lease's TTL %v at %v, want in [%v, %v]", ttl, time.Since(lsent), vlease-vinterval-vinterval/10, vlease)
			}
		}
		rounds := h.since(ssent)
		if want := int(span / sinterval); len(rounds) < want-1 || len(rounds) > want+1 {
			t.Fatalf("%d rounds in %v, want %d (one per %v)", len(rounds), span, want, sinterval)
		}
		var longs []time.Time
		for i, r := range rounds {
			if !r.keys["short"] {
				t.Fatalf("round %d at %v renews %v, not the short lease: a round of the long lease alone", i, r.at.Sub(ssent), r.keys)
			}
			if i > 0 {
				if gap := r.at.Sub(rounds[i-1].at); gap != sinterval {
					t.Fatalf("round %d came %v after the one before, want %v", i, gap, sinterval)
				}
			}
			if r.keys["long"] {
				longs = append(longs, r.at)
			}
		}
		if want := int(span / vinterval); len(longs) != want {
			t.Fatalf("long lease renewed %d times in %v, want %d", len(longs), span, want)
		}
		prev := lsent
		for _, at := range longs {
			if gap := at.Sub(prev); gap < vinterval-vinterval/10 || gap > vinterval+sinterval {
				t.Fatalf("long lease renewed %v after its previous renewal, want about %v", gap, vinterval)
			}
			prev = at
		}

		short.Stop()
		stopped := time.Now()
		settle(3 * vinterval)
		if rounds := h.since(stopped); len(rounds) != 3 {
			t.Fatalf("%d rounds in %v after the short lease stopped, want 3", len(rounds), 3*vinterval)
		}
		if n := l.count(); n != 0 {
			t.Fatalf("lost called %d times", n)
		}
	})
}

// A short lease that no renewal reaches is reported lost at its own
// deadline: its last successful renewal's send time plus its lease less
// the watchdog's margin in proportion (a tenth by default, 2 s of 30 s
// after SetMargin), while a lease of the watchdog's timeout rides out the
// outage.
func TestVirtualShortExpiry(t *testing.T) {
	for _, tc := range []struct {
		name   string
		margin time.Duration // 0: the default
		want   time.Duration // the short lease's margin
	}{
		{"default margin", 0, slease / 10},
		{"set margin", 2 * time.Second, slease * 2 / 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, rdb, c, w := bubble(t)
				if tc.margin > 0 {
					if err := w.SetMargin(tc.margin); err != nil {
						t.Fatal(err)
					}
				}
				lfield, lsent := hold(t, rdb, "long", vlease)
				sfield, ssent := hold(t, rdb, "short", slease)
				ll, sl := newLosses(), newLosses()
				if _, err := w.Watch(renewal("long", lfield, vlease), lsent, ll.lost); err != nil {
					t.Fatal(err)
				}
				if _, err := w.Watch(shortRenewal("short", sfield, slease), ssent, sl.lost); err != nil {
					t.Fatal(err)
				}
				settle(5*sinterval + sinterval/2)
				last := c.lastSuccess()
				if d := last.Sub(ssent); d != 5*sinterval {
					t.Fatalf("last successful round sent at %v, want %v", d, 5*sinterval)
				}
				m.SetError("ERR simulated outage")
				got := sl.await(t, slease)
				if !errors.Is(got.reason, renew.ErrExpired) {
					t.Fatalf("lost(%v), want ErrExpired", got.reason)
				}
				if d, want := got.at.Sub(last), slease-tc.want; d != want {
					t.Fatalf("short lease lost %v after its last successful renewal, want %v", d, want)
				}
				if ttl := m.TTL("short"); ttl < tc.want-time.Millisecond || ttl > tc.want {
					t.Fatalf("when lost was called the short lock had TTL %v left on the server, want %v", ttl, tc.want)
				}
				settle(sinterval)
				m.SetError("")
				settle(2 * vinterval)
				if n, k := ll.count(), sl.count(); n != 0 || k != 1 {
					t.Fatalf("lost called %d times for the long lease and %d for the short one, want 0 and 1", n, k)
				}
				if w.Len() != 1 || m.TTL("long") < vlease-vinterval {
					t.Fatalf("Len() = %d, long lease's TTL %v: want 1, renewed", w.Len(), m.TTL("long"))
				}
			})
		})
	}
}

// Start refuses a negative Timeout.
func TestNegativeTimeout(t *testing.T) {
	w := newWatchdog(t, srv.Client(t), vlease)
	r := renewal("x", "f", vlease)
	r.Timeout = -time.Second
	if _, err := w.Watch(r, time.Now(), func(error) {}); err == nil {
		t.Fatal("Watch with a negative Timeout succeeded")
	}
	if w.Len() != 0 {
		t.Fatalf("Len() = %d, want 0", w.Len())
	}
}
