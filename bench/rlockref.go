package main

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/layout"
)

// Scenarios (a) and (c) run one reference kind beside the libraries, which
// is not a library: Redisson's classic RLock, its acquire script
// (RedissonLock.tryLockInnerAsync) and its release script
// (unlockInnerAsync) written here with the same commands on the same keys
// and channel, run the way Redisson's client runs them, by a plain
// go-redis client with relock's options. Its Redis CPU per acquisition is
// what Redisson's lock layout costs the server in the same cell as
// relock's reentrant lock, which keeps that layout and adds its preludes
// (the waiter registry, the hand-over); its client CPU and allocations,
// what the least client of that layout costs on go-redis.
const rlockRefID = "Redisson RLock scripts, bare client (reference)"

// referenceKinds are the kinds scenarios (a) and (c) run after the
// libraries'.
func referenceKinds() []kind {
	return []kind{{ID: rlockRefID, Lib: "reference",
		Config: "Redisson's RLock acquire (EXISTS or HEXISTS, then HINCRBY and PEXPIRE, else PTTL) and release (HEXISTS, HINCRBY -1, then PEXPIRE, or DEL and PUBLISH on redisson_lock__channel:{name}) as our own Lua; " +
			"a waiter subscribes to the lock's channel, tries again on each release or once the lock could have expired, and unsubscribes when its client has no other waiter on it, as Redisson's; go-redis client as relock's (" + relockClientOpts + ")",
		inner: set("exists", "hexists", "hincrby", "pexpire", "pttl", "del", "publish"), open: openRLockRef}}
}

// rlockRefLease is the reference's lease, Redisson's default watchdog
// timeout: far longer than a cell, so nothing renews it.
const rlockRefLease = "30000"

var (
	rlockRefAcquire = redis.NewScript(`
-- KEYS[1] lock hash
-- ARGV[1] lease ms, ARGV[2] owner field "<client id>:<owner>"
-- Reply: nil when the caller holds the lock now (one hold more, the lease
-- reset), else the hash's PTTL in ms.
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
return redis.call('pttl', KEYS[1])`)

	rlockRefUnlock = redis.NewScript(`
-- KEYS[1] lock hash, KEYS[2] its channel
-- ARGV[1] lease ms, ARGV[2] owner field
-- Reply: nil when the caller holds nothing; 0 when holds remain (the
-- lease reset); 1 when that was the last: the hash is deleted and "0"
-- published on the channel.
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
	return nil
end
if redis.call('hincrby', KEYS[1], ARGV[2], -1) > 0 then
	redis.call('pexpire', KEYS[1], ARGV[1])
	return 0
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], '0')
return 1`)
)

// rlockRefChannel is name's release channel in Redisson's layout.
func rlockRefChannel(name string) string { return layout.LockChannel(name) }

// rlockRef is one client of the reference: a go-redis client, and one
// subscription connection for the channels of the locks its callers wait
// for.
type rlockRef struct {
	rdb    *redis.Client
	ps     *redis.PubSub
	id     string
	owners atomic.Int64  // the last owner number given
	done   chan struct{} // closed when dispatch returns
	// mu guards chans, and orders the SUBSCRIBE and UNSUBSCRIBE calls
	// as the waiter counts they follow: sent outside it, a waiter's
	// SUBSCRIBE could overtake the UNSUBSCRIBE of the last one before it
	// and leave the channel unsubscribed under a waiter.
	mu    sync.Mutex
	chans map[string]*rlockRefChan
}

// rlockRefChan is one lock channel on a client. Its counts stay when
// nobody waits, so that the confirmation of a SUBSCRIBE given up before
// it came is never taken for a later one's.
type rlockRefChan struct {
	waiters         int // the client's callers waiting on the lock
	sent, confirmed int // SUBSCRIBE calls sent, and confirmed by the server
	// ready is closed once every SUBSCRIBE sent is confirmed: from then
	// on no release message can pass the waiters by.
	ready   chan struct{}
	isReady bool
	wake    chan struct{} // a release, for one waiter; buffered, so dispatch never blocks
}

type rlockRefOwnerKey struct{}

func openRLockRef(addr string, o openOpts) (locker, error) {
	l := &rlockRef{rdb: newGoRedis(addr, o, true), id: uuid.NewString(), done: make(chan struct{}), chans: map[string]*rlockRefChan{}}
	l.ps = l.rdb.Subscribe(context.Background())
	go l.dispatch(l.ps.ChannelWithSubscriptions())
	return l, nil
}

// dispatch marks channels ready as their subscriptions are confirmed,
// and wakes a waiter on each release message, until the subscription
// connection closes.
func (l *rlockRef) dispatch(msgs <-chan any) {
	defer close(l.done)
	for m := range msgs {
		l.mu.Lock()
		switch m := m.(type) {
		case *redis.Subscription:
			if c := l.chans[m.Channel]; c != nil && m.Kind == "subscribe" {
				c.confirmed++
				if c.confirmed >= c.sent && !c.isReady {
					c.isReady = true
					close(c.ready)
				}
			}
		case *redis.Message:
			if c := l.chans[m.Channel]; c != nil && m.Payload == "0" {
				select {
				case c.wake <- struct{}{}:
				default:
				}
			}
		}
		l.mu.Unlock()
	}
}

// owner gives each worker a field of its own, "<client id>:<n>", as
// Redisson's "<uuid>:<thread id>".
func (l *rlockRef) owner(ctx context.Context) context.Context {
	return context.WithValue(ctx, rlockRefOwnerKey{}, l.id+":"+strconv.FormatInt(l.owners.Add(1), 10))
}

func (l *rlockRef) lock(ctx context.Context, name string) (*held, error) {
	field, _ := ctx.Value(rlockRefOwnerKey{}).(string)
	if field == "" {
		return nil, errors.New("rlock reference: a context without an owner")
	}
	h := &held{unlock: func() error { return l.unlock(name, field) }}
	ttl, err := l.try(ctx, name, field)
	if err != nil || ttl < 0 {
		return h, err
	}
	ch := rlockRefChannel(name)
	c, ready, err := l.subscribe(ch)
	if err != nil {
		return nil, err
	}
	defer l.unsubscribe(ch, c)
	select {
	case <-ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for {
		if ttl, err = l.try(ctx, name, field); err != nil || ttl < 0 {
			return h, err
		}
		t := time.NewTimer(ttl)
		select {
		case <-c.wake:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// try runs the acquire script once: it returns -1 when field holds the
// lock now, else how long the lock may last.
func (l *rlockRef) try(ctx context.Context, name, field string) (time.Duration, error) {
	ms, err := rlockRefAcquire.Run(ctx, l.rdb, []string{name}, rlockRefLease, field).Int64()
	switch {
	case errors.Is(err, redis.Nil):
		return -1, nil
	case err != nil:
		return 0, err
	}
	return time.Duration(max(ms, 0)) * time.Millisecond, nil
}

// subscribe counts a waiter on ch, subscribing the client when it is the
// first, and returns the channel closed once the subscription is
// confirmed.
func (l *rlockRef) subscribe(ch string) (*rlockRefChan, <-chan struct{}, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.chans[ch]
	if c == nil {
		c = &rlockRefChan{wake: make(chan struct{}, 1)}
		l.chans[ch] = c
	}
	if c.waiters++; c.waiters > 1 {
		return c, c.ready, nil
	}
	c.sent++
	c.ready, c.isReady = make(chan struct{}), false
	if err := l.ps.Subscribe(context.Background(), ch); err != nil {
		c.waiters--
		return nil, nil, err
	}
	return c, c.ready, nil
}

// unsubscribe counts a waiter off ch, unsubscribing the client when it
// was the last.
func (l *rlockRef) unsubscribe(ch string, c *rlockRefChan) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.waiters--; c.waiters == 0 {
		// A failed write leaves a subscription the client no longer
		// needs, which only costs the releases' PUBLISH a receiver.
		_ = l.ps.Unsubscribe(context.Background(), ch)
	}
}

func (l *rlockRef) unlock(name, field string) error {
	err := rlockRefUnlock.Run(context.Background(), l.rdb, []string{name, rlockRefChannel(name)}, rlockRefLease, field).Err()
	if errors.Is(err, redis.Nil) {
		return errors.New("rlock reference: unlock: not held")
	}
	return err
}

func (l *rlockRef) close() {
	l.ps.Close()
	<-l.done
	l.rdb.Close()
}
