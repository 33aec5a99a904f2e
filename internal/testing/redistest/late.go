package redistest

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/redis/go-redis/v9"
)

// A Late is a go-redis hook that loses the replies of chosen scripts'
// calls while it is armed: it keeps each such call's command instead of
// sending it, and fails the call as a dropped connection would (io.EOF).
// Play then sends the kept commands, as a server runs commands whose
// replies were lost: late, after whatever was sent since on other
// connections. With Ran, it sends such calls instead, and loses only
// their replies: the call ran, its caller never hears of it. Add it to a
// client with AddHook.
type Late struct {
	scripts map[string]*redis.Script // the scripts whose calls it keeps, by SHA1

	mu    sync.Mutex // guards armed, ran and kept
	armed bool
	ran   bool
	kept  [][]any
}

// NewLate returns a Late for calls of scripts.
func NewLate(scripts ...*redis.Script) *Late {
	h := &Late{scripts: make(map[string]*redis.Script)}
	for _, s := range scripts {
		h.scripts[s.Hash()] = s
	}
	return h
}

// DialHook is go-redis's: it changes nothing.
func (h *Late) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessPipelineHook is go-redis's: it changes nothing.
func (h *Late) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// ProcessHook keeps an armed call of one of h's scripts.
func (h *Late) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		name := cmd.Name()
		if len(args) < 2 || name != "evalsha" && name != "eval" {
			return next(ctx, cmd)
		}
		sha, _ := args[1].(string)
		if name == "eval" {
			sum := sha1.Sum([]byte(sha))
			sha = hex.EncodeToString(sum[:])
		}
		h.mu.Lock()
		_, keep := h.scripts[sha]
		keep = keep && h.armed
		ran := h.ran
		if keep && !ran {
			h.kept = append(h.kept, append([]any{"evalsha", sha}, args[2:]...))
		}
		h.mu.Unlock()
		if !keep {
			return next(ctx, cmd)
		}
		if ran {
			if err := next(ctx, cmd); err != nil {
				return err
			}
			// The reply is lost: the caller sees no value.
			if c, ok := cmd.(*redis.Cmd); ok {
				c.SetVal(nil)
			}
		}
		cmd.SetErr(io.EOF)
		return io.EOF
	}
}

// Arm starts (true) or stops keeping calls.
func (h *Late) Arm(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed = on
}

// Ran makes h send the calls it would keep, and lose their replies
// (true), or keep them (false, the default).
func (h *Late) Ran(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ran = on
}

// Play sends the kept commands through rdb, in the order they were
// made, forgets them, and reports how many there were.
func (h *Late) Play(ctx context.Context, rdb redis.UniversalClient) (int, error) {
	h.mu.Lock()
	kept := h.kept
	h.kept = nil
	h.mu.Unlock()
	for _, args := range kept {
		// The server may not have the script yet: the kept call never
		// reached it.
		if err := h.scripts[args[1].(string)].Load(ctx, rdb).Err(); err != nil {
			return 0, err
		}
		if err := rdb.Do(ctx, args...).Err(); err != nil && !errors.Is(err, redis.Nil) {
			return 0, fmt.Errorf("late call of a script with %v keys: %w", args[2], err)
		}
	}
	return len(kept), nil
}
