package fence

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/lua"
)

// Redis is the guard of data kept in Redis: each of its writes goes
// ahead only when the writer's token is at least the last one recorded
// for the write's resource, and records it, in one script. It is safe for
// concurrent use; its zero value is not usable: use NewRedis.
//
// Each call makes one script call (EVALSHA, EVAL when the server does not
// have the script yet) through the go-redis client, with its retries: a
// write whose reply was lost may be sent again, which the same token
// passes again. For Set and HSet that is harmless; an XAdd may then add
// its entry twice, as a plain XADD would.
// A nil *Redis's writes return an error matching
// relock.ErrInvalidArgument.
type Redis struct {
	rdb redis.UniversalClient
}

// errNil is the error of every operation of a nil *Redis.
var errNil = core.NilReceiver("fence", "Redis")

// NewRedis returns a guard that writes through rdb. The key of every
// write must carry the hash tag of its resource (the package doc's
// "Redis").
func NewRedis(rdb redis.UniversalClient) *Redis { return &Redis{rdb: rdb} }

// Set sets key to value, as SET does, unless token is stale for
// resource. expiration is SET's: 0 for no TTL, redis.KeepTTL to keep the
// key's own, otherwise a TTL (rounded up to a millisecond).
func (r *Redis) Set(ctx context.Context, resource string, token int64, key string, value any, expiration time.Duration) error {
	if r == nil {
		return errNil
	}
	ttl := "0"
	switch {
	case expiration == redis.KeepTTL:
		ttl = "keep"
	case expiration > 0:
		ttl = strconv.FormatInt(int64((expiration+time.Millisecond-1)/time.Millisecond), 10)
	case expiration < 0:
		return fmt.Errorf("fence: %q: negative expiration %v: %w", resource, expiration, relock.ErrInvalidArgument)
	}
	_, err := r.write(ctx, lua.FenceSet(), resource, token, key, value, ttl)
	return err
}

// HSet sets the fields of the hash at key, as HSET does, unless token is
// stale for resource. values must not be empty.
func (r *Redis) HSet(ctx context.Context, resource string, token int64, key string, values map[string]any) error {
	if r == nil {
		return errNil
	}
	args, err := pairs(resource, values)
	if err != nil {
		return err
	}
	_, err = r.write(ctx, lua.FenceHSet(), resource, token, key, args...)
	return err
}

// XAdd appends an entry of values to the stream at key, as XADD with an
// ID of "*" does, unless token is stale for resource, and returns the
// entry's ID. The entry's fields are in sorted order; values must not be
// empty.
func (r *Redis) XAdd(ctx context.Context, resource string, token int64, key string, values map[string]any) (string, error) {
	if r == nil {
		return "", errNil
	}
	args, err := pairs(resource, values)
	if err != nil {
		return "", err
	}
	reply, err := r.write(ctx, lua.FenceXAdd(), resource, token, key, args...)
	if err != nil {
		return "", err
	}
	id, _ := reply[0].(string)
	return id, nil
}

// write runs script s for a write of key by the holder of token for
// resource, and returns what the script replies after its leading 1.
func (r *Redis) write(ctx context.Context, s *redis.Script, resource string, token int64, key string, args ...any) ([]any, error) {
	last, err := lastKey(resource, key)
	if err != nil {
		return nil, err
	}
	if err := checkToken(resource, token); err != nil {
		return nil, err
	}
	reply, err := s.Run(ctx, r.rdb, []string{last, key}, append([]any{token}, args...)...).Slice()
	if err != nil {
		return nil, fmt.Errorf("fence: %q: %s: %w", resource, key, err)
	}
	if len(reply) > 0 && reply[0] == int64(1) {
		return reply[1:], nil
	}
	if len(reply) == 2 {
		if v, ok := reply[1].(string); ok {
			if seen, err := strconv.ParseInt(v, 10, 64); err == nil {
				return nil, &StaleError{Resource: resource, Token: token, Last: seen}
			}
		}
	}
	return nil, fmt.Errorf("fence: %q: unexpected reply %v", resource, reply)
}

// lastKey returns where the last token of resource is kept, after
// checking that key is another key in its hash slot (layout.FenceLast).
func lastKey(resource, key string) (string, error) {
	if err := core.ValidateName(resource); err != nil {
		return "", fmt.Errorf("fence: resource: %w", err)
	}
	last := layout.FenceLast(resource)
	tag := hashed(last)
	switch {
	case key == last:
		return "", fmt.Errorf("fence: %q: key %q is where the resource's last token is kept: %w", resource, key, relock.ErrInvalidArgument)
	case hashed(key) != tag:
		return "", fmt.Errorf("fence: %q: key %q must carry the resource's hash tag {%s}, so that a cluster keeps it in one slot with the token: %w",
			resource, key, tag, relock.ErrInvalidArgument)
	}
	return last, nil
}

// hashed returns the part of key that Redis Cluster hashes to find its
// slot: its hash tag (what lies between the first '{' and the first '}'
// after it, when not empty), or else the whole key. Keys with the same
// hashed part share a slot on any cluster.
func hashed(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}

// pairs flattens values into field, value, ... in sorted field order, so
// that the same values always make the same command.
func pairs(resource string, values map[string]any) ([]any, error) {
	if len(values) == 0 {
		return nil, fmt.Errorf("fence: %q: no values to write: %w", resource, relock.ErrInvalidArgument)
	}
	args := make([]any, 0, 2*len(values))
	for _, f := range slices.Sorted(maps.Keys(values)) {
		args = append(args, f, values[f])
	}
	return args, nil
}
