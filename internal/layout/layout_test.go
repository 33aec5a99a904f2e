package layout_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/layout"
)

// TestNames pins every name, spelled out, for a name without a hash tag
// and for one with its own.
func TestNames(t *testing.T) {
	const id, field = "6f1e43c2-0a8e-4d6b-9d0e-3c1f2a7b9e11", "6f1e43c2-0a8e-4d6b-9d0e-3c1f2a7b9e11:7"
	for _, tc := range []struct {
		f             func(name string) string
		plain, tagged string
	}{
		{layout.LockChannel, "redisson_lock__channel:{orders:42}", "redisson_lock__channel:{user1}:cart"},
		{layout.GroupLockChannel, "redisson_lock__channel:{orders:42}", "redisson_lock__channel:{user1}:cart"},
		{func(n string) string { return layout.LockClientChannel(n, id) }, "redisson_lock__channel:{orders:42}:" + id, "redisson_lock__channel:{user1}:cart:" + id},
		{func(n string) string { return layout.FairWaiterChannel(n, field) }, "redisson_lock__channel:{orders:42}:" + field, "redisson_lock__channel:{user1}:cart:" + field},
		{layout.LockWaiters, "relock_lock_waiters:{orders:42}", "relock_lock_waiters:{user1}:cart"},
		{layout.LockGone, "relock_lock_gone:{orders:42}", "relock_lock_gone:{user1}:cart"},
		{layout.LockGoneDue, "relock_lock_gone_due:{orders:42}", "relock_lock_gone_due:{user1}:cart"},
		{layout.LockToken, "redisson_lock_token:{orders:42}", "redisson_lock_token:{user1}:cart"},
		{layout.FairQueue, "redisson_lock_queue:{orders:42}", "redisson_lock_queue:{user1}:cart"},
		{layout.FairTimeouts, "redisson_lock_timeout:{orders:42}", "redisson_lock_timeout:{user1}:cart"},
		{layout.RWLockChannel, "redisson_rwlock:{orders:42}", "redisson_rwlock:{user1}:cart"},
		{layout.ReadTimeoutsPrefix, "{orders:42}", "{user1}:cart"},
		{func(n string) string { return layout.ReadTimeoutPrefix(n, field) }, "{orders:42}:" + field + ":rwlock_timeout", "{user1}:cart:" + field + ":rwlock_timeout"},
		{layout.SemaphoreChannel, "redisson_sc:{orders:42}", "redisson_sc:{user1}:cart"},
		{layout.SemaphoreWaiters, "relock_semaphore_waiters:{orders:42}", "relock_semaphore_waiters:{user1}:cart"},
		{layout.SemaphoreWatcher, "relock_semaphore_watcher:{orders:42}", "relock_semaphore_watcher:{user1}:cart"},
		{layout.SemaphoreGrants, "relock_semaphore_grants:{orders:42}", "relock_semaphore_grants:{user1}:cart"},
		{layout.SemaphoreAttempts, "relock_semaphore_attempts:{orders:42}", "relock_semaphore_attempts:{user1}:cart"},
		{layout.SemaphoreClientChannels, "relock_sc:{orders:42}", "relock_sc:{user1}:cart"},
		{func(n string) string { return layout.SemaphoreClientChannel(n, id) }, "relock_sc:{orders:42}:" + id, "relock_sc:{user1}:cart:" + id},
		{layout.PermitTimeouts, "{orders:42}:timeout", "{user1}:cart:timeout"},
		// Redisson wraps a latch's name even when it has a tag.
		{layout.LatchChannel, "redisson_countdownlatch__channel__{orders:42}", "redisson_countdownlatch__channel__{{user1}:cart}"},
		{layout.ElectionLock, "relock_election:{orders:42}", "relock_election:{user1}:cart"},
		{layout.ElectionLeader, "relock_election_leader:{orders:42}", "relock_election_leader:{user1}:cart"},
		{layout.ElectionTerm, "relock_election_term:{orders:42}", "relock_election_term:{user1}:cart"},
		{layout.ElectionChannel, "relock_election_channel:{orders:42}", "relock_election_channel:{user1}:cart"},
		{layout.ElectionLog, "relock_election_log:{orders:42}", "relock_election_log:{user1}:cart"},
		{layout.ClientChannel, "relock_client:{orders:42}", "relock_client:{user1}:cart"},
		{func(n string) string { return layout.ClientChannels + n }, "relock_client:orders:42", "relock_client:{user1}:cart"},
		{layout.FenceLast, "relock_fence:{orders:42}", "relock_fence:{user1}:cart"},
	} {
		if got := tc.f("orders:42"); got != tc.plain {
			t.Errorf("got %q, want %q", got, tc.plain)
		}
		if got := tc.f("{user1}:cart"); got != tc.tagged {
			t.Errorf("got %q, want %q", got, tc.tagged)
		}
	}
}

func TestLockCompanion(t *testing.T) {
	for key, want := range map[string]bool{
		"orders:42":                              false,
		"redisson_lock__channel:{orders:42}":     false,
		"redisson_lock_queue:{orders:42}":        true,
		"redisson_lock_timeout:{orders:42}":      true,
		"relock_lock_waiters:{orders:42}":        true,
		"relock_lock_gone:{orders:42}":           true,
		"relock_lock_gone_due:{orders:42}":       true,
		"redisson_lock_token:{orders:42}":        true,
		"redisson_unlock_latch:{orders:42}:abc":  true,
		"{orders:42}:id:1:rwlock_timeout:1":      true,
		"relock_semaphore_waiters:{orders:42}":   false,
		"{orders:42}:timeout":                    false,
		"redisson_countdownlatch__channel__{x}":  false,
		"relock_election_leader:{orders:42}":     false,
		"relock_client:{orders:42}":              false,
		"redisson_rwlock:{orders:42}":            false,
		"redisson_sc:{orders:42}":                false,
		"relock_sc:{orders:42}:id":               false,
		"relock_semaphore_grants:{orders:42}":    false,
		"relock_semaphore_watcher:{orders:42}":   false,
		"relock_election:{orders:42}":            false,
		"relock_election_channel:{orders:42}":    false,
		"relock_election_log:{orders:42}":        false,
		"relock_election_term:{orders:42}":       false,
		"redisson_lock__channel:{orders:42}:abc": false,
	} {
		if got := layout.LockCompanion(key); got != want {
			t.Errorf("LockCompanion(%q) = %v, want %v", key, got, want)
		}
	}
}

// FuzzNames checks the property core.ValidateName exists for: every valid
// name hashes to the same cluster slot as the names derived from it, but
// a latch's channel, which Redisson wraps in braces whatever the name.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"orders:42", "{user1}:cart", "a}b{c}", "{", "x{}", "", "{{a}}", "\x00{\xff}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if err := core.ValidateName(name); err != nil {
			if !errors.Is(err, core.ErrInvalidName) {
				t.Fatalf("ValidateName(%q) = %v, not ErrInvalidName", name, err)
			}
			return
		}
		want := slot(name)
		derived := []string{
			layout.LockChannel(name), layout.LockClientChannel(name, "id"), layout.FairWaiterChannel(name, "id:1"),
			layout.LockWaiters(name), layout.LockGone(name), layout.LockGoneDue(name), layout.LockToken(name),
			layout.FairQueue(name), layout.FairTimeouts(name),
			layout.RWLockChannel(name), layout.ReadTimeoutsPrefix(name), layout.ReadTimeoutPrefix(name, "id:1") + ":1",
			layout.SemaphoreChannel(name), layout.SemaphoreWaiters(name), layout.SemaphoreWatcher(name),
			layout.SemaphoreGrants(name), layout.SemaphoreAttempts(name), layout.SemaphoreClientChannel(name, "id"), layout.PermitTimeouts(name),
			layout.ElectionLock(name), layout.ElectionLeader(name), layout.ElectionTerm(name),
			layout.ElectionChannel(name), layout.ElectionLog(name),
		}
		if !strings.Contains(name, "{") {
			derived = append(derived, layout.LatchChannel(name))
		}
		for _, d := range derived {
			if got := slot(d); got != want {
				t.Fatalf("name %q in slot %d, derived %q in slot %d", name, want, d, got)
			}
		}
	})
}

// slot is Redis Cluster's key slot: CRC16 (XMODEM) of the hash tag, or of
// the whole key when it has no non-empty tag, mod 16384.
func slot(key string) uint16 {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}
