package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/relock-go/relock/internal/core"
)

func TestDerivedNames(t *testing.T) {
	for _, tc := range []struct {
		name, prefixed, suffixed string
	}{
		{"orders:42", "redisson_lock__channel:{orders:42}", "{orders:42}:rwlock_timeout"},
		{"{user1}:cart", "redisson_lock__channel:{user1}:cart", "{user1}:cart:rwlock_timeout"},
	} {
		if got := core.Prefix("redisson_lock__channel", tc.name); got != tc.prefixed {
			t.Errorf("Prefix(%q) = %q, want %q", tc.name, got, tc.prefixed)
		}
		if got := core.Suffix(tc.name, "rwlock_timeout"); got != tc.suffixed {
			t.Errorf("Suffix(%q) = %q, want %q", tc.name, got, tc.suffixed)
		}
	}
}

func TestValidateName(t *testing.T) {
	for name, valid := range map[string]bool{
		"":          false,
		"x":         true,
		"{a}":       true,
		"x{a}y{b}":  true,
		"{}":        false,
		"x{}y{a}":   false,
		"x{":        false,
		"x{a":       false,
		"}x{a}":     true,
		"a}b":       false,
		"orders:42": true,
	} {
		err := core.ValidateName(name)
		if (err == nil) != valid || (err != nil && !errors.Is(err, core.ErrInvalidName)) {
			t.Errorf("ValidateName(%q) = %v, want valid=%v", name, err, valid)
		}
	}
}

// FuzzNames checks the property ValidateName exists for: every valid name
// hashes to the same cluster slot as the names derived from it.
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
		for _, derived := range []string{
			core.Prefix("redisson_lock__channel", name),
			core.Prefix("redisson_lock_token", name),
			core.Suffix(name, "x:rwlock_timeout:1"),
		} {
			if got := slot(derived); got != want {
				t.Fatalf("name %q in slot %d, derived %q in slot %d", name, want, derived, got)
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
