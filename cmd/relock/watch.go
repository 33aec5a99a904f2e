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

// watchCmd draws a lock's state, then draws it again whenever it
// changes, until ctx ends (an interrupt), -count drawings are made, or
// -for has passed since the first (which is always made). It reads the
// lock when a message arrives on one of the lock's channels (a release,
// a hand-off, a wake-up) and every -interval, and draws only when what
// it read differs from the last drawing in more than the passing of
// time.
func watchCmd(ctx context.Context, e *env, args []string) error {
	name := args[0]
	events, stop := subscribe(ctx, e.rdb, e.cluster, name)
	defer stop()
	tick := time.NewTicker(e.opts.interval)
	defer tick.Stop()
	var last string
	for draws := 0; ; {
		l, err := e.read(ctx, name)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			return err
		}
		if s := shape(l); s != last {
			if err := e.draw(l); err != nil {
				return err
			}
			last = s
			if draws++; e.opts.count > 0 && draws == e.opts.count {
				return nil
			}
			if draws == 1 && e.opts.duration > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, e.opts.duration)
				defer cancel()
			}
		}
		select {
		case <-ctx.Done():
			return nil
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

// subscribe listens on the lock's channels: the lock channel
// redisson_lock__channel:{<name>} and every channel under it (relock's
// per-client channels, Redisson's fair waiters' own), and the read/write
// lock's redisson_rwlock:{<name>}. On a cluster that has sharded pub/sub,
// where relock and Redisson publish with SPUBLISH, it also listens on
// the two channels with SSUBSCRIBE (sharded pub/sub has no patterns:
// per-client channels are then seen only through the -interval reads).
// stop closes the subscriptions; go-redis owns the goroutines that feed
// the returned channels and ends them on close.
func subscribe(ctx context.Context, rdb redis.UniversalClient, cluster bool, name string) (events [2]<-chan *redis.Message, stop func()) {
	lock, rw := layout.LockChannel(name), layout.RWLockChannel(name)
	global := rdb.PSubscribe(ctx, escapeGlob(lock)+":*")
	if err := global.Subscribe(ctx, lock, rw); err != nil {
		global.Close()
		return events, func() {}
	}
	events[0] = global.Channel()
	if !cluster || rdb.PubSubShardNumSub(ctx).Err() != nil {
		return events, func() { global.Close() }
	}
	sharded := rdb.SSubscribe(ctx, lock, rw)
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
