package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// probeTimeout bounds one round of the PubSubAuto probe; probePause
// separates rounds.
const (
	probeTimeout = time.Second
	probePause   = 100 * time.Millisecond
)

// probeSharded asks the masters of cc whether they have sharded pub/sub
// (PUBSUB SHARDNUMSUB): yes when one says so and none says it does not
// know the command (a cluster part-way through an upgrade to Redis 7 has
// it on some masters only). cc is relock's script client, which neither
// retries nor outwaits a deadline, so a node that does not answer (it may
// be frozen, or failing over) costs one round of probeTimeout, and a new
// round, through go-redis's random choice of node to learn the layout
// from, usually avoids it. Rounds go on until ctx ends (pubsubMode gives
// it OpTimeout); a refusal (an ACL user without the command) ends them at
// once. Their error is the probe's.
func probeSharded(ctx context.Context, cc *redis.ClusterClient) (bool, error) {
	pause := time.NewTimer(probePause)
	defer pause.Stop()
	for {
		yes, no, err := probeRound(ctx, cc)
		if err == nil {
			err = errors.New("no master in the cluster's layout")
		}
		var refused redis.Error
		switch {
		case no:
			return false, nil
		case yes:
			return true, nil
		case errors.As(err, &refused) || ctx.Err() != nil:
			return false, fmt.Errorf("relock: PubSubAuto: asking the cluster whether it has sharded pub/sub (PUBSUB SHARDNUMSUB): %w", err)
		}
		pause.Reset(probePause)
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("relock: PubSubAuto: asking the cluster whether it has sharded pub/sub (PUBSUB SHARDNUMSUB): %w", err)
		case <-pause.C:
		}
	}
}

// probeRound asks every master of cc once, within probeTimeout. yes and
// no report masters that have and lack sharded pub/sub; err is the first
// other answer, or the failure to learn the layout.
func probeRound(ctx context.Context, cc *redis.ClusterClient) (yes, no bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var mu sync.Mutex // guards yes, no and err
	each := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		perr := node.PubSubShardNumSub(ctx).Err()
		var rerr redis.Error
		mu.Lock()
		defer mu.Unlock()
		switch {
		case perr == nil:
			yes = true
		case errors.As(perr, &rerr) && strings.HasPrefix(strings.ToLower(rerr.Error()), "err unknown"):
			// Before Redis 7: "ERR Unknown subcommand or wrong number of
			// arguments".
			no = true
		case err == nil:
			err = perr
		}
		return nil
	})
	if err == nil {
		err = each
	}
	return yes, no, err
}
