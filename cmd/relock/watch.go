package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/layout"
)

// watchCmd draws a name's state, then draws it again whenever it
// changes, until ctx ends (an interrupt), -count drawings are made, or
// -for has passed since the first (which is always made). It reads the
// name when a message arrives on one of its channels (a release, a
// hand-off, a wake-up, a count published, a new leader) and every
// -interval, and draws only when what it read differs from the last
// drawing in more than the passing of time. A name that nothing was
// ever under while watched is notFoundError: with -count N, the watch
// gives up on one after N reads.
func watchCmd(ctx context.Context, e *env, args []string) error {
	name := args[0]
	events, stop := subscribe(ctx, e.rdb, e.cluster, name)
	defer stop()
	tick := time.NewTicker(e.opts.interval)
	defer tick.Stop()
	var last string
	appeared := false
	end := func() error {
		if !appeared {
			return notFoundError{name}
		}
		return nil
	}
	for draws, reads := 0, 0; ; reads++ {
		l, err := e.read(ctx, name)
		switch {
		case ctx.Err() != nil:
			return end()
		case err != nil:
			return err
		}
		appeared = appeared || l.Exists()
		if !appeared && e.opts.count > 0 && reads+1 >= e.opts.count {
			if shape(l) != last {
				if err := e.draw(l); err != nil {
					return err
				}
			}
			return end()
		}
		if s := shape(l); s != last {
			if err := e.draw(l); err != nil {
				return err
			}
			last = s
			if draws++; e.opts.count > 0 && draws == e.opts.count {
				return end()
			}
			if draws == 1 && e.opts.duration > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, e.opts.duration)
				defer cancel()
			}
		}
		select {
		case <-ctx.Done():
			return end()
		case <-tick.C:
		case <-events[0]:
		case <-events[1]:
		}
	}
}

// shape is a lock's state without what changes by itself as time passes:
// TTLs and the server's clock.
func shape(l *inspect.Lock) string {
	c := *l
	c.TTL, c.ServerTime = 0, time.Time{}
	c.Holders = make([]inspect.Holder, len(l.Holders))
	for i, h := range l.Holders {
		h.ReadLeases = make([]inspect.TTL, len(h.ReadLeases))
		c.Holders[i] = h
	}
	b, _ := json.Marshal(&c)
	return string(b)
}

// draw prints one state: a JSON line with -json; on a terminal, the
// table on a cleared screen; otherwise the table after a line with the
// server's time.
func (e *env) draw(l *inspect.Lock) error {
	if e.opts.json {
		return writeJSON(e.out, l, "")
	}
	head := fmt.Sprintf("--- %s at %s", l.Name, l.ServerTime.Format(time.RFC3339Nano))
	if terminal(e.out) {
		head = "\x1b[H\x1b[2J" + head + " (Ctrl-C to stop)"
	}
	if _, err := fmt.Fprintln(e.out, head); err != nil {
		return err
	}
	return writeLock(e.out, l)
}

// terminal reports whether w is a terminal.
func terminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// subscribe listens on the name's channels: the lock channel
// redisson_lock__channel:{<name>} and every channel under it (relock's
// per-client channels, Redisson's fair waiters' own), the read/write
// lock's redisson_rwlock:{<name>}, the semaphores' redisson_sc:{<name>}
// and relock's relock_sc:{<name>}:* under it, the latch's and the
// election's. On a cluster that has sharded pub/sub, where relock and
// Redisson publish with SPUBLISH, it also listens on the shared channels
// with SSUBSCRIBE (sharded pub/sub has no patterns: per-client channels
// are then seen only through the -interval reads; the latch channel of a
// name with a hash tag is in a slot of its own, which SSUBSCRIBE with
// the others cannot reach, and is left out).
// stop closes the subscriptions; go-redis owns the goroutines that feed
// the returned channels and ends them on close.
func subscribe(ctx context.Context, rdb redis.UniversalClient, cluster bool, name string) (events [2]<-chan *redis.Message, stop func()) {
	shared := []string{layout.LockChannel(name), layout.RWLockChannel(name), layout.SemaphoreChannel(name), layout.ElectionChannel(name)}
	global := rdb.PSubscribe(ctx, escapeGlob(layout.LockChannel(name))+":*", escapeGlob(layout.SemaphoreClientChannels(name))+":*")
	if err := global.Subscribe(ctx, append(shared, layout.LatchChannel(name))...); err != nil {
		global.Close()
		return events, func() {}
	}
	events[0] = global.Channel()
	if !cluster || rdb.PubSubShardNumSub(ctx).Err() != nil {
		return events, func() { global.Close() }
	}
	if !strings.Contains(name, "{") {
		shared = append(shared, layout.LatchChannel(name))
	}
	sharded := rdb.SSubscribe(ctx, shared...)
	events[1] = sharded.Channel()
	return events, func() { global.Close(); sharded.Close() }
}

// escapeGlob quotes the characters a PSUBSCRIBE pattern treats as glob.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
