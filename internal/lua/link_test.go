package lua

import (
	"regexp"
	"slices"
	"testing"
)

// defined lists the top-level locals of src, in order.
func defined(src string) []string {
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^local (?:function )?([A-Za-z_][A-Za-z0-9_]*)`).FindAllStringSubmatch(src, -1) {
		names = append(names, m[1])
	}
	return names
}

func TestLinkKeepsWhatTheBodyUses(t *testing.T) {
	prelude := `-- header of the prelude

-- a constant only b uses
local limit = 3
local unused_state
-- a uses nothing
local function a()
	return 'b() in a string is not a use'
end
-- b uses a and limit
local function b(x)
	-- c() in a comment is not a use
	if x > limit then
		return a()
	end
	return x
end

local function c()
	return unused_state
end
`
	body := "-- the body; c() in a comment is not a use\nreturn b(tonumber(ARGV[1]))\n"
	got := link(body, prelude)
	if want := []string{"limit", "a", "b"}; !slices.Equal(defined(got), want) {
		t.Fatalf("linked definitions %v, want %v; script:\n%s", defined(got), want, got)
	}
	if got[len(got)-len(body):] != body {
		t.Fatalf("the body is not last, whole:\n%s", got)
	}
	if got := link("return c()\n", prelude); !slices.Equal(defined(got), []string{"unused_state", "c"}) {
		t.Fatalf("linked definitions %v, want [unused_state c]", defined(got))
	}
	if got := link("return 1\n", prelude); got != "return 1\n" {
		t.Fatalf("a body that uses nothing got %q", got)
	}
}

func TestLinkAcrossPreludes(t *testing.T) {
	// The reentrant lock's unlock releases with hand_on alone; its
	// acquire registers waiters with registered, which needs is_relock.
	if got, want := defined(link(unlockSrc, relockPrelude, waitersPrelude)), []string{"hand_on"}; !slices.Equal(got, want) {
		t.Errorf("unlock links %v, want %v", got, want)
	}
	if got := defined(link(acquireSrc, relockPrelude, waitersPrelude)); !slices.Contains(got, "is_relock") || !slices.Contains(got, "registered") || slices.Contains(got, "hand_on") {
		t.Errorf("acquire links %v, want is_relock and registered, not hand_on", got)
	}
	// An expirable permit's scripts use helpers of both preludes.
	if got := defined(link(permitsReleaseSrc, semaphorePrelude, permitsPrelude)); !slices.Contains(got, "reclaim") || !slices.Contains(got, "announce") {
		t.Errorf("permits release links %v, want reclaim and announce", got)
	}
}

func TestLinkRefusesWhatItCannotRead(t *testing.T) {
	for name, prelude := range map[string]string{
		"statement":        "redis.call('del', KEYS[1])\n",
		"open function":    "local function f()\n\treturn 1\n",
		"multi-line local": "local t = {\n\t1,\n}\n",
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("link accepted the prelude %q", prelude)
				}
			}()
			link("return 1\n", prelude)
		})
	}
}
