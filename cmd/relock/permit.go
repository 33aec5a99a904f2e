package main

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/permits"
)

// forcePermit releases one permit of an expirable semaphore by id,
// through package permits' Release, which wakes the semaphore's waiters.
// Redis does not record which client holds a permit, so every listening
// relock client is told the semaphore's name on its channel
// (relock_client:{<id>}), as a force-unlock tells a lock's holders: the
// one holding the permit renews it at once, finds it gone and cancels
// the permit's context, rather than at its next renewal.
func (e *env) forcePermit(ctx context.Context, l *inspect.Lock, id string) error {
	id = strings.ToLower(id)
	held := false
	for _, p := range l.Permits {
		held = held || p.ID == id
	}
	if !held && len(l.Permits) == 0 {
		return fmt.Errorf("%q is %s with no permit held: nothing changed", l.Name, describe(l))
	}
	if !held {
		return fmt.Errorf("expirable semaphore %q has no permit %s held: nothing changed (relock inspect %s lists its permits)", l.Name, id, l.Name)
	}
	if err := e.approve(fmt.Sprintf("Release permit %s of %q? Its holder loses it at once.", id, l.Name), fmt.Sprintf("release of permit %s of %q", id, l.Name)); err != nil {
		return err
	}
	rc, err := e.relockClient()
	if err != nil {
		return err
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	released, err := permits.New(rc, l.Name, nil).TryRelease(ctx, id)
	switch {
	case err != nil:
		return fmt.Errorf("releasing permit %s of %q: %w (try again; relock inspect %s shows its permits)", id, l.Name, err, l.Name)
	case !released:
		return fmt.Errorf("permit %s of %q was released by its holder or expired before relock could release it: nothing changed", id, l.Name)
	}
	told, err := e.tellClients(ctx, l.Name)
	if err != nil {
		fmt.Fprintf(e.errs, "relock: released the permit, but could not tell relock's clients (%v): its holder learns at its next renewal\n", err)
	}
	_, err = fmt.Fprintf(e.out, "released permit %s of expirable semaphore %s; told %d relock clients\n", id, l.Name, told)
	return err
}

// tellClients publishes name on the channel of every relock client that
// listens on its own (PUBSUB CHANNELS, and SHARDCHANNELS on a cluster's
// masters), with PUBLISH or SPUBLISH as the client listens, and returns
// how many channels it told.
func (e *env) tellClients(ctx context.Context, name string) (int, error) {
	const pattern = layout.ClientChannels + "*"
	global, err := e.rdb.PubSubChannels(ctx, pattern).Result()
	if err != nil {
		return 0, err
	}
	var sharded []string
	if cc, ok := e.rdb.(*redis.ClusterClient); ok {
		var mu sync.Mutex // guards seen: ForEachMaster calls in parallel
		seen := map[string]bool{}
		err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			chs, err := node.PubSubShardChannels(ctx, pattern).Result()
			mu.Lock()
			defer mu.Unlock()
			for _, c := range chs {
				seen[c] = true
			}
			return err
		})
		if err != nil {
			return 0, err
		}
		for c := range seen {
			sharded = append(sharded, c)
		}
	}
	_, err = e.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, c := range global {
			pipe.Publish(ctx, c, name)
		}
		for _, c := range sharded {
			pipe.SPublish(ctx, c, name)
		}
		return nil
	})
	return len(global) + len(sharded), err
}
